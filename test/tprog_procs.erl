%% @doc Programs for the differential tests of mce_procs_tests: the system
%% processes `init' and `user', group leaders, erlang:processes/0, the
%% read-only environment queries, gen_fsm, atomics and counters.  Each
%% scenario ends its root process with exit({result, R}), R free of pids
%% and refs, so the real VM and the checker can be compared.
-module(tprog_procs).
%% gen_fsm is deprecated, and tested here on purpose.
-compile(nowarn_deprecated_function).

-export([system_processes/0, system_process_signals/0, group_leaders/0, processes_list/0,
         whereis_kernel_sup/0, exit_kill_user/0, env_queries/0,
         gen_fsm_counter/0, gen_fsm_sync_timeout/0, atomics_ops/0, atomics_race/0,
         counters_ops/0, counters_race/0, halt_node/0, halt_after_send/0, halt_remote/0,
         remote_group_leader/0, atomics_lost_update/0, env_values/0,
         remote_system_names/0, remote_kernel_sup/0, process_count/0, exit_then_alive/0]).
-export([waiter/0]).
-export([init/1, counting/2, counting/3, full/3, handle_event/3, handle_sync_event/4, handle_info/3,
         terminate/3, code_change/4]).

waiter() ->
    receive stop -> ok end.

%% whereis(user) and whereis(init) are live pids, registered under their
%% names, which cannot be taken.  (The group leader is `user' in the
%% model, but under EUnit the real VM's is EUnit's: only its being a live
%% pid compares.)
system_processes() ->
    U = whereis(user),
    I = whereis(init),
    Taken = try register(user, self()) catch error:badarg -> badarg end,
    exit({result, {is_pid(U), is_pid(I), U =/= I, is_process_alive(U), is_process_alive(I),
                   is_pid(group_leader()), is_process_alive(group_leader()),
                   process_info(U, registered_name), process_info(I, registered_name),
                   process_info(self(), group_leader) =:= {group_leader, group_leader()},
                   lists:member(user, registered()), lists:member(init, registered()),
                   Taken}}).

%% Both trap exits and ignore stray messages: links, monitors, messages and
%% exit signals leave them alive, and no 'DOWN' or 'EXIT' comes back.
system_process_signals() ->
    process_flag(trap_exit, true),
    U = whereis(user),
    I = whereis(init),
    L = {link(U), link(I)},
    Ref = monitor(process, user),
    Ref2 = monitor(process, I),
    U ! hello,
    I ! hello,
    user ! {hello, again},
    E = exit(U, some_reason),
    Alive = {is_process_alive(U), is_process_alive(I)},
    Stray = receive Any -> {got, Any} after 0 -> none end,
    D = {demonitor(Ref, [flush]), demonitor(Ref2)},
    U2 = unlink(U),
    exit({result, {L, E, Alive, Stray, D, U2}}).

%% A spawned process, and a process that it spawns in turn, inherit the
%% group leader; setting it to the one it already is changes nothing.
group_leaders() ->
    Self = self(),
    P = spawn(fun() ->
                      Q = spawn(?MODULE, waiter, []),
                      Self ! {gl, group_leader(), process_info(Q, group_leader)},
                      Q ! stop,
                      waiter()
              end),
    GL = group_leader(),
    R = receive {gl, G1, {group_leader, G2}} -> {G1 =:= GL, G2 =:= GL} end,
    S = group_leader(GL, P),
    P ! stop,
    exit({result, {R, S, process_info(P, group_leader) =:= {group_leader, GL}}}).

%% processes/0 lists init first and every live process, not the dead.
processes_list() ->
    A = spawn(?MODULE, waiter, []),
    B = spawn(?MODULE, waiter, []),
    P1 = processes(),
    Ref = monitor(process, A),
    exit(A, kill),
    receive {'DOWN', Ref, process, A, killed} -> ok end,
    P2 = processes(),
    B ! stop,
    exit({result, {hd(P1) =:= whereis(init),
                   [lists:member(X, P1) || X <- [self(), A, B, whereis(user)]],
                   [lists:member(X, P2) || X <- [self(), A]]}}).

%% A standard registered name of a real node that the model does not have.
whereis_kernel_sup() ->
    exit({result, is_pid(whereis(kernel_sup))}).

exit_kill_user() ->
    exit(whereis(user), kill),
    exit({result, done}).

%% The environment queries: their values are fixed by the checker
%% (docs/USER_GUIDE.md), so only their shapes compare.
env_queries() ->
    {ok, Cwd} = file:get_cwd(),
    {ok, [[Root]]} = init:get_argument(root),
    {ok, [[Prog]]} = init:get_argument(progname),
    {ok, [[_Home]]} = init:get_argument(home),
    Args = init:get_arguments(),
    exit({result, {is_list(Cwd), is_list(Root), Prog,
                   init:get_argument(no_such_flag_at_all),
                   lists:keymember(root, 1, Args), is_list(init:get_plain_arguments()),
                   tuple_size(init:get_status())}}).

%% gen_fsm (deprecated, still in OTP 25): a counter with a limit, driven by
%% sync and async events, stopped at the end.
gen_fsm_counter() ->
    {ok, P} = gen_fsm:start_link(?MODULE, 2, []),
    gen_fsm:send_event(P, inc),
    A = gen_fsm:sync_send_event(P, get),
    gen_fsm:send_event(P, inc),
    B = gen_fsm:sync_send_event(P, get),
    C = gen_fsm:sync_send_all_state_event(P, state_name),
    gen_fsm:send_all_state_event(P, reset),
    D = gen_fsm:sync_send_event(P, get),
    P ! info,
    E = gen_fsm:sync_send_event(P, get),
    ok = gen_fsm:stop(P),
    exit({result, {A, B, C, D, E, is_process_alive(P)}}).

%% A sync event that is never answered times out in the caller.
gen_fsm_sync_timeout() ->
    {ok, P} = gen_fsm:start(?MODULE, 1, []),
    R = (catch gen_fsm:sync_send_event(P, ignore_me, 100)),
    gen_fsm:send_all_state_event(P, stop),
    exit({result, element(1, element(2, R))}).

init(Limit) -> {ok, counting, {0, Limit}}.

counting(inc, {N, Limit}) when N + 1 >= Limit -> {next_state, full, {N + 1, Limit}};
counting(inc, {N, Limit}) -> {next_state, counting, {N + 1, Limit}}.

counting(get, _From, {N, _} = S) -> {reply, {counting, N}, counting, S};
counting(ignore_me, _From, S) -> {next_state, counting, S}.

handle_event(reset, _StateName, {_, Limit}) -> {next_state, counting, {0, Limit}};
handle_event(stop, _StateName, S) -> {stop, normal, S}.

handle_sync_event(state_name, _From, StateName, S) -> {reply, StateName, StateName, S}.

handle_info(info, StateName, {N, Limit}) -> {next_state, StateName, {N + 10, Limit}}.

terminate(_Reason, _StateName, _S) -> ok.

code_change(_Old, StateName, S, _Extra) -> {ok, StateName, S}.

%% The state name `full' has only sync events for get.
full(get, _From, {N, _} = S) -> {reply, {full, N}, full, S}.

%% atomics: every operation's result.
atomics_ops() ->
    A = atomics:new(3, [{signed, true}]),
    ok = atomics:put(A, 1, 5),
    R1 = atomics:add_get(A, 1, 3),
    ok = atomics:add(A, 2, -4),
    R2 = atomics:sub_get(A, 3, 2),
    ok = atomics:sub(A, 3, 1),
    R3 = atomics:exchange(A, 1, 100),
    R4 = atomics:compare_exchange(A, 1, 100, 7),
    R5 = atomics:compare_exchange(A, 1, 100, 9),
    R6 = [atomics:get(A, I) || I <- [1, 2, 3]],
    Info = atomics:info(A),
    U = atomics:new(1, [{signed, false}]),
    Wrap = atomics:sub_get(U, 1, 1),
    Bad = try atomics:get(A, 4) catch error:badarg -> badarg end,
    exit({result, {R1, R2, R3, R4, R5, R6, maps:get(size, Info), maps:get(min, Info),
                   Wrap, Bad, is_reference(A)}}).

%% Two processes increment a shared atomic: add_get is atomic, so the
%% final value is always 2 and each sees a distinct value.
atomics_race() ->
    A = atomics:new(1, []),
    Self = self(),
    [spawn(fun() -> Self ! {v, atomics:add_get(A, 1, 1)} end) || _ <- [1, 2]],
    Vs = lists:sort([receive {v, V} -> V end || _ <- [1, 2]]),
    exit({result, {Vs, atomics:get(A, 1)}}).

%% counters: both kinds, every operation.
counters_ops() ->
    C = counters:new(2, []),
    W = counters:new(1, [write_concurrency]),
    ok = counters:add(C, 1, 5),
    ok = counters:sub(C, 2, 3),
    ok = counters:put(C, 1, 10),
    ok = counters:add(W, 1, 4),
    ok = counters:sub(W, 1, 1),
    exit({result, {counters:get(C, 1), counters:get(C, 2), counters:get(W, 1),
                   maps:get(size, counters:info(C)),
                   try counters:get(C, 3) catch error:badarg -> badarg end}}).

%% Two processes increment a shared counter.
counters_race() ->
    C = counters:new(1, []),
    Self = self(),
    [spawn(fun() -> counters:add(C, 1, 1), Self ! done end) || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    exit({result, counters:get(C, 1)}).

%% Not differential (the real VM would stop): halt/0 ends the node.
halt_node() ->
    spawn(?MODULE, waiter, []),
    halt().

halt_after_send() ->
    Self = self(),
    spawn(fun() -> Self ! hi, halt(1) end),
    receive hi -> ok end,
    exit({result, not_reached}).

%% Node a halts while a process of node b waits for ever.
halt_remote() ->
    [_, B] = [node() | nodes()],
    spawn(B, ?MODULE, waiter, []),
    halt().

%% A process spawned on another node has its spawner's group leader, and
%% that node its own user and init (checked without the real VM: it is not
%% distributed here).  Ends normally when all holds.
remote_group_leader() ->
    [_, B] = [node() | nodes()],
    Self = self(),
    GL = group_leader(),
    spawn(B, fun() -> Self ! {remote, group_leader(), whereis(user), whereis(init), processes()} end),
    receive
        {remote, GL, U, I, Ps} when U =/= GL, node(U) =:= B, node(I) =:= B ->
            true = lists:member(U, Ps),
            ok
    end.

%% A read and a write of an atomic are two operations: two processes
%% incrementing with get and put can lose an update on the VM.
atomics_lost_update() ->
    A = atomics:new(1, []),
    Self = self(),
    [spawn(fun() -> V = atomics:get(A, 1), atomics:put(A, 1, V + 1), Self ! done end)
     || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    exit({result, atomics:get(A, 1)}).

env_values() ->
    exit({result, {file:get_cwd(), init:get_argument(home), init:get_argument(progname),
                   init:get_plain_arguments(), init:get_status()}}).

%% Names on another node: user and init are there and ignore messages.
remote_system_names() ->
    [_, B] = [node() | nodes()],
    {user, B} ! hello,
    {init, B} ! hello,
    Ref = monitor(process, {user, B}),
    receive Any -> exit({unexpected, Any}) after 0 -> ok end,
    true = demonitor(Ref),
    ok.

remote_kernel_sup() ->
    [_, B] = [node() | nodes()],
    {kernel_sup, B} ! hello,
    ok.

%% system_info(process_count) counts the processes: one more after a spawn,
%% one less when it is gone.
process_count() ->
    N0 = erlang:system_info(process_count),
    {P, Ref} = spawn_monitor(?MODULE, waiter, []),
    N1 = erlang:system_info(process_count),
    P ! stop,
    receive {'DOWN', Ref, process, P, normal} -> ok end,
    N2 = erlang:system_info(process_count),
    exit({result, {N1 - N0, N2 - N0, N0 >= 3, is_list(code:priv_dir(kernel)),
                   is_list(code:lib_dir()), is_list(code:root_dir())}}).

%% exit/2 with a reason other than kill or normal, then liveness in the
%% same step: OTP orders the signal before is_process_alive/1 and
%% processes/0 (erlang(3)), so a process that traps exits is alive and one
%% that does not is gone.  The checker asks whether the target traps exits
%% only when the step looks (mce_rt_procs:overlay_exit/2).
-spec exit_then_alive() -> no_return().
exit_then_alive() ->
    Self = self(),
    Trapper = spawn(fun() -> process_flag(trap_exit, true), Self ! trapping,
                             receive {'EXIT', _, _} -> receive stop -> ok end end end),
    Plain = spawn(fun() -> receive stop -> ok end end),
    receive trapping -> ok end,
    exit(Trapper, shutdown),
    exit(Plain, shutdown),
    exit(Plain, shutdown),
    Alive = {is_process_alive(Trapper), is_process_alive(Plain)},
    Listed = {lists:member(Trapper, processes()), lists:member(Plain, processes())},
    Trapper ! stop,
    exit({result, {Alive, Listed}}).
