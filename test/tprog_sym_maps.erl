%% Test programs of symmetry reduction with pids in map keys and values
%% (test/mce_symmetry_maps_tests.erl): OTP's common shapes of identical
%% processes, each in a correct and a buggy variant.
%%
%%   pool(N, Bug)      a simple_one_for_one supervisor (its children kept as
%%                     #{Pid => Args}) starts a worker per client; N identical
%%                     clients each get one, hand it a job, and wait for the
%%                     result.  The workers add to a shared counter; the buggy
%%                     ones by get-then-set, which loses an update when two
%%                     interleave, and the entry then fails.
%%   pid_keys(N, Bug)  a gen_server keeps #{Pid => MRef} of its clients (it
%%                     monitors each one that joins); N identical clients join
%%                     and leave.  The buggy server forgets to demonitor on
%%                     leave, and crashes on the 'DOWN' of a client it no
%%                     longer knows.
%%   ref_keys(N, Bug)  the same server keeping #{MRef => Pid}; the buggy one
%%                     removes a 'DOWN''s client by its pid instead of its
%%                     ref, and the entry finds it still registered.
%%   leader(N)         the #{Pid => MRef} server names the least key of its
%%                     map (maps:keys/1) the leader: always the first client
%%                     spawned, which the entry checks.  Correct on the VM;
%%                     renaming pids in the map's keys would let another
%%                     client lead, so the guard (mce_rt_order:map_keys/1)
%%                     makes the symmetric search run again with them pinned.
%%   leader_fold(N)    the same, the least key found by iterating the map
%%                     with `fun maps:fold/3' called as a fun value.
%%   leader_made(N)    the same with a fun of maps:fold/3 made at run time
%%                     (erlang:make_fun/3 of a computed module name).
-module(tprog_sym_maps).
%% The gen_server and the supervisor callbacks (init/1 serves both).

-export([pool/2, pid_keys/2, ref_keys/2, leader/1, leader_fold/1, leader_made/1]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export([start_worker/2, counter/1, pool_client/3, member_client/2, joiner/2]).

%%--------------------------------------------------------------------
%% A simple_one_for_one pool
%%--------------------------------------------------------------------

pool(N, Bug) ->
    Counter = spawn(?MODULE, counter, [0]),
    {ok, Sup} = supervisor:start_link(?MODULE, {pool, Counter, Bug}),
    Me = self(),
    _ = [spawn(?MODULE, pool_client, [Sup, Me, I]) || I <- lists:duplicate(N, 1)],
    [receive {done, _} -> ok end || _ <- lists:seq(1, N)],
    Counter ! {get, self()},
    receive
        {value, N} -> Counter ! stop, ok;
        {value, V} -> error({lost_update, V, N})
    end.

pool_client(Sup, Coord, X) ->
    {ok, W} = supervisor:start_child(Sup, []),
    W ! {job, self(), X},
    receive {result, W, ok} -> ok end,
    Coord ! {done, self()}.

start_worker(Counter, Bug) ->
    {ok, spawn_link(fun() -> pool_worker(Counter, Bug) end)}.

pool_worker(Counter, Bug) ->
    receive
        {job, From, X} ->
            case Bug of
                false ->
                    Counter ! {add, X};
                true ->
                    Counter ! {get, self()},
                    receive {value, V} -> Counter ! {set, V + X} end
            end,
            From ! {result, self(), ok}
    end.

counter(V) ->
    receive
        {get, From} -> From ! {value, V}, counter(V);
        {set, New} -> counter(New);
        {add, X} -> counter(V + X);
        stop -> ok
    end.

%%--------------------------------------------------------------------
%% A server keeping its clients' monitors in a map
%%--------------------------------------------------------------------

pid_keys(N, Bug) -> members(N, {pid_keys, Bug}).

ref_keys(N, Bug) -> members(N, {ref_keys, Bug}).

members(N, {Keys, Bug}) ->
    Me = self(),
    {ok, Server} = gen_server:start(?MODULE, {Keys, Bug, Me}, []),
    _ = [spawn(?MODULE, member_client, [Server, Me]) || _ <- lists:seq(1, N)],
    %% Each client is gone once: it left, or the server saw its 'DOWN'.
    [receive {gone, _How} -> ok end || _ <- lists:seq(1, N)],
    case gen_server:call(Server, count, infinity) of
        0 -> gen_server:stop(Server);
        Left -> error({still_registered, Left})
    end.

%% Each client joins, then leaves or just ends (the server then sees its
%% 'DOWN'), a choice the checker explores both ways.
member_client(Server, Coord) ->
    ok = gen_server:call(Server, join, infinity),
    case mcerlang:choice([fun() -> leave end, fun() -> die end]) of
        leave ->
            ok = gen_server:call(Server, leave, infinity),
            Coord ! {gone, left};
        die ->
            ok
    end.

leader(N) ->
    leader(N, leader).

leader_fold(N) ->
    leader(N, leader_fold).

leader_made(N) ->
    leader(N, leader_made).

leader(N, Ask) ->
    Me = self(),
    {ok, Server} = gen_server:start(?MODULE, {pid_keys, false, Me}, []),
    [First | _] = Cs = [spawn(?MODULE, joiner, [Server, Me]) || _ <- lists:seq(1, N)],
    [receive {joined, _} -> ok end || _ <- Cs],
    case gen_server:call(Server, Ask, infinity) of
        First -> [C ! stop || C <- Cs], ok;
        Other -> error({leader, Other, First})
    end.

joiner(Server, Coord) ->
    ok = gen_server:call(Server, join, infinity),
    Coord ! {joined, self()},
    receive stop -> ok end.

%%--------------------------------------------------------------------
%% Callbacks
%%--------------------------------------------------------------------

init({pool, Counter, Bug}) ->
    {ok, {#{strategy => simple_one_for_one},
          [#{id => worker, start => {?MODULE, start_worker, [Counter, Bug]},
             restart => temporary}]}};
init({Keys, Bug, Coord}) ->
    {ok, {Keys, Bug, Coord, #{}}}.

handle_call(join, {Pid, _}, {pid_keys, Bug, Coord, M}) ->
    {reply, ok, {pid_keys, Bug, Coord, M#{Pid => monitor(process, Pid)}}};
handle_call(join, {Pid, _}, {ref_keys, Bug, Coord, M}) ->
    {reply, ok, {ref_keys, Bug, Coord, M#{monitor(process, Pid) => Pid}}};
handle_call(leave, {Pid, _}, {pid_keys, Bug, Coord, M}) ->
    #{Pid := Ref} = M,
    Bug orelse demonitor(Ref, [flush]),
    {reply, ok, {pid_keys, Bug, Coord, maps:remove(Pid, M)}};
handle_call(leave, {Pid, _}, {ref_keys, Bug, Coord, M}) ->
    [Ref] = [R || {R, P} <- maps:to_list(M), P =:= Pid],
    demonitor(Ref, [flush]),
    {reply, ok, {ref_keys, Bug, Coord, maps:remove(Ref, M)}};
handle_call(leader, _From, {pid_keys, _, _, M} = S) ->
    {reply, hd(maps:keys(M)), S};
handle_call(leader_made, _From, {pid_keys, _, _, M} = S) ->
    Fold = erlang:make_fun(list_to_atom("ma" ++ "ps"), fold, 3),
    {reply, lists:last(Fold(fun(K, _, Acc) -> [K | Acc] end, [], M)), S};
handle_call(leader_fold, _From, {pid_keys, _, _, M} = S) ->
    Fold = fun maps:fold/3,
    {reply, lists:last(Fold(fun(K, _, Acc) -> [K | Acc] end, [], M)), S};
handle_call(count, _From, {_, _, _, M} = S) ->
    {reply, map_size(M), S}.

handle_cast(_, S) -> {noreply, S}.

handle_info({'DOWN', _Ref, process, Pid, _}, {pid_keys, Bug, Coord, M}) ->
    %% The buggy server left a monitor behind: a client that left is gone
    %% from the map already, and this match fails.
    #{Pid := _} = M,
    Coord ! {gone, down},
    {noreply, {pid_keys, Bug, Coord, maps:remove(Pid, M)}};
handle_info({'DOWN', Ref, process, Pid, _}, {ref_keys, Bug, Coord, M}) ->
    Key = case Bug of
              false -> Ref;
              true -> Pid
          end,
    Coord ! {gone, down},
    {noreply, {ref_keys, Bug, Coord, maps:remove(Key, M)}}.
