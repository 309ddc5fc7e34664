%% Dining philosophers with forks as processes, every philosopher taking
%% the left fork first: the classic circular-wait deadlock.  Each fork
%% serves its two philosophers once and then ends, so the only way for the
%% system to get stuck is the circular wait.
-module(dining).
-export([start/1, fork/1, philosopher/3]).

start(N) ->
    Forks = [spawn(?MODULE, fork, [2]) || _ <- lists:seq(1, N)],
    Pairs = lists:zip(Forks, tl(Forks) ++ [hd(Forks)]),
    [spawn(?MODULE, philosopher, [I, L, R]) || {I, {L, R}} <- lists:zip(lists:seq(1, N), Pairs)],
    ok.

fork(0) ->
    done;
fork(Uses) ->
    receive
        {take, Who} ->
            Who ! {taken, self()},
            receive
                {release, Who} -> fork(Uses - 1)
            end
    end.

philosopher(Id, Left, Right) ->
    take(Left),
    take(Right),
    io:format("philosopher ~p eats~n", [Id]),
    Left ! {release, self()},
    Right ! {release, self()}.

take(Fork) ->
    Fork ! {take, self()},
    receive
        {taken, Fork} -> ok
    end.
