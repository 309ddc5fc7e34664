%% Deaths by exit signals (issue 14 item 1): a process killed by another
%% process's exit/2, by kill, through a link, or by noconnection is judged
%% by abnormal_exit like a process that ends by itself.  The reason the
%% checker reports is the one the victim's monitor sees on the real VM.
-module(mce_exitdeaths_tests).
-include_lib("eunit/include/eunit.hrl").

-define(P, tprog_exitdeaths).
-define(N1, 'n1@sim').
-define(N2, 'n2@sim').

warm_up_test_() ->
    {timeout, 120, fun() -> mce_translate:ensure(?P) end}.

%% The victim's reason on the real VM (the program exits {result, Reason}).
real(F) ->
    {Pid, Ref} = spawn_monitor(?P, F, []),
    receive {'DOWN', Ref, process, Pid, {result, Reason}} -> Reason end.

check(F, Args, Opts) ->
    mcerlang:check({?P, F, Args}, Opts#{progress => false}).

%% The root's own {result, _} exit is not what these tests look at.
-define(RESULT_NORMAL, #{treat_as_normal => [normal, result]}).

exit_by_other_process_test() ->
    boom = real(exit_boom),
    {error, #{violation := {abnormal_exit, Victim, boom}, trace := Trace} = Cex} =
        check(exit_boom, [], ?RESULT_NORMAL),
    %% The step that killed it: the root's exit/2.
    #{kind := run, effects := Effects} = lists:last(Trace),
    ?assert(lists:member({exit, Victim, boom}, Effects)),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertNotEqual(nomatch, string:find(Text, "exited abnormally: boom")),
    ?assertNotEqual(nomatch, string:find(Text, "died of an exit signal caused by step")),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)).

exit_kill_gives_killed_test() ->
    killed = real(exit_kill),
    ?assertMatch({error, #{violation := {abnormal_exit, _, killed}}},
                 check(exit_kill, [], ?RESULT_NORMAL)),
    ?assertMatch({ok, _}, check(exit_kill, [], #{treat_as_normal => [normal, result, killed]})).

%% Only abnormal_exit judges deaths: with property deadlock alone the
%% program is fine.
property_off_test() ->
    ?assertMatch({ok, _}, check(exit_boom, [], #{property => deadlock})).

%% An atom A in treat_as_normal covers A and {A, _}.
atom_covers_tagged_tuple_test() ->
    {boom, detail} = real_tuple(boom),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {boom, detail}}}},
                 check(exit_shutdown_tuple, [boom], ?RESULT_NORMAL)),
    ?assertMatch({ok, _}, check(exit_shutdown_tuple, [boom],
                                #{treat_as_normal => [normal, result, boom]})),
    %% A tuple in the list covers only itself.
    ?assertMatch({error, #{violation := {abnormal_exit, _, {boom, detail}}}},
                 check(exit_shutdown_tuple, [boom],
                       #{treat_as_normal => [normal, result, {boom, other}]})).

real_tuple(Atom) ->
    {Pid, Ref} = spawn_monitor(?P, exit_shutdown_tuple, [Atom]),
    receive {'DOWN', Ref, process, Pid, {result, Reason}} -> Reason end.

%% A fun of the reason decides; what it answers must be a boolean.
fun_in_treat_as_normal_test() ->
    Expected = fun({result, _}) -> true; (killed) -> true; (_) -> false end,
    ?assertMatch({ok, _}, check(exit_kill, [], #{treat_as_normal => [normal, Expected]})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, boom}}},
                 check(exit_boom, [], #{treat_as_normal => [normal, Expected]})),
    Bad = fun(_) -> maybe end,
    ?assertError({mcerlang, {bad_treat_as_normal_value, Bad, maybe, _}},
                 check(exit_boom, [], #{treat_as_normal => [Bad]})).

bad_treat_as_normal_test() ->
    Two = fun(_, _) -> true end,
    ?assertError({mcerlang, {bad_option_value, treat_as_normal, Two}},
                 check(exit_boom, [], #{treat_as_normal => [normal, Two]})),
    ?assertError({mcerlang, {bad_option_value, treat_as_normal, [normal | shutdown]}},
                 check(exit_boom, [], #{treat_as_normal => [normal | shutdown]})),
    ?assertError({mcerlang, {bad_option_value, treat_as_normal, normal}},
                 check(exit_boom, [], #{treat_as_normal => normal})).

%% The kill fault's victim is the fault the user asked for; the process
%% linked to it dies of killed, which is a violation.
kill_fault_through_link_test() ->
    {error, #{violation := {abnormal_exit, B, killed}, trace := Trace} = Cex} =
        check(linked_pair, [], #{faults => #{kill => 1}}),
    #{kind := fault, fault := {kill, A}} = lists:last(Trace),
    ?assertNotEqual(A, B),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    ?assertMatch({ok, _}, check(linked_pair, [], #{faults => #{kill => 1}, property => abnormal_exit,
                                                   treat_as_normal => [normal, killed]})).

%% The processes of a crashed node are the fault; a process elsewhere
%% linked to one of them dies of noconnection (OTP: a link to a process on
%% a node that goes down gives the exit reason noconnection).
node_crash_through_link_test() ->
    Opts = #{nodes => [?N1, ?N2], faults => #{crash_node => 1}},
    {error, #{violation := {abnormal_exit, _, noconnection}, trace := Trace} = Cex} =
        check(linked_remote, [?N2], Opts),
    ?assertMatch(#{kind := fault, fault := {crash_node, _}}, lists:last(Trace)),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    ?assertMatch({ok, _}, check(linked_remote, [?N2], Opts#{treat_as_normal => [normal, noconnection],
                                                            property => abnormal_exit})).

%% Exit signals delivered through the ether kill on delivery.
ether_delivery_test() ->
    {error, #{violation := {abnormal_exit, _, boom}, trace := Trace}} =
        check(exit_boom, [], ?RESULT_NORMAL#{delivery => ether}),
    ?assertMatch(#{kind := deliver, signal := {exit, boom}}, lists:last(Trace)).

%% A supervisor with a brutal_kill child kills it with reason killed when it
%% shuts down; with a shutdown time the child that ignores shutdown is
%% killed too.  treat_as_normal => [..., killed] says it is expected.
supervisor_kills_children_test_() ->
    {timeout, 60,
     fun() ->
             killed = real(brutal_kill),
             killed = real(shutdown_timeout),
             Opts = #{treat_as_normal => [normal, shutdown, result]},
             ?assertMatch({error, #{violation := {abnormal_exit, _, killed}}},
                          check(brutal_kill, [], Opts)),
             ?assertMatch({ok, _}, check(brutal_kill, [],
                                         Opts#{treat_as_normal => [normal, shutdown, result,
                                                                   killed]})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, killed}}},
                          check(shutdown_timeout, [], Opts))
     end}.

%% The LTL search checks the safety properties on the way: it reports the
%% same death.
ltl_search_reports_death_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, boom}}},
                 check(exit_boom, [], ?RESULT_NORMAL#{ltl => "[] true", property => abnormal_exit})).

%% The message sequence chart reads treat_as_normal, funs included.
msc_with_fun_test() ->
    {error, Cex} = check(exit_boom, [], #{treat_as_normal => [normal, fun({result, _}) -> true;
                                                                         (_) -> false end]}),
    File = filename:join(os:getenv("TMPDIR", "/tmp"),
                         "mce_exitdeaths_" ++ os:getpid() ++ ".svg"),
    ok = mcerlang:msc(Cex, File),
    {ok, Svg} = file:read_file(File),
    ok = file:delete(File),
    ?assertNotEqual(nomatch, binary:match(Svg, <<"boom">>)).

%% The command line's --treat-as-normal takes a fun too (exit status 0:
%% holds, 1: a violation).
cli_treat_as_normal_fun_test_() ->
    Run = fun(Normal) ->
                  mce_cli:run(["check", "tprog_exitdeaths:exit_kill()", "--treat-as-normal", Normal,
                               "--no-progress", "--quiet"])
          end,
    {timeout, 60,
     fun() ->
             ?assertEqual(0, Run("fun({result, _}) -> true; (killed) -> true; (_) -> false end")),
             ?assertEqual(1, Run("result"))
     end}.

%% The NIF protocol: a step that kills by exit signal asks for a verdict
%% ({deaths, [{PidKey, Reason}]}) only with judge_deaths; a violation stops
%% the search at the successor; answers out of turn are errors, never
%% crashes.
deaths_request_protocol_test() ->
    Config = #{node => mce_pid:node_name(), creation => mce_pid:creation(),
               max_states => 0, max_depth => 0},
    ?assertError(badarg, mce_nif:new(Config#{judge_deaths => 2})),
    Kill = fun(S) ->
                   {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
                   Two = mce_nif:fresh_pid(S, 0),
                   {Two, mce_nif:ran(S, {wait, false, {recv, []}, []},
                                     [{spawn, Two, {m, g, []}, false}, {exit, Two, boom}], l, false)}
           end,
    Judged = mce_nif:new(Config#{judge_deaths => 1}),
    ?assertMatch({error, {_, _}, _}, mce_nif:deaths_judged(Judged, true)),
    {Two, Req} = Kill(Judged),
    ?assertEqual({deaths, [{Two, boom}]}, Req),
    ?assertError(badarg, mce_nif:deaths_judged(Judged, maybe)),
    ?assertEqual(stopped, mce_nif:deaths_judged(Judged, true)),
    ?assertMatch({error, {_, _}, _}, mce_nif:deaths_judged(Judged, true)),
    ?assertEqual([l], mce_nif:trace(Judged)),
    %% Without judge_deaths the search goes on at once; judged normal, too.
    {_, Unjudged} = Kill(mce_nif:new(Config)),
    ?assertNotMatch({deaths, _}, Unjudged),
    Normal = mce_nif:new(Config#{judge_deaths => 1}),
    {_, {deaths, _}} = Kill(Normal),
    ?assertEqual(Unjudged, mce_nif:deaths_judged(Normal, false)).

%% Every search mode judges the deaths: breadth-first, the lossy tables,
%% with monitors or invariants (the verdict on deaths comes before theirs),
%% and simulation.
search_modes_test_() ->
    {timeout, 60,
     fun() ->
             Kill = #{faults => #{kill => 1}},
             [?assertMatch({error, #{violation := {abnormal_exit, _, killed}}},
                           check(linked_pair, [], maps:merge(Kill, Opts)))
              || Opts <- [#{shortest => true}, #{table => hash_compact},
                          #{table => {bitstate, 1 bsl 20}}, #{invariant => fun(_) -> true end}]],
             ?assertMatch({error, #{violation := {abnormal_exit, _, boom}}},
                          mcerlang:simulate({?P, exit_boom, []},
                                            ?RESULT_NORMAL#{seed => 1, runs => 5, progress => false}))
     end}.
