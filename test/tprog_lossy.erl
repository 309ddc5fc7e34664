-module(tprog_lossy).
-export([blocking_in_foreach/0]).
%% A fun that blocks, called by lists:foreach: the suspension would be lost.
blocking_in_foreach() ->
    Self = self(),
    spawn(fun() -> Self ! {item, 1} end),
    lists:foreach(fun(_) -> receive {item, _} -> ok end end, [1]),
    ok.

