%% @doc Programs for the LTL tests (mce_ltl_check_tests): liveness under
%% weak fairness, probes and props as predicates, and the database of
%% ../shared/papers/003_7dd3bcd1accd73d3.txt (Example 1, Section 9).
-module(tprog_ltl).
-export([spin_and_work/0, spinner/0, worker/0, ping_pong/1, pinger/2, ponger/0,
         db_main/1, database/2, pipelined_client/3, polite_client/3, never_done/0,
         crash_later/0, s2_locker/1, s2_lock_server/0, s2_client/0]).

%% A process that spins forever (each step leads back to the same state)
%% and a worker that must eventually finish.  Only fairness makes it finish.
spin_and_work() ->
    spawn(?MODULE, spinner, []),
    spawn(?MODULE, worker, []),
    ok.

spinner() ->
    self() ! tick,
    receive tick -> spinner() end.

worker() ->
    mcerlang:prop(done),
    ok.

%% Ping-pong N rounds; each pong is a probe.
ping_pong(N) ->
    Pong = spawn(?MODULE, ponger, []),
    spawn(?MODULE, pinger, [Pong, N]),
    ok.

pinger(Pong, 0) ->
    Pong ! stop;
pinger(Pong, N) ->
    Pong ! {ping, self()},
    receive pong -> pinger(Pong, N - 1) end.

ponger() ->
    receive
        {ping, From} -> mcerlang:probe(pong, From), From ! pong, ponger();
        stop -> mcerlang:prop(stopped)
    end.

never_done() ->
    receive never -> mcerlang:prop(done) end.

crash_later() ->
    spawn(fun() -> mcerlang:prop(before), erlang:error(boom) end),
    ok.

%% The database of paper 003, Example 1.  `Mutant' accepts the value of an
%% allocation from any client, not only from the client that allocated.
db_main(Mutant) ->
    DB = spawn(?MODULE, database, [[], Mutant]),
    spawn(?MODULE, pipelined_client, [DB, a, 1]),
    pipelined_client(DB, a, 2).

database(L, Mutant) ->
    mcerlang:prop(top),
    receive
        {allocate, Key, P} ->
            mcerlang:prop({allocate, P}),
            case lookup(Key, L) of
                fail ->
                    P ! free,
                    case Mutant of
                        false ->
                            receive
                                {value, V, P} ->
                                    mcerlang:prop({value, P}),
                                    database([{Key, V} | L], Mutant)
                            end;
                        true ->
                            receive
                                {value, V, Q} ->
                                    mcerlang:prop({value, Q}),
                                    database([{Key, V} | L], Mutant)
                            end
                    end;
                {succ, _} ->
                    P ! mcerlang:prop(allocated),
                    database(L, Mutant)
            end;
        {lookup, Key, P} ->
            mcerlang:prop(lookup),
            P ! lookup(Key, L),
            database(L, Mutant)
    end.

lookup(Key, L) ->
    case lists:keyfind(Key, 1, L) of
        {Key, V} -> {succ, V};
        false -> fail
    end.

%% Sends the key and its value at once, without waiting for `free'.
pipelined_client(DB, Key, V) ->
    DB ! {allocate, Key, self()},
    DB ! {value, V, self()},
    receive
        free -> ok;
        allocated -> ok
    end,
    DB ! {lookup, Key, self()},
    receive _ -> ok end.

%% The client of the paper: the value only after `free'.
polite_client(DB, Key, V) ->
    DB ! {allocate, Key, self()},
    receive
        free -> DB ! {value, V, self()};
        allocated -> ok
    end.

%% The locker of ../shared/ACCEPTANCE.md E2.1 (AC-10, AC-15): one server
%% grants a lock to one client at a time, the first request in its mailbox
%% first; clients request, get `ok', release, forever.  Registered as
%% `locker', `c1', `c2', ... so that predicates can name them.
s2_locker(N) ->
    register(locker, spawn(?MODULE, s2_lock_server, [])),
    [register(list_to_atom("c" ++ integer_to_list(I)), spawn(?MODULE, s2_client, []))
     || I <- lists:seq(1, N)],
    ok.

s2_lock_server() ->
    receive
        {req, P} ->
            P ! ok,
            receive {rel, P} -> s2_lock_server() end
    end.

s2_client() ->
    locker ! {req, self()},
    receive ok -> locker ! {rel, self()} end,
    s2_client().
