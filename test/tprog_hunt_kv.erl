%% A key-value store gen_server over a protected ETS table, as small OTP
%% libraries write it (mce_hunt_tests).
-module(tprog_hunt_kv).
-behaviour(gen_server).
-export([start_link/0, put/2, get/1, stop/0, init/1, handle_call/3, handle_cast/2, handle_info/2,
         terminate/2]).
-export([scenario/0, racy_incr/0, lookup_direct/0, call_timeout/0, call_dead/0]).

-define(TAB, kv_tab).

start_link() -> gen_server:start_link({local, ?MODULE}, ?MODULE, [], []).
put(K, V) -> gen_server:call(?MODULE, {put, K, V}).
get(K) ->
    case ets:lookup(?TAB, K) of
        [{K, V}] -> {ok, V};
        [] -> not_found
    end.
stop() -> gen_server:stop(?MODULE).

init([]) ->
    ?TAB = ets:new(?TAB, [named_table, protected, set, {read_concurrency, true}]),
    {ok, #{}}.

handle_call({put, K, V}, _From, S) ->
    true = ets:insert(?TAB, {K, V}),
    {reply, ok, S};
handle_call({slow, T}, _From, S) ->
    timer:sleep(T),
    {reply, slow_done, S};
handle_call(crash, _From, _S) ->
    error(asked_to).

handle_cast(_, S) -> {noreply, S}.
handle_info(_, S) -> {noreply, S}.
terminate(_, _) -> ok.

scenario() ->
    {ok, _} = start_link(),
    Parent = self(),
    [spawn(fun() -> ok = tprog_hunt_kv:put(K, K * 2), Parent ! done end) || K <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    R = [tprog_hunt_kv:get(K) || K <- [1, 2, 3]],
    ok = stop(),
    exit({result, {R, ets:info(?TAB)}}).

%% read-modify-write through two calls: lost update
racy_incr() ->
    {ok, _} = start_link(),
    ok = tprog_hunt_kv:put(n, 0),
    Parent = self(),
    [spawn(fun() ->
                   {ok, V} = tprog_hunt_kv:get(n),
                   ok = tprog_hunt_kv:put(n, V + 1),
                   Parent ! done
           end) || _ <- [1, 2]],
    [receive done -> ok end || _ <- [1, 2]],
    {ok, 2} = tprog_hunt_kv:get(n),
    exit({result, ok}).

%% a client writing the protected table directly: badarg
lookup_direct() ->
    {ok, _} = start_link(),
    R = try ets:insert(?TAB, {x, 1}) catch error:badarg -> badarg end,
    exit({result, R}).

%% a call that outlives its timeout; the caller catches the exit
call_timeout() ->
    {ok, _} = start_link(),
    R = try gen_server:call(?MODULE, {slow, 1000}, 100)
        catch exit:{timeout, {gen_server, call, _}} -> timeout
        end,
    exit({result, R}).

%% a call to a server that crashes in the call
call_dead() ->
    process_flag(trap_exit, true),
    {ok, Pid} = start_link(),
    R = (catch gen_server:call(?MODULE, crash)),
    Why = receive {'EXIT', Pid, W} -> element(1, W) end,
    exit({result, {element(1, element(2, R)), Why}}).
