%% gen_server:multi_call/4 with a timeout: OTP 25 runs it through a
%% middleman process that ends with its result as exit reason.
-module(tprog_mcall).
-behaviour(gen_server).
-export([main/0, start_anon/0, init/1, handle_call/3, handle_cast/2]).

main() ->
    {ok, _} = gen_server:start({local, tprog_mcall}, ?MODULE, x, []),
    {[{_, {x, _}}], []} = gen_server:multi_call([node()], tprog_mcall, who, 1000),
    ok = gen_server:call(tprog_mcall, stop),
    ok.

start_anon() ->
    gen_server:start(?MODULE, x, []).

init(N) -> {ok, N}.

handle_call(who, _From, N) -> {reply, {N, node()}, N};
handle_call(stop, _From, N) -> {stop, normal, ok, N};
handle_call(die, _From, N) -> {stop, normal, N}.

handle_cast(_, N) -> {noreply, N}.
