%% @doc proc_lib and sys programs for the differential tests
%% (mce_otp_diff_tests): proc_lib's start functions and init_ack,
%% proc_lib:spawn_link and initial_call, gen_server:enter_loop, and sys's
%% get_state, replace_state, suspend/resume, get_status, change_code, log
%% and terminate on servers.  Each scenario ends its root process with
%% exit({result, R}), R free of pids and refs.  The gen_server callbacks are
%% those of a counter (state: an integer).
-module(tprog_plib).
-behaviour(gen_server).

-export([start_link_init_ack/0, start_link_timeout/0, start_link_exit_before_ack/0,
         spawn_link_exit/0, initial_call/0, enter_loop/0, sys_get_state/0,
         sys_replace_state/0, sys_suspend_resume/0, sys_get_status/0, sys_change_code/0, sys_log/0,
         sys_terminate/0]).
-export([ack_with/1, die_before_ack/1, never_ack/0, child/1, enter_loop_init/1]).
-export([init/1, handle_call/3, handle_cast/2, terminate/2, code_change/3]).

%% proc_lib:start_link/3, start/3 and start_monitor/3 return what
%% init_ack/1 sends.
start_link_init_ack() ->
    {A, P1} = proc_lib:start_link(?MODULE, ack_with, [{ready, 42}]),
    {B, P2} = proc_lib:start(?MODULE, ack_with, [plain]),
    {{C, P3}, Ref} = proc_lib:start_monitor(?MODULE, ack_with, [monitored]),
    [P ! stop || P <- [P1, P2, P3]],
    D = receive {'DOWN', Ref, process, P3, R} -> R end,
    exit({result, {A, B, C, is_reference(Ref), D}}).

%% start_link/4 with a timeout that expires: {error, timeout}, and the
%% child is killed.
start_link_timeout() ->
    A = proc_lib:start_link(?MODULE, never_ack, [], 100),
    exit({result, A}).

%% The child exits before acknowledging: {error, Reason} from start_link (the
%% caller traps exits) and from start (through a monitor).
start_link_exit_before_ack() ->
    process_flag(trap_exit, true),
    A = proc_lib:start_link(?MODULE, die_before_ack, [{shutdown, early}]),
    B = proc_lib:start(?MODULE, die_before_ack, [{shutdown, earlier}]),
    C = receive {'EXIT', _, R} -> R after 0 -> no_exit_message end,
    exit({result, {A, B, C}}).

%% proc_lib:spawn_link/1,3: the exit reason reaches the linked caller.
spawn_link_exit() ->
    process_flag(trap_exit, true),
    P1 = proc_lib:spawn_link(?MODULE, child, [{shutdown, one}]),
    A = receive {'EXIT', P1, R1} -> R1 end,
    P2 = proc_lib:spawn_link(fun() -> exit({shutdown, two}) end),
    B = receive {'EXIT', P2, R2} -> R2 end,
    exit({result, {A, B}}).

%% proc_lib:initial_call/1 and translate_initial_call/1 of live processes
%% (the child reports once it runs: before that its dictionary is empty).
initial_call() ->
    P = proc_lib:spawn(?MODULE, child, [{wait, self()}]),
    receive {up, P} -> ok end,
    A = proc_lib:initial_call(P),
    B = proc_lib:translate_initial_call(P),
    {ok, S} = gen_server:start(?MODULE, 0, []),
    C = proc_lib:translate_initial_call(S),
    P ! go,
    ok = gen_server:stop(S),
    exit({result, {A, B, C}}).

%% A process started with proc_lib:start_link becomes a gen_server with
%% enter_loop/3.
enter_loop() ->
    {ok, P} = proc_lib:start_link(?MODULE, enter_loop_init, [5]),
    A = gen_server:call(P, inc),
    B = sys:get_state(P),
    ok = gen_server:stop(P),
    exit({result, {A, B}}).

