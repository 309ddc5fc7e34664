%% @doc OTP behaviour programs for the differential tests: each ends its
%% root process with exit({result, R}), R free of pids, so that the real VM
%% and the checker (running the installed OTP's own gen_server through the
%% translator) can be compared.
-module(tprog_otp).
-behaviour(gen_server).

-export([counter/0, call_dead/0, call_crash/0, init_returns/0, continue/0, named/0,
         call_timeout_when_idle/0, app_env/0, app_env_from_options/0, global_names/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, handle_continue/2,
         terminate/2]).

counter() ->
    {ok, Pid} = gen_server:start_link(?MODULE, 0, []),
    A = gen_server:call(Pid, inc),
    B = gen_server:call(Pid, inc),
    ok = gen_server:cast(Pid, reset),
    C = gen_server:call(Pid, get),
    Pid ! {add, 5},
    D = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C, D, is_process_alive(Pid)}}).

call_dead() ->
    {ok, Pid} = gen_server:start(?MODULE, 0, []),
    ok = gen_server:stop(Pid),
    R = try gen_server:call(Pid, get)
        catch exit:{Reason, {gen_server, call, [_, Req]}} -> {Reason, Req}
        end,
    exit({result, R}).

call_crash() ->
    {ok, Pid} = gen_server:start(?MODULE, 0, []),
    R = try gen_server:call(Pid, crash)
        catch exit:{Reason, {gen_server, call, [_, Req]}} -> {Reason, Req}
        end,
    exit({result, {R, is_process_alive(Pid)}}).

init_returns() ->
    A = gen_server:start(?MODULE, ignore, []),
    B = gen_server:start(?MODULE, {stop, no_way}, []),
    C = gen_server:start(?MODULE, {error, bad}, []),
    exit({result, {A, B, C}}).

continue() ->
    {ok, Pid} = gen_server:start(?MODULE, {continue, 10}, []),
    V = gen_server:call(Pid, get),
    gen_server:stop(Pid),
    exit({result, V}).

named() ->
    {ok, _} = gen_server:start({local, ctr}, ?MODULE, 1, []),
    A = gen_server:call(ctr, inc),
    B = {error, {already_started, true}} =:=
        case gen_server:start({local, ctr}, ?MODULE, 1, []) of
            {error, {already_started, P}} -> {error, {already_started, is_pid(P)}};
            Other -> Other
        end,
    gen_server:stop(ctr),
    C = try gen_server:call(ctr, get)
        catch exit:{Reason, {gen_server, call, [ctr, get]}} -> Reason
        end,
    exit({result, {A, B, C}}).

%% With timeouts => when_idle the call's 5 s timeout cannot fire while the
%% server can still answer.
call_timeout_when_idle() ->
    {ok, Pid} = gen_server:start(?MODULE, 0, []),
    R = gen_server:call(Pid, inc),
    gen_server:stop(Pid),
    exit({result, R}).

init({stop, R}) -> {stop, R};
init({error, E}) -> {error, E};
init(ignore) -> ignore;
init({continue, N}) -> {ok, 0, {continue, N}};
init(N) -> {ok, N}.

handle_call(inc, _From, N) -> {reply, N + 1, N + 1};
handle_call(get, _From, N) -> {reply, N, N};
handle_call(crash, _From, _N) -> exit(boom).

handle_cast(reset, _) -> {noreply, 0}.

handle_info({add, K}, N) -> {noreply, N + K}.

handle_continue(N, _) -> {noreply, N}.

terminate(_Reason, _State) -> ok.

%% application environments: set, read from another process, unset.
app_env() ->
    ok = application:set_env(mce_test_app, k, 1),
    Self = self(),
    spawn(fun() -> Self ! {seen, application:get_env(mce_test_app, k)} end),
    A = receive {seen, V} -> V end,
    B = {application:get_env(mce_test_app, nokey), application:get_env(mce_test_app, nokey, def)},
    ok = application:set_env([{mce_test_app, [{j, 2}]}]),
    C = lists:sort(application:get_all_env(mce_test_app)),
    ok = application:unset_env(mce_test_app, k),
    ok = application:unset_env(mce_test_app, j),
    D = {application:get_env(mce_test_app, k), application:get_env(k), application:get_application()},
    exit({result, {A, B, C, D}}).

app_env_from_options() ->
    exit({result, application:get_env(mce_test_app, limit)}).

%% {global, Name}: start, call by name, the registry, release on exit.
global_names() ->
    {ok, Pid} = gen_server:start({global, mce_gcounter}, ?MODULE, 0, []),
    A = gen_server:call({global, mce_gcounter}, inc),
    B = global:whereis_name(mce_gcounter) =:= Pid,
    C = global:register_name(mce_gcounter, self()),
    D = case gen_server:start({global, mce_gcounter}, ?MODULE, 0, []) of
            {error, {already_started, P}} -> P =:= Pid;
            Other -> Other
        end,
    ok = gen_server:stop({global, mce_gcounter}),
    E = global:whereis_name(mce_gcounter),
    F = global:register_name(mce_gother, self()),
    G = lists:member(mce_gother, global:registered_names()),
    _ = global:unregister_name(mce_gother),
    H = try gen_server:call({global, mce_gcounter}, get)
        catch exit:{Reason, {gen_server, call, _}} -> Reason
        end,
    exit({result, {A, B, C, D, E, F, G, H}}).
