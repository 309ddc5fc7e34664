%% @doc The parallel search's bench (issue 20, `make bench-workers', also
%% the last table of `make bench'): the curve of 1, 2 and 4 workers on the
%% counter server and client-server models.
%%
%% The machines are shared and noisy, so the runs are interleaved: each
%% round checks every model with 1, then 2, then 4 workers, and a row gives
%% the median of the rounds for each.  Per row: the states and transitions
%% (with the reductions off they must be equal for every worker count), the
%% wall time of the check, the CPU seconds of the VM during it
%% (`erlang:statistics(runtime)': every thread), states per wall second,
%% the speed-up over one worker (states/s over the one-worker row's), the
%% efficiency (speed-up over workers) and the speed-up of the fastest
%% round over the fastest one-worker round (`best'), and the median time to
%% the verdict of one worker over this row's (`t1/t').  One worker is the sequential
%% depth-first search, the default; more are the parallel breadth-first
%% search, which with the reductions on cuts with the breadth-first proviso
%% and so may store more states than the depth-first one: states/s is the
%% measure of speed, the wall time to the verdict is shown beside it.
-module(mce_bench_workers).

-export([main/0, main/1, median_row/1, timed_check/2]).

-define(ROUNDS, 5).
-define(MAX_TIME, 120000).

-spec main() -> ok.
main() ->
    main(?ROUNDS).

-spec main(pos_integer()) -> ok.
main(Rounds) ->
    Off = #{reduction => false, symmetry => false},
    Models = [{"client_server(6,2) off", {client_server, start, [6, 2]}, Off},
              {"counter_server(5,2) off", {counter_server, start, [5, 2]}, Off#{timeouts => when_idle}},
              %% With the reductions (the default options), the largest
              %% reduced bench models: one worker passes cut states through
              %% where the parallel search stores them, so the counts differ
              %% and `t1/t' (the time to the verdict) is the measure.
              {"counter_server(7,2) small", {counter_server, start, [7, 2]},
               #{timeouts => when_idle, granularity => small}},
              {"locker(aEx5,1) red", {locker, start, [lists:duplicate(5, {a, exclusive}), 1]},
               #{timeouts => when_idle, property => abnormal_exit}}],
    Workers = [1, 2, 4],
    io:format("~nworkers (issue 20): ~b schedulers online, ~b rounds interleaved, medians~n",
              [erlang:system_info(schedulers_online), Rounds]),
    [mce_translate:ensure(M) || {_, {M, _, _}, _} <- Models],
    Runs = [{Label, W, run(Entry, Opts#{workers => W})}
            || _ <- lists:seq(1, Rounds), {Label, Entry, Opts} <- Models, W <- Workers],
    io:format("~-26s ~7s ~9s ~10s ~9s ~8s ~10s ~8s ~6s ~5s ~5s~n",
              ["model", "workers", "states", "trans", "wall ms", "cpu s", "states/s", "speedup", "eff",
               "best", "t1/t"]),
    lists:foreach(
      fun({Label, _, _}) ->
              Rows = fun(W) -> [R || {L, W1, R} <- Runs, L =:= Label, W1 =:= W] end,
              Base = Rows(1),
              [print(Label, W, Rows(W), Base) || W <- Workers]
      end, Models),
    ok.

run(Entry, Opts) ->
    {Result, Wall, Cpu} = timed_check(Entry, Opts#{max_time => ?MAX_TIME, progress => false}),
    Stats = case Result of
                {ok, St} -> St;
                {error, #{stats := St}} -> St;
                {inconclusive, _, St} -> St
            end,
    #{verdict => element(1, Result), states => maps:get(states, Stats),
      transitions => maps:get(transitions, Stats), wall_us => Wall,
      cpu_s => Cpu, workers => maps:get(workers, Stats, 1)}.

%% @doc One check, measured: its result, the wall microseconds and the
%% VM's CPU seconds (every thread) it took (also mce_bench_abstraction's).
-spec timed_check(mcerlang:entry(), map()) -> {mcerlang:result(), integer(), float()}.
timed_check(Entry, Opts) ->
    erlang:garbage_collect(),
    {Cpu0, _} = erlang:statistics(runtime),
    T0 = erlang:monotonic_time(microsecond),
    Result = mcerlang:check(Entry, Opts),
    Wall = erlang:monotonic_time(microsecond) - T0,
    {Cpu1, _} = erlang:statistics(runtime),
    {Result, Wall, (Cpu1 - Cpu0) / 1000}.

%% The run of median wall time (also mce_bench_cluster's).
-spec median_row([#{wall_us := integer(), atom() => term()}, ...]) -> map().
median_row(Rows) ->
    Sorted = lists:sort(fun(A, B) -> maps:get(wall_us, A) =< maps:get(wall_us, B) end, Rows),
    lists:nth((length(Sorted) + 1) div 2, Sorted).

%% A row: the median run, its speed-up over the one-worker median, and the
%% speed-up of the fastest run over the fastest one-worker run (`best':
%% on a shared machine, other tenants only ever add time).
print(Label, W, Runs, BaseRuns) ->
    #{states := S, transitions := T, wall_us := Us, cpu_s := Cpu, verdict := V} = median_row(Runs),
    Speedup = rate(median_row(Runs)) / rate(median_row(BaseRuns)),
    Best = rate(fastest(Runs)) / rate(fastest(BaseRuns)),
    ToVerdict = maps:get(wall_us, median_row(BaseRuns)) / max(Us, 1),
    io:format("~-26s ~7b ~9b ~10b ~9b ~8.2f ~10b ~8.2f ~6.2f ~5.2f ~5.2f~s~n",
              [Label, W, S, T, Us div 1000, Cpu, round(rate(median_row(Runs))), Speedup, Speedup / W,
               Best, ToVerdict, case V of ok -> ""; _ -> io_lib:format("  (~p)", [V]) end]).

rate(#{states := S, wall_us := Us}) ->
    S * 1000000 / max(Us, 1).

fastest(Rows) ->
    hd(lists:sort(fun(A, B) -> maps:get(wall_us, A) =< maps:get(wall_us, B) end, Rows)).
