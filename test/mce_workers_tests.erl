%% @doc The parallel search (`workers => N', mce_workers and
%% c_src/search_pool.c): the same verdicts and, with the reductions off,
%% the same state and transition counts as the sequential search, on every
%% program of the reduction tests and on the bench models; counterexamples
%% that replay; the limits, mcerlang:stop/1 and errors of a worker; the
%% fallbacks and the stats.
-module(mce_workers_tests).
-include_lib("eunit/include/eunit.hrl").

-define(QUIET, #{progress => false}).
-define(FULL, #{progress => false, reduction => false, symmetry => false}).

%%--------------------------------------------------------------------
%% The same state space
%%--------------------------------------------------------------------

%% The bench models with the reductions off: every state is found once, by
%% one worker, whatever the interleaving of the workers.
same_counts_test_() ->
    Locker = #{timeouts => when_idle, property => abnormal_exit},
    Models = [{{client_server, start, [3, 2]}, #{}},
              {{client_server, start, [4, 1]}, #{}},
              {{locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]}, Locker},
              {{spawn_chain, start, [6]}, #{}},
              {{go_workers, start, [4]}, #{}}],
    [{timeout, 120,
      fun() ->
              {ok, One} = mcerlang:check(E, maps:merge(?FULL, O)),
              [begin
                   {ok, St} = mcerlang:check(E, maps:merge(?FULL, O#{workers => W})),
                   ?assertEqual({E, W, maps:with([states, transitions], One)},
                                {E, W, maps:with([states, transitions], St)}),
                   ?assertEqual(W, maps:get(workers, St)),
                   Shares = maps:get(worker_stats, St),
                   ?assertEqual(W, length(Shares)),
                   ?assertEqual(maps:get(states, St),
                                lists:sum([maps:get(states, Sh) || Sh <- Shares]))
               end || W <- [2, 4]]
      end} || {E, O} <- Models]
    ++ [{timeout, 120,
         fun() ->
                 E = {counter_server, start, [3, 2]},
                 O = ?FULL#{timeouts => when_idle},
                 {ok, One} = mcerlang:check(E, O),
                 {ok, Two} = mcerlang:check(E, O#{workers => 2}),
                 ?assertEqual(maps:with([states, transitions], One),
                              maps:with([states, transitions], Two))
         end}].

%% Every program of the reduction tests (differential programs, OTP
%% scenarios, bug hunts, examples), observed as mce_reduction_tests does:
%% the deadlock verdict, and every abnormal exit reason reachable (each
%% reason found is added to `treat_as_normal' and the check runs again
%% until it holds), with 1 and 2 workers.  They must agree, and so must the
%% state and transition counts of the checks that exhaust the state space;
%% the parallel search's counterexamples replay.
same_verdicts_test_() ->
    {timeout, 1200,
     fun() ->
             Compared = [compare(P) || P <- mce_reduction_tests:programs()],
             N = length([x || compared <- Compared]),
             ?assert(N >= length(Compared) * 9 div 10)
     end}.

