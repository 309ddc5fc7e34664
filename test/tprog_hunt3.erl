%% Exit signals, names and ETS patterns as others write them
%% (mce_hunt_tests).
-module(tprog_hunt3).
-compile([export_all, nowarn_export_all]).

%% a process calling exit(kill) dies with reason kill; a linked process
%% dies with kill too (only exit(P, kill) is untrappable and becomes killed)
self_exit_kill() ->
    process_flag(trap_exit, true),
    Parent = self(),
    A = spawn_link(fun() ->
                           B = spawn_link(fun() -> receive after infinity -> ok end end),
                           Parent ! {b, B},
                           receive go -> exit(kill) end
                   end),
    B = receive {b, X} -> X end,
    Ref = monitor(process, B),
    A ! go,
    R1 = receive {'EXIT', A, W1} -> W1 end,
    R2 = receive {'DOWN', Ref, process, B, W2} -> W2 end,
    exit({result, {R1, R2}}).

%% exit(self(), normal) kills a non-trapping caller
exit_self_normal() ->
    {P, Ref} = spawn_monitor(fun() -> exit(self(), normal), receive after infinity -> ok end end),
    R = receive {'DOWN', Ref, process, P, W} -> W end,
    exit({result, R}).

%% while trapping, exit(self(), foo) is a message
exit_self_trapped() ->
    process_flag(trap_exit, true),
    exit(self(), foo),
    R = receive {'EXIT', P, W} -> {P =:= self(), W} end,
    exit({result, R}).

%% trap_exit returns the old value
trap_old() ->
    A = process_flag(trap_exit, true),
    B = process_flag(trap_exit, false),
    exit({result, {A, B}}).

%% name freed on death, send to a dead name is badarg
name_lifecycle() ->
    {P, Ref} = spawn_monitor(fun() -> register(worker, self()), receive stop -> ok end end),
    wait(worker),
    R0 = whereis(worker) =:= P,
    worker ! stop,
    receive {'DOWN', Ref, process, P, normal} -> ok end,
    R1 = whereis(worker),
    R2 = try worker ! hi, sent catch error:badarg -> badarg end,
    R3 = (catch erlang:send(worker, hi)),
    exit({result, {R0, R1, R2, element(1, element(2, R3))}}).

wait(N) -> case whereis(N) of undefined -> timer:sleep(1), wait(N); _ -> ok end.

%% {Name, node()} ! Msg to an unregistered local name
send_name_node() ->
    R = try {nobody, node()} ! hi, sent catch error:badarg -> badarg end,
    exit({result, R}).

%% registered_name in process_info, unregister
reg_info() ->
    register(me, self()),
    A = process_info(self(), registered_name),
    true = unregister(me),
    B = process_info(self(), registered_name),
    C = (catch unregister(me)),
    exit({result, {A, B, element(1, element(2, C))}}).

%% try ... after sends a goodbye even on a crash
try_after() ->
    P = self(),
    spawn(fun() -> try error(boom) after P ! cleanup end end),
    R = receive cleanup -> cleaned end,
    exit({result, R}).

%% ETS public counter with update_counter: no lost update
ets_counter() ->
    T = ets:new(c, [public, set]),
    ets:insert(T, {n, 0}),
    P = self(),
    [spawn(fun() -> ets:update_counter(T, n, 1), P ! done end) || _ <- [1, 2, 3]],
    [receive done -> ok end || _ <- [1, 2, 3]],
    exit({result, ets:lookup(T, n)}).

