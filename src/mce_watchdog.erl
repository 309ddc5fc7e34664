%% @doc Guards a running check: stops a step that runs away, and the check
%% itself when its caller goes away.
%%
%% The check worker counts its steps in an atomics array (slot 1: steps
%% started, slot 2: number of the simulated process running, 0 between
%% steps).  The watchdog polls the worker's reductions: when one step has
%% used more than the budget, the worker is killed and the caller is told
%% which simulated process was running and where (a loop that never
%% reaches a receive would otherwise hang the checker).  It also sums the
%% off-heap binaries the worker holds during a step against the step's
%% limit: max_heap_size does not count them (OTP 25 has no
%% include_shared_binaries), so a binary built piecewise would otherwise
%% grow until the VM runs out of memory.  If the caller dies, the worker is
%% killed too, so an abandoned check frees its state.
-module(mce_watchdog).

-export([start/3, start/4, step_started/2, step_ended/1]).

-define(POLL_MS, 100).
%% Two seconds waiting in one step: blocked for good (see blocked/2).
-define(BLOCKED_POLLS, 20).

%% @doc Watches Worker on behalf of Caller.  Returns the counter the
%% worker updates.
-spec start(pid(), pid(), pos_integer()) -> atomics:atomics_ref().
start(Caller, Worker, Budget) ->
    start(Caller, Worker, Budget, infinity).

%% @doc As start/3, also stopping a step while the worker holds more than
%% BinaryLimit bytes of off-heap binaries.
-spec start(pid(), pid(), pos_integer(), pos_integer() | infinity) -> atomics:atomics_ref().
start(Caller, Worker, Budget, BinaryLimit) ->
    Counter = atomics:new(2, [{signed, false}]),
    spawn(fun() ->
                  CallerRef = monitor(process, Caller),
                  WorkerRef = monitor(process, Worker),
                  loop(#{caller => Caller, caller_ref => CallerRef, worker => Worker,
                         worker_ref => WorkerRef, counter => Counter, budget => Budget,
                         binary_limit => BinaryLimit,
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
            if
                Running =/= 0, Now - Start > Budget ->
                    Where = worker_where(Worker),
                    exit(Worker, kill),
                    Caller ! {mce_runaway, Worker, Running, Where, Budget},
                    exit(normal);
                Running =/= 0 ->
                    binaries(Running, St),
                    blocked(Now, St);
                true ->
                    St#{idle_polls => 0}
            end;
        NewStep ->
            St#{step := NewStep, step_start := Now, idle_polls => 0}
    end.

%% A step whose worker holds more off-heap binary bytes than the limit:
%% stopped before it takes the VM's memory.
binaries(_Running, #{binary_limit := infinity}) ->
    ok;
binaries(Running, #{worker := Worker, caller := Caller, binary_limit := Limit}) ->
    case process_info(Worker, binary) of
        {binary, Bins} ->
            case lists:sum([Size || {_, Size, _} <- Bins]) of
                Bytes when Bytes > Limit ->
                    exit(Worker, kill),
                    Caller ! {mce_binary_limit, Worker, Running, Bytes, Limit},
                    exit(normal);
                _ -> ok
            end;
        undefined -> ok
    end.

%% A step whose worker waits in a receive, its reductions unchanged, for
%% ?BLOCKED_POLLS polls in a row: the program ran a real receive in code
%% the checker did not translate (a fun made by erlang:make_fun/3, a fun
%% passed in the env option, ...), which no message will ever end.  The
%% worker is stopped and the caller told where, instead of a silent hang
%% (max_time is looked at only between steps).
blocked(Now, #{worker := Worker, caller := Caller, counter := Counter} = St) ->
    Waiting = process_info(Worker, status) =:= {status, waiting},
    Still = Now =:= maps:get(last_reductions, St, -1),
    Polls = case Waiting andalso Still of
                true -> maps:get(idle_polls, St, 0) + 1;
                false -> 0
            end,
    case Polls >= ?BLOCKED_POLLS of
        true ->
            Where = case process_info(Worker, current_stacktrace) of
                        {current_stacktrace, Stack} -> where_blocked(Stack);
                        undefined -> undefined
                    end,
            Running = atomics:get(Counter, 2),
            exit(Worker, kill),
            Caller ! {mce_blocked, Worker, Running, Where},
            exit(normal);
        false ->
            St#{idle_polls => Polls, last_reductions => Now}
    end.

%% Blocked in untranslated code: the innermost frame of a user module
%% (outside OTP and the checker), else of the program's translated code.
where_blocked(Stack) ->
    Lib = code:lib_dir(),
    User = [{M, F, arity(A), proplists:get_value(file, Info), proplists:get_value(line, Info)}
            || {M, F, A, Info} <- Stack,
               not lists:prefix("mce", atom_to_list(M)), M =/= mcerlang,
               case code:which(M) of
                   Path when is_list(Path) -> not lists:prefix(Lib, Path);
                   _ -> false
               end],
    case User of
        [First | _] -> First;
        [] -> where(Stack)
    end.

worker_where(Worker) ->
    case process_info(Worker, current_stacktrace) of
        {current_stacktrace, Stack} -> where(Stack);
        undefined -> undefined
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
