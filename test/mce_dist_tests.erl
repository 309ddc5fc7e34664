%% Nodes, the ether and faults (issue 4, items 3 and 4).  Where a program
%% can also run on the real (non-distributed) VM, with every node being
%% node(), its result there is the reference; the distributed variants
%% follow from OTP's documented guarantees (per-pair ordering, noconnection,
%% nodedown).
-module(mce_dist_tests).
-include_lib("eunit/include/eunit.hrl").

-define(N1, 'n1@sim').
-define(N2, 'n2@sim').
-define(N3, 'n3@sim').
-define(NODES, #{nodes => [?N1, ?N2, ?N3]}).

warm_up_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [tprog_dist, world_hello]] end}.

%%--------------------------------------------------------------------
%% World Hello (004_2999ceb9aa2f1435.txt, Fig. 1)
%%--------------------------------------------------------------------

world_hello_one_node_always_hello_world_test() ->
    ?assertMatch({ok, _}, mcerlang:check({world_hello, worldhello, [?N1, ?N1, ?N1]},
                                         #{nodes => [?N1]})),
    %% And on the default node, without a nodes option.
    N = node(),
    ?assertMatch({ok, _}, mcerlang:check({world_hello, worldhello, [N, N, N]})).

world_hello_three_nodes_finds_world_hello_test() ->
    {error, Cex} = mcerlang:check({world_hello, worldhello, [?N1, ?N2, ?N3]}, ?NODES),
    ?assertMatch(#{violation := {abnormal_exit, _, {wrong_order, world, hello}}}, Cex),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "prints \"world hello\\\\n\"")),
    ?assertMatch({match, _}, re:run(Text, "ether delivers message world")).

%% Nodes 1 = 2 =/= 3: A and B share a node, but A->C and B->C are different
%% pairs of processes, so the order is still not guaranteed.
world_hello_per_process_pair_ordering_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {wrong_order, world, hello}}}},
                 mcerlang:check({world_hello, worldhello, [?N1, ?N1, ?N2]},
                                #{nodes => [?N1, ?N2]})).

%% The program whose verdict differs between the delivery options: on one
%% node, instant delivery always gives hello world; with every signal in the
%% ether, as the real BEAM allows, world hello is possible.
delivery_option_changes_the_verdict_test() ->
    Entry = {world_hello, worldhello, [?N1, ?N1, ?N1]},
    ?assertMatch({ok, _}, mcerlang:check(Entry, #{nodes => [?N1], delivery => instant})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {wrong_order, world, hello}}}},
                 mcerlang:check(Entry, #{nodes => [?N1], delivery => ether})).

%% Messages between one pair of processes stay in order even through the
%% ether: A sends hello and then world straight to C on another node.
per_pair_fifo_test() ->
    ?assertEqual([{result, [1, 2, 3]}], results(fifo, [?N2], ?NODES)),
    ?assertEqual([{result, [1, 2, 3]}], results(fifo, [?N1], ?NODES#{delivery => ether})).

%%--------------------------------------------------------------------
%% Node BIFs, spawn on nodes, rpc
%%--------------------------------------------------------------------

node_of_remote_process_test() ->
    ?assertEqual([{result, ?N1}], results(where_am_i, [?N2], ?NODES)),
    %% The real VM, with one node: node() everywhere.
    ?assertEqual({result, node()}, real(where_am_i, [node()])).

nodes_lists_the_other_nodes_test() ->
    ?assertEqual([{result, ok}], results(node_list, [[?N2, ?N3]], ?NODES)),
    ?assertEqual({result, ok}, real(node_list, [[]])),
    ?assertEqual([{result, ok}], results(node_list, [[]], #{})).

rpc_and_erpc_call_test() ->
    ?assertEqual([{result, ok}], results(rpc_node, [?N3], ?NODES)),
    ?assertEqual({result, ok}, real(rpc_node, [node()])).

%% Every way an rpc/erpc call can end, as OTP 25 reports it: the real VM's
%% results (rpc to its own node) are the reference.
rpc_results_agree_with_the_vm_test() ->
    Real = real(rpc_results, [node()]),
    ?assertMatch({result, {ball, {badrpc, {'EXIT', bye}}, [3, 2, 1], {thrown, ball},
                           {exited, {exception, bye}}, error_with_stack}}, Real),
    ?assertEqual([Real], results(rpc_results, [?N2], ?NODES)),
    ?assertEqual([Real], results(rpc_results, [node()], #{})).

%% A timed-out call abandons its process as OTP 25 does: the caller gets
%% {erpc, timeout} / {badrpc, timeout}, the process runs on (its message
%% arrives) and ends normally, so no abnormal_exit is reported.
rpc_timeout_abandons_the_call_test() ->
    Real = real(rpc_abandoned, [node()]),
    ?assertEqual({result, {timeout, {badrpc, timeout}, [a, b]}}, Real),
    All = [{result, {A, B, [a, b]}} || A <- [a, timeout], B <- [b, {badrpc, timeout}]],
    ?assertEqual(All, results(rpc_abandoned, [?N2], ?NODES)),
    ?assertEqual(All, results(rpc_abandoned, [node()], #{timeouts => any})),
    %% Every process ends normally ({result, _} is the root's).
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, rpc_abandoned, [?N2]},
                                         ?NODES#{treat_as_normal => [normal, result]})),
    %% When idle, the shorter timeout fires first, as on the VM.
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, rpc_abandoned, [?N2]},
                                         ?NODES#{treat_as_normal => [normal, Real],
                                                 timeouts => when_idle})).

rpc_to_unknown_node_test() ->
    ?assertEqual([{result, {badrpc, nodedown}}],
                 results_of(fun() -> rpc:call('nowhere@sim', erlang, node, []) end)).

ping_test() ->
    ?assertEqual([{result, [pong, pong, pang]}],
                 results(ping, [[?N1, ?N3, 'nowhere@sim']], ?NODES)),
    %% A VM that is not distributed answers pang even for itself.
    Real = real(ping, [[node(), 'nowhere@sim']]),
    ?assertEqual({result, [pang, pang]}, Real),
    ?assertEqual([Real], results(ping, [[node(), 'nowhere@sim']], #{})).

%%--------------------------------------------------------------------
%% Signals between nodes
%%--------------------------------------------------------------------

remote_monitor_gets_exit_reason_test() ->
    ?assertEqual({result, crashed}, real(remote_down, [node()])),
    ?assertEqual([{result, crashed}], results(remote_down, [?N2], ?NODES)).

remote_link_carries_exit_reason_test() ->
    ?assertEqual({result, crashed}, real(remote_link, [node()])),
    ?assertEqual([{result, crashed}], results(remote_link, [?N2], ?NODES)).

remote_exit_signals_test() ->
    Real = real(remote_exit, [node()]),
    ?assertEqual({result, {boom, {true, normal}, killed}}, Real),
    ?assertEqual([Real], results(remote_exit, [?N2], ?NODES)).

monitor_of_dead_remote_pid_is_noproc_test() ->
    ?assertEqual({result, noproc}, real(remote_monitor_dead, [node()])),
    ?assertEqual([{result, noproc}], results(remote_monitor_dead, [?N3], ?NODES)).

%% A monitor made after a remote spawn is a signal of its own, which may
%% arrive after the new process has ended; spawn_monitor's travels with
%% the spawn.  The real VM (one node) gives one of the explored outcomes.
monitor_after_remote_spawn_may_miss_test() ->
    ?assertEqual([{result, bye}, {result, noproc}],
                 lists:sort(results(monitor_after_spawn, [?N2], ?NODES))),
    ?assertEqual([{result, bye}], results(spawn_monitor_quick, [?N2], ?NODES)),
    %% One node with every signal in the ether: the same.
    Ether = #{delivery => ether},
    ?assertEqual([{result, bye}, {result, noproc}],
                 lists:sort(results(monitor_after_spawn, [node()], Ether))),
    ?assertEqual([{result, bye}], results(spawn_opt_monitor_quick, [], Ether)),
    ?assert(lists:member(real(monitor_after_spawn, [node()]), [{result, bye}, {result, noproc}])),
    ?assertEqual({result, bye}, real(spawn_monitor_quick, [node()])),
    ?assertEqual({result, bye}, real(spawn_opt_monitor_quick, [])).

multicall_test() ->
    ?assertEqual({result, {[node()], ['nosuch@nohost']}},
                 real(multicall, [[node(), 'nosuch@nohost']])),
    ?assertEqual([{result, {[?N1], ['other@sim']}}],
                 results(multicall, [[?N1, 'other@sim']], #{nodes => [?N1, ?N2]})),
    ?assertEqual([{result, {[?N1, ?N2, ?N3], []}}],
                 results(multicall, [[?N1, ?N2, ?N3]], ?NODES)),
    %% A node that crashes before answering goes to the bad nodes.
    ?assertEqual(lists:sort([{result, {[?N1, ?N2], []}}, {result, {[?N1], [?N2]}}]),
                 lists:sort(results(multicall, [[?N1, ?N2]],
                                    #{nodes => [?N1, ?N2], faults => #{crash_node => 1}}))).

send_to_registered_name_on_other_node_test() ->
    ?assertEqual({result, ok}, real(name_send, [node()])),
    ?assertEqual([{result, ok}], results(name_send, [?N2], ?NODES)).

monitor_registered_name_on_other_node_test() ->
    N = node(),
    ?assertEqual({result, {{server, N}, crashed}}, real(name_monitor, [N, true])),
    ?assertEqual({result, {{server, N}, noproc}}, real(name_monitor, [N, false])),
    ?assertEqual([{result, {{server, ?N2}, crashed}}], results(name_monitor, [?N2, true], ?NODES)),
    ?assertEqual([{result, {{server, ?N2}, noproc}}], results(name_monitor, [?N2, false], ?NODES)).

%% A reply through an alias crosses the ether; without faults it always
%% arrives; with a crash of the server's node the caller sees noconnection.
alias_reply_across_nodes_test() ->
    ?assertEqual({result, reply}, real(remote_call, [node()])),
    ?assertEqual([{result, reply}], results(remote_call, [?N2], ?NODES)),
    ?assertEqual([{result, reply}, {result, {down, noconnection}}],
                 results(remote_call, [?N2], ?NODES#{faults => #{crash_node => 1}}, [deadlock])).

%% Timers are timeouts: untimed, one may fire before a message that is
%% already on its way; with timeouts => when_idle only when nothing else
%% can happen.
timer_fires_any_time_untimed_test() ->
    ?assertEqual([{result, done}, {result, timeout}],
                 collect({tprog, timer_race, []}, #{}, [deadlock, abnormal_exit], [])),
    ?assertEqual([{result, done}],
                 collect({tprog, timer_race, []}, #{timeouts => when_idle},
                         [deadlock, abnormal_exit], [])).

%%--------------------------------------------------------------------
%% Faults
%%--------------------------------------------------------------------

%% Without faults the worker always ends normally; a crash of its node may
%% give noconnection instead, and the fault is a step of the trace.
crash_node_gives_noconnection_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, crash_watch, [?N2]}, ?NODES)),
    {error, Cex} = mcerlang:check({tprog_dist, crash_watch, [?N2]},
                                  ?NODES#{faults => #{crash_node => 1}}),
    ?assertMatch(#{violation := {abnormal_exit, _, {{badmatch, noconnection}, _}}}, Cex),
    ?assert(lists:any(fun(#{kind := fault, fault := {crash_node, ?N2}}) -> true;
                         (_) -> false
                      end, maps:get(trace, Cex))),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "FAULT: node n2@sim crashes")).

crash_node_sends_nodedown_test() ->
    ?assertEqual([{result, {nodedown, ?N2}}],
                 results(nodedown_watch, [?N2], ?NODES#{faults => #{crash_node => 1}},
                         [deadlock])),
    %% Without the fault nothing ever comes: a deadlock.
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_dist, nodedown_watch, [?N2]}, ?NODES)).

spawn_link_on_crashed_node_is_noconnection_test() ->
    ?assertEqual([{result, noconnection}],
                 results(spawn_on_down, [?N2], ?NODES#{faults => #{crash_node => 1}},
                         [deadlock])).

%% A disconnect loses the request or the reply in transit: the client
%% waits forever.
disconnect_loses_signals_in_transit_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, disconnect_lost, [?N2]}, ?NODES)),
    {error, Cex} = mcerlang:check({tprog_dist, disconnect_lost, [?N2]},
                                  ?NODES#{faults => #{disconnect => 1}}),
    ?assertMatch(#{violation := deadlock}, Cex),
    ?assert(lists:any(fun(#{kind := fault, fault := {disconnect, _, _}}) -> true;
                         (_) -> false
                      end, maps:get(trace, Cex))).

%% A disconnect gives nodedown; a later reconnect step lets ping succeed.
disconnect_then_reconnect_test() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_dist, reconnects, [?N2]}, ?NODES)),
    {error, Cex} = mcerlang:check({tprog_dist, reconnects, [?N2]},
                                  ?NODES#{faults => #{disconnect => 1}, property => abnormal_exit}),
    ?assertMatch(#{violation := {abnormal_exit, _, reconnected}}, Cex),
    Faults = [F || #{kind := fault, fault := F} <- maps:get(trace, Cex)],
    ?assertMatch([{disconnect, ?N1, ?N2}, {reconnect, ?N1, ?N2}], Faults).

kill_fault_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, killable, []})),
    {error, Cex} = mcerlang:check({tprog_dist, killable, []}, #{faults => #{kill => 1}}),
    ?assert(lists:any(fun(#{kind := fault, fault := {kill, _}}) -> true;
                         (_) -> false
                      end, maps:get(trace, Cex))).

%%--------------------------------------------------------------------
%% Granularity
%%--------------------------------------------------------------------

%% A lost update between two read-then-write increments: found with a
%% scheduling point at every side effect, and in big steps too, where the
%% second ETS access of a step is a scheduling point (the VM shows the lost
%% update: mce_hunt_tests:ets_lost_update_test).
granularity_small_finds_ets_race_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {{badmatch, 1}, _}}}},
                 mcerlang:check({tprog, ets_counter_race, []})),
    {error, Cex} = mcerlang:check({tprog, ets_counter_race, []}, #{granularity => small}),
    ?assertMatch(#{violation := {abnormal_exit, _, {{badmatch, 1}, _}}}, Cex),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "yields \\(granularity small\\)")).

granularity_small_finds_register_race_test() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog, register_race, []}, #{property => deadlock})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {badarg, _}}}},
                 mcerlang:check({tprog, register_race, []},
                                #{granularity => small, property => abnormal_exit})),
    ?assertMatch({ok, _}, mcerlang:check({tprog, register_race, []},
                                         #{property => abnormal_exit})).

%%--------------------------------------------------------------------
%% Bad input
%%--------------------------------------------------------------------

%% gen_server:call to a server on a node that crashes: OTP 25's gen turns
%% the call monitor's noconnection into exit({nodedown, Node}); an rpc to
%% the crashed node is {badrpc, nodedown}.  Both by name and by pid.
call_across_crashed_node_test() ->
    Opts = #{nodes => [a@h, b@h], faults => #{crash_node => 1}, timeouts => when_idle},
    ?assertEqual([{result, {1, 2}}, {result, {1, {nodedown, b@h}}},
                  {result, {badrpc, nodedown}},
                  {result, {{nodedown, b@h}, {nodedown, b@h}}}],
                 results(remote_gen_call, [b@h], Opts)).

bad_options_test() ->
    E = {tprog_dist, killable, []},
    ?assertError({mcerlang, {bad_option_value, nodes, foo, _}}, mcerlang:check(E, #{nodes => [foo]})),
    ?assertError({mcerlang, {bad_option_value, nodes, _, _}}, mcerlang:check(E, #{nodes => [a@b, a@b]})),
    ?assertError({mcerlang, {bad_option_value, nodes, []}}, mcerlang:check(E, #{nodes => []})),
    ?assertError({mcerlang, {bad_option_value, delivery, fast}}, mcerlang:check(E, #{delivery => fast})),
    ?assertError({mcerlang, {bad_option_value, granularity, tiny}},
                 mcerlang:check(E, #{granularity => tiny})),
    ?assertError({mcerlang, {bad_option_value, faults, {crash, 1}, _}},
                 mcerlang:check(E, #{faults => #{crash => 1}})),
    ?assertError({mcerlang, {bad_option_value, faults, {kill, -1}, _}},
                 mcerlang:check(E, #{faults => #{kill => -1}})).

spawn_on_undeclared_node_is_an_error_test() ->
    ?assertError({mcerlang, {unknown_node, 'nowhere@nohost', {erlang, spawn, 4}, _}},
                 mcerlang:check({tprog_dist, unknown_node, []})).

%%--------------------------------------------------------------------

real(F, Args) ->
    {Pid, Ref} = spawn_monitor(tprog_dist, run, [F, Args]),
    receive {'DOWN', Ref, process, Pid, Reason} -> strip(Reason) end.

results(F, Args, Opts) ->
    results(F, Args, Opts, [deadlock, abnormal_exit]).

results(F, Args, Opts, Props) ->
    collect({tprog_dist, run, [F, Args]}, Opts, Props, []).

results_of(Fun) ->
    collect(fun() -> exit({result, Fun()}) end, #{}, [deadlock, abnormal_exit], []).

%% Every result the root process can end with, over all interleavings
%% (each one found is then treated as normal, and the check repeated).
collect(Entry, Opts, Props, Seen) ->
    collect(Entry, Opts, Props, Seen, []).

%% Other processes' abnormal exits are set aside: only the root's result
%% is compared.
collect(Entry, Opts, Props, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1, maps:get(nodes, Opts, [node()])),
    Props1 = case Props -- [deadlock] of
                 Props -> Props;
                 Rest -> Rest
             end,
    case mcerlang:check(Entry, Opts#{treat_as_normal => [normal | Seen ++ Others],
                                     property => [abnormal_exit | Props1]}) of
        {ok, _} -> lists:sort([strip(R) || R <- Seen]);
        {error, #{violation := {abnormal_exit, Root, Reason}}} ->
            collect(Entry, Opts, Props, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _, Reason}}} ->
            collect(Entry, Opts, Props, Seen, [Reason | Others]);
        {error, #{violation := V}} ->
            {unexpected, V}
    end.

strip({result, {badrpc, {'EXIT', {R, [_ | _]}}}}) -> {result, {badrpc, {'EXIT', {R, stack}}}};
strip(R) -> R.
