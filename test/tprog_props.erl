%% @doc Programs and monitors for the property tests (mce_property_tests):
%% props, probes, safety monitors and invariants.
-module(tprog_props).
-behaviour(mcerlang_monitor).

-export([mutex/1, worker/3, lock_server/1, counter_race/0]).
-export([init/1, state_change/3]).

%% Two workers enter a critical section, guarded by a lock server or not.
%% A worker is at prop({in_cs, I}) while inside.
mutex(Locked) ->
    Lock = case Locked of
               true -> spawn(?MODULE, lock_server, [{free, 2}]);
               false -> none
           end,
    [spawn(?MODULE, worker, [I, Lock, self()]) || I <- [1, 2]],
    [receive {done, I} -> ok end || I <- [1, 2]],
    ok.

worker(I, Lock, Parent) ->
    acquire(Lock),
    mcerlang:prop({in_cs, I}),
    mcerlang:probe(left_cs, I),
    release(Lock),
    Parent ! {done, I}.

acquire(none) -> ok;
acquire(Lock) -> Lock ! {acquire, self()}, receive granted -> ok end.

release(none) -> ok;
release(Lock) -> Lock ! release.

%% Serves N acquire/release pairs, then ends.
lock_server({free, 0}) ->
    ok;
lock_server({free, N}) ->
    receive {acquire, P} -> P ! granted, lock_server({held, N}) end;
lock_server({held, N}) ->
    receive release -> lock_server({free, N - 1}) end.

%% Two increments of a shared counter process, read then write.
counter_race() ->
    C = spawn(fun() -> cell(0) end),
    Self = self(),
    [spawn(fun() -> C ! {get, self()}, receive {val, V} -> C ! {set, V + 1} end, Self ! done end)
     || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    C ! {get, self()},
    receive {val, V} -> C ! stop, mcerlang:prop({final, V}) end.

cell(V) ->
    receive
        {get, P} -> P ! {val, V}, cell(V);
        {set, N} -> cell(N);
        stop -> ok
    end.

%% The mutual exclusion monitor: at most one process at an in_cs prop.
%% Its state counts the probes left_cs seen (a monitor may remember).
init(Max) ->
    {ok, {Max, 0}}.

state_change(#{processes := Procs, probes := Probes}, {Max, Left}, _Step) ->
    InCs = [I || #{props := Props} <- Procs, {in_cs, I} <- Props],
    Left1 = Left + length([x || {left_cs, _} <- Probes]),
    if
        length(InCs) > 1 -> {mutex_violated, InCs};
        Left1 > Max -> {too_many_exits, Left1};
        true -> {ok, {Max, Left1}}
    end.
