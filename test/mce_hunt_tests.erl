%% Fidelity hunt (issue 14): small concurrent programs written the way
%% textbooks, blog posts and small OTP libraries write them
%% (test/tprog_hunt*.erl), checked against the real VM.  A correct program
%% ends its root with exit({result, V}); the checker must find V, and only
%% V, as the root's end over all interleavings (deadlock aside: servers
%% left waiting are the programs' normal end).  A buggy one must be found
%% buggy.
-module(mce_hunt_tests).
-include_lib("eunit/include/eunit.hrl").

%% The programs compared with the real VM, also run by mce_reduction_tests.
-export([same_as_vm/0]).

warm_up_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [tprog_hunt1, tprog_hunt2, tprog_hunt3,
                                                               tprog_hunt4, tprog_hunt5, tprog_hunt6, tprog_hunt7, tprog_hunt8, tprog_hunt9, tprog_hunt_kv, tprog_hunt_otp,
                                                               gen_server, gen_statem, supervisor]] end}.

same_as_vm_test_() ->
    [{atom_to_list(M) ++ ":" ++ atom_to_list(F),
      {timeout, 60, fun() -> ?assertEqual([real(M, F)], root_results(M, F, Timeouts)) end}}
     || {M, Fs, Timeouts} <- same_as_vm(), F <- Fs].

-spec same_as_vm() -> [{module(), [atom()], any | when_idle}].
same_as_vm() ->
    [{tprog_hunt1, [pingpong, ring, barrier, mutex, semaphore, bounded, philosophers, priority,
                    timeout_client, trap_restart, monitor_down, demonitor_flush, pdict, guards,
                    catches, start_timer, election, two_phase, normal_exit_link,
                    exit_normal_ignored, kill_trapper], any},
     {tprog_hunt2, [timer_sleep, timer_send_after, timer_apply_after, foreach_send, spawn_mfa,
                    alias_reply, queue_worker, msg_queue_len, receive_in_try, fun_receives, pmap,
                    yield_alive, computed_after, spawn_opt_monitor, unlink_then_crash, exit_custom,
                    hand_call, send_after_name, bin_proto, monitor_dead, two_servers,
                    monitor_name, monitor_name_sleep], any},
     {tprog_hunt3, [self_exit_kill, exit_self_normal, exit_self_trapped, trap_old, name_lifecycle,
                    send_name_node, reg_info, try_after, ets_counter, ets_insert_new,
                    ets_owner_dies, fold_receive, maps_foreach, call_noproc, cast_dead,
                    trap_normal, selective_order, kill_after, exit_after, stale_pid], any},
     {tprog_hunt_kv, [scenario, lookup_direct, call_timeout], when_idle},
     {tprog_hunt_otp, [sup_restart, sup_intensity, sup_which, door, door_wrong, statem_timeout,
                       rpc_node_down, global_name], when_idle},
     {tprog_hunt6, [named_fun_loop, tuple_of_receives, andalso_receive, catch_receive, try_of_receive,
                    receive_in_after, comprehension_filter, arg_receive, case_of_receive,
                    closure_captures, receive_guard_bif, receive_map_pattern, bound_var_receive,
                    deep_recursion_receive, if_receive], any},
     %% two ETS accesses in a fun that ets:foldl/3, lists:sort/2 or sofs calls
     {tprog_hunt7, [ets_foldl_copy, sort_with_ets, sofs_ets], any},
     {tprog_hunt9, [call_one_way, late_monitor, send_badarg_stack], when_idle},
     {tprog_hunt4, [deferred, ticker, ticker_stop, pool, late_reply, gen_event_log, idle_server,
                    app_env, formatted, status], when_idle}].

%% Programs with a real bug: the checker finds a run that shows it.
lost_update_test() ->
    ?assert(lists:member({lost_update, 1}, root_results(tprog_hunt1, lost_update_bug, any))).

bank_race_test() ->
    %% the withdrawal may come before or after the deposit
    ?assertEqual([{result, {{error, insufficient}, 150}}, {result, {{ok, 30}, 30}}],
                 root_results(tprog_hunt1, bank, any)).

late_message_test() ->
    ?assertMatch([{result, 1}, {{bad_message, unexpected}, _}],
                 root_results(tprog_hunt1, late_message_bug, any)).

philosophers_deadlock_test() ->
    ?assertMatch({error, #{violation := deadlock}}, mcerlang:check({tprog_hunt1, philosophers_bug, []})).

link_crash_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {function_clause, _}}}},
                 mcerlang:check({tprog_hunt1, link_crash_bug, []})).

register_race_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {badarg, [{erlang, register, _, _} | _]}}}},
                 mcerlang:check({tprog_hunt1, register_race_bug, []}, #{property => [abnormal_exit]})).

whereis_race_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {badarg, _}}}},
                 mcerlang:check({tprog_hunt1, whereis_race_bug, []}, #{property => [abnormal_exit]})).

link_chain_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, middle_failed}}},
                 mcerlang:check({tprog_hunt3, link_chain_bug, []})).

kv_lost_update_test() ->
    ?assertMatch([{result, ok}, {{badmatch, {ok, 1}}, _}], root_results(tprog_hunt_kv, racy_incr, when_idle)).

