%% net_kernel's node events, connections and node info in the model
%% (mce_rt_netkernel; see mce_netkernel_tests).
-module(tprog_netkernel).

-export([halt_other/1, bad_options/0, watch/2, stacked/0, unsubscribed/0, return_values/0, connect_and_info/1,
         watcher_dies/0]).

%% Subscribes with Options and exits with the first N messages it gets.
watch(Options, N) ->
    ok = net_kernel:monitor_nodes(true, Options),
    exit({result, [receive M -> M end || _ <- lists:seq(1, N)]}).

%% Two subscriptions: two messages per event.
stacked() ->
    ok = net_kernel:monitor_nodes(true),
    ok = net_kernel:monitor_nodes(true),
    exit({result, [receive M -> M end || _ <- [1, 2]]}).

%% Two subscriptions, one taken back: one message per event.
unsubscribed() ->
    ok = net_kernel:monitor_nodes(true),
    ok = net_kernel:monitor_nodes(true),
    ok = net_kernel:monitor_nodes(false),
    M = receive X -> X end,
    receive Y -> exit({result, {M, also, Y}}) after 0 -> exit({result, [M]}) end.

%% What the VM answers, on one node (not distributed).
return_values() ->
    R = [net_kernel:monitor_nodes(true), net_kernel:monitor_nodes(true, [nodedown_reason]),
         net_kernel:monitor_nodes(false), net_kernel:monitor_nodes(false),
         net_kernel:monitor_nodes(false, [nodedown_reason]),
         net_kernel:monitor_nodes(false, [nodedown_reason]),
         net_kernel:monitor_nodes(true, [bad, nodedown_reason, {node_type, x}]),
         net_kernel:monitor_nodes(foo), net_kernel:monitor_nodes(true, not_a_list),
         net_kernel:monitor_nodes(true, [{node_type, all}, nodedown_reason]),
         net_kernel:monitor_nodes(false, [{node_type, all}, nodedown_reason]),
         net_kernel:connect_node(node()),
         (catch net_kernel:node_info(node(), state))],
    exit({result, [case X of {'EXIT', {Why, _}} -> {'EXIT', Why}; _ -> X end || X <- R]}).

%% On a node of several: connections and the items of node_info/2.
connect_and_info(Other) ->
    exit({result, {net_kernel:connect_node(Other), net_kernel:connect_node(node()),
                   net_kernel:connect_node('nowhere@nohost'),
                   [net_kernel:node_info(Other, I) || I <- [state, type, foo]],
                   net_kernel:node_info(node(), state), net_kernel:node_info('nowhere@nohost')}}).

%% A subscriber that dies takes its subscription along; another process
%% then sees the event once.
watcher_dies() ->
    Self = self(),
    P = spawn(fun() -> ok = net_kernel:monitor_nodes(true), Self ! subscribed end),
    receive subscribed -> ok end,
    Ref = monitor(process, P),
    receive {'DOWN', Ref, _, _, _} -> ok end,
    ok = net_kernel:monitor_nodes(true),
    M = receive X -> X end,
    exit({result, M}).

%% Bad option lists, answered as net_kernel does.
bad_options() ->
    exit({result, [net_kernel:monitor_nodes(true, O)
                   || O <- [[bad], [bad, nodedown_reason, other], [{node_type, x}],
                            [{node_type, all}, {node_type, visible}], [x, {node_type, all}, y],
                            [{node_type, all}, nodedown_reason, {node_type, all}, z],
                            [x, {node_type, hidden}, nodedown_reason, y]]]}).

%% erlang:halt/0 on the other node: a nodedown whose reason is the closed
%% connection.
halt_other(B) ->
    ok = net_kernel:monitor_nodes(true, [nodedown_reason]),
    spawn(B, fun() -> erlang:halt() end),
    exit({result, receive M -> M end}).
