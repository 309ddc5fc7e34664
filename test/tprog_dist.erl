%% @doc Distributed programs for mce_dist_tests: each runs under the checker
%% with several simulated nodes.  Programs whose single-node variant can run
%% on the real VM too (rpc to node(), monitors, links) are also run there by
%% the tests, to compare.
-module(tprog_dist).

-compile([nowarn_unused_function]).
-export([where_am_i/1, node_list/1, rpc_node/1, rpc_results/1, remote_down/1, remote_link/1,
         name_send/1, name_monitor/2, ping/1, crash_watch/1, disconnect_lost/1,
         killable/0, unknown_node/0, echo/0, echo_named/1, crash_after/1, waiter/0,
         nodedown_watch/1, remote_monitor_dead/1, spawn_on_down/1]).
-export([multicall/1]).
-export([rpc_abandoned/1, late_reply/2]).
-export([monitor_after_spawn/1, spawn_monitor_quick/1, spawn_opt_monitor_quick/0, quick_exit/0]).
-export([thrower/1, exiter/1, divider/1, run/2, fifo/1, remote_call/1, remote_exit/1,
         reconnects/1, remote_gen_call/1]).

%% node() in a process spawned on another node, and node/1 of its pid.
where_am_i(Node) ->
    Self = self(),
    Pid = spawn(Node, fun() -> Self ! {here, node()} end),
    Node = node(Pid),
    receive {here, N} -> Node = N end,
    node().

node_list(Expected) ->
    Expected = lists:sort(nodes()),
    ok.

rpc_node(Node) ->
    Node = rpc:call(Node, erlang, node, []),
    Node = erpc:call(Node, erlang, node, []),
    ok.

thrower(V) -> throw(V).
exiter(R) -> exit(R).
divider(X) -> 1 div X.

%% What rpc and erpc return for each way a call ends.
rpc_results(Node) ->
    A = rpc:call(Node, ?MODULE, thrower, [ball]),
    B = rpc:call(Node, ?MODULE, exiter, [bye]),
    {badrpc, {'EXIT', {badarith, [_ | _]}}} = rpc:call(Node, ?MODULE, divider, [0]),
    C = rpc:call(Node, lists, reverse, [[1, 2, 3]]),
    D = try erpc:call(Node, ?MODULE, thrower, [ball]) catch throw:T -> {thrown, T} end,
    E = try erpc:call(Node, ?MODULE, exiter, [bye]) catch exit:X -> {exited, X} end,
    F = try erpc:call(Node, ?MODULE, divider, [0])
        catch error:{exception, badarith, [_ | _]} -> error_with_stack
        end,
    {A, B, C, D, E, F}.

%% A call that times out is abandoned, not killed (OTP 25 erpc:call/5,
%% call_abandon/1): its process runs on and its message still arrives.
rpc_abandoned(Node) ->
    Self = self(),
    A = try erpc:call(Node, ?MODULE, late_reply, [Self, a], 10)
        catch error:{erpc, timeout} -> timeout
        end,
    B = rpc:call(Node, ?MODULE, late_reply, [Self, b], 10),
    Late = [receive {late, Tag} -> Tag end || _ <- [a, b]],
    {A, B, lists:sort(Late)}.

late_reply(Pid, Tag) ->
    receive after 200 -> ok end,
    Pid ! {late, Tag},
    Tag.

echo() ->
    receive
        {From, Msg} -> From ! {echo, Msg}, echo();
        stop -> ok;
        crash -> exit(crashed)
    end.

waiter() ->
    receive never -> ok end.

%% A monitor of a process on another node sees its exit reason.
remote_down(Node) ->
    {Pid, Ref} = spawn_monitor(Node, ?MODULE, echo, []),
    Pid ! crash,
    receive {'DOWN', Ref, process, Pid, Reason} -> Reason end.

%% A link to a process on another node carries its exit reason.
remote_link(Node) ->
    process_flag(trap_exit, true),
    Pid = spawn_link(Node, ?MODULE, echo, []),
    Pid ! crash,
    receive {'EXIT', Pid, Reason} -> Reason end.

echo_named(Name) ->
    register(Name, self()),
    echo().

%% {Name, Node} ! Msg reaches a process registered on another node.
name_send(Node) ->
    spawn(Node, ?MODULE, echo_named, [server]),
    wait_registered(Node, server),
    {server, Node} ! {self(), hi},
    receive {echo, hi} -> ok end,
    {server, Node} ! stop,
    ok.

wait_registered(Node, Name) ->
    case rpc:call(Node, erlang, whereis, [Name]) of
        undefined -> wait_registered(Node, Name);
        _ -> ok
    end.

%% monitor(process, {Name, Node}): 'DOWN' names {Name, Node}; noproc when
%% nothing is registered there.
name_monitor(Node, Start) ->
    Start andalso spawn(Node, ?MODULE, echo_named, [server]),
    Start andalso wait_registered(Node, server),
    Ref = monitor(process, {server, Node}),
    Start andalso ({server, Node} ! crash),
    receive {'DOWN', Ref, process, Item, Reason} -> {Item, Reason} end.

ping(Nodes) ->
    [net_adm:ping(N) || N <- Nodes].

%% A worker on Node sends done and ends; its parent traps exits.  With a
%% crash of Node the parent may see noconnection instead.
crash_watch(Node) ->
    process_flag(trap_exit, true),
    Self = self(),
    Pid = spawn_link(Node, fun() -> Self ! done end),
    receive done -> ok end,
    receive {'EXIT', Pid, Reason} -> normal = Reason end,
    ok.