%% sys:get_state of a gen_server, a gen_statem and a gen_event manager.
sys_get_state() ->
    {ok, S} = gen_server:start(?MODULE, 3, []),
    A = sys:get_state(S),
    {ok, M} = gen_statem:start(tprog_statem, {functions, self()}, []),
    ok = gen_statem:cast(M, flip),
    {B, #{flips := F}} = sys:get_state(M),
    {ok, E} = gen_event:start(),
    ok = gen_event:add_handler(E, tprog_event, 7),
    C = sys:get_state(E),
    ok = gen_server:stop(S),
    ok = gen_statem:stop(M),
    ok = gen_event:stop(E),
    exit({result, {A, {B, F}, C}}).

%% sys:replace_state: the new state is returned and used; a crashing state
%% function leaves the state alone and raises error callback_failed.
sys_replace_state() ->
    {ok, S} = gen_server:start(?MODULE, 3, []),
    A = sys:replace_state(S, fun(N) -> N * 10 end),
    B = gen_server:call(S, inc),
    C = try sys:replace_state(S, fun(_) -> exit(nope) end)
        catch error:{callback_failed, Where, Why} -> {Where, Why}
        end,
    D = gen_server:call(S, inc),
    ok = gen_server:stop(S),
    exit({result, {A, B, C, D}}).

%% sys:suspend/resume: a suspended server answers system messages only; a
%% cast sent meanwhile is handled after resume.
sys_suspend_resume() ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    ok = sys:suspend(S),
    ok = gen_server:cast(S, inc),
    A = sys:get_state(S),
    ok = sys:resume(S),
    B = gen_server:call(S, get),
    ok = gen_server:stop(S),
    exit({result, {A, B}}).

%% sys:get_status of a running and of a suspended server.
sys_get_status() ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    A = status(S),
    ok = sys:suspend(S),
    B = status(S),
    ok = sys:resume(S),
    ok = gen_server:stop(S),
    exit({result, {A, B}}).

%% sys:change_code on a suspended server calls code_change/3.
sys_change_code() ->
    {ok, S} = gen_server:start(?MODULE, 4, []),
    ok = sys:suspend(S),
    A = sys:change_code(S, ?MODULE, old_vsn, {add, 100}),
    ok = sys:resume(S),
    B = gen_server:call(S, get),
    ok = gen_server:stop(S),
    exit({result, {A, B}}).

%% sys:log collects the server's system events.
sys_log() ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    ok = sys:log(S, true),
    1 = gen_server:call(S, inc),
    ok = gen_server:cast(S, inc),
    {ok, Events} = sys:log(S, get),
    ok = sys:log(S, false),
    ok = gen_server:stop(S),
    exit({result, [event_kind(E) || E <- Events]}).

%% sys:terminate/2 stops a server through terminate/2.
sys_terminate() ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    Ref = monitor(process, S),
    A = sys:terminate(S, {shutdown, via_sys}),
    B = receive {'DOWN', Ref, process, S, R} -> R end,
    exit({result, {A, B}}).

%% --- helpers ---

status(S) ->
    {status, P, {module, Mod}, [_PDict, SysState, _Parent, _Debug, _Misc]} = sys:get_status(S),
    {is_pid(P), Mod, SysState}.

event_kind({in, {'$gen_call', _From, Req}}) -> {call, Req};
event_kind({in, {'$gen_cast', Req}}) -> {cast, Req};
event_kind({out, Reply, _To, State}) -> {out, Reply, State};
event_kind({noreply, State}) -> {noreply, State};
event_kind(Other) -> {other, Other}.

ack_with(Value) ->
    proc_lib:init_ack({Value, self()}),
    receive stop -> ok end.

die_before_ack(Reason) ->
    exit(Reason).

never_ack() ->
    receive never -> ok end.

child({wait, Root}) ->
    Root ! {up, self()},
    receive go -> ok end;
child(Reason) -> exit(Reason).

enter_loop_init(N) ->
    proc_lib:init_ack({ok, self()}),
    gen_server:enter_loop(?MODULE, [], N).

%% --- gen_server callbacks ---

init(N) -> {ok, N}.

handle_call(inc, _From, N) -> {reply, N + 1, N + 1};
handle_call(get, _From, N) -> {reply, N, N}.

handle_cast(inc, N) -> {noreply, N + 1}.

terminate(_Reason, _N) -> ok.

code_change(old_vsn, N, {add, K}) -> {ok, N + K}.
