%% @doc The callback module of test/tprog_callback.erl's gen_server.
-module(tprog_callback_server).
-behaviour(gen_server).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, terminate/2]).

init(Owner) -> {ok, Owner}.
handle_call(_, _, Owner) -> {reply, ok, Owner}.
handle_cast(_, Owner) -> {noreply, Owner}.
handle_info(Msg, Owner) -> Owner ! {info, Msg}, {noreply, Owner}.
terminate(Reason, Owner) -> Owner ! {terminated, Reason}.