%% A request and its reply cross Node; a disconnect loses them.
disconnect_lost(Node) ->
    Pid = spawn(Node, ?MODULE, echo, []),
    Pid ! {self(), ping},
    receive {echo, ping} -> Pid ! stop end,
    ok.

killable() ->
    Pid = spawn(?MODULE, echo, []),
    Pid ! {self(), hi},
    receive {echo, hi} -> Pid ! stop end,
    ok.

unknown_node() ->
    spawn('nowhere@nohost', ?MODULE, echo, []).

crash_after(Node) ->
    monitor_node(Node, true),
    receive {nodedown, Node} -> nodedown end.

nodedown_watch(Node) ->
    monitor_node(Node, true),
    receive {nodedown, N} -> {nodedown, N} end.

%% A monitor of a remote pid that no longer exists: noproc, through the
%% ether.
remote_monitor_dead(Node) ->
    {Pid, Ref0} = spawn_monitor(Node, ?MODULE, echo, []),
    Pid ! stop,
    receive {'DOWN', Ref0, process, Pid, normal} -> ok end,
    Ref = monitor(process, Pid),
    receive {'DOWN', Ref, process, Pid, Reason} -> Reason end.

%% A monitor made after a plain spawn travels on its own, after the spawn:
%% the new process may have ended when it arrives (noproc).
monitor_after_spawn(Node) ->
    Pid = spawn(Node, ?MODULE, quick_exit, []),
    Ref = monitor(process, Pid),
    receive {'DOWN', Ref, process, Pid, Reason} -> Reason end.

%% spawn_monitor's monitor goes with the spawn: it sees the real reason.
spawn_monitor_quick(Node) ->
    {Pid, Ref} = spawn_monitor(Node, ?MODULE, quick_exit, []),
    receive {'DOWN', Ref, process, Pid, Reason} -> Reason end.

spawn_opt_monitor_quick() ->
    {Pid, Ref} = spawn_opt(?MODULE, quick_exit, [], [monitor]),
    receive {'DOWN', Ref, process, Pid, Reason} -> Reason end.

quick_exit() ->
    exit(bye).

spawn_on_down(Node) ->
    process_flag(trap_exit, true),
    monitor_node(Node, true),
    receive {nodedown, Node} -> ok end,
    Pid = spawn_link(Node, ?MODULE, echo, []),
    receive {'EXIT', Pid, Reason} -> Reason end.


%% The root process ends with the program's result, so that tests can
%% collect the results of every interleaving.
run(F, Args) ->
    exit({result, apply(?MODULE, F, Args)}).


%% Three messages from one process to one process on Node arrive in order.
fifo(Node) ->
    Self = self(),
    Pid = spawn(Node, fun() -> Self ! {got, collect3([])} end),
    Pid ! 1, Pid ! 2, Pid ! 3,
    receive {got, L} -> L end.

collect3(Acc) when length(Acc) =:= 3 -> lists:reverse(Acc);
collect3(Acc) -> receive X -> collect3([X | Acc]) end.

%% gen:call's pattern across nodes: the reply comes back through an alias.
remote_call(Node) ->
    Srv = spawn(Node, fun() -> receive {call, Alias} -> Alias ! {Alias, reply} end end),
    Mref = monitor(process, Srv, [{alias, demonitor}]),
    Srv ! {call, Mref},
    receive
        {Mref, Reply} -> demonitor(Mref, [flush]), Reply;
        {'DOWN', Mref, process, Srv, Reason} -> {down, Reason}
    end.

%% exit/2 to a process on another node: a signal through the ether.
remote_exit(Node) ->
    {P1, R1} = spawn_monitor(Node, ?MODULE, echo, []),
    exit(P1, boom),
    A = receive {'DOWN', R1, process, P1, Reason1} -> Reason1 end,
    Self = self(),
    P2 = spawn(Node, fun() ->
                             process_flag(trap_exit, true),
                             Self ! ready,
                             receive {'EXIT', From, Why} -> Self ! {trapped, From =:= Self, Why} end
                     end),
    receive ready -> ok end,
    exit(P2, normal),
    B = receive {trapped, FromMe, Why} -> {FromMe, Why} end,
    {P3, R3} = spawn_monitor(Node, ?MODULE, echo, []),
    exit(P3, normal),
    exit(P3, kill),
    C = receive {'DOWN', R3, process, P3, Reason3} -> Reason3 end,
    {A, B, C}.

%% After a disconnect, ping until the nodes are connected again.
reconnects(Node) ->
    monitor_node(Node, true),
    receive {nodedown, Node} -> ok end,
    wait_pong(Node),
    exit(reconnected).

wait_pong(Node) ->
    case net_adm:ping(Node) of
        pong -> ok;
        pang -> receive after 10 -> wait_pong(Node) end
    end.

%% A gen_server (tprog_otp's counter) started on Node by rpc, then called by
%% name and by pid from here.
remote_gen_call(Node) ->
    Call = fun(To) ->
                   try gen_server:call(To, inc)
                   catch exit:{Reason, {gen_server, call, [To, inc]}} -> Reason
                   end
           end,
    case rpc:call(Node, gen_server, start, [{local, srv}, tprog_otp, 0, []]) of
        {ok, Pid} -> {Call({srv, Node}), Call(Pid)};
        Other -> Other
    end.

%% rpc:multicall: results in node order, unreachable nodes apart.
multicall(Nodes) ->
    rpc:multicall(Nodes, erlang, node, []).
