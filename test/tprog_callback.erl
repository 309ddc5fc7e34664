%% @doc A gen_server whose callback module is another module than the
%% caller's (test/tprog_callback_server.erl), for the test that runs it
%% with that module not loaded in the checker's VM
%% (mce_otp_diff_tests:unloaded_callback_module_test_/0): gen_server asks
%% erlang:function_exported/3 of the callback module before it calls
%% handle_info/2 and terminate/2.
-module(tprog_callback).
-export([info_then_stop/0, loaded_after_use/0]).

%% An info message answered by handle_info/2, then stop/3 with a custom
%% reason seen by terminate/2.
info_then_stop() ->
    {ok, Pid} = gen_server:start(tprog_callback_server, self(), []),
    Pid ! ping,
    Info = receive {info, M} -> M end,
    ok = gen_server:stop(Pid, custom, infinity),
    Terminated = receive {terminated, R} -> R after 0 -> not_called end,
    exit({result, {Info, Terminated}}).

%% A module the program has called is loaded, as both BIFs tell.
loaded_after_use() ->
    {ok, self} = tprog_callback_server:init(self),
    exit({result, {erlang:module_loaded(tprog_callback_server),
                   element(1, code:is_loaded(tprog_callback_server))}}).
