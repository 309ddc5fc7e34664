%% Classic bugs of gen_server users (mce_hunt_tests): call cycles, a typo
%% in a message, a monitor taken too late, a name gone between whereis and
%% send.
-module(tprog_hunt9).
-behaviour(gen_server).
-compile([export_all, nowarn_export_all]).

init(Peer) -> {ok, Peer}.
handle_call(ask_peer, _From, Peer) -> {reply, gen_server:call(Peer, hello, infinity), Peer};
handle_call(hello, _From, Peer) -> {reply, hi, Peer};
handle_call({set_peer, P}, _From, _) -> {reply, ok, P}.
handle_cast(_, S) -> {noreply, S}.
handle_info(_, S) -> {noreply, S}.

%% A asks B, which asks A: both wait forever
call_cycle_bug() ->
    {ok, A} = gen_server:start(?MODULE, none, []),
    {ok, B} = gen_server:start(?MODULE, A, []),
    ok = gen_server:call(A, {set_peer, B}),
    Self = self(),
    spawn(fun() -> Self ! {a, gen_server:call(A, ask_peer, infinity)} end),
    spawn(fun() -> Self ! {b, gen_server:call(B, ask_peer, infinity)} end),
    R = [receive {a, X} -> X end, receive {b, Y} -> Y end],
    exit({result, R}).

%% only one asks: fine
call_one_way() ->
    {ok, A} = gen_server:start(?MODULE, none, []),
    {ok, B} = gen_server:start(?MODULE, A, []),
    R = gen_server:call(B, ask_peer),
    exit({result, R}).

%% the client waits for 'done' but the worker sends 'finished'
typo_bug() ->
    Self = self(),
    spawn(fun() -> Self ! finished end),
    receive done -> ok end.

%% spawn then monitor: the DOWN still comes (noproc) if the child is gone
late_monitor() ->
    P = spawn(fun() -> ok end),
    Ref = monitor(process, P),
    R = receive {'DOWN', Ref, process, P, W} -> lists:member(W, [normal, noproc]) end,
    exit({result, R}).

%% whereis then send: the server may stop in between
whereis_then_send_bug() ->
    spawn(fun() -> register(srv, self()), receive stop -> ok end end),
    timer:sleep(10),
    case whereis(srv) of
        undefined -> exit({result, gone});
        _ -> spawn(fun() -> srv ! stop end), timer:sleep(0), srv ! hello, exit({result, sent})
    end.

%% the stack of a send to a free name, caught
send_badarg_stack() ->
    {'EXIT', {badarg, [Top | _]}} = (catch nobody ! hi),
    {'EXIT', {badarg, [Top2 | _]}} = (catch erlang:send(nobody, hi)),
    P = spawn(fun() -> ok end),
    Ref = monitor(process, P),
    receive {'DOWN', Ref, _, _, _} -> ok end,
    {'EXIT', {noproc, [Top3 | _]}} = (catch link(P)),
    exit({result, {Top, Top2, Top3 =:= {erlang, link, [P], [{error_info, #{module => erl_erts_errors}}]}}}).
