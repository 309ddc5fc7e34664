%% net_kernel:monitor_nodes/1,2, connect_node/1 and node_info/1,2 in the
%% model (mce_rt_netkernel; the messages come from the C search's node
%% events, ether.c nodes_event).  What one real node can answer is compared
%% with the VM; the message shapes of two real nodes are those of erts
%% (dist.c, send_nodes_mon_msg), checked by hand with peer:start_link/1 on
%% OTP 25: {nodeup, N}, {nodeup, N, []}, {nodeup, N, [{node_type, visible}]},
%% {nodedown, N, [{nodedown_reason, connection_closed}, {node_type, visible}]}.
-module(mce_netkernel_tests).

-include_lib("eunit/include/eunit.hrl").

-define(A, 'a@host').
-define(B, 'b@host').
-define(O, #{progress => false, nodes => [?A, ?B]}).

%% Every result the root can exit with, over all interleavings and faults.
results(Entry, Opts) ->
    mce_otp_harness:results(Entry, maps:merge(?O, Opts)).

%% The watcher on a@host waits for ever unless b@host goes: not a deadlock
%% here (property abnormal_exit), the result is what it got.
crash_gives_nodedown_test_() ->
    {timeout, 120, fun crash_gives_nodedown/0}.

crash_gives_nodedown() ->
    Opts = #{faults => #{crash_node => 1}, property => abnormal_exit},
    ?assertEqual([[{nodedown, ?B}]], results({tprog_netkernel, watch, [[], 1]}, Opts)),
    ?assertEqual([[{nodedown, ?B, [{nodedown_reason, connection_closed}]}]],
                 results({tprog_netkernel, watch, [[nodedown_reason], 1]}, Opts)),
    ?assertEqual([[{nodedown, ?B, [{nodedown_reason, connection_closed}, {node_type, visible}]}]],
                 results({tprog_netkernel, watch, [[nodedown_reason, {node_type, all}], 1]}, Opts)).

%% A disconnection is a nodedown (the tick timed out); the reconnection
%% that may follow a nodeup; the subscription outlives both.
disconnect_and_reconnect_test_() ->
    {timeout, 120, fun disconnect_and_reconnect/0}.

disconnect_and_reconnect() ->
    Opts = #{faults => #{disconnect => 1}, property => abnormal_exit},
    ?assertEqual([[{nodedown, ?B, [{nodedown_reason, net_tick_timeout}]}, {nodeup, ?B, []}]],
                 results({tprog_netkernel, watch, [[nodedown_reason], 2]}, Opts)),
    ?assertEqual([[{nodedown, ?B, [{node_type, visible}]}, {nodeup, ?B, [{node_type, visible}]}]],
                 results({tprog_netkernel, watch, [[{node_type, visible}], 2]}, Opts)),
    %% {node_type, hidden}: the model's nodes are all visible.
    ?assertEqual([], results({tprog_netkernel, watch, [[{node_type, hidden}], 1]}, Opts)).

subscriptions_stack_test_() ->
    {timeout, 120, fun subscriptions_stack/0}.

subscriptions_stack() ->
    Opts = #{faults => #{crash_node => 1}, property => abnormal_exit},
    ?assertEqual([[{nodedown, ?B}, {nodedown, ?B}]], results({tprog_netkernel, stacked, []}, Opts)),
    ?assertEqual([[{nodedown, ?B}]], results({tprog_netkernel, unsubscribed, []}, Opts)).

subscription_dies_with_its_process_test_() ->
    {timeout, 120, fun subscription_dies_with_its_process/0}.

subscription_dies_with_its_process() ->
    Opts = #{faults => #{crash_node => 1}, property => abnormal_exit},
    ?assertEqual([{nodedown, ?B}], results({tprog_netkernel, watcher_dies, []}, Opts)).

%% Without faults nothing comes: the watcher waits for ever (a deadlock).
no_event_without_a_fault_test_() ->
    {timeout, 120, fun no_event_without_a_fault/0}.

no_event_without_a_fault() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_netkernel, watch, [[], 1]}, ?O)).

%% The answers one real node gives, under the checker on one node too.
return_values_as_the_vm_test_() ->
    [?_assertEqual(real(F), checked(F)) || F <- [return_values, bad_options]].

real(F) ->
    {Pid, Ref} = spawn_monitor(tprog_netkernel, F, []),
    receive {'DOWN', Ref, process, Pid, {result, R}} -> R end.

checked(F) ->
    {error, #{violation := {abnormal_exit, _, {result, R}}}} =
        mcerlang:check({tprog_netkernel, F, []}, #{progress => false}),
    R.

connect_and_info_test_() ->
    {timeout, 120, fun connect_and_info/0}.

connect_and_info() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _,
                                         {result, {true, true, false,
                                                   [{ok, up}, {ok, normal}, {error, invalid_key}],
                                                   {error, bad_node}, {error, bad_node}}}}}},
                 mcerlang:check({tprog_netkernel, connect_and_info, [?B]}, ?O)).

%% What the model does not know stops the check, naming the way out.
unmodelled_node_info_test_() ->
    {timeout, 120, fun unmodelled_node_info/0}.

unmodelled_node_info() ->
    ?assertError({mcerlang, {unsupported_call, {net_kernel, node_info, 2}, {item, owner}, _}},
                 mcerlang:check(fun() -> net_kernel:node_info(?B, owner) end, ?O)),
    ?assertError({mcerlang, {unsupported_call, {net_kernel, start, 1}, _, _}},
                 mcerlang:check(fun() -> net_kernel:start([x]) end, ?O)).

halt_gives_nodedown_test_() ->
    {timeout, 120, fun halt_gives_nodedown/0}.

halt_gives_nodedown() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, {nodedown, ?B,
                                                                    [{nodedown_reason, connection_closed}]}}}}},
                 mcerlang:check({tprog_netkernel, halt_other, [?B]}, ?O)).
