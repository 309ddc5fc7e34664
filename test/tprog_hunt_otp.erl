%% Supervisors, gen_statem and rpc between nodes as OTP tutorials write
%% them (mce_hunt_tests).
-module(tprog_hunt_otp).
%% (a supervisor and a gen_statem callback module at once, so no -behaviour)
-export([init/1, callback_mode/0, locked/3, open/3, worker_start/1, worker_loop/1]).
-export([sup_restart/0, sup_intensity/0, door/0, door_wrong/0, statem_timeout/0,
         rpc_call/0, rpc_node_down/0, spawn_remote/0, sup_which/0, global_name/0]).

%% ---- supervisor ----
init({sup, Intensity}) ->
    {ok, {#{strategy => one_for_one, intensity => Intensity, period => 10},
          [#{id => w, start => {?MODULE, worker_start, [w]}}]}};
%% ---- gen_statem: a code lock ----
init({lock, Code}) ->
    {ok, locked, #{code => Code, input => []}}.

worker_start(Name) ->
    Pid = spawn_link(?MODULE, worker_loop, [Name]),
    {ok, Pid}.

worker_loop(Name) ->
    register(Name, self()),
    receive
        crash -> exit(crashed);
        {ping, P} -> P ! pong, worker_loop_reg(Name)
    end.
worker_loop_reg(Name) ->
    receive
        crash -> exit(crashed);
        {ping, P} -> P ! pong, worker_loop_reg(Name)
    end.

sup_restart() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, 3}),
    [{w, W1, worker, _}] = supervisor:which_children(Sup),
    Ref = monitor(process, W1),
    W1 ! crash,
    receive {'DOWN', Ref, process, W1, crashed} -> ok end,
    W2 = wait_new(Sup, W1),
    W2 ! {ping, self()},
    R = receive pong -> pong end,
    unlink(Sup),
    exit(Sup, shutdown),
    exit({result, {R, W1 =/= W2}}).

wait_new(Sup, Old) ->
    case supervisor:which_children(Sup) of
        [{w, New, worker, _}] when is_pid(New), New =/= Old -> New;
        _ -> timer:sleep(1), wait_new(Sup, Old)
    end.

%% more crashes than the intensity allows: the supervisor gives up
sup_intensity() ->
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, 1}),
    crash_current(Sup, 2),
    R = receive {'EXIT', Sup, Why} -> Why end,
    exit({result, R}).

crash_current(_, 0) -> ok;
crash_current(Sup, N) ->
    case catch supervisor:which_children(Sup) of
        [{w, W, worker, _}] when is_pid(W) ->
            Ref = monitor(process, W),
            W ! crash,
            receive {'DOWN', Ref, _, _, _} -> ok end,
            crash_current(Sup, N - 1);
        _ -> ok
    end.

sup_which() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, 3}),
    C = supervisor:count_children(Sup),
    ok = supervisor:terminate_child(Sup, w),
    [{w, undefined, worker, _}] = supervisor:which_children(Sup),
    {ok, P} = supervisor:restart_child(Sup, w),
    unlink(Sup),
    exit(Sup, shutdown),
    exit({result, {C, is_pid(P)}}).

%% ---- gen_statem ----
callback_mode() -> state_functions.

locked(cast, {button, D}, #{code := Code, input := In} = Data) ->
    In1 = In ++ [D],
    case In1 of
        Code -> {next_state, open, Data#{input := []}, [{state_timeout, 100, lock}]};
        _ when length(In1) < length(Code) -> {keep_state, Data#{input := In1}};
        _ -> {keep_state, Data#{input := []}}
    end;
locked({call, From}, get_state, Data) ->
    {keep_state, Data, [{reply, From, locked}]}.

open(state_timeout, lock, Data) -> {next_state, locked, Data};
open(cast, {button, _}, Data) -> {keep_state, Data};
open({call, From}, get_state, Data) ->
    {keep_state, Data, [{reply, From, open}]}.

door() ->
    {ok, P} = gen_statem:start(?MODULE, {lock, [1, 2]}, []),
    gen_statem:cast(P, {button, 1}),
    gen_statem:cast(P, {button, 2}),
    S = gen_statem:call(P, get_state),
    gen_statem:stop(P),
    exit({result, S}).

door_wrong() ->
    {ok, P} = gen_statem:start(?MODULE, {lock, [1, 2]}, []),
    gen_statem:cast(P, {button, 2}),
    gen_statem:cast(P, {button, 1}),
    S = gen_statem:call(P, get_state),
    gen_statem:stop(P),
    exit({result, S}).

%% state timeout: the door locks again
statem_timeout() ->
    {ok, P} = gen_statem:start(?MODULE, {lock, [1]}, []),
    gen_statem:cast(P, {button, 1}),
    open = gen_statem:call(P, get_state),
    S = wait_state(P, locked),
    gen_statem:stop(P),
    exit({result, S}).

wait_state(P, S) ->
    case gen_statem:call(P, get_state) of S -> S; _ -> timer:sleep(50), wait_state(P, S) end.

%% ---- rpc between nodes (run with nodes => [a@h, b@h]) ----
rpc_call() ->
    [B] = nodes(),
    R = rpc:call(B, erlang, node, []),
    R2 = rpc:call(B, lists, reverse, [[1, 2, 3]]),
    exit({result, {R =:= B, R2}}).

rpc_node_down() ->
    R = rpc:call('nowhere@host', erlang, node, []),
    exit({result, R}).

spawn_remote() ->
    [B] = nodes(),
    Self = self(),
    P = spawn(B, fun() -> Self ! {hello_from, node()} end),
    R = receive {hello_from, N} -> N =:= B end,
    exit({result, {R, node(P) =:= B}}).

global_name() ->
    yes = global:register_name(my_service, self()),
    P = global:whereis_name(my_service),
    no = global:register_name(my_service, spawn(fun() -> ok end)),
    global:unregister_name(my_service),
    exit({result, {P =:= self(), global:whereis_name(my_service)}}).
