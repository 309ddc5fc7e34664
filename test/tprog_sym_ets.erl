%% Test programs of symmetry reduction with pids in the keys of ETS
%% objects (test/mce_symmetry_maps_tests.erl): identical clients that
%% register themselves in a table keyed by their pids.
%%
%%   registry(N, Bug)  N identical clients insert {self(), joined} into a
%%                     public table the entry owns, tell the entry, and wait;
%%                     the entry looks each one up by its pid.  The buggy
%%                     clients tell the entry before inserting, and the entry
%%                     may look too early.
%%   leader(N, How)    the clients register; the entry names the least key
%%                     of the table the leader (How: first, tab2list, select,
%%                     foldl): always the first client spawned on the VM.
%%                     Renaming the pids in the keys would let another client
%%                     lead, so the guard (mce_rt_order:ets_keys/1) makes the
%%                     symmetric search run again with them pinned.
%%   last_in(N)        N identical clients insert themselves; the one that
%%                     finds all N keys there after its insert crashes: a
%%                     counterexample through tables with several pid keys,
%%                     which must replay after mapping back to concrete pids.
%%   tables_leader()   two identical processes each make a table; the entry
%%                     takes the first of ets:all() (in tid order, which
%%                     carries the makers' pid numbers): the first maker's on
%%                     the VM.  The guard (mce_rt_order:tables_listed/1)
%%                     voids the symmetric search.
-module(tprog_sym_ets).

-export([registry/2, leader/2, client/3, tables_leader/0, maker/1, last_in/1, late_client/1]).

-spec registry(pos_integer(), boolean()) -> ok.
-spec leader(pos_integer(), first | tab2list | select | foldl) -> ok.
-spec client(pid(), boolean(), go | stay) -> {left, pid()}.
-spec tables_leader() -> ok.
-spec last_in(pos_integer()) -> ok.
-spec late_client(pid()) -> ok.
-spec maker(pid()) -> ok.

registry(N, Bug) ->
    Me = self(),
    ets:new(reg, [named_table, public, set]),
    [spawn(?MODULE, client, [Me, Bug, go]) || _ <- lists:seq(1, N)],
    %% The entry keeps no list of the clients (one would tell them apart by
    %% their place in it): it answers each as it comes.
    [receive
         {joined, C} ->
             [{C, joined}] = ets:lookup(reg, C),
             C ! {stop, Me}
     end || _ <- lists:seq(1, N)],
    [receive {left, _} -> ok end || _ <- lists:seq(1, N)],
    ok.

%% The entry owns the table: it waits for the clients to leave it.
leave(Cs) ->
    [C ! {stop, self()} || C <- Cs],
    [receive {left, C} -> ok end || C <- Cs],
    ok.

leader(N, How) ->
    Me = self(),
    ets:new(reg, [named_table, public, set]),
    [First | _] = Cs = [spawn(?MODULE, client, [Me, false, stay]) || _ <- lists:seq(1, N)],
    [receive {joined, C} -> ok end || C <- Cs],
    Leader = case How of
                 first -> ets:first(reg);
                 tab2list -> element(1, hd(ets:tab2list(reg)));
                 select -> hd(ets:select(reg, [{{'$1', '_'}, [], ['$1']}]));
                 foldl -> ets:foldl(fun({K, _}, none) -> K; (_, Acc) -> Acc end, none, reg)
             end,
    case Leader of
        First -> leave(Cs);
        Other -> error({leader, Other, First})
    end.

client(Entry, Bug, _) ->
    case Bug of
        false ->
            true = ets:insert(reg, {self(), joined}),
            Entry ! {joined, self()};
        true ->
            Entry ! {joined, self()},
            true = ets:insert(reg, {self(), joined})
    end,
    receive
        {stop, From} ->
            true = ets:delete(reg, self()),
            From ! {left, self()}
    end.

tables_leader() ->
    Me = self(),
    [A, B] = Makers = [spawn(?MODULE, maker, [Me]) || _ <- [1, 2]],
    Tabs = [receive {made, P, T} -> {P, T} end || P <- Makers],
    [First | _] = [T || T <- ets:all(), lists:keymember(T, 2, Tabs)],
    [P ! stop || P <- Makers],
    case lists:keyfind(First, 2, Tabs) of
        {A, _} -> ok;
        {B, _} -> error({second_maker_first, B})
    end.

maker(Entry) ->
    T = ets:new(t, []),
    Entry ! {made, self(), T},
    receive stop -> ok end.

last_in(N) ->
    Me = self(),
    ets:new(reg, [named_table, public, set]),
    [spawn(?MODULE, late_client, [Me]) || _ <- lists:seq(1, N)],
    [receive {joined, _} -> ok end || _ <- lists:seq(1, N)],
    ok.

late_client(Entry) ->
    true = ets:insert(reg, {self(), joined}),
    Entry ! {joined, self()},
    case ets:info(reg, size) of
        3 -> exit({last, self()});
        _ -> ok
    end.