%% ETS lookup then insert: lost update
ets_lost_update_bug() ->
    T = ets:new(c, [public, set]),
    ets:insert(T, {n, 0}),
    P = self(),
    [spawn(fun() -> [{n, V}] = ets:lookup(T, n), ets:insert(T, {n, V + 1}), P ! done end) || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    [{n, 2}] = ets:lookup(T, n),
    exit({result, ok}).

%% insert_new as a lock: exactly one winner
ets_insert_new() ->
    T = ets:new(lock, [public, set]),
    P = self(),
    [spawn(fun() -> P ! {won, I, ets:insert_new(T, {lock, I})} end) || I <- [1, 2]],
    Rs = [receive {won, I, W} -> W end || I <- [1, 2]],
    exit({result, lists:sort(Rs)}).

%% table deleted when its owner dies
ets_owner_dies() ->
    P = self(),
    {O, Ref} = spawn_monitor(fun() -> T = ets:new(t, [public]), P ! {tab, T}, receive stop -> ok end end),
    T = receive {tab, X} -> X end,
    ets:insert(T, {a, 1}),
    O ! stop,
    receive {'DOWN', Ref, process, O, _} -> ok end,
    exit({result, ets:info(T)}).

%% foldl with a receive in the fun
fold_receive() ->
    P = self(),
    [spawn(fun() -> P ! {n, I} end) || I <- [1, 2, 3]],
    S = lists:foldl(fun(_, Acc) -> receive {n, I} -> Acc + I end end, 0, [a, b, c]),
    exit({result, S}).

%% maps:foreach with sends, then collecting
maps_foreach() ->
    P = self(),
    M = #{a => 1, b => 2},
    maps:foreach(fun(K, V) -> spawn(fun() -> P ! {K, V * 2} end) end, M),
    R = lists:sort([receive X -> X end || _ <- [1, 2]]),
    exit({result, R}).

%% gen_server:call to a name that does not exist
call_noproc() ->
    R = try gen_server:call(no_such_server, hi)
        catch exit:{noproc, {gen_server, call, [no_such_server, hi]}} -> noproc
        end,
    exit({result, R}).

%% gen_server:cast to a dead name is fine
cast_dead() ->
    ok = gen_server:cast(no_such_server, hi),
    exit({result, ok}).

%% link to a process that exits normal: trapping parent sees normal
trap_normal() ->
    process_flag(trap_exit, true),
    P = spawn_link(fun() -> receive go -> ok end end),
    P ! go,
    R = receive {'EXIT', P, W} -> W end,
    exit({result, R}).

%% a chain of links: the middle crashes, all die (untrapped)
link_chain_bug() ->
    spawn(fun() ->
                  spawn_link(fun() ->
                                     spawn_link(fun() -> receive after infinity -> ok end end),
                                     exit(middle_failed)
                             end),
                  receive after infinity -> ok end
          end),
    ok.

%% monitor self? erlang allows monitoring yourself: no DOWN until death
selective_order() ->
    P = self(),
    S = spawn(fun() -> P ! m1, P ! m2, P ! m3 end),
    R = [receive m3 -> m3 end, receive M -> M end, receive M2 -> M2 end],
    exit({result, {is_pid(S), R}}).

%% kill_after from timer
kill_after() ->
    process_flag(trap_exit, true),
    P = spawn_link(fun() -> receive after infinity -> ok end end),
    {ok, _} = timer:kill_after(10, P),
    R = receive {'EXIT', P, W} -> W end,
    exit({result, R}).

%% exit_after from timer
exit_after() ->
    P = spawn(fun() -> receive after infinity -> ok end end),
    Ref = monitor(process, P),
    {ok, _} = timer:exit_after(10, P, bye),
    R = receive {'DOWN', Ref, process, P, W} -> W end,
    exit({result, R}).

%% a stale pid must not name a process spawned later
stale_pid() ->
    {P, Ref} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', Ref, process, P, normal} -> ok end,
    Q = spawn(fun() -> receive stop -> ok end end),
    R = {P =:= Q, is_process_alive(P)},
    Q ! stop,
    exit({result, R}).

%% ets_lost_update_bug with a sleep between the read and the write: the
%% real VM shows the lost update too.
ets_lost_update_slow() ->
    T = ets:new(c, [public, set]),
    ets:insert(T, {n, 0}),
    P = self(),
    [spawn(fun() -> [{n, V}] = ets:lookup(T, n), timer:sleep(20), ets:insert(T, {n, V + 1}), P ! done end)
     || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    exit({result, ets:lookup(T, n)}).

%% counters: get then put loses an update, add does not
counters_race() ->
    C = counters:new(2, []),
    P = self(),
    [spawn(fun() -> V = counters:get(C, 1), counters:put(C, 1, V + 1), counters:add(C, 2, 1), P ! done end)
     || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    exit({result, {counters:get(C, 1), counters:get(C, 2)}}).
