%% Helpers in a second module: blocking calls across modules.
-module(tprog_helper).
-export([wait_for/1, echo_loop/0, pure_double/1]).

wait_for(Tag) ->
    receive
        {Tag, Value} -> Value
    end.

echo_loop() ->
    receive
        {echo, From, X} ->
            From ! {echoed, X},
            echo_loop();
        stop ->
            stopped
    end.

pure_double(X) -> 2 * X.
