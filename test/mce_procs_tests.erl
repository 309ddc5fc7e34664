%% Differential tests of the process features and system processes
%% (test/tprog_procs.erl): each scenario runs on the real VM and under the
%% checker, which must give the real result and only that one over all
%% interleavings (mce_otp_harness).  halt/0,1 and the refusals cannot run
%% on the real VM: those tests cite the OTP documentation instead.
-module(mce_procs_tests).
-include_lib("eunit/include/eunit.hrl").

differential_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> mce_otp_harness:same_result(tprog_procs, F) end}}
     || F <- [system_processes, system_process_signals, group_leaders, processes_list,
              env_queries, gen_fsm_counter, gen_fsm_sync_timeout, atomics_ops, atomics_race,
              counters_ops, counters_race, process_count, exit_then_alive]].

%% whereis/1 of a standard name the model does not have is refused, naming
%% the process and the caller, never a silent `undefined'.
whereis_unmodelled_system_process_test() ->
    ?assertError({mcerlang, {unsupported_system_process, kernel_sup,
                             {tprog_procs, whereis_kernel_sup, 0, Line}}} when Line > 0,
                 mcerlang:check({tprog_procs, whereis_kernel_sup, []})).

exit_kill_user_refused_test() ->
    ?assertError({mcerlang, {unsupported_system_process, {user, {exit, kill}},
                             {tprog_procs, exit_kill_user, 0, _}}},
                 mcerlang:check({tprog_procs, exit_kill_user, []})).

%% erlang:halt/0 "Halts the runtime system" (erlang(3)): the node's
%% processes vanish with it, none of them exits abnormally, and the halting
%% step is in the trace.
halt_ends_the_node_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_procs, halt_node, []})),
    ?assertMatch({ok, _}, mcerlang:check({tprog_procs, halt_after_send, []})).

%% The root never gets to its result: the halting step removes it.  Seen
%% as a deadlock when the other node's process waits for ever.
halt_is_a_step_of_the_trace_test() ->
    {error, #{violation := deadlock, trace := Trace} = Cex} =
        mcerlang:check({tprog_procs, halt_remote, []}, #{nodes => [a@h, b@h]}),
    ?assert(lists:any(fun(#{effects := Es}) -> lists:keymember(halt, 1, Es);
                         (_) -> false
                      end, Trace)),
    Text = lists:flatten(io_lib:format("~s", [mcerlang:format(Cex)])),
    ?assertNotEqual(nomatch, string:find(Text, "halts its node (erlang:halt(0))\n"
                                               "        goes with its node")),
    ?assertEqual(nomatch, string:find(Text, "exits normally")).

%% erlang(3), group_leader/0: "every process is a member of some process
%% group ... When a new process is spawned, it gets the same group leader
%% as the spawning process", on whatever node it is spawned.
remote_group_leader_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_procs, remote_group_leader, []},
                                         #{nodes => [a@h, b@h]})).

%% Each atomics operation is a scheduling point under small granularity, so
%% the lost update of a get-then-put race is found; in big steps too, as a
%% second access to shared memory in one step is a scheduling point (the VM
%% may run another process between the get and the put).
atomics_operations_interleave_test() ->
    Normal = [normal, {result, 2}],
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, 1}}}},
                 mcerlang:check({tprog_procs, atomics_lost_update, []},
                                #{granularity => small, treat_as_normal => Normal})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, 1}}}},
                 mcerlang:check({tprog_procs, atomics_lost_update, []},
                                #{treat_as_normal => Normal})).

%% The documented fixed answers (docs/USER_GUIDE.md), whatever the host.
environment_values_test() ->
    ?assertEqual([{result, {{ok, "/"}, {ok, [["/"]]}, {ok, [["erl"]]}, [], {started, started}}}],
                 mce_otp_harness:checked(tprog_procs, env_values)).

remote_system_names_test() ->
    Nodes = #{nodes => [a@h, b@h]},
    %% Three states (start, waiting in the receive, after it): nothing
    %% travels through the ether.
    ?assertMatch({ok, #{states := 3}},
                 mcerlang:check({tprog_procs, remote_system_names, []}, Nodes)),
    ?assertError({mcerlang, {unsupported_system_process, kernel_sup,
                             {tprog_procs, remote_kernel_sup, 0, _}}},
                 mcerlang:check({tprog_procs, remote_kernel_sup, []}, Nodes)).
