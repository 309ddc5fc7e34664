%% Message interleavings between senders (mce_hunt_tests).
-module(tprog_hunt5).
-compile([export_all, nowarn_export_all]).

%% Two clients each send a two-part request; the server assumes a
%% client's parts arrive together.  On the VM a client can be preempted
%% between its two sends.
split_request_bug() ->
    Self = self(),
    S = spawn(fun() -> Self ! {got, [serve(), serve()]} end),
    [spawn(fun() -> S ! {header, C}, S ! {body, C} end) || C <- [a, b]],
    receive {got, R} -> exit({result, R}) end.

serve() ->
    receive {header, C} -> receive {body, B} -> {C, B} end end.

%% the same with client a held between its sends until b has sent both
%% parts (a sleep did it before, and lost the race on a loaded machine):
%% the VM shows the mix
split_request_slow() ->
    Self = self(),
    S = spawn(fun() -> Self ! {got, [serve(), serve()]} end),
    A = spawn(fun() ->
                      S ! {header, a},
                      receive {go_ahead, B} -> B ! go end,
                      receive b_sent -> ok end,
                      S ! {body, a}
              end),
    B = spawn(fun() -> receive go -> ok end, S ! {header, b}, S ! {body, b}, A ! b_sent end),
    A ! {go_ahead, B},
    receive {got, R} -> exit({result, R}) end.
