%% A gen_server that answers every call, for the partial-order reduction's
%% tests of replies through aliases (tprog_por:gen_replies/2).
-module(tprog_por_server).
-behaviour(gen_server).

-export([init/1, handle_call/3, handle_cast/2]).

init([]) -> {ok, 0}.

handle_call(ping, _From, N) -> {reply, pong, N + 1}.

handle_cast(_, N) -> {noreply, N}.
