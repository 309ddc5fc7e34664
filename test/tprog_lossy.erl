-module(tprog_lossy).
-export([blocking_in_foreach/0]).
%% A fun that blocks, called by a library function the checker does not
%% translate (sofs): the suspension would be lost, so the check must stop.
blocking_in_foreach() ->
    Self = self(),
    spawn(fun() -> Self ! {item, 1} end),
    sofs:specification(fun(_) -> receive {item, _} -> true end end, sofs:set([1])),
    ok.
