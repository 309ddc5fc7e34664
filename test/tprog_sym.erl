%% Test programs of symmetry reduction (test/mce_symmetry_tests.erl):
%% identical processes, with and without a planted bug.
-module(tprog_sym).
-export([lost_update/1, counter/1, worker/2, ping_ring/1, pinger/1,
         ref_workers/1, ref_worker/1, ghost_done/1, quitter/1]).

%% N identical workers increment a shared counter by get-then-set: two
%% reads before a write lose an update, and the coordinator then fails.
%% The bug needs two workers to interleave, whichever two they are.
lost_update(N) ->
    Counter = spawn(?MODULE, counter, [0]),
    Me = self(),
    _ = [spawn(?MODULE, worker, [Counter, Me]) || _ <- lists:seq(1, N)],
    [receive {done, _W} -> ok end || _ <- lists:seq(1, N)],
    Counter ! {get, self()},
    receive
        {value, N} -> Counter ! stop, ok;
        {value, V} -> error({lost_update, V, N})
    end.

counter(V) ->
    receive
        {get, From} -> From ! {value, V}, counter(V);
        {set, New} -> counter(New);
        stop -> ok
    end.

worker(Counter, Coord) ->
    Counter ! {get, self()},
    receive {value, V} -> Counter ! {set, V + 1} end,
    Coord ! {done, self()}.

%% Identical processes that make refs (make_ref and monitors): the refs'
%% creators are renamed with the processes.
ref_workers(N) ->
    Me = self(),
    Ws = [spawn(?MODULE, ref_worker, [Me]) || _ <- lists:seq(1, N)],
    [begin
         receive {ref, W, R} -> W ! {ack, R} end
     end || W <- Ws],
    [receive {'DOWN', _, process, _, normal} -> ok end || _ <- Ws],
    ok.

ref_worker(Coord) ->
    _ = monitor(process, Coord),
    R = make_ref(),
    erlang:send(Coord, {ref, self(), R}),
    link(Coord),
    receive {ack, R} -> ok end.

%% Identical workers that end while the coordinator still holds their
%% pids (ghosts): the last one standing deadlocks waiting for a reply
%% nobody sends, on any interleaving.
ghost_done(N) ->
    Me = self(),
    Qs = [spawn(?MODULE, quitter, [Me]) || _ <- lists:seq(1, N)],
    [receive {bye, Q} -> ok end || Q <- Qs],
    receive never -> ok end.

quitter(Coord) ->
    Coord ! {bye, self()}.

%% A ring whose processes all ping the next: a deadlock on every run
%% (each waits for a pong nobody sends).
ping_ring(N) ->
    Ps = [spawn(?MODULE, pinger, [self()]) || _ <- lists:seq(1, N)],
    [P ! {next, Q} || {P, Q} <- lists:zip(Ps, tl(Ps) ++ [hd(Ps)])],
    ok.

pinger(_Coord) ->
    receive {next, Q} -> Q ! {ping, self()} end,
    receive {ping, _} -> ok end,
    receive pong -> ok end.