%% Two ETS accesses of one process with another process between them: the
%% VM shows the lost update when the process sleeps between its read and
%% its write; the checker finds it without the sleep (it ran each process's
%% read and write in one step).
ets_lost_update_test() ->
    ?assertEqual({result, [{n, 1}]}, real(tprog_hunt3, ets_lost_update_slow)),
    ?assertMatch([{result, ok}, {{badmatch, [{n, 1}]}, _}],
                 root_results(tprog_hunt3, ets_lost_update_bug, any)),
    ?assertEqual([{result, [{n, 1}]}, {result, [{n, 2}]}],
                 root_results(tprog_hunt3, ets_lost_update_slow, any)).

counters_race_test() ->
    ?assertEqual([{result, {1, 2}}, {result, {2, 2}}], root_results(tprog_hunt3, counters_race, any)).

%% Two sends of one big step stay together (a known limit of big steps,
%% left as is: making sends scheduling points too grows the locker's state
%% space from 644,684 to 1,143,299): the VM mixes two clients' two-part
%% requests when a client is preempted between its sends, and the checker
%% shows the mix under granularity => small.
split_request_test() ->
    ?assertEqual({result, [{a, b}, {b, a}]}, real(tprog_hunt5, split_request_slow)),
    Whole = [normal, {result, [{a, a}, {b, b}]}, {result, [{b, b}, {a, a}]}],
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, [{_, _}, {_, _}]}}}},
                 mcerlang:check({tprog_hunt5, split_request_bug, []},
                                #{granularity => small, property => [abnormal_exit],
                                  treat_as_normal => Whole})).

%% Two servers calling each other with infinity: both wait forever.
call_cycle_test() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_hunt9, call_cycle_bug, []}, #{timeouts => when_idle, property => [deadlock]})).


typo_test() ->
    ?assertMatch({error, #{violation := deadlock}}, mcerlang:check({tprog_hunt9, typo_bug, []})).

whereis_then_send_test() ->
    ?assertMatch([{badarg, [{erlang, send, [srv, hello], _} | _]}, {result, sent}],
                 root_results(tprog_hunt9, whereis_then_send_bug, when_idle)).

%% An OTP team's EUnit test of its own code.
kv_eunit_style_test() ->
    ?assertMatch({ok, _}, mcerlang:check(fun() -> tprog_hunt_kv:scenario() end,
                                         #{property => [abnormal_exit], timeouts => when_idle,
                                           treat_as_normal => [normal, {result, {[{ok, 2}, {ok, 4}, not_found],
                                                                                 undefined}}]})).

rpc_between_nodes_test() ->
    Opts = #{nodes => [a@h, b@h], treat_as_normal => [normal, {result, {true, [3, 2, 1]}},
                                                      {result, {true, true}}]},
    ?assertMatch({ok, _}, mcerlang:check({tprog_hunt_otp, rpc_call, []}, Opts)),
    ?assertMatch({ok, _}, mcerlang:check({tprog_hunt_otp, spawn_remote, []}, Opts)).

%% Between two nodes.  The real VM's results, with a peer node started by
%% peer:start_link/1 (the EUnit VM is not distributed, so they are written
%% here): {result, hi}, {result, {pong, pang}}, {result, {true, caught}},
%% {result, remote_bye}, {result, linked_bye}, {result, {2, []}},
%% {result, {42, true}}.
two_nodes_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> ?assertEqual([Real], node_results(F)) end}}
     || {F, Real} <- [{registered_remote, {result, hi}},
                      {ping_pong_nodes, {result, {pong, pang}}},
                      %% erpc:call/2 was an unsupported call
                      {erpc_call, {result, {true, caught}}},
                      {remote_monitor, {result, remote_bye}},
                      {remote_link_trap, {result, linked_bye}},
                      {rpc_multicall, {result, {2, []}}},
                      {erpc_fun_timeout, {result, {42, true}}}]].

node_results(F) ->
    node_results(F, [], []).

node_results(F, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1, [a@h, b@h]),
    case mcerlang:check({tprog_hunt8, F, []},
                        #{nodes => [a@h, b@h], timeouts => when_idle, property => [abnormal_exit],
                          treat_as_normal => [normal | Seen ++ Others]}) of
        {ok, _} -> lists:sort(Seen);
        {error, #{violation := {abnormal_exit, Root, Reason}}} -> node_results(F, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _, Reason}}} -> node_results(F, Seen, [Reason | Others]);
        Other -> {unexpected, Other}
    end.

%% erlang:yield/0 lets the others run: a loop spinning on whereis/1 with
%% yield() ends on the VM, and was a runaway step in the checker.
yield_spin_test() ->
    ?assertEqual([{result, {{named, nonode@nohost}, normal}}], root_results(tprog_hunt2, monitor_name, any)).

%%--------------------------------------------------------------------

real(M, F) ->
    mce_otp_harness:real(M, F).

%% Every end of the root process (pid 1, alive until the end in these
%% programs) over all interleavings, sorted (the order they are found in is
%% the search's, which the reductions change); other processes' abnormal
%% exits are set aside.
root_results(M, F, Timeouts) ->
    root_results(M, F, Timeouts, [], []).

root_results(M, F, Timeouts, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1),
    case mcerlang:check({M, F, []}, #{timeouts => Timeouts, property => [abnormal_exit],
                                      treat_as_normal => [normal, shutdown | Seen ++ Others]}) of
        {ok, _} -> lists:sort(Seen);
        {error, #{violation := {abnormal_exit, Root, Reason}}} ->
            root_results(M, F, Timeouts, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _, Reason}}} ->
            root_results(M, F, Timeouts, Seen, [Reason | Others]);
        Other -> {unexpected, Other}
    end.
