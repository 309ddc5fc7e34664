%% A match of a call that blocks, as the last expression of a body (of a
%% function, a case, receive or try clause, a fun): the match happens
%% after the process resumes.
-module(tprog_last).
-export([main/0, wrong/0, echo/0]).

echo() ->
    receive
        {From, X} -> From ! {echo, X}, echo();
        stop -> ok
    end.

ask(E, X) ->
    E ! {self(), X},
    receive {echo, Y} -> Y end.

last(E) -> 1 = ask(E, 1).

in_case(E) ->
    case E of
        _ -> {ok, 2} = {ok, ask(E, 2)}
    end.

in_receive(E) ->
    self() ! go,
    receive go -> 3 = ask(E, 3) end.

in_try(E) ->
    try 4 = ask(E, 4) catch _:_ -> caught end.

in_fun(E) ->
    F = fun() -> _Five = ask(E, 5) end,
    F().

main() ->
    E = spawn(?MODULE, echo, []),
    Got = [last(E), in_case(E), in_receive(E), in_try(E), in_fun(E)],
    E ! stop,
    [1, {ok, 2}, 3, 4, 5] = Got,
    ok.

%% The match fails after the call returns: badmatch, raised by the caller.
wrong() ->
    E = spawn(?MODULE, echo, []),
    Result = (catch mismatch(E)),
    E ! stop,
    exit({result, Result}).

mismatch(E) -> 2 = ask(E, 1).
