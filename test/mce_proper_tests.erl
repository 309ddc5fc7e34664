%% mcerlang_proper: PropEr's parallel state-machine tests with every
%% interleaving explored, through the example (examples/racy_counter.erl,
%% its model examples/proper/racy_counter_statem.erl) and the public API.
%% PropEr is Debian's erlang-proper(-dev) (bootstrap.sh installs it); where
%% it is absent the tests are skipped with a message saying so.  The model
%% includes proper.hrl, so it is compiled here, when PropEr is there.
-module(mce_proper_tests).

-include_lib("eunit/include/eunit.hrl").

-define(MODEL, racy_counter_statem).

proper_test_() ->
    case proper_present() of
        false ->
            io:format(user, "~nmce_proper_tests: SKIPPED: PropEr is not installed "
                      "(apt-get install erlang-proper erlang-proper-dev, as bootstrap.sh does)~n", []),
            [];
        true ->
            {setup, fun load_model/0,
             [{timeout, 300, fun finds_the_lost_update/0},
              {timeout, 300, fun fixed_counter_passes/0},
              {timeout, 120, fun one_testcase_each_way/0},
              {timeout, 120, fun judge_agrees_with_proper/0},
              {timeout, 120, fun crashing_branch_is_an_abnormal_exit/0},
              {timeout, 60, fun users_treat_as_normal_kept/0},
              fun bad_testcase/0]}
    end.

proper_present() ->
    is_list(code:lib_dir(proper))
        andalso filelib:is_regular(filename:join([code:lib_dir(proper), "include", "proper.hrl"])).

%% The model's source beside the example's (wherever the build put it).
load_model() ->
    Example = proplists:get_value(source, racy_counter:module_info(compile)),
    Src = filename:join([filename:dirname(Example), "proper", "racy_counter_statem.erl"]),
    {ok, ?MODEL, Bin} = compile:file(Src, [binary, debug_info, return_errors]),
    {module, ?MODEL} = code:load_binary(?MODEL, Src, Bin),
    ok.

%% The racy counter: a few generated test cases suffice; the property
%% fails and the (shrunk) counterexample is two concurrent incr calls.
finds_the_lost_update() ->
    ?assertEqual(false, proper:quickcheck(?MODEL:prop_parallel(racy), [{numtests, 30}, quiet])),
    [{Seq, Par}] = proper:counterexample(),
    Result = mcerlang_proper:check_parallel(?MODEL, {Seq, Par}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {mcerlang_proper, _, _}}}}, Result),
    ?assertNot(mcerlang_proper:passed(Result)),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang_proper:format(Result)])),
    ?assertMatch({match, _}, re:run(Text, "No sequential interleaving")),
    ?assertMatch({match, _}, re:run(Text, "racy_counter:incr")),
    ?assertEqual(2, length([C || Cs <- Par, {set, _, {call, racy_counter, incr, _}} = C <- Cs])).

fixed_counter_passes() ->
    ?assert(proper:quickcheck(?MODEL:prop_parallel(fixed), [{numtests, 15}, quiet])).

%% The smallest parallel test case, written out: racy fails, fixed holds.
one_testcase_each_way() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {mcerlang_proper, [_], [[_], [_, _]]}}}},
                 mcerlang_proper:check_parallel(?MODEL, two_incrs(racy), #{})),
    {ok, Stats} = mcerlang_proper:check_parallel(?MODEL, two_incrs(fixed), #{}),
    ?assert(mcerlang_proper:passed({ok, Stats})),
    ?assertMatch({match, _}, re:run(lists:flatten(mcerlang_proper:format({ok, Stats})), "linearizes")).

two_incrs(Mode) ->
    {[{init, #{mode => Mode, counter => none, value => 0}},
      {set, {var, 1}, {call, racy_counter, start_link, [Mode]}}],
     [[{set, {var, 2}, {call, racy_counter, incr, [{var, 1}]}}],
      [{set, {var, 3}, {call, racy_counter, incr, [{var, 1}]}}, {set, {var, 4}, {call, racy_counter, read, [{var, 1}]}}]]}.

%% The reference: PropEr's own run of a test case on the VM.  The fixed
%% counter linearizes there as under mcerlang; and every outcome mcerlang
%% reports as non-linearizable is one proper_statem:check/6 rejects too.
judge_agrees_with_proper() ->
    {_, _, ok} = proper_statem:run_parallel_commands(?MODEL, two_incrs(fixed)),
    {error, #{violation := {abnormal_exit, _, {mcerlang_proper, [Counter], Histories}}}} =
        mcerlang_proper:check_parallel(?MODEL, two_incrs(racy), #{}),
    State = (?MODEL:next_state(?MODEL:initial_state(), Counter, {call, racy_counter, start_link, [racy]}))#{mode => racy},
    ?assertNot(proper_statem:check(?MODEL, State, [{1, Counter}], false, [], Histories)),
    %% The VM's own schedule of the racy counter gives a linearizable result
    %% (sequential branches: one after the other).
    {_, _, ok} = proper_statem:run_parallel_commands(?MODEL, {element(1, two_incrs(racy)), []}).

%% A call that crashes in a branch is the branch's abnormal exit, reported
%% as such, not as a linearizability failure.
crashing_branch_is_an_abnormal_exit() ->
    {Seq, _} = two_incrs(fixed),
    Par = [[{set, {var, 2}, {call, racy_counter, incr, [{var, 1}]}}],
           [{set, {var, 3}, {call, erlang, error, [boom]}}]],
    ?assertMatch({error, #{violation := {abnormal_exit, _, {boom, _}}}},
                 mcerlang_proper:check_parallel(?MODEL, {Seq, Par}, #{})).

%% The user's own treat_as_normal stays in force beside the judge: a
%% branch that exits with a reason the user calls normal is no violation
%% of its own, but its history never comes, and the test cannot end.
users_treat_as_normal_kept() ->
    {Seq, _} = two_incrs(fixed),
    Par = [[{set, {var, 2}, {call, erlang, exit, [expected]}}], []],
    ?assertMatch({error, #{violation := {abnormal_exit, _, expected}}},
                 mcerlang_proper:check_parallel(?MODEL, {Seq, Par}, #{})),
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang_proper:check_parallel(?MODEL, {Seq, Par}, #{treat_as_normal => [normal, expected]})).

bad_testcase() ->
    ?assertError({mcerlang, {bad_parallel_testcase, _, _}},
                 mcerlang_proper:check_parallel(?MODEL, not_a_testcase, #{})),
    ?assertError({mcerlang, {undefined_module, no_such_model}},
                 mcerlang_proper:check_parallel(no_such_model, two_incrs(fixed), #{})),
    ?assertError({mcerlang, {bad_options, [x]}},
                 mcerlang_proper:check_parallel(?MODEL, two_incrs(fixed), [x])).
