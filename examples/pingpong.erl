%% A correct ping-pong: the pinger sends N pings, the ponger answers each
%% and stops on `stop'.  Every process ends normally: the check holds.
-module(pingpong).
-export([start/1, ping/2, pong/0]).

start(N) ->
    Pong = spawn(?MODULE, pong, []),
    ping(N, Pong).

ping(0, Pong) ->
    Pong ! stop,
    done;
ping(N, Pong) ->
    Pong ! {ping, self()},
    receive
        pong -> ok
    end,
    ping(N - 1, Pong).

pong() ->
    receive
        {ping, From} ->
            From ! pong,
            pong();
        stop ->
            ok
    end.
