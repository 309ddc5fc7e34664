%% Aimed faults (issue 19 item 4): each fault budget may name its targets
%% (faults => #{kill => {N, Targets}, crash_node => {N, [Node]},
%% disconnect => {N, [Node | {NodeA, NodeB}]}}), and a blind kill never
%% hits the entry process.  Checked through mcerlang:check/2 and the
%% command line.
-module(mce_faults_tests).
-include_lib("eunit/include/eunit.hrl").

-define(A, 'a@h').
-define(B, 'b@h').
-define(C, 'c@h').

check(F, Args, Opts) ->
    mcerlang:check({tprog_faults, F, Args},
                   maps:merge(#{timeouts => {infinite_above, 5000}}, Opts#{progress => false})).

warm_up_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [tprog_faults, gen_server, gen,
                                                               proc_lib]] end}.

kills(#{trace := Trace}) ->
    [P || #{kind := fault, fault := {kill, P}} <- Trace].

%% A kill aimed at the named server finds what a blind kill finds: the
%% client's call fails.  The trace's kill hits the server.
kill_named_server_test_() ->
    {timeout, 120,
     fun() ->
             {error, Blind} = check(kill_server, [], #{faults => #{kill => 1}}),
             ?assertMatch(#{violation := {abnormal_exit, _, {_, {gen_server, call, _}}}}, Blind),
             {error, Aimed} = check(kill_server, [], #{faults => #{kill => {1, [{name, store}]}}}),
             ?assertMatch(#{violation := {abnormal_exit, _, {_, {gen_server, call, _}}}}, Aimed),
             [Victim] = kills(Aimed),
             #{final_state := _} = Aimed,
             %% The victim is the server (not the entry, <0.1.0>).
             ?assertNotEqual(mce_pid:term(1), Victim),
             ?assertMatch({error, _}, check(kill_server, [], #{faults => #{kill => {1, [store]}}})),
             ?assertMatch({error, _}, check(kill_server, [],
                                           #{faults => #{kill => {1, [{module, tprog_faults}]}}})),
             %% Aimed at a name nobody holds: nothing is killed.
             ?assertMatch({ok, _}, check(kill_server, [], #{faults => #{kill => {1, [nobody]}}}))
     end}.

%% A blind kill spares the entry (the harness); a kill aimed at it by a
%% predicate may kill it.
entry_spared_test_() ->
    {timeout, 120,
     fun() ->
             ?assertMatch({ok, _}, check(watch_entry, [], #{faults => #{kill => 1}})),
             ?assertMatch({ok, _}, check(watch_entry, [], #{faults => #{kill => 2}})),
             IsEntry = fun(#{initial_call := IC}) -> IC =:= {tprog_faults, watch_entry, 0} end,
             ?assertMatch({error, #{violation := {abnormal_exit, _, entry_killed}}},
                          check(watch_entry, [], #{faults => #{kill => {1, [{predicate, IsEntry}]}}})),
             %% The predicate sees the process: pid, name, initial call, node.
             Self = self(),
             Spy = fun(Info) -> Self ! {info, Info}, false end,
             ?assertMatch({ok, _}, check(watch_entry, [], #{faults => #{kill => {1, [{predicate, Spy}]}}})),
             receive
                 {info, Info} ->
                     ?assertMatch(#{pid := _, name := undefined, initial_call := {tprog_faults, _, _},
                                    node := nonode@nohost}, Info)
             after 0 -> erlang:error(predicate_not_called)
             end
     end}.

%% crash_node aimed at the worker's node never crashes the observer's.
crash_node_aimed_test_() ->
    {timeout, 120,
     fun() ->
             Opts = #{nodes => [?A, ?B], property => abnormal_exit},
             ?assertMatch({error, #{violation := {abnormal_exit, _, noconnection}}},
                          check(remote_worker, [?B], Opts#{faults => #{crash_node => 1}})),
             {ok, _} = check(remote_worker, [?B], Opts#{faults => #{crash_node => {1, [?B]}}}),
             ?assertMatch({error, #{violation := {abnormal_exit, _, noconnection}}},
                          check(remote_worker, [?B], Opts#{faults => #{crash_node => {1, [?A]}}}))
     end}.

%% disconnect aimed at pairs, or at every pair with one node.
disconnect_aimed_test_() ->
    {timeout, 120,
     fun() ->
             Opts = #{nodes => [?A, ?B, ?C], property => abnormal_exit},
             ?assertMatch({error, #{violation := {abnormal_exit, _, noconnection}}},
                          check(remote_worker, [?B], Opts#{faults => #{disconnect => 1}})),
             ?assertMatch({ok, _}, check(remote_worker, [?B],
                                         Opts#{faults => #{disconnect => {1, [{?A, ?C}]}}})),
             ?assertMatch({ok, _}, check(remote_worker, [?B],
                                         Opts#{faults => #{disconnect => {1, [?C]}}})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, noconnection}}},
                          check(remote_worker, [?B],
                                Opts#{faults => #{disconnect => {1, [{?B, ?A}]}}})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, noconnection}}},
                          check(remote_worker, [?B], Opts#{faults => #{disconnect => {1, [?B]}}}))
     end}.

bad_values_test() ->
    Bad = [#{kill => {1, store}}, #{kill => {-1, []}}, #{kill => {1, [{name, "store"}]}},
           #{crash_node => {1, [nowhere@h]}}, #{disconnect => {1, [{?A, ?A}]}},
           #{disconnect => {1, [{?A, nowhere@h}]}}, #{crash_node => {1, ?A}}],
    [?assertError({mcerlang, {bad_option_value, faults, _, _}},
                  check(remote_worker, [?B], #{nodes => [?A, ?B], faults => F})) || F <- Bad],
    %% A predicate that crashes or does not answer true or false.
    [?assertError({mcerlang, {bad_option_value, faults, {predicate, _}, _}},
                  check(kill_server, [], #{faults => #{kill => {1, [{predicate, P}]}}}))
     || P <- [fun(_) -> maybe end, fun(#{pid := Pid}) -> Pid end,
              fun(_) -> erlang:error(oops) end]].

cli_test_() ->
    {timeout, 120,
     fun() ->
             Args = ["test/tprog_faults.erl", "tprog_faults:kill_server()"],
             {1, Aimed} = mce_cli_tests:run_cli(["check", "--timeouts", "infinite_above:5000",
                                                 "--faults", "kill=1:name=store" | Args]),
             ?assertNotEqual(nomatch, string:find(Aimed, "abnormal")),
             {0, _} = mce_cli_tests:run_cli(["check", "--timeouts", "infinite_above:5000",
                                             "--faults", "kill=1:name=nobody" | Args]),
             Nodes = ["--nodes", "a@h,b@h", "--property", "abnormal_exit"],
             Remote = ["test/tprog_faults.erl", "tprog_faults:remote_worker('b@h')"],
             {0, _} = mce_cli_tests:run_cli(["check", "--faults", "crash_node=1:b@h" | Nodes ++ Remote]),
             {1, _} = mce_cli_tests:run_cli(["check", "--faults", "crash_node=1" | Nodes ++ Remote]),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--faults", "kill=1:colour=red" | Args]),
             ?assertNotEqual(nomatch, string:find(Bad, "--faults"))
     end}.
