%% An unbounded counter driven by an endless client (issue 21): the
%% counter's value grows without bound, so the concrete state space is
%% infinite and a concrete check can only end at a limit.  Under
%% `abstraction => even_odd' (or `sign') the value is abstract and the
%% state space finite: the check proves the server never crashes.
%%
%%   mcerlang:check({abs_counter, start, []}, #{abstraction => sign}).
%%   {ok, _}
%%
%% start_buggy/0 crashes the server when the counter reaches 3: the
%% abstract check finds a possible crash and the concrete replay confirms
%% it, so the verdict is a real counterexample.
-module(abs_counter).
-export([start/0, start_buggy/0, server/1, buggy_server/1, client/1]).

start() ->
    S = spawn(?MODULE, server, [0]),
    spawn(?MODULE, client, [S]),
    ok.

start_buggy() ->
    S = spawn(?MODULE, buggy_server, [0]),
    spawn(?MODULE, client, [S]),
    ok.

server(N) ->
    mcerlang:prop({count, N}),
    receive
        {inc, From} ->
            From ! {value, N + 1},
            server(N + 1)
    end.

buggy_server(N) ->
    receive
        {inc, From} when N =:= 3 ->
            erlang:error({overflow, From});
        {inc, From} ->
            From ! {value, N + 1},
            buggy_server(N + 1)
    end.

client(S) ->
    S ! {inc, self()},
    receive
        {value, _} -> client(S)
    end.
