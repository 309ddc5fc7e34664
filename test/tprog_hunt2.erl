%% More small concurrent programs as others write them (mce_hunt_tests):
%% library timers, lists:foreach of sends, spawn/3, aliases, queues,
%% process_info, receive inside try, funs receiving.
-module(tprog_hunt2).
-compile([export_all, nowarn_export_all]).

timer_sleep() ->
    P = self(),
    spawn(fun() -> timer:sleep(10), P ! a end),
    spawn(fun() -> P ! b end),
    R = [receive X -> X end, receive Y -> Y end],
    exit({result, lists:sort(R)}).

timer_send_after() ->
    {ok, _} = timer:send_after(5, self(), ding),
    {ok, T} = timer:send_after(10000, self(), dong),
    {ok, cancel} = timer:cancel(T),
    R = receive ding -> ding end,
    R2 = receive dong -> dong after 0 -> none end,
    exit({result, {R, R2}}).

timer_apply_after() ->
    P = self(),
    {ok, _} = timer:apply_after(5, erlang, send, [P, applied]),
    R = receive applied -> yes end,
    exit({result, R}).

foreach_send() ->
    P = self(),
    Pids = [spawn(fun() -> receive {n, N} -> P ! {sq, N * N} end end) || _ <- lists:seq(1, 3)],
    lists:foreach(fun({Pid, N}) -> Pid ! {n, N} end, lists:zip(Pids, [1, 2, 3])),
    R = lists:sum([receive {sq, S} -> S end || _ <- Pids]),
    exit({result, R}).

spawn_mfa() ->
    P = spawn(?MODULE, echo, [self()]),
    P ! hello,
    R = receive {echo, M} -> M end,
    exit({result, R}).

echo(Parent) -> receive M -> Parent ! {echo, M} end.

alias_reply() ->
    Alias = alias([reply]),
    spawn(fun() -> Alias ! {Alias, one}, Alias ! {Alias, two} end),
    R = receive {Alias, X} -> X end,
    R2 = receive {Alias, Y} -> Y after 100 -> dropped end,
    exit({result, {R, R2}}).

queue_worker() ->
    P = self(),
    W = spawn(fun() -> qloop(queue:new(), P) end),
    [W ! {job, J} || J <- [a, b, c]],
    W ! run,
    R = receive {done, L} -> L end,
    exit({result, R}).

qloop(Q, P) ->
    receive
        {job, J} -> qloop(queue:in(J, Q), P);
        run -> P ! {done, queue:to_list(Q)}
    end.

msg_queue_len() ->
    self() ! a, self() ! b,
    {message_queue_len, N} = process_info(self(), message_queue_len),
    {messages, Ms} = process_info(self(), messages),
    exit({result, {N, Ms}}).

receive_in_try() ->
    P = spawn(fun() -> receive {ask, From} -> From ! {answer, 1 div zero()} end end),
    R = try
            P ! {ask, self()},
            receive {answer, A} -> A after 100 -> throw(no_answer) end
        catch
            throw:no_answer -> no_answer
        end,
    exit({result, R}).

fun_receives() ->
    Wait = fun(Tag) -> receive {Tag, V} -> V end end,
    P = self(),
    spawn(fun() -> P ! {b, 2}, P ! {a, 1} end),
    A = Wait(a), B = Wait(b),
    exit({result, {A, B}}).

%% a parallel map, a classic
pmap() ->
    F = fun(X) -> X * 10 end,
    Parent = self(),
    Refs = [begin Ref = make_ref(),
                  spawn(fun() -> Parent ! {Ref, F(X)} end),
                  Ref end || X <- [1, 2, 3]],
    R = [receive {Ref, V} -> V end || Ref <- Refs],
    exit({result, R}).

%% yield and is_process_alive
yield_alive() ->
    P = spawn(fun() -> ok end),
    erlang:yield(),
    Ref = monitor(process, P),
    receive {'DOWN', Ref, process, P, _} -> ok end,
    exit({result, is_process_alive(P)}).

%% an after with a computed timeout and a guard in receive
computed_after() ->
    T = 0,
    self() ! {x, 5},
    R = receive {x, N} when N > 10 -> big after T -> small end,
    exit({result, R}).

