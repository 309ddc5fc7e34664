-module(tprog_event).
%% A counting gen_event handler: for the OTP differential tests.
-behaviour(gen_event).
-export([start/0, init/1, handle_event/2, handle_call/2]).
start() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?MODULE, 0),
    ok = gen_event:notify(M, inc),
    ok = gen_event:sync_notify(M, inc),
    N = gen_event:call(M, ?MODULE, get),
    H = gen_event:which_handlers(M),
    gen_event:stop(M),
    exit({result, {N, H}}).
init(N) -> {ok, N}.
handle_event(inc, N) -> {ok, N + 1}.
handle_call(get, N) -> {ok, N, N}.
