%% Small concurrent programs written the way textbooks and blog posts write
%% them (mce_hunt_tests): each correct one ends its root with
%% exit({result, V}); the buggy ones are named *_bug.
-module(tprog_hunt1).
-compile([export_all, nowarn_export_all]).

%% ---- ping-pong (Armstrong's book) ----
ping(0, Pong_PID) ->
    Pong_PID ! finished,
    done;
ping(N, Pong_PID) ->
    Pong_PID ! {ping, self()},
    receive
        pong -> ok
    end,
    ping(N - 1, Pong_PID).

pong(Count) ->
    receive
        finished -> Count;
        {ping, Ping_PID} ->
            Ping_PID ! pong,
            pong(Count + 1)
    end.

pingpong() ->
    Self = self(),
    Pong = spawn(fun() -> Self ! {pong_done, pong(0)} end),
    ping(3, Pong),
    receive {pong_done, C} -> exit({result, C}) end.

%% ---- ring ----
ring() ->
    N = 4,
    First = self(),
    Last = lists:foldl(fun(_, Next) -> spawn(fun() -> relay(Next) end) end, First, lists:seq(1, N)),
    Last ! {token, 0},
    receive {token, Hops} -> exit({result, Hops}) end.

relay(Next) ->
    receive {token, H} -> Next ! {token, H + 1} end.

%% ---- barrier ----
barrier() ->
    Parent = self(),
    B = spawn(fun() -> barrier_loop(3, []) end),
    [spawn(fun() -> B ! {arrive, self()}, receive go -> Parent ! {passed, I} end end) || I <- [1, 2, 3]],
    R = [receive {passed, I} -> I end || I <- [1, 2, 3]],
    exit({result, R}).

barrier_loop(0, Waiting) -> [P ! go || P <- Waiting];
barrier_loop(N, Waiting) ->
    receive {arrive, P} -> barrier_loop(N - 1, [P | Waiting]) end.

%% ---- mutex server ----
mutex() ->
    M = spawn(fun free/0),
    Parent = self(),
    Counter = spawn(fun() -> cell(0) end),
    [spawn(fun() -> locked_incr(M, Counter), Parent ! done end) || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    Counter ! {get, self()},
    receive {value, V} -> exit({result, V}) end.

free() ->
    receive {wait, Pid} -> Pid ! ok, busy(Pid) end.
busy(Pid) ->
    receive {signal, Pid} -> free() end.

cell(V) ->
    receive
        {get, P} -> P ! {value, V}, cell(V);
        {set, X} -> cell(X)
    end.

locked_incr(M, Counter) ->
    M ! {wait, self()},
    receive ok -> ok end,
    Counter ! {get, self()},
    receive {value, V} -> Counter ! {set, V + 1} end,
    M ! {signal, self()}.

%% the same without the lock: lost update
lost_update_bug() ->
    Parent = self(),
    Counter = spawn(fun() -> cell(0) end),
    [spawn(fun() ->
                   Counter ! {get, self()},
                   receive {value, V} -> Counter ! {set, V + 1} end,
                   Parent ! done
           end) || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    Counter ! {get, self()},
    receive {value, 2} -> exit({result, 2}); {value, V} -> exit({lost_update, V}) end.

%% ---- semaphore ----
semaphore() ->
    S = spawn(fun() -> sem(2, []) end),
    Parent = self(),
    Cnt = spawn(fun() -> maxcount(0, 0) end),
    [spawn(fun() ->
                   S ! {p, self()}, receive granted -> ok end,
                   Cnt ! in, Cnt ! out,
                   S ! v, Parent ! done
           end) || _ <- [1, 2, 3]],
    [receive done -> ok end || _ <- [1, 2, 3]],
    Cnt ! {max, self()},
    receive {max, M} when M =< 2 -> exit({result, ok}) end.

sem(N, [P | Q]) when N > 0 -> P ! granted, sem(N - 1, Q);
sem(N, Q) ->
    receive
        {p, P} -> sem(N, Q ++ [P]);
        v -> sem(N + 1, Q)
    end.

maxcount(Cur, Max) ->
    receive
        in -> maxcount(Cur + 1, max(Max, Cur + 1));
        out -> maxcount(Cur - 1, Max);
        {max, P} -> P ! {max, Max}
    end.

%% ---- bank account with deposits/withdrawals (process per account) ----
bank() ->
    Acc = spawn(fun() -> account(100) end),
    Parent = self(),
    spawn(fun() -> Acc ! {deposit, 50, self()}, receive {ok, _} -> Parent ! d end end),
    spawn(fun() -> Acc ! {withdraw, 120, self()},
                   receive R -> Parent ! {w, R} end end),
    receive d -> ok end,
    W = receive {w, X} -> X end,
    Acc ! {balance, self()},
    receive {ok, B} -> exit({result, {W, B}}) end.

account(Bal) ->
    receive
        {deposit, X, P} -> P ! {ok, Bal + X}, account(Bal + X);
        {withdraw, X, P} when X =< Bal -> P ! {ok, Bal - X}, account(Bal - X);
        {withdraw, _, P} -> P ! {error, insufficient}, account(Bal);
        {balance, P} -> P ! {ok, Bal}, account(Bal)
    end.

%% ---- bounded buffer producer/consumer ----
bounded() ->
    Buf = spawn(fun() -> buffer([], 2) end),
    Parent = self(),
    spawn(fun() -> [begin Buf ! {put, self(), I}, receive ok -> ok end end || I <- [1, 2, 3, 4]] end),
    spawn(fun() -> Parent ! {got, [begin Buf ! {take, self()}, receive {item, I} -> I end end || _ <- [1, 2, 3, 4]]} end),
    receive {got, L} -> exit({result, L}) end.

buffer(Items, Max) ->
    receive
        {put, P, I} when length(Items) < Max -> P ! ok, buffer(Items ++ [I], Max);
        {take, P} when Items =/= [] -> [I | Rest] = Items, P ! {item, I}, buffer(Rest, Max)
    end.

%% ---- dining philosophers, naive: deadlock ----
philosophers_bug() ->
    F = [spawn(fun fork/0) || _ <- [1, 2, 3]],
    [F1, F2, F3] = F,
    [spawn(fun() -> phil(L, R) end) || {L, R} <- [{F1, F2}, {F2, F3}, {F3, F1}]],
    ok.

fork() -> receive {take, P} -> P ! taken, receive {drop, P} -> fork() end end.
phil(L, R) ->
    L ! {take, self()}, receive taken -> ok end,
    R ! {take, self()}, receive taken -> ok end,
    L ! {drop, self()}, R ! {drop, self()}.

%% ordered forks: no deadlock
philosophers() ->
    [F1, F2, F3] = [spawn(fun fork/0) || _ <- [1, 2, 3]],
    Parent = self(),
    [spawn(fun() -> phil(L, R), Parent ! ate end) || {L, R} <- [{F1, F2}, {F2, F3}, {F1, F3}]],
    [receive ate -> ok end || _ <- [1, 2, 3]],
    exit({result, ate}).

%% ---- selective receive: priority ----
priority() ->
    self() ! {low, 1}, self() ! {high, 2}, self() ! {low, 3},
    exit({result, important([])}).

important(Acc) ->
    receive
        {high, X} -> important([X | Acc])
    after 0 -> normal(Acc)
    end.
normal(Acc) ->
    receive {low, X} -> normal([X | Acc]) after 0 -> lists:reverse(Acc) end.

%% ---- timeout: a slow server, the client gives up ----
timeout_client() ->
    S = spawn(fun() -> receive {req, P} -> receive never -> P ! late end end end),
    S ! {req, self()},
    R = receive late -> late after 100 -> timeout end,
    exit({result, R}).

%% ---- linked worker crash propagates (no trap) ----
link_crash_bug() ->
    spawn_link(fun() -> one(2) end),
    receive after infinity -> ok end.

%% ---- trap_exit supervisor restarts a worker once ----
trap_restart() ->
    process_flag(trap_exit, true),
    W = spawn_link(fun() -> exit(boom) end),
    R1 = receive {'EXIT', W, Why} -> Why end,
    W2 = spawn_link(fun() -> ok end),
    R2 = receive {'EXIT', W2, Why2} -> Why2 end,
    exit({result, {R1, R2}}).

%% ---- monitors ----
monitor_down() ->
    {P, Ref} = spawn_monitor(fun() -> exit(oops) end),
    R = receive {'DOWN', Ref, process, P, Reason} -> Reason end,
    Ref2 = monitor(process, P),
    R2 = receive {'DOWN', Ref2, process, P, Reason2} -> Reason2 end,
    exit({result, {R, R2}}).

%% demonitor with flush, message never arrives
demonitor_flush() ->
    P = spawn(fun() -> receive stop -> ok end end),
    Ref = monitor(process, P),
    true = demonitor(Ref, [flush]),
    P ! stop,
    R = receive {'DOWN', Ref, _, _, _} -> got_down after 0 -> none end,
    exit({result, R}).

%% ---- registered name race ----
register_race_bug() ->
    F = fun() -> register(server, self()), receive stop -> ok end end,
    spawn(F), spawn(F),
    ok.

%% whereis race: client may send before server registers -> badarg
whereis_race_bug() ->
    spawn(fun() -> register(srv, self()), receive {hi, P} -> P ! hello end end),
    srv ! {hi, self()},
    receive hello -> ok end.

%% ---- process dictionary ----
pdict() ->
    put(count, 0),
    [put(count, get(count) + 1) || _ <- [1, 2, 3]],
    Old = put(count, 10),
    Keys = get_keys(10),
    E = erase(count),
    exit({result, {Old, Keys, E, get(count), get()}}).

%% ---- receive with guards and maps/records/binaries ----
-record(msg, {from, body = <<>>, n = 0}).

guards() ->
    P = self(),
    spawn(fun() -> P ! #msg{from = a, body = <<"hi">>, n = 3} end),
    spawn(fun() -> P ! #{kind => req, n => 7} end),
    spawn(fun() -> P ! <<1, 2, 3>> end),
    A = receive #msg{n = N, body = <<"h", Rest/binary>>} when N > 2 -> {rec, Rest} end,
    B = receive #{kind := req, n := M} when is_integer(M), M rem 7 =:= 0 -> {map, M} end,
    C = receive <<X, _/binary>> when X < 5 -> {bin, X} end,
    exit({result, [A, B, C]}).

%% ---- catch/try around calls ----
catches() ->
    A = catch 1 / zero(),
    B = try exit(foo) catch exit:foo -> caught end,
    C = (catch throw(t)),
    D = try list_to_atom(zero()) catch error:badarg -> badarg end,
    P = spawn(fun() -> ok end),
    E = try link(P), linked catch error:noproc -> noproc end,
    exit({result, {element(1, element(2, A)), B, C, D, lists:member(E, [linked, noproc])}}).

%% ---- send_after timers ----
send_after() ->
    erlang:send_after(10, self(), tick),
    T = erlang:send_after(50, self(), tock),
    R1 = receive tick -> tick end,
    Left = erlang:cancel_timer(T),
    R2 = receive tock -> tock after 0 -> cancelled end,
    exit({result, {R1, is_integer(Left), R2}}).

%% ---- start_timer / read_timer ----
start_timer() ->
    Ref = erlang:start_timer(100, self(), hello),
    R = receive {timeout, Ref, Msg} -> Msg end,
    exit({result, {R, erlang:read_timer(Ref)}}).

%% ---- leader election in a ring (Chang-Roberts) ----
election() ->
    Ids = [3, 1, 4, 2],
    Parent = self(),
    Pids = [spawn(fun() -> cr_node(Id, Parent) end) || Id <- Ids],
    Next = tl(Pids) ++ [hd(Pids)],
    [P ! {next, N} || {P, N} <- lists:zip(Pids, Next)],
    [P ! start || P <- Pids],
    Leader = receive {leader, L} -> L end,
    exit({result, Leader}).

cr_node(Id, Parent) ->
    receive {next, N} -> receive start -> N ! {elect, Id}, cr_loop(Id, N, Parent) end end.
cr_loop(Id, N, Parent) ->
    receive
        {elect, Id} -> Parent ! {leader, Id};
        {elect, X} when X > Id -> N ! {elect, X}, cr_loop(Id, N, Parent);
        {elect, _} -> cr_loop(Id, N, Parent)
    end.

%% ---- two-phase commit ----
two_phase() ->
    Parts = [spawn(fun() -> participant(V) end) || V <- [yes, yes, no]],
    [P ! {prepare, self()} || P <- Parts],
    Votes = [receive {vote, P, V} -> V end || P <- Parts],
    Decision = case lists:all(fun(V) -> V =:= yes end, Votes) of true -> commit; false -> abort end,
    [P ! {Decision, self()} || P <- Parts],
    Acks = [receive {ack, P, D} -> D end || P <- Parts],
    exit({result, {Decision, Acks}}).

participant(V) ->
    receive {prepare, C} -> C ! {vote, self(), V} end,
    receive {D, C2} -> C2 ! {ack, self(), D} end.

%% ---- message race: late reply crashes the receiver ----
late_message_bug() ->
    Self = self(),
    spawn(fun() -> Self ! {reply, 1} end),
    spawn(fun() -> Self ! unexpected end),
    receive
        {reply, X} -> exit({result, X});
        Other -> error({bad_message, Other})
    end.

%% ---- spawn_link + trap_exit + normal exits ----
normal_exit_link() ->
    process_flag(trap_exit, true),
    Pids = [spawn_link(fun() -> ok end) || _ <- [1, 2]],
    R = [receive {'EXIT', P, Why} -> Why end || P <- Pids],
    exit({result, R}).

%% exit(Pid, normal) to a non-trapping process does nothing
exit_normal_ignored() ->
    P = spawn(fun() -> receive ping -> ok end end),
    exit(P, normal),
    Alive = is_process_alive(P),
    P ! ping,
    exit({result, Alive}).

%% exit(Pid, kill) to a trapping process
kill_trapper() ->
    process_flag(trap_exit, true),
    P = spawn_link(fun() -> process_flag(trap_exit, true), receive _ -> ok end end),
    exit(P, kill),
    R = receive {'EXIT', P, Why} -> Why end,
    exit({result, R}).

one(1) -> ok.
zero() -> 0.
