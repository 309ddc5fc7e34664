%% The newcomer's first run (`./bootstrap.sh demo'): checks the examples and
%% prints each verdict, with the counterexample where there is one.
-module(demo).
-export([main/0]).

-spec main() -> ok.
main() ->
    Checks = [{"ping-pong, 3 rounds", {pingpong, start, [3]}},
              {"dining philosophers, 3 seats", {dining, start, [3]}},
              {"racy child", {racy_child, start, []}}],
    lists:foreach(fun run/1, Checks).

run({Title, Entry}) ->
    io:format("~n=== mcerlang:check(~p) -- ~s~n", [Entry, Title]),
    case mcerlang:check(Entry) of
        {ok, #{states := S, transitions := T, time_ms := Ms}} ->
            io:format("HOLDS: no deadlock or abnormal exit in ~b states "
                      "(~b transitions, ~b ms)~n", [S, T, Ms]);
        {error, Cex} ->
            io:format("VIOLATION~n~ts", [mcerlang:format(Cex)]);
        {inconclusive, Reason, #{states := S}} ->
            io:format("INCONCLUSIVE (~p) after ~b states~n", [Reason, S])
    end.
