%% The gen_event handler of tprog_hunt4:gen_event_log.
-module(tprog_hunt4_h).
-behaviour(gen_event).
-export([init/1, handle_event/2, handle_call/2, handle_info/2, terminate/2]).

init([]) -> {ok, []}.
handle_event({log, X}, L) -> {ok, [X | L]}.
handle_call(get, L) -> {ok, lists:reverse(L), L}.
handle_info(_, L) -> {ok, L}.
terminate(_, _) -> ok.
