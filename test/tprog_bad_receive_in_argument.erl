-module(tprog_bad_receive_in_argument).
-export([receive_in_argument/0]).
%% A receive nested in an argument.
receive_in_argument() ->
    io:format("~p~n", [receive X -> X end]).

