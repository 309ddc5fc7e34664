%% @doc Programs for timeouts => {infinite_above, Ms} (mce_timeouts_tests):
%% receive timeouts and timers on either side of the bound.
-module(tprog_time).
-behaviour(gen_server).

-export([race/1, lone_wait/1, timer_wait/1, timer_read/1, sleeper/1, call_default/0,
         call_short/0, interval/1]).
-export([init/1, handle_call/3, handle_cast/2]).

%% A message races a timeout of T ms: the timeout branch ends abnormally.
race(T) ->
    Self = self(),
    spawn(fun() -> Self ! go end),
    receive
        go -> ok
    after T -> exit(timed_out)
    end.

%% Nothing will ever arrive: only the timeout of T ms can end the wait.
lone_wait(T) ->
    receive
        never -> ok
    after T -> ok
    end.

%% A timer of T ms is the only thing that ends the wait.
timer_wait(T) ->
    erlang:send_after(T, self(), tick),
    receive tick -> ok end.

%% A timer that does not fire is still pending: read_timer and
%% cancel_timer see its time; one that fires leaves false.
timer_read(T) ->
    Ref = erlang:start_timer(T, self(), tick),
    Left = erlang:read_timer(Ref),
    Cancelled = erlang:cancel_timer(Ref),
    exit({result, {Left, Cancelled, erlang:read_timer(Ref)}}).

%% timer:sleep/1 is a receive after.
sleeper(T) ->
    timer:sleep(T),
    ok.

%% A gen_server:call with the default 5 s timeout to a server that
%% answers: under any the call may time out (an abnormal exit).
call_default() ->
    {ok, Pid} = gen_server:start(?MODULE, [], []),
    pong = gen_server:call(Pid, ping),
    gen_server:stop(Pid).

%% The same call with a 100 ms timeout.
call_short() ->
    {ok, Pid} = gen_server:start(?MODULE, [], []),
    pong = gen_server:call(Pid, ping, 100),
    gen_server:stop(Pid).

%% timer:send_interval of T ms to a process that takes one tick.
interval(T) ->
    {ok, TRef} = timer:send_interval(T, tick),
    receive tick -> ok end,
    {ok, cancel} = timer:cancel(TRef),
    ok.

-spec init([]) -> {ok, []}.
init([]) -> {ok, []}.

-spec handle_call(ping, term(), []) -> {reply, pong, []}.
handle_call(ping, _From, S) -> {reply, pong, S}.

-spec handle_cast(term(), []) -> {noreply, []}.
handle_cast(_, S) -> {noreply, S}.
