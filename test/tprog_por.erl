%% Programs for test/mce_por_tests.erl: partial-order reduction
%% (c_src/por.h) on and off must give the same verdicts.
-module(tprog_por).
-export([workers/1, worker/0, chain/1, link_chain/1, go_done/1, go_worker/1,
         deadlock/1, crash/1, crasher/1, assert_race/0, observer/0, observed/0,
         local_steps/1, stepper/2, kill_race/0, victim/0]).

%% N workers that each go straight to a receive, then are told to stop.
workers(N) ->
    Ws = [spawn(?MODULE, worker, []) || _ <- lists:seq(1, N)],
    [W ! stop || W <- Ws],
    ok.

worker() ->
    receive stop -> ok end.

%% A chain of N processes, each spawned by the one before, each waiting
%% for a stop that never comes once it has started the next (the last one
%% ends): a deadlock, or with property abnormal_exit a clean end.  Under
%% small granularity each process's receive is a step of its own, after
%% the spawn.
chain(0) -> ok;
chain(N) ->
    spawn(?MODULE, link_chain, [N - 1]),
    ok.

link_chain(0) -> ok;
link_chain(N) ->
    Next = spawn(?MODULE, link_chain, [N - 1]),
    receive stop -> Next ! stop end.

%% 16 workers spawned at once wait for go and answer done.
go_done(N) ->
    Self = self(),
    Ws = [spawn(?MODULE, go_worker, [Self]) || _ <- lists:seq(1, N)],
    [W ! go || W <- Ws],
    [receive done -> ok end || _ <- Ws],
    ok.

go_worker(Parent) ->
    receive go -> Parent ! done end.

%% Workers that wait for a message that never comes: a deadlock once the
%% entry is done, whatever the order.
deadlock(N) ->
    [spawn(?MODULE, worker, []) || _ <- lists:seq(1, N)],
    ok.

%% One of N workers crashes on its message.
crash(N) ->
    Ws = [spawn(?MODULE, crasher, [I]) || I <- lists:seq(1, N)],
    [W ! go || W <- Ws],
    ok.

crasher(I) ->
    receive go when I =:= 2 -> erlang:error(boom);
            go -> ok
    end.

%% An assertion that fails in one interleaving only: two writers race to
%% tell the reader.
assert_race() ->
    Self = self(),
    spawn(fun() -> Self ! {v, 1} end),
    spawn(fun() -> Self ! {v, 2} end),
    receive {v, X} -> 1 = X end,
    receive {v, _} -> ok end.

%% process_info of another process observes its local steps: the
%% observer (spawned after the worker, so a higher pid) fails only when it
%% runs before the worker's first step, a safe step the reduction takes
%% first.  Only the run without the reduction finds the failure.
observer() ->
    W = spawn(?MODULE, observed, []),
    spawn(fun() ->
                  case erlang:process_info(W, status) of
                      {status, runnable} -> exit(saw_unstarted);
                      _ -> ok
                  end,
                  W ! stop
          end),
    ok.

observed() ->
    receive stop -> ok end.

%% N processes each taking K local steps (a choice of one alternative,
%% under small granularity a yield) before a receive.
local_steps(N) ->
    Self = self(),
    Ps = [spawn(?MODULE, stepper, [Self, 3]) || _ <- lists:seq(1, N)],
    [P ! go || P <- Ps],
    [receive done -> ok end || _ <- Ps],
    ok.

stepper(Parent, 0) ->
    receive go -> Parent ! done end;
stepper(Parent, K) ->
    mcerlang:choice([fun() -> ok end]),
    stepper(Parent, K - 1).

%% A safe step of a process another kills: the kill absorbs it.
kill_race() ->
    V = spawn(?MODULE, victim, []),
    exit(V, kill),
    ok.

victim() ->
    process_flag(trap_exit, false),
    receive _ -> ok end.
