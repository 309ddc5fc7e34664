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

%% the same with a sleep between the sends: the VM shows the mix
split_request_slow() ->
    Self = self(),
    S = spawn(fun() -> Self ! {got, [serve(), serve()]} end),
    [spawn(fun() -> S ! {header, C}, timer:sleep(T), S ! {body, C} end) || {C, T} <- [{a, 50}, {b, 0}]],
    receive {got, R} -> exit({result, R}) end.
