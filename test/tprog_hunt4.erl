%% OTP patterns as small libraries write them (mce_hunt_tests):
%% simple_one_for_one pools, deferred replies, late replies, the
%% cancel-and-flush timer idiom, gen_event loggers.
-module(tprog_hunt4).
-behaviour(gen_server).
-compile([export_all, nowarn_export_all]).

%% ---- a server deferring its replies to a worker ----
init(deferred) -> {ok, #{}};
init(ticker) ->
    Ref = erlang:start_timer(10, self(), tick),
    {ok, #{timer => Ref, ticks => 0}};
init(pool) ->
    {ok, {#{strategy => simple_one_for_one},
          [#{id => w, start => {?MODULE, pool_worker, []}, restart => temporary}]}}.

handle_call({square, X}, From, S) ->
    spawn(fun() -> gen_server:reply(From, X * X) end),
    {noreply, S};
handle_call(ticks, _From, #{ticks := N} = S) ->
    {reply, N, S};
handle_call(stop_ticking, _From, #{timer := Ref} = S) ->
    erlang:cancel_timer(Ref),
    receive {timeout, Ref, _} -> ok after 0 -> ok end,
    {reply, stopped, S#{timer := undefined}}.

handle_cast(_, S) -> {noreply, S}.

handle_info({timeout, Ref, tick}, #{timer := Ref, ticks := N} = S) when N < 2 ->
    {noreply, S#{timer := erlang:start_timer(10, self(), tick), ticks := N + 1}};
handle_info({timeout, Ref, tick}, #{timer := Ref, ticks := N} = S) ->
    {noreply, S#{timer := undefined, ticks := N + 1}};
handle_info({timeout, _Stale, tick}, S) ->
    {noreply, S}.

deferred() ->
    {ok, P} = gen_server:start(?MODULE, deferred, []),
    Parent = self(),
    [spawn(fun() -> Parent ! {sq, X, gen_server:call(P, {square, X})} end) || X <- [2, 3]],
    R = lists:sort([receive {sq, X, Y} -> {X, Y} end || _ <- [1, 2]]),
    exit({result, R}).

ticker() ->
    {ok, P} = gen_server:start(?MODULE, ticker, []),
    wait_ticks(P, 3),
    exit({result, gen_server:call(P, ticks)}).

wait_ticks(P, N) ->
    case gen_server:call(P, ticks) of N -> ok; _ -> timer:sleep(20), wait_ticks(P, N) end.

%% cancel and flush: no stale tick counted after stop_ticking
ticker_stop() ->
    {ok, P} = gen_server:start(?MODULE, ticker, []),
    stopped = gen_server:call(P, stop_ticking),
    T = gen_server:call(P, ticks),
    exit({result, T}).

%% ---- simple_one_for_one pool ----
pool_worker() ->
    {ok, spawn_link(fun() -> receive {job, From, X} -> From ! {done, X + 100} end end)}.

pool() ->
    {ok, Sup} = supervisor:start_link(?MODULE, pool),
    {ok, W1} = supervisor:start_child(Sup, []),
    {ok, W2} = supervisor:start_child(Sup, []),
    W1 ! {job, self(), 1}, W2 ! {job, self(), 2},
    R = lists:sort([receive {done, X} -> X end || _ <- [1, 2]]),
    C = supervisor:count_children(Sup),
    unlink(Sup),
    exit(Sup, shutdown),
    exit({result, {R, proplists:get_value(active, C)}}).

%% ---- a late reply after a call timeout lands in the mailbox? (OTP 24+: no) ----
late_reply() ->
    {ok, P} = gen_server:start(?MODULE, deferred, []),
    sys:suspend(P),
    R = (catch gen_server:call(P, {square, 4}, 10)),
    sys:resume(P),
    timer:sleep(50),
    {messages, Ms} = process_info(self(), messages),
    exit({result, {element(1, element(2, R)), Ms}}).

%% ---- gen_event logger ----
gen_event_log() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, tprog_hunt4_h, []),
    gen_event:notify(M, {log, a}),
    ok = gen_event:sync_notify(M, {log, b}),
    L = gen_event:call(M, tprog_hunt4_h, get),
    gen_event:stop(M),
    exit({result, L}).

%% ---- the classic: a receive loop with a counter and an idle timeout ----
idle_server() ->
    S = spawn(fun() -> idle_loop(0) end),
    Ref = monitor(process, S),
    S ! inc, S ! inc,
    S ! {get, self()},
    V = receive {count, C} -> C end,
    R = receive {'DOWN', Ref, process, S, W} -> W end,
    exit({result, {V, R}}).

idle_loop(N) ->
    receive
        inc -> idle_loop(N + 1);
        {get, P} -> P ! {count, N}, idle_loop(N)
    after 1000 -> exit(idle)
    end.

%% ---- application env ----
app_env() ->
    undefined = application:get_env(myapp, key),
    ok = application:set_env(myapp, key, 42),
    P = self(),
    spawn(fun() -> P ! application:get_env(myapp, key) end),
    R = receive X -> X end,
    exit({result, R}).

%% ---- io_lib and string formatting in messages ----
formatted() ->
    P = self(),
    spawn(fun() -> P ! {text, lists:flatten(io_lib:format("~p-~s", [42, "x"]))} end),
    R = receive {text, T} -> T end,
    exit({result, R}).

%% ---- process_info status of a waiting process ----
status() ->
    P = spawn(fun() -> receive stop -> ok end end),
    timer:sleep(10),
    S = process_info(P, status),
    P ! stop,
    exit({result, S}).