%% With partial-order reduction the parallel search cuts with its own
%% proviso (a step toward a state it claimed, or toward one already fully
%% expanded): the same observations as the sequential reduced search, the
%% counts aside (each search keeps the states its proviso needs).
same_verdicts_reduced_test_() ->
    {timeout, 1200,
     fun() ->
             Compared = [compare(P, #{reduction => true}) || P <- mce_reduction_tests:programs()],
             N = length([x || compared <- Compared]),
             ?assert(N >= length(Compared) * 9 div 10)
     end}.

compare(Program) ->
    compare(Program, #{}).

compare({Label, Entry, Opts, _Sym}, Mode) ->
    Base = maps:merge(maps:merge(Opts, ?FULL#{max_states => 20000, max_time => 20000}), Mode),
    Counted = fun(Obs) when map_get(reduction, Base) -> without_counts(Obs);
                 (Obs) -> Obs
              end,
    try {observe(Entry, Base), observe(Entry, Base#{workers => 2})} of
        {{One, _}, {Two, Cexs}} ->
            ?assertEqual({Label, Counted(One)}, {Label, Counted(Two)}),
            [?assertMatch({Label, {ok, _}}, {Label, mcerlang:replay(Cex)}) || Cex <- lists:sublist(Cexs, 2)],
            compared
    catch throw:inconclusive -> skipped
    end.

observe(Entry, Run) ->
    case maps:is_key(ltl, Run) orelse maps:is_key(monitor, Run) orelse maps:is_key(invariant, Run) of
        true ->
            outcome(mcerlang:check(Entry, Run), []);
        false ->
            {Deadlock, C1} = outcome(mcerlang:check(Entry, Run#{property => [deadlock]}), []),
            {Exits, C2} = exits(Entry, Run#{property => [abnormal_exit]},
                                maps:get(treat_as_normal, Run, [normal, shutdown]), [], []),
            {#{deadlock => Deadlock, exits => Exits}, C1 ++ C2}
    end.

without_counts(#{exits := {Reasons, _}} = Obs) ->
    maps:map(fun(deadlock, {ok, _}) -> ok;
                (exits, _) -> Reasons;
                (_, V) -> V
             end, Obs);
without_counts({ok, _}) -> ok;
without_counts(Obs) -> Obs.

outcome({ok, St}, Cexs) -> {{ok, maps:with([states, transitions], St)}, Cexs};
outcome({error, #{violation := V} = Cex}, Cexs) -> {{violation, kind(V)}, [Cex | Cexs]};
outcome({inconclusive, _, _}, _) -> throw(inconclusive).

%% The reasons, and the counts of the last check, which holds.
exits(Entry, Run, Normal, Reasons, Cexs) when length(Reasons) < 16 ->
    case mcerlang:check(Entry, Run#{treat_as_normal => Normal ++ Reasons}) of
        {ok, St} -> {{lists:sort(Reasons), maps:with([states, transitions], St)}, Cexs};
        {error, #{violation := {abnormal_exit, _, Reason}} = Cex} ->
            exits(Entry, Run, Normal, [Reason | Reasons], [Cex | Cexs]);
        {error, #{violation := V}} -> erlang:error({unexpected_violation, V});
        {inconclusive, _, _} -> throw(inconclusive)
    end;
exits(_Entry, _Run, _Normal, _Reasons, _Cexs) ->
    throw(inconclusive).

%% Which violation of a kind a search meets first depends on its order.
kind({monitor, Module, _}) -> {monitor, Module};
kind(V) when is_tuple(V) -> element(1, V);
kind(V) -> V.

%% The parallel search is breadth-first: its counterexample is a path of
%% the program, and no shorter than the sequential breadth-first one.
counterexample_replays_and_is_short_test_() ->
    {timeout, 120,
     fun() ->
             E = {locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
             {error, Cex} = mcerlang:check(E, ?QUIET#{workers => 2}),
             {error, Shortest} = mcerlang:check(E, ?QUIET#{shortest => true}),
             ?assertMatch({ok, _}, mcerlang:replay(Cex)),
             ?assert(length(maps:get(trace, Cex)) >= length(maps:get(trace, Shortest))),
             ?assertEqual(2, maps:get(workers, maps:get(stats, Cex)))
     end}.

%% With the reductions on (the default), the parallel search cuts with
%% the breadth-first proviso: the verdicts are the sequential search's.
reductions_keep_verdicts_test_() ->
    {timeout, 120,
     fun() ->
             ?assertMatch({ok, _}, mcerlang:check({client_server, start, [4, 2]}, ?QUIET#{workers => 2})),
             ?assertMatch({ok, _}, mcerlang:check({go_workers, start, [8]}, ?QUIET#{workers => 2})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, {mutex_violation, _, _, _}}}},
                          mcerlang:check({locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
                                         ?QUIET#{workers => 2, property => abnormal_exit}))
     end}.

%% The cycle proviso: a spinner whose poll returns to a state already seen
%% (safe, invisible) must not be taken alone there, or the process that
%% crashes never runs.  Fails when the parallel search cuts steps toward
%% any state seen (checked by hand).  With the spinner going round two
%% states, it fails when the parallel search takes a state as finished once
%% its own expansion ended, its children's aside (checked by hand: the
%% parent's count left out in search_pool.c).
cycle_proviso_test_() ->
    {timeout, 60,
     fun() ->
             [?assertMatch({Entry, W, {error, #{violation := {abnormal_exit, _, crashed},
                                                stats := #{reduced_states := R}}}} when R > 0,
                           {Entry, W, mcerlang:check({tprog_ltl_por, Entry, []},
                                                     ?QUIET#{workers => W, symmetry => false})})
              || Entry <- [ignoring_crash, ignoring_crash_two], W <- [1, 2, 4]]
     end}.

%% Cut states are passed through with workers as depth-first
%% (c_src/search_pool.c, search_pool_mark_passed): a state whose expansion
%% was cut is not kept, and is new again once finished.  The verdicts are
%% those of storing them; fewer states are kept; the workers' claims are
%% the kept states and the passes; a counterexample through passed states
%% replays.
passes_cut_states_test_() ->
    Locker = #{timeouts => when_idle, property => abnormal_exit},
    [{timeout, 120,
      fun() ->
              {ok, Store} = mcerlang:check(E, maps:merge(?QUIET, O#{workers => 2, cut_states => store})),
              {ok, Pass} = mcerlang:check(E, maps:merge(?QUIET, O#{workers => 2})),
              ?assertEqual(0, maps:get(passed_states, Store)),
              ?assert(maps:get(passed_states, Pass) > 0),
              ?assert(maps:get(states, Pass) < maps:get(states, Store)),
              Claims = lists:sum([maps:get(states, Sh) || Sh <- maps:get(worker_stats, Pass)]),
              ?assertEqual(Claims, maps:get(states, Pass) + maps:get(passed_states, Pass))
      end} || {E, O} <- [{{client_server, start, [5, 2]}, #{}},
                         {{locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]}, Locker}]]
    ++ [{timeout, 120,
         fun() ->
                 E = {locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
                 {error, #{stats := St} = Cex} =
                     mcerlang:check(E, ?QUIET#{workers => 2, granularity => small,
                                               property => abnormal_exit}),
                 ?assert(maps:get(passed_states, St) > 0),
                 ?assertMatch({ok, _}, mcerlang:replay(Cex))
         end}].

%% Monitors and invariants are judged by every worker.
invariant_violation_found_test() ->
    Inv = fun(#{processes := Ps}) -> length(Ps) < 4 end,
    ?assertMatch({error, #{violation := {invariant, _}}},
                 mcerlang:check({spawn_chain, start, [6]}, ?QUIET#{workers => 2, invariant => Inv})).

%%--------------------------------------------------------------------
%% Limits, stops and errors
%%--------------------------------------------------------------------

max_states_test() ->
    {inconclusive, max_states, St} =
        mcerlang:check({client_server, start, [5, 2]}, ?FULL#{workers => 2, max_states => 500}),
    %% the others stop at their next request: a few states past the limit
    ?assert(maps:get(states, St) >= 500),
    ?assert(maps:get(states, St) < 600).

%% The memory cap holds with workers: the shared store counts once, and
%% each worker looks at it at least every 8 units of its work (a burst of
%% deliveries through the ether grows by a mailbox vector per unit).
memory_cap_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 50 bsl 20,
             R = mcerlang:check({tprog_ether, burst, [30000]},
                                ?FULL#{delivery => ether, memory => Cap, workers => 2}),
             ?assertMatch({inconclusive, {memory, Cap}, #{workers := 2}}, R),
             {_, _, #{memory_used := Used}} = R,
             ?assert(Used < Cap + (8 bsl 20))
     end}.

max_time_test() ->
    {Us, R} = timer:tc(fun() -> mcerlang:check({client_server, start, [6, 2]},
                                               ?FULL#{workers => 2, max_time => 300}) end),
    ?assertMatch({inconclusive, max_time, _}, R),
    ?assert(Us < 5000000).

stop_ends_every_worker_test() ->
    Live = mce_nif:live_searches(),
    Self = self(),
    Caller = spawn(fun() ->
                           Self ! {result, mcerlang:check({client_server, start, [6, 2]},
                                                          ?FULL#{workers => 2})}
                   end),
    timer:sleep(500),
    ok = mcerlang:stop(Caller),
    receive {result, R} -> ?assertMatch({inconclusive, stopped, #{workers := 2}}, R)
    after 10000 -> error(not_stopped)
    end,
    erlang:garbage_collect(),
    timer:sleep(200),
    ?assertEqual(Live, mce_nif:live_searches()).

%% A step that runs away in any worker is stopped by that worker's
%% watchdog and named, as in the sequential search.
runaway_step_in_a_worker_test() ->
    ?assertMatch({'EXIT', {{mcerlang, {runaway_step, _, {tprog, spin_loop, 1, _, _}, _}}, _}},
                 catch mcerlang:check({tprog, spin, []}, ?QUIET#{workers => 2,
                                                                 max_reductions => 2000000})).

no_search_left_behind_test() ->
    Live = mce_nif:live_searches(),
    {ok, _} = mcerlang:check({client_server, start, [3, 2]}, ?QUIET#{workers => 3}),
    {error, _} = mcerlang:check({locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
                                ?QUIET#{workers => 3}),
    erlang:garbage_collect(),
    timer:sleep(200),
    ?assertEqual(Live, mce_nif:live_searches()).

%%--------------------------------------------------------------------
%% Options and fallbacks
%%--------------------------------------------------------------------

bad_workers_option_test_() ->
    [?_assertError({mcerlang, {bad_option_value, workers, V, _}},
                   mcerlang:check({client_server, start, [2, 1]}, #{workers => V}))
     || V <- [0, -1, 1025, two, 1.5]].

auto_is_the_schedulers_test() ->
    {ok, St} = mcerlang:check({client_server, start, [2, 1]}, ?QUIET#{workers => auto}),
    ?assertEqual(erlang:system_info(schedulers_online), maps:get(workers, St)).

%% Checks the parallel search does not do run with one worker, and say why.
fallbacks_test_() ->
    E = {client_server, start, [2, 1]},
    [?_assertMatch({ok, #{workers := 1, workers_off := shortest}},
                   mcerlang:check(E, ?QUIET#{workers => 2, shortest => true})),
     ?_assertMatch({ok, #{workers := 1, workers_off := table}},
                   mcerlang:check(E, ?QUIET#{workers => 2, table => hash_compact})),
     ?_assertMatch({ok, #{workers := 1, workers_off := ltl}},
                   mcerlang:check(E, ?QUIET#{workers => 2, ltl => "[] true"}))].

%% bin/mcerlang's --workers N|auto: the same count as one worker.
cli_test_() ->
    {timeout, 120,
     fun() ->
             Args = ["--symmetry", "off", "--reduction", "off", "test/tprog_por.erl", "tprog_por:workers(6)"],
             {0, One} = mce_cli_tests:run_cli(["check" | Args]),
             {0, Two} = mce_cli_tests:run_cli(["check", "--workers", "2" | Args]),
             {0, Auto} = mce_cli_tests:run_cli(["check", "--workers", "auto" | Args]),
             [?assertNotEqual(nomatch, string:find(Out, "holds: 730 states")) || Out <- [One, Two, Auto]],
             {2, Bad} = mce_cli_tests:run_cli(["check", "--workers", "many" | Args]),
             ?assertNotEqual(nomatch, string:find(Bad, "--workers many: expected an integer")),
             {2, Zero} = mce_cli_tests:run_cli(["check", "--workers", "0" | Args]),
             ?assertNotEqual(nomatch, string:find(Zero, "workers"))
     end}.

%% The NIF boundary: join/1 only for a search made for workers; work/2 once
%% per search, and not for one started by start/3 (a second call is an
%% error, not a second stack).
nif_boundary_test() ->
    Config = #{node => nonode@nohost, creation => mce_pid:creation(), breadth_first => 1},
    ?assertError(badarg, mce_nif:join(mce_nif:new(Config))),
    ?assertError(badarg, mce_nif:new(Config#{workers => 2, breadth_first => 0})),
    First = mce_nif:new(Config#{workers => 2}),
    Second = mce_nif:join(First),
    ?assertMatch({run, 1, start, {m, f, []}, [], false}, mce_nif:start(First, {m, f, []}, 1)),
    %% the first expands the initial state: nothing for the second yet
    ?assertEqual(idle, mce_nif:work(Second, 1)),
    %% misuse is an error (which, like every error, ends the search)
    ?assertMatch({error, {_, _}, _}, mce_nif:work(Second, 1)),
    ?assertMatch({error, {_, _}, _}, mce_nif:work(First, 1)),
    ?assertEqual(ok, mce_nif:stop_workers(First)).
