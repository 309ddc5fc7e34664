%% @doc Guards a running check: stops a step that runs away, and the check
%% itself when its caller goes away.
%%
%% The check worker counts its steps in an atomics array (slot 1: steps
%% started, slot 2: number of the simulated process running, 0 between
%% steps).  The watchdog polls the worker's reductions: when one step has
%% used more than the budget, the worker is killed and the caller is told
%% which simulated process was running and where (a loop that never
%% reaches a receive would otherwise hang the checker).  If the caller
%% dies, the worker is killed too, so an abandoned check frees its state.
-module(mce_watchdog).

-export([start/3, step_started/2, step_ended/1]).

-define(POLL_MS, 100).

%% @doc Watches Worker on behalf of Caller.  Returns the counter the
%% worker updates.
-spec start(pid(), pid(), pos_integer()) -> atomics:atomics_ref().
start(Caller, Worker, Budget) ->
    Counter = atomics:new(2, [{signed, false}]),
    spawn(fun() ->
                  CallerRef = monitor(process, Caller),
                  WorkerRef = monitor(process, Worker),
                  loop(#{caller => Caller, caller_ref => CallerRef, worker => Worker,
                         worker_ref => WorkerRef, counter => Counter, budget => Budget,
                         step => 0, step_start => reductions(Worker)})
          end),
    Counter.

-spec step_started(atomics:atomics_ref() | undefined, non_neg_integer()) -> ok.
step_started(undefined, _Pid) -> ok;
step_started(Counter, Pid) ->
    atomics:add(Counter, 1, 1),
    atomics:put(Counter, 2, Pid).

-spec step_ended(atomics:atomics_ref() | undefined) -> ok.
step_ended(undefined) -> ok;
step_ended(Counter) ->
    atomics:put(Counter, 2, 0).

loop(#{caller_ref := CallerRef, worker_ref := WorkerRef, worker := Worker} = St) ->
    receive
        {'DOWN', CallerRef, process, _, _} ->
            exit(Worker, kill);
        {'DOWN', WorkerRef, process, _, _} ->
            ok
    after ?POLL_MS ->
            loop(poll(St))
    end.

poll(#{counter := Counter, worker := Worker, step := Step, step_start := Start,
       budget := Budget, caller := Caller} = St) ->
    Now = reductions(Worker),
    case atomics:get(Counter, 1) of
        Step ->
            Running = atomics:get(Counter, 2),
            case Running =/= 0 andalso Now - Start > Budget of
                true ->
                    Where = case process_info(Worker, current_stacktrace) of
                                {current_stacktrace, Stack} -> where(Stack);
                                undefined -> undefined
                            end,
                    exit(Worker, kill),
                    Caller ! {mce_runaway, Worker, Running, Where, Budget},
                    exit(normal);
                false ->
                    St
            end;
        NewStep ->
            St#{step := NewStep, step_start := Now}
    end.

reductions(Pid) ->
    case process_info(Pid, reductions) of
        {reductions, R} -> R;
        undefined -> 0
    end.

%% The innermost frame of the program's own code, with original names.
where(Stack) ->
    Own = [F || {M, _, _, _} = F <- Stack, lists:prefix("mce$", atom_to_list(M))],
    case mce_exec:clean_stack(Own) of
        [{M, F, A, Info} | _] ->
            {M, F, arity(A), proplists:get_value(file, Info), proplists:get_value(line, Info)};
        [] -> undefined
    end.

arity(A) when is_list(A) -> length(A);
arity(A) -> A.
