%% Symmetry reduction renames pids inside map keys and ETS object keys
%% (c_src/sym_rename.c, c_src/etf_order.c): the renamed bytes must be
%% exactly those the VM writes for the renamed term, or one state would be
%% stored twice.  The VM is the reference: for many random terms holding
%% simulated pids and refs as map keys and values (nested maps, tuples and
%% lists of them, ETS tables' data), mce_nif:rename_term/5 must give
%% term_to_binary(binary_to_term(Bytes)) of the renamed term, and the term
%% an independent renaming in Erlang gives.  The programs of
%% test/tprog_sym_maps.erl check the same through mcerlang:check/2.
-module(mce_symmetry_maps_tests).

-include_lib("eunit/include/eunit.hrl").

-define(NODES, ['nonode@nohost', 'b@host']).
-define(NUMS, 12).

setup() ->
    mce_pid:set_nodes(?NODES).

node_bins() -> [atom_to_binary(N, latin1) || N <- ?NODES].

key(Node, Num) -> Node bsl 24 bor Num.

pid(Node, Num) -> mce_pid:term(key(Node, Num)).

ref(Node, Creator, Counter) -> mce_ref:term(key(Node, Creator bsl 10 bor Counter)).

tid(Node, Creator, Counter) -> mce_ref:tid_term(key(Node, Creator bsl 10 bor Counter)).

%% A random bijection of the numbers 1..?NUMS of each node, as pairs.
perm() ->
    lists:append(
      [[{key(N, I), key(N, J)} || {I, J} <- lists:zip(lists:seq(1, ?NUMS), shuffle(lists:seq(1, ?NUMS))),
                                  I =/= J]
       || N <- [0, 1]]).

shuffle(L) -> [X || {_, X} <- lists:sort([{rand:uniform(), X} || X <- L])].

%% The oracle: the renaming in Erlang, maps rebuilt by the VM.
rename(Pid, Rho) when is_pid(Pid) ->
    {ok, K} = mce_pid:number(Pid),
    mce_pid:term(maps:get(K, Rho, K));
rename(Ref, Rho) when is_reference(Ref) ->
    case mce_ref:number(Ref) of
        {ok, K} -> mce_ref:term(ref_key(K, Rho));
        error ->
            {ok, K} = mce_ref:tid_number(Ref),
            mce_ref:tid_term(ref_key(K, Rho))
    end;
rename(T, Rho) when is_tuple(T) -> list_to_tuple(rename(tuple_to_list(T), Rho));
rename([H | T], Rho) -> [rename(H, Rho) | rename(T, Rho)];
rename(M, Rho) when is_map(M) ->
    maps:from_list([{rename(K, Rho), rename(V, Rho)} || {K, V} <- maps:to_list(M)]);
rename(X, _) -> X.

ref_key(K, Rho) ->
    Node = K bsr 24,
    Num = K band 16#ffffff,
    Creator = Num bsr 10,
    case Creator of
        0 -> K;
        _ ->
            To = maps:get(key(Node, Creator), Rho, key(Node, Creator)) band 16#ffffff,
            key(Node, To bsl 10 bor (Num band 16#3ff))
    end.

%%--------------------------------------------------------------------
%% Random terms
%%--------------------------------------------------------------------

pick(L) -> lists:nth(rand:uniform(length(L)), L).

a_pid() -> pid(rand:uniform(2) - 1, rand:uniform(?NUMS)).
a_ref() ->
    case rand:uniform(4) of
        4 -> tid(rand:uniform(2) - 1, rand:uniform(?NUMS), rand:uniform(3) - 1);
        _ -> ref(rand:uniform(2) - 1, rand:uniform(?NUMS), rand:uniform(3) - 1)
    end.

scalar() ->
    pick([fun() -> rand:uniform(300) - 150 end,
          fun() -> pick([1 bsl 40, -(1 bsl 40), 1 bsl 70, -(1 bsl 70), 1 bsl 31, -(1 bsl 31), 255, 256]) end,
          fun() -> pick([a, b, zz, '', 'ünï', 'Z', abc, ab, ok, error]) end,
          fun() -> pick([<<>>, <<"a">>, <<"ab">>, <<1, 2>>, <<255>>]) end,
          fun() -> pick(["", "a", "ab", [1, 2, 300], [a, b]]) end]).

%% A key of a map: mostly pids and refs, alone or in tuples and lists,
%% beside the other types a key can have.
gen_key(0) ->
    case rand:uniform(6) of
        1 -> a_pid();
        2 -> a_ref();
        3 -> a_pid();
        _ -> (scalar())()
    end;
gen_key(D) ->
    case rand:uniform(8) of
        1 -> {a_pid(), gen_key(D - 1)};
        2 -> {gen_key(D - 1), a_ref(), gen_key(0)};
        3 -> [a_pid() | [gen_key(D - 1) || _ <- lists:seq(1, rand:uniform(3) - 1)]];
        4 -> {};
        5 -> list_to_tuple([gen_key(D - 1) || _ <- lists:seq(1, rand:uniform(3))]);
        _ -> gen_key(0)
    end.

gen_val(0) ->
    case rand:uniform(4) of
        1 -> a_pid();
        2 -> a_ref();
        _ -> (scalar())()
    end;
gen_val(D) ->
    case rand:uniform(7) of
        1 -> gen_map(D - 1);
        2 -> list_to_tuple([gen_val(D - 1) || _ <- lists:seq(1, rand:uniform(3))]);
        3 -> [gen_val(D - 1) || _ <- lists:seq(1, rand:uniform(3))];
        4 -> 1.5;
        _ -> gen_val(0)
    end.

gen_map(D) ->
    N = case rand:uniform(40) of
            1 -> 33 + rand:uniform(8);   % hash-ordered
            _ -> rand:uniform(6) - 1
        end,
    Keys = [case rand:uniform(40) of
                1 -> 2.5;                % a key type the C order does not know
                _ -> gen_key(rand:uniform(2) - 1)
            end || _ <- lists:seq(1, N)],
    maps:from_list([{K, gen_val(D)} || K <- Keys]).

gen_term() ->
    case rand:uniform(3) of
        1 -> {msg, gen_map(2), [gen_map(1)]};
        _ -> gen_map(3)
    end.

%% Whether renaming pids in T may be refused: a map whose keys hold a pid or
%% ref and that has more than 32 pairs or a float key.
refusable(M) when is_map(M) ->
    Ks = maps:keys(M),
    (lists:any(fun has_id/1, Ks) andalso (map_size(M) > 32 orelse lists:any(fun has_odd/1, Ks)))
        orelse lists:any(fun refusable/1, Ks ++ maps:values(M));
refusable(T) when is_tuple(T) -> refusable(tuple_to_list(T));
refusable(L) when is_list(L) -> lists:any(fun refusable/1, L);
refusable(_) -> false.

has_id(X) when is_pid(X); is_reference(X) -> true;
has_id(T) when is_tuple(T) -> has_id(tuple_to_list(T));
has_id(L) when is_list(L) -> lists:any(fun has_id/1, L);
has_id(M) when is_map(M) -> has_id(maps:to_list(M));
has_id(_) -> false.

has_odd(X) when is_float(X); is_map(X) -> true;
has_odd(T) when is_tuple(T) -> has_odd(tuple_to_list(T));
has_odd(L) when is_list(L) -> lists:any(fun has_odd/1, L);
has_odd(_) -> false.

%%--------------------------------------------------------------------
%% Tests
%%--------------------------------------------------------------------

rename_nif(Term, Pairs, Ets) ->
    mce_nif:rename_term(term_to_binary(Term), node_bins(), mce_pid:creation(), Pairs, Ets).

%% The key test: renamed bytes are the VM's bytes, for 3,000 random terms.
maps_exact_test_() ->
    {timeout, 120,
     fun() ->
             setup(),
             rand:seed(exsss, {18, 2, 2026}),
             Results = [exact_one(gen_term()) || _ <- lists:seq(1, 3000)],
             Ok = length([ok || ok <- Results]),
             Moved = length([moved || moved <- Results]),
             Refused = length([refused || refused <- Results]),
             ?assertEqual(3000, Ok + Moved + Refused),
             ?debugFmt("~p unmoved, ~p re-sorted, ~p refused", [Ok, Moved, Refused]),
             %% Most terms had pairs re-sorted, and few were refused.
             ?assert(Moved > 1000),
             ?assert(Refused < 600)
     end}.

exact_one(Term) ->
    Pairs = perm(),
    Rho = maps:from_list(Pairs),
    Expected = rename(Term, Rho),
    case rename_nif(Term, Pairs, false) of
        {ok, Bytes} ->
            ?assertEqual(term_to_binary(binary_to_term(Bytes)), Bytes),
            ?assertEqual(term_to_binary(Expected), Bytes),
            %% Whether some map's pairs had to move.
            Unsorted = term_to_binary(Expected) =/= rename_in_place(Term, Pairs),
            case Unsorted of
                true -> moved;
                false -> ok
            end;
        error ->
            ?assert(refusable(Term)),
            refused
    end.

%% The bytes renamed without re-sorting (the NIF on a term whose maps are
%% wrapped so that their keys hold no pid: the pairs would move only if
%% their keys did).
rename_in_place(Term, Pairs) ->
    %% Renaming inside a binary: rename_term on {Term} with the pids'
    %% bytes patched by hand is what the C side did before re-sorting.
    Bin = term_to_binary(Term),
    patch(Bin, maps:from_list(Pairs)).

patch(Bin, Rho) ->
    Nodes = node_bins(),
    Cr = mce_pid:creation(),
    patch(Bin, Rho, Nodes, Cr, <<>>).

patch(<<88, 118, Len:16, Node:Len/binary, Num:32, 0:32, Cr:32, Rest/binary>>, Rho, Nodes, Cr, Acc) ->
    N = index(Node, Nodes),
    K = maps:get(key(N, Num), Rho, key(N, Num)) band 16#ffffff,
    patch(Rest, Rho, Nodes, Cr, <<Acc/binary, 88, 118, Len:16, Node/binary, K:32, 0:32, Cr:32>>);
patch(<<90, 3:16, 118, Len:16, Node:Len/binary, Cr:32, C:32, Creator:32, M:32, Rest/binary>>,
      Rho, Nodes, Cr, Acc) ->
    N = index(Node, Nodes),
    To = maps:get(key(N, Creator), Rho, key(N, Creator)) band 16#ffffff,
    patch(Rest, Rho, Nodes, Cr, <<Acc/binary, 90, 3:16, 118, Len:16, Node/binary, Cr:32, C:32, To:32, M:32>>);
patch(<<B, Rest/binary>>, Rho, Nodes, Cr, Acc) ->
    patch(Rest, Rho, Nodes, Cr, <<Acc/binary, B>>);
patch(<<>>, _, _, _, Acc) ->
    Acc.

index(Node, Nodes) -> length(lists:takewhile(fun(N) -> N =/= Node end, Nodes)).

%% An ETS table's data as mce_ets keeps it: [{Key, [Object]}] sorted by key.
ets_data(Type, Objects) ->
    ByKey = lists:foldl(fun(O, Acc) ->
                                K = element(1, O),
                                Acc#{K => maps:get(K, Acc, []) ++ [O]}
                        end, #{}, Objects),
    {Type, public, 1, lists:sort(maps:to_list(ByKey)), {none, default, false, false, false}}.

%% Pids in an ETS table's keys are renamed and the objects sorted again
%% into mce_ets's order of keys (mce_ets iterates in key order; its guard,
%% mce_rt_order:ets_keys/1, stops a symmetric search that reads that
%% order); a key etf_order.c does not order (a float, a map) refuses a
%% renaming that moves another key.  Pids elsewhere in the objects are
%% renamed in place.  The bytes are the VM's.
ets_exact_test_() ->
    {timeout, 60,
     fun() ->
             setup(),
             rand:seed(exsss, {18, 3, 2026}),
             Results = [ets_one() || _ <- lists:seq(1, 1000)],
             ?assertEqual([], [R || R <- Results, R =/= ok, R =/= moved, R =/= refused]),
             ?assert(length([ok || ok <- Results]) > 400),
             ?assert(length([moved || moved <- Results]) > 150),
             ?assert(length([refused || refused <- Results]) < 100)
     end}.

ets_one() ->
    Type = pick([set, ordered_set, bag, duplicate_bag]),
    Objects = [{gen_key(rand:uniform(2) - 1), gen_val(1)} || _ <- lists:seq(1, rand:uniform(8) - 1)],
    Data = ets_data(Type, Objects),
    InKeys = lists:usort(lists:append([owners(K) || {K, _} <- element(4, Data)])),
    %% A renaming that moves the numbers in the keys, or one that fixes them.
    Pairs = case rand:uniform(3) of
                1 -> perm();
                _ -> [P || {From, _} = P <- perm_except(InKeys), not lists:member(From, InKeys)]
            end,
    Rho = maps:from_list(Pairs),
    Moves = [K || K <- InKeys, maps:get(K, Rho, K) =/= K],
    Renamed = rename(Data, Rho),
    Expected = case Moves of
                   [] -> Renamed;
                   _ -> setelement(4, Renamed, lists:sort(fun key_le/2, element(4, Renamed)))
               end,
    case rename_nif(Data, Pairs, true) of
        {ok, Bytes} ->
            case {term_to_binary(Expected) =:= Bytes, Moves} of
                {true, []} -> ok;
                {true, _} -> moved;
                {false, _} -> {Data, Pairs, binary_to_term(Bytes), Expected}
            end;
        error ->
            %% A map in the objects whose pairs cannot be re-sorted, or a
            %% moved key beside one that cannot be ordered.
            Odd = lists:any(fun has_odd/1, [K || {K, _} <- element(4, Data)]),
            case refusable(Data) orelse (Moves =/= [] andalso Odd) of
                true -> refused;
                false -> {Data, Pairs, error}
            end;
        Other -> {Data, Pairs, Other}
    end.

%% mce_ets's order of keys: term order, 1 before 1.0.
key_le({A, _}, {B, _}) ->
    A < B orelse (A == B andalso term_to_binary(A) =< term_to_binary(B)).

%% A random bijection of the numbers of each node other than Fixed (keys).
perm_except(Fixed) ->
    lists:append(
      [begin
           Free = [I || I <- lists:seq(1, ?NUMS), not lists:member(key(N, I), Fixed)],
           [{key(N, I), key(N, J)} || {I, J} <- lists:zip(Free, shuffle(Free)), I =/= J]
       end || N <- [0, 1]]).

%% The pid keys a term names: pids, and refs' creators.
owners(P) when is_pid(P) -> {ok, K} = mce_pid:number(P), [K];
owners(R) when is_reference(R) ->
    {ok, K} = case mce_ref:number(R) of
                  error -> mce_ref:tid_number(R);
                  Ok -> Ok
              end,
    Num = K band 16#ffffff,
    [key(K bsr 24, Num bsr 10)];
owners(T) when is_tuple(T) -> owners(tuple_to_list(T));
owners(L) when is_list(L) -> lists:append([owners(X) || X <- L]);
owners(M) when is_map(M) -> owners(maps:to_list(M));
owners(_) -> [].

%% The VM's order of simulated pids and refs, which c_src/etf_order.c
%% follows (OTP 25): pids by number, then node name; refs by node name,
%% then the creator word, then the counter word.  Established here, in the
%% VM, and relied on by the exactness tests above.
order_test() ->
    setup(),
    Pids = [{Num, N} || N <- [0, 1], Num <- [1, 2, 3, 200, 5000]],
    ?assertEqual([pid(N, Num) || {Num, _, N} <- lists:sort([{Num, node_name(N), N} || {Num, N} <- Pids])],
                 lists:sort([pid(N, Num) || {Num, N} <- Pids])),
    Refs = [{N, Cr, C} || N <- [0, 1], Cr <- [1, 2, 300], C <- [0, 1, 2]],
    ?assertEqual([ref(N, Cr, C) || {_, N, Cr, C} <- lists:sort([{node_name(N), N, Cr, C} || {N, Cr, C} <- Refs])],
                 lists:sort([ref(N, Cr, C) || {N, Cr, C} <- Refs])),
    %% A tid (ID word 2 set) after every plain ref of its node.
    ?assert(tid(0, 1, 0) > ref(0, 300, 2)).

node_name(N) -> atom_to_binary(lists:nth(N + 1, ?NODES)).

%% A moved key of a map of more than 32 pairs is refused; values of such a
%% map are renamed.
big_map_test() ->
    setup(),
    Big = maps:from_list([{pid(0, I), I} || I <- lists:seq(1, 12)] ++ [{I, x} || I <- lists:seq(100, 130)]),
    ?assertEqual(error, rename_nif(Big, [{key(0, 1), key(0, 2)}, {key(0, 2), key(0, 1)}], false)),
    Values = maps:from_list([{I, pid(0, I rem 5 + 1)} || I <- lists:seq(1, 40)]),
    Pairs = [{key(0, 1), key(0, 2)}, {key(0, 2), key(0, 1)}],
    {ok, Bytes} = rename_nif(Values, Pairs, false),
    ?assertEqual(term_to_binary(rename(Values, maps:from_list(Pairs))), Bytes).

%%--------------------------------------------------------------------
%% Through mcerlang:check/2: test/tprog_sym_maps.erl
%%--------------------------------------------------------------------

check(Entry, Opts) ->
    mcerlang:check(Entry, Opts#{progress => false}).

states({ok, St}) -> maps:get(states, St);
states({error, #{stats := St}}) -> maps:get(states, St).

verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) -> element(1, V);
verdict({inconclusive, Why, _}) -> {inconclusive, Why}.

%% A simple_one_for_one pool (children as #{Pid => Args}) and servers
%% keeping #{Pid => MRef} and #{MRef => Pid}: with symmetry (auto, the
%% default) and without, the same verdicts; the correct variants take at
%% most a quarter of the states for 3 clients; the bugs are found, and
%% their counterexamples replay.
programs_test_() ->
    {timeout, 600,
     fun() ->
             [begin
                  Entry = {tprog_sym_maps, F, [N, Bug]},
                  Off = check(Entry, #{symmetry => false}),
                  Auto = check(Entry, #{}),
                  ?assertEqual({Entry, verdict(Off)}, {Entry, verdict(Auto)}),
                  ?assertEqual({Entry, case Bug of true -> abnormal_exit; false -> ok end},
                               {Entry, verdict(Auto)}),
                  case Auto of
                      {ok, St} ->
                          ?assertMatch({_, #{symmetry := on, symmetry_keys := renamed}}, {Entry, St}),
                          ?assert(states(Auto) =< states(Off)),
                          N =:= 3 andalso ?assert(4 * states(Auto) =< states(Off));
                      {error, Cex} ->
                          ?assertMatch({Entry, {ok, _}}, {Entry, mcerlang:replay(Cex)})
                  end
              end || F <- [pool, pid_keys, ref_keys], Bug <- [false, true], N <- [2, 3]]
     end}.

%% Four clients: at most a quarter of the states without symmetry (measured:
%% pool 5,494 against 401,497, pid_keys and ref_keys 5,981 against 131,995).
four_clients_test_() ->
    {timeout, 300,
     fun() ->
             [begin
                  Entry = {tprog_sym_maps, F, [4, false]},
                  {ok, Off} = check(Entry, #{symmetry => false}),
                  {ok, Auto} = check(Entry, #{}),
                  ?assert(4 * maps:get(states, Auto) =< maps:get(states, Off))
              end || F <- [pool, pid_keys, ref_keys]]
     end}.

%% Identical clients registered in an ETS table by their pids: with the
%% pids in the table's keys renamed (and the objects sorted again), a
%% fraction of the states (measured: 68 against 1,144 for four clients;
%% 493 when those pids kept their numbers); under small granularity the
%% planted race (a client announces itself before it inserts) is found
%% with and without symmetry, and the counterexample replays.
ets_keys_test_() ->
    {timeout, 120,
     fun() ->
             Entry = {tprog_sym_ets, registry, [4, false]},
             {ok, Off} = check(Entry, #{symmetry => false}),
             {ok, Auto} = check(Entry, #{}),
             ?assertMatch(#{symmetry := on, symmetry_keys := renamed}, Auto),
             ?assert(8 * maps:get(states, Auto) =< maps:get(states, Off)),
             [begin
                  {error, Cex} = check({tprog_sym_ets, registry, [3, true]},
                                       #{granularity => small, symmetry => Sym}),
                  ?assertMatch({abnormal_exit, _, {{badmatch, []}, _}}, maps:get(violation, Cex)),
                  ?assertMatch({Sym, {ok, _}}, {Sym, mcerlang:replay(Cex)})
              end || Sym <- [false, auto]],
             %% A run through tables with several renamed keys: the
             %% counterexample's ETS effects, mapped back to concrete pids,
             %% are sorted again, or the replay diverges (it did).
             [begin
                  {error, Cex} = check({tprog_sym_ets, last_in, [3]}, #{granularity => G}),
                  ?assertMatch(#{symmetry := on}, maps:get(stats, Cex)),
                  ?assertMatch({abnormal_exit, _, {last, _}}, maps:get(violation, Cex)),
                  ?assertMatch({G, {ok, _}}, {G, mcerlang:replay(Cex)})
              end || G <- [big, small]]
     end}.

%% A poolboy-like pool (tprog_sym_pool): workers under a
%% simple_one_for_one supervisor, checked-out workers in a private ETS
%% table keyed by their pids, idle ones in a list under a pid-free key of
%% the pool's state map.  Four identical clients of two workers: a
%% sixteenth of the states (measured 3,263 against 54,274; 4,751 when the
%% pids of ETS keys and of named values were pinned and a set's order
%% ranked its members).  The supervisor's shutdown at the end iterates its
%% children, so the check runs with map keys pinned.  The planted bug is
%% found either way and replays.
pool_ets_test_() ->
    {timeout, 120,
     fun() ->
             {ok, Off} = check({tprog_sym_pool, start, [2, 4, false]}, #{symmetry => false}),
             {ok, Auto} = check({tprog_sym_pool, start, [2, 4, false]}, #{}),
             ?assertMatch(#{symmetry := on}, Auto),
             ?assert(10 * maps:get(states, Auto) =< maps:get(states, Off)),
             [begin
                  {error, Cex} = check({tprog_sym_pool, start, [2, 3, true]}, #{symmetry => Sym}),
                  ?assertMatch({abnormal_exit, _, _}, maps:get(violation, Cex)),
                  ?assertMatch({Sym, {ok, _}}, {Sym, mcerlang:replay(Cex)})
              end || Sym <- [false, auto]]
     end}.

%% Reading an ETS table in key order (first/next, tab2list, a select with
%% several answers, a fold) when its keys name two processes observes
%% their order: the search runs again with the pids in keys pinned, and
%% finds what the plain search finds (the least key is the first client
%% spawned).
ets_key_order_guard_test_() ->
    {timeout, 120,
     fun() ->
             [begin
                  Entry = {tprog_sym_ets, leader, [N, How]},
                  ?assertMatch({Entry, {ok, #{symmetry := on, symmetry_keys := pinned}}},
                               {Entry, check(Entry, #{})}),
                  ?assertMatch({Entry, {ok, #{symmetry := off}}}, {Entry, check(Entry, #{symmetry => false})})
              end || N <- [2, 3], How <- [first, tab2list, select, foldl]],
             %% ets:all/0 lists the tables in the order of their tids,
             %% which carry their makers' pid numbers: no symmetry.
             ?assertMatch({ok, #{symmetry := {off, pid_order}}},
                          check({tprog_sym_ets, tables_leader, []}, #{})),
             %% Without a search, ets_keys/1 reports nothing.
             ?assertEqual(ok, mce_rt_order:ets_keys([self(), spawn(fun() -> ok end)]))
     end}.

%% Iterating a map whose keys name two processes observes their order,
%% which renaming them changes: the search runs again with the pids in map
%% keys pinned, and finds what the plain search finds.
key_order_guard_test() ->
    [begin
         Entry = {tprog_sym_maps, F, [N]},
         ?assertMatch({Entry, {ok, #{symmetry := on, symmetry_keys := pinned}}}, {Entry, check(Entry, #{})}),
         ?assertMatch({Entry, {ok, #{symmetry := off}}}, {Entry, check(Entry, #{symmetry => false})})
     end || N <- [2, 3], F <- [leader, leader_fold, leader_made]],
    ?assertEqual([keys], lists:usort([mce_rt_order:observes(maps, F, 1)
                                      || F <- [keys, values, to_list, iterator]])),
    ?assertEqual([3], mce_rt_order:iterates_map(fold, 3)),
    %% untranslated library code that iterates a map inside
    ?assertEqual(keys, mce_rt_order:observes(proplists, from_map, 1)),
    %% Without a search, map_keys/1 only returns its argument.
    M = #{a => 1},
    ?assertEqual(M, mce_rt_order:map_keys(M)).
