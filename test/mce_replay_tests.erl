%% Replay, simulation, saving and loading of counterexamples, and the
%% EUnit helpers of include/mcerlang.hrl, through the public API.
-module(mce_replay_tests).

-include_lib("eunit/include/eunit.hrl").
-include("../include/mcerlang.hrl").

-define(OPTS, #{progress => false}).
-define(NODES3, ['n1@sim', 'n2@sim', 'n3@sim']).

check(Entry, Opts) -> mcerlang:check(Entry, maps:merge(?OPTS, Opts)).

%%--------------------------------------------------------------------
%% replay/1
%%--------------------------------------------------------------------

%% A counterexample replays to the same final state, for each kind of
%% violation the checker reports.
replays_each_kind_of_violation_test_() ->
    Cases = [{deadlock, {dining, start, [3]}, #{}},
             {abnormal_exit, {racy_child, start, []}, #{}},
             {ether, {world_hello, worldhello, ?NODES3}, #{nodes => ?NODES3}},
             {fault, {tprog_dist, crash_watch, ['n2@sim']},
              #{nodes => ?NODES3, faults => #{crash_node => 1}}},
             {monitor, {tprog_props, mutex, [false]}, #{monitor => {tprog_props, 10}}},
             {choice, {tprog, choose, []}, #{treat_as_normal => [{result, left}]}},
             {small, {tprog, ets_counter_race, []}, #{granularity => small}},
             {ltl_lasso, {tprog_ltl, spin_and_work, []},
              #{ltl => "<> done", predicates => #{done => {prop, done}}, fairness => none}},
             {ltl_stutter, {tprog_ltl, never_done, []},
              #{ltl => "<> done", predicates => #{done => {prop, done}}}}],
    [{atom_to_list(Name), {timeout, 60, fun() ->
                                                {error, Cex} = check(Entry, Opts),
                                                {ok, Again} = mcerlang:replay(Cex),
                                                ?assertEqual(maps:get(violation, Cex), maps:get(violation, Again)),
                                                ?assertEqual(maps:get(final_state, Cex), maps:get(final_state, Again)),
                                                ?assertEqual(maps:get(ether, Cex, []), maps:get(ether, Again))
                                        end}}
     || {Name, Entry, Opts} <- Cases].

%% An LTL lasso replays only if the formula fails on it: the same run
%% judged by a formula it satisfies does not reproduce the violation.
ltl_formula_judged_on_the_lasso_test() ->
    Opts = #{ltl => "<> done", predicates => #{done => {prop, done}}, fairness => none},
    {error, Cex} = check({tprog_ltl, spin_and_work, []}, Opts),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    Holds = Cex#{options => Opts#{ltl => "[] !done", progress => false}},
    ?assertMatch({error, {not_reproduced, {ltl_holds_on_this_run, _}}}, mcerlang:replay(Holds)),
    %% A probe predicate: the lasso that violates "[] !ponged" sees a pong,
    %% so "<> ponged" holds on it.
    PingOpts = #{ltl => "[] !ponged", predicates => #{ponged => {probe, pong}}},
    {error, Pong} = check({tprog_ltl, ping_pong, [1]}, PingOpts),
    ?assertMatch({ok, _}, mcerlang:replay(Pong)),
    Eventually = Pong#{options => PingOpts#{ltl => "<> ponged", progress => false}},
    ?assertMatch({error, {not_reproduced, {ltl_holds_on_this_run, _}}}, mcerlang:replay(Eventually)).

invariant_violation_replays_test() ->
    Final = fun(#{processes := Ps}) -> [V || #{props := Props} <- Ps, {final, V} <- Props] end,
    Two = fun(View) -> lists:all(fun(V) -> V =:= 2 end, Final(View)) end,
    {error, Cex} = check({tprog_props, counter_race, []}, #{invariant => Two}),
    ?assertMatch({ok, #{violation := {invariant, _}}}, mcerlang:replay(Cex)).

%% A trace that skips a step, or that ends too early, does not replay:
%% the answer says where and what was enabled instead.
%% A session lists every successor of a state, those after one that is a
%% violation too, so that a replay can leave a state by a later process's
%% step where an earlier process's step is an abnormal exit (a search that
%% does not explore in pid order, or a counterexample mapped back from
%% symmetry, takes such paths).
session_lists_successors_past_a_violation_test() ->
    Opts = mcerlang:options(#{property => [abnormal_exit], progress => false}),
    S0 = mce_session:open(mcerlang:entry({tprog_por, boom_and_ok, []}), Opts),
    {[#{violation := none, state := W1}], _, S1} = mce_session:expand(S0, mce_session:root(S0)),
    {Succs, _, _} = mce_session:expand(S1, W1),
    ?assertMatch([#{violation := {abnormal_exit, _, boom}, step := #{outcome := {exit, boom}}},
                  #{violation := none, step := #{outcome := {exit, normal}}}], Succs).

replay_reports_divergence_test() ->
    {error, #{trace := [_First | Rest]} = Cex} = check({dining, start, [2]}, #{}),
    {error, {diverged, 1, Expected, Enabled}} = mcerlang:replay(Cex#{trace => Rest}),
    ?assertEqual(hd(Rest), Expected),
    ?assertMatch([#{kind := run, action := {start, _}}], Enabled),
    Shorter = lists:droplast(maps:get(trace, Cex)),
    ?assertMatch({error, {not_reproduced, {no_deadlock, [_ | _]}}},
                 mcerlang:replay(Cex#{trace => Shorter})),
    ?assertMatch({error, {not_reproduced, _}},
                 mcerlang:replay(Cex#{violation => {abnormal_exit, self(), boom}})).

%% A changed program: the counterexample of the buggy version does not
%% replay on the same entry with the bug fixed (mcerlang:choice made
%% deterministic by an option of the program).
replay_against_changed_program_test() ->
    {error, Cex} = check({tprog, choose, []}, #{treat_as_normal => [{result, left}]}),
    Changed = Cex#{options => #{treat_as_normal => [{result, left}, {result, right}],
                                progress => false}},
    ?assertMatch({error, {not_reproduced, _}}, mcerlang:replay(Changed)).

replay_rejects_bad_input_test() ->
    ?assertError({mcerlang, {bad_counterexample, nope, _}}, mcerlang:replay(nope)),
    ?assertError({mcerlang, {not_replayable, _}},
                 mcerlang:replay(#{violation => deadlock, trace => [], final_state => []})).

%%--------------------------------------------------------------------
%% simulate/2
%%--------------------------------------------------------------------

%% The same seed gives the same walks; the counterexample replays.
simulation_is_reproducible_test() ->
    {error, A} = mcerlang:simulate({dining, start, [3]}, #{seed => 42}),
    {error, B} = mcerlang:simulate({dining, start, [3]}, #{seed => 42}),
    ?assertEqual(maps:get(trace, A), maps:get(trace, B)),
    ?assertMatch(#{violation := deadlock, simulation := #{seed := 42, run := _}}, A),
    ?assertMatch({ok, #{violation := deadlock}}, mcerlang:replay(A)),
    %% Other seeds find it too, by other walks (some differ).
    Traces = [maps:get(trace, element(2, mcerlang:simulate({dining, start, [3]}, #{seed => S})))
              || S <- lists:seq(1, 8)],
    ?assert(length(lists:usort(Traces)) > 1).

simulation_of_a_correct_program_test() ->
    {ok, Stats} = mcerlang:simulate({pingpong, start, [3]}, #{seed => 7, runs => 25}),
    ?assertMatch(#{runs := 25, runs_ended := 25, runs_cut := 0, seed := 7}, Stats),
    ?assert(maps:get(steps, Stats) >= 25).

%% max_steps cuts a walk that never ends (a spinner).
simulation_cuts_long_walks_test() ->
    {ok, Stats} = mcerlang:simulate({tprog_ltl, never_done, []},
                                    #{seed => 1, runs => 3, max_steps => 20, property => none}),
    ?assertMatch(#{runs := 3}, Stats),
    {ok, Spin} = mcerlang:simulate({tprog_ltl, spin_and_work, []},
                                   #{seed => 1, runs => 5, max_steps => 15}),
    ?assert(maps:get(runs_cut, Spin) + maps:get(runs_ended, Spin) =:= 5).

simulation_finds_abnormal_exits_and_monitor_violations_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, _}}},
                 mcerlang:simulate({racy_child, start, []}, #{seed => 3, runs => 200})),
    ?assertMatch({error, #{violation := {monitor, tprog_props, _}}},
                 mcerlang:simulate({tprog_props, mutex, [false]},
                                   #{seed => 3, runs => 200, monitor => {tprog_props, 10}})).

simulation_rejects_bad_options_test() ->
    ?assertError({mcerlang, {bad_option_value, runs, 0}},
                 mcerlang:simulate({pingpong, start, [3]}, #{runs => 0})),
    ?assertError({mcerlang, {bad_option_value, seed, x}},
                 mcerlang:simulate({pingpong, start, [3]}, #{seed => x})),
    ?assertError({mcerlang, {incompatible_options, simulate, ltl}},
                 mcerlang:simulate({pingpong, start, [3]}, #{ltl => "<> true"})),
    ?assertError({mcerlang, {unknown_option, runs}},
                 mcerlang:check({pingpong, start, [3]}, #{runs => 3})).

%%--------------------------------------------------------------------
%% save/2 and load/1
%%--------------------------------------------------------------------

save_and_load_round_trip_test() ->
    File = tmp("roundtrip.cex"),
    {error, Cex} = check({world_hello, worldhello, ?NODES3}, #{nodes => ?NODES3}),
    ok = mcerlang:save(Cex, File),
    {ok, Loaded} = mcerlang:load(File),
    ?assertEqual(Cex, Loaded),
    ?assertMatch({ok, _}, mcerlang:replay(Loaded)),
    %% The file opens with the readable report.
    {ok, Bin} = file:read_file(File),
    ?assertMatch({match, _}, re:run(Bin, "ether delivers message world")).

load_rejects_other_files_test() ->
    File = tmp("not_a_cex"),
    ok = file:write_file(File, <<"hello">>),
    ?assertMatch({error, {bad_counterexample_file, _, _}}, mcerlang:load(File)),
    ok = file:write_file(File, <<"mcerlang-counterexample 1 3\nabc", 131, 1, 2>>),
    ?assertMatch({error, {bad_counterexample_file, _, "damaged contents"}}, mcerlang:load(File)),
    ?assertEqual({error, enoent}, mcerlang:load(tmp("no_such_file"))),
    ?assertMatch({error, _}, mcerlang:save(element(2, check({dining, start, [2]}, #{})),
                                            "/nonexistent/dir/x.cex")).

tmp(Name) ->
    Dir = filename:join(["/tmp", "mce_replay_tests_" ++ os:getpid()]),
    ok = filelib:ensure_path(Dir),
    filename:join(Dir, Name).

%%--------------------------------------------------------------------
%% include/mcerlang.hrl
%%--------------------------------------------------------------------

assert_holds_test() ->
    ?assertHolds({pingpong, start, [3]}),
    ?assertHolds({pingpong, start, [3]}, ?OPTS),
    {error, {assertHolds, Info}} = (fun() -> try ?assertHolds({dining, start, [2]}, ?OPTS), ok
                                             catch error:E -> {error, E}
                                             end
                                    end)(),
    ?assertEqual(deadlock, proplists:get_value(violation, Info)),
    ?assertMatch({match, _}, re:run(proplists:get_value(counterexample, Info), "Violation: deadlock")),
    ?assertError({assertHolds, _}, ?assertHolds({dining, start, [3]}, #{max_states => 3, progress => false})).

assert_violation_test() ->
    Cex = ?assertViolation({dining, start, [2]}, ?OPTS),
    ?assertMatch(#{violation := deadlock}, Cex),
    ?assertMatch(#{violation := {abnormal_exit, _, _}},
                 ?assertViolation({abnormal_exit, _, _}, {racy_child, start, []}, ?OPTS)),
    ?assertError({assertViolation, _}, ?assertViolation({pingpong, start, [3]}, ?OPTS)),
    ?assertError({assertViolation, _}, ?assertViolation({abnormal_exit, _, _}, {dining, start, [2]}, ?OPTS)).
