%% A tally server two clients add to.  add/2 sends the increment (the
%% server adds it); racy_add/2 reads the total and writes back the sum,
%% so two clients may both read the same total and one update is lost.
-module(tally).
-export([safe/0, racy/0]).

safe() -> run(fun add/2).
racy() -> run(fun racy_add/2).

run(Add) ->
    Server = spawn(fun() -> loop(0) end),
    Self = self(),
    [spawn(fun() -> Add(Server, 1), Self ! done end) || _ <- [1, 2]],
    receive done -> ok end,
    receive done -> ok end,
    Server ! {get, self()},
    receive {total, Total} -> ok end,
    Server ! stop,
    Total =:= 2 orelse exit({lost_update, Total}).

add(Server, N) -> Server ! {add, N}.

racy_add(Server, N) ->
    Server ! {get, self()},
    receive {total, T} -> Server ! {set, T + N} end.

loop(Total) ->
    receive
        {add, N} -> loop(Total + N);
        {set, T} -> loop(T);
        {get, From} -> From ! {total, Total}, loop(Total);
        stop -> ok
    end.