%% spawn_opt with monitor
spawn_opt_monitor() ->
    {P, Ref} = spawn_opt(fun() -> exit(bye) end, [monitor]),
    R = receive {'DOWN', Ref, process, P, Why} -> Why end,
    exit({result, R}).

%% the process receives the EXIT of a killed linked process
link_killed() ->
    process_flag(trap_exit, true),
    P = spawn_link(fun() -> receive _ -> ok end end),
    Q = spawn_link(fun() -> link(P), receive _ -> ok end end),
    exit(P, kill),
    R1 = receive {'EXIT', P, W1} -> W1 end,
    R2 = receive {'EXIT', Q, W2} -> W2 end,
    exit({result, {R1, R2}}).

%% unlink before the crash: no EXIT
unlink_then_crash() ->
    process_flag(trap_exit, true),
    P = spawn_link(fun() -> receive go -> exit(crash) end end),
    unlink(P),
    P ! go,
    R = receive {'EXIT', P, _} -> got after 50 -> none end,
    exit({result, R}).

%% exit/2 with a custom reason to a non-trapping process
exit_custom() ->
    P = spawn(fun() -> receive after infinity -> ok end end),
    Ref = monitor(process, P),
    exit(P, custom),
    R = receive {'DOWN', Ref, process, P, W} -> W end,
    exit({result, R}).

%% a gen_server-like call with make_ref and monitor, by hand
hand_call() ->
    S = spawn(fun() -> receive {call, From, Ref, X} -> From ! {Ref, X + 1} end end),
    Ref = monitor(process, S),
    S ! {call, self(), Ref, 41},
    R = receive
            {Ref, Reply} -> demonitor(Ref, [flush]), Reply;
            {'DOWN', Ref, process, S, Why} -> {down, Why}
        end,
    exit({result, R}).

%% erlang:send_after to a registered name
send_after_name() ->
    register(me, self()),
    erlang:send_after(5, me, hi),
    R = receive hi -> ok end,
    exit({result, R}).

%% binary protocol in messages
bin_proto() ->
    P = self(),
    spawn(fun() -> P ! <<1:8, 300:16, "abc">> end),
    R = receive <<Type:8, Len:16, Rest/binary>> -> {Type, Len, Rest} end,
    exit({result, R}).

%% erlang:monitor on a registered name
monitor_name() ->
    P = spawn(fun() -> register(named, self()), receive stop -> ok end end),
    Ref0 = monitor(process, P),
    wait_registered(named),
    Ref = monitor(process, named),
    named ! stop,
    R = receive {'DOWN', Ref, process, Who, Why} -> {Who, Why} end,
    receive {'DOWN', Ref0, _, _, _} -> ok end,
    exit({result, R}).

wait_registered(N) ->
    case whereis(N) of undefined -> erlang:yield(), wait_registered(N); _ -> ok end.

%% monitor a dead process: noproc
monitor_dead() ->
    {P, R0} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', R0, _, _, _} -> ok end,
    Ref = monitor(process, P),
    R = receive {'DOWN', Ref, process, P, W} -> W end,
    exit({result, R}).

%% nested receive: reply ordering between two servers
two_servers() ->
    A = spawn(fun() -> receive {q, P} -> P ! {a, 1} end end),
    B = spawn(fun() -> receive {q, P} -> P ! {b, 2} end end),
    A ! {q, self()}, B ! {q, self()},
    R = receive {b, Y} -> receive {a, X} -> X + Y end end,
    exit({result, R}).

zero() -> 0.

%% wait for a name with timer:sleep in the loop
monitor_name_sleep() ->
    P = spawn(fun() -> register(named, self()), receive stop -> ok end end),
    wait_registered_sleep(named, 0),
    named ! stop,
    exit({result, is_pid(P)}).

wait_registered_sleep(N, T) ->
    case whereis(N) of undefined -> timer:sleep(T), wait_registered_sleep(N, T); _ -> ok end.

monitor_name_sleep1() ->
    P = spawn(fun() -> register(named, self()), receive stop -> ok end end),
    wait_registered_sleep(named, 1),
    named ! stop,
    exit({result, is_pid(P)}).
