%% Distributed patterns between simulated nodes (mce_hunt_tests; run with
%% nodes => [a@h, b@h]).
-module(tprog_hunt8).
-compile([export_all, nowarn_export_all]).

registered_remote() ->
    [B] = nodes(),
    Self = self(),
    spawn(B, fun() -> register(echo, self()), Self ! ready, receive {P, M} -> P ! {echoed, M} end end),
    receive ready -> ok end,
    {echo, B} ! {self(), hi},
    R = receive {echoed, M} -> M end,
    exit({result, R}).

ping_pong_nodes() ->
    [B] = nodes(),
    R = net_adm:ping(B),
    R2 = net_adm:ping('ghost@h'),
    exit({result, {R, R2}}).

erpc_call() ->
    [B] = nodes(),
    R = erpc:call(B, fun() -> node() end),
    R2 = try erpc:call(B, erlang, error, [oops]) catch error:{exception, oops, _} -> caught end,
    exit({result, {R =:= B, R2}}).

remote_monitor() ->
    [B] = nodes(),
    {P, Ref} = spawn_monitor(B, fun() -> exit(remote_bye) end),
    R = receive {'DOWN', Ref, process, P, W} -> W end,
    exit({result, R}).

remote_link_trap() ->
    [B] = nodes(),
    process_flag(trap_exit, true),
    P = spawn_link(B, fun() -> exit(linked_bye) end),
    R = receive {'EXIT', P, W} -> W end,
    exit({result, R}).

rpc_multicall() ->
    {Rs, Bad} = rpc:multicall([node() | nodes()], erlang, node, []),
    exit({result, {length(Rs), Bad}}).

erpc_fun_timeout() ->
    [B] = nodes(),
    Self = self(),
    ok = erpc:cast(B, fun() -> Self ! {cast_ran_on, node()} end),
    R = erpc:call(B, fun() -> 6 * 7 end, 1000),
    C = receive {cast_ran_on, N} -> N =:= B end,
    exit({result, {R, C}}).
