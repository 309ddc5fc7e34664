%% Small programs for the abstract mode's tests (mce_abstract_tests).
-module(tprog_abs).
-export([three/0, maybe_receive/1, maybe_receiver/0, guard_branch/0, try_catch/0, fun_and_lc/0,
         unsupported_binary/0, depth_pid/0, spawn_fun/0, endless_after/0, deep_recursion/0,
         library/0]).

%% Under even_odd an even number may be 0: the receive may take the message
%% in its first clause (and crash) or leave it (and time out).
maybe_receive(N) ->
    P = spawn(?MODULE, maybe_receiver, []),
    P ! {n, N},
    ok.

maybe_receiver() ->
    receive
        {n, 0} -> erlang:error(zero)
    after 10 ->
            ok
    end.

%% A guard the domain cannot decide: both bodies run.
guard_branch() ->
    guard_branch(?MODULE:three()).

guard_branch(N) ->
    if
        N > 2 -> ok;
        true -> erlang:error(small)
    end.

%% Computed, so abstract (a literal alone stays exact).
three() -> 1 + 2.

%% Exceptions raised and caught inside the interpreter.
try_catch() ->
    R = try 1 div (?MODULE:three() - 3) of
            V -> {value, V}
        catch
            error:badarith -> caught
        end,
    caught = R,
    C = (catch throw(t)),
    t = C,
    ok.

%% Funs, named funs and comprehensions, interpreted.
fun_and_lc() ->
    Double = fun(X) -> X * 2 end,
    [2, 4, 6] = [Double(X) || X <- [1, 2, 3], is_integer(X)],
    Len = fun Len([]) -> 0; Len([_ | T]) -> 1 + Len(T) end,
    3 = Len([a, b, c]),
    ok.

unsupported_binary() ->
    B = <<1, 2>>,
    B.

%% A pid deep in a message stays a pid (pids are atomic).
depth_pid() ->
    Self = self(),
    P = spawn(fun() -> receive {a, {b, {c, Pid}}} -> Pid ! done end end),
    P ! {a, {b, {c, Self}}},
    receive done -> ok end.

spawn_fun() ->
    Parent = self(),
    spawn(fun() -> Parent ! {hello, 1} end),
    receive {hello, N} when N > 0 -> ok end.

%% A client that never waits: the server's mailbox grows without bound,
%% which no data abstraction bounds.
endless_after() ->
    S = spawn(fun Loop() -> receive _ -> Loop() end end),
    spawn(fun Client() -> S ! ping, receive after 1 -> Client() end end),
    ok.

%% A non-tail recursion whose frames all differ (the argument grows): folded
%% once the stack is deep, so the check still ends.
deep_recursion() ->
    P = spawn(fun() -> count(0) end),
    P ! go,
    ok.

count(N) ->
    receive
        go -> self() ! go, count(N + 1), ok;
        stop -> ok
    end.

-record(acc, {count = 0, log = []}).

%% Records, maps with concrete keys, ETS, io and the dictionary through
%% the interpreter.
library() ->
    A = #acc{},
    B = A#acc{count = A#acc.count + 1, log = ["one"]},
    1 = B#acc.count,
    M = #{a => 1},
    M2 = M#{b => 2, a := 3},
    3 = maps:get(a, M2),
    T = ets:new(t, [set]),
    true = ets:insert(T, {k, B#acc.log}),
    [{k, ["one"]}] = ets:lookup(T, k),
    put(key, value),
    value = get(key),
    io:format("~p~n", [B]),
    ok.
