%% @doc Programs for the `idle' option (mce_idle_tests): OTP servers left
%% running at the end of a test, a server stuck inside a call, and plain
%% processes a user may name as idle.  Each returns normally from its
%% entry, leaving the other processes as they are.
-module(tprog_idle).
-behaviour(gen_server).

-export([gen_server_left/0, hibernating_left/0, gen_statem_left/0, gen_event_left/0,
         supervisor_left/0, stuck_in_call/0, plain_waiter/0, plain_registered/0, waiter/0,
         server_and_waiter/0]).
-export([init/1, handle_call/3, handle_cast/2, callback_mode/0, idle/3, start_worker/0]).

%% A gen_server that answered one call and is left waiting for more.
gen_server_left() ->
    {ok, Pid} = gen_server:start(?MODULE, plain, []),
    pong = gen_server:call(Pid, ping),
    ok.

%% The same, hibernating after each message.
hibernating_left() ->
    {ok, Pid} = gen_server:start(?MODULE, hibernate, []),
    pong = gen_server:call(Pid, ping),
    ok.

gen_statem_left() ->
    {ok, Pid} = gen_statem:start(?MODULE, statem, []),
    pong = gen_statem:call(Pid, ping),
    ok.

gen_event_left() ->
    {ok, Pid} = gen_event:start(),
    ok = gen_event:notify(Pid, hello),
    ok.

%% A supervisor (a gen_server) and its worker (a gen_server), left running.
supervisor_left() ->
    {ok, Sup} = supervisor:start_link(?MODULE, sup),
    unlink(Sup),
    [{worker, W, worker, _}] = supervisor:which_children(Sup),
    pong = gen_server:call(W, ping),
    ok.

%% A server that, inside handle_call, waits for a reply that never comes:
%% not idle, and its caller waits forever too.
stuck_in_call() ->
    {ok, Pid} = gen_server:start(?MODULE, plain, []),
    gen_server:call(Pid, stuck, infinity).

%% A plain process waiting for a message nobody sends.
plain_waiter() ->
    spawn(?MODULE, waiter, []),
    ok.

plain_registered() ->
    Pid = spawn(?MODULE, waiter, []),
    register(waiter, Pid),
    ok.

%% A server and a plain waiter: the server alone is idle by default.
server_and_waiter() ->
    {ok, _} = gen_server:start(?MODULE, plain, []),
    spawn(?MODULE, waiter, []),
    ok.

-spec waiter() -> ok.
waiter() ->
    receive stop -> ok end.

-spec start_worker() -> {ok, pid()}.
start_worker() -> gen_server:start_link(?MODULE, plain, []).

-spec init(term()) -> term().
init(plain) -> {ok, plain};
init(hibernate) -> {ok, hibernate, hibernate};
init(statem) -> {ok, idle, []};
init(sup) -> {ok, {#{strategy => one_for_one},
                   [#{id => worker, start => {?MODULE, start_worker, []}}]}}.

-spec handle_call(term(), term(), term()) -> term().
handle_call(ping, _From, hibernate) -> {reply, pong, hibernate, hibernate};
handle_call(ping, _From, S) -> {reply, pong, S};
handle_call(stuck, _From, S) ->
    receive never -> {reply, never, S} end.

-spec handle_cast(term(), term()) -> {noreply, term()}.
handle_cast(_, S) -> {noreply, S}.

-spec callback_mode() -> state_functions.
callback_mode() -> state_functions.

-spec idle(term(), term(), term()) -> term().
idle({call, From}, ping, D) -> {keep_state, D, [{reply, From, pong}]}.
