%% Closures compiled into a module as check entries (issue 14 item 4b); see
%% mce_translate_bind_tests.
-module(tprog_fun_entry).

-export([lc_entry/1, nested_fun_entry/1, fun_ref_entry/1, filter_entry/1]).
%% Captured funs with arguments (mce_closure:translated_fun/1).
-export([arity1_entry/1, arity2_entry/1, clause_error_entry/1, blocking_entry/1,
         map_entry/2, named_fun_entry/1]).

lc_entry(L) ->
    fun() -> exit({result, [X * 2 || X <- L]}) end.

nested_fun_entry(L) ->
    fun() ->
            Self = self(),
            Ps = [spawn(fun() -> Self ! {got, X} end) || X <- L],
            exit({result, {length(Ps), lists:sort([receive {got, X} -> X end || _ <- L])}})
    end.

fun_ref_entry(L) ->
    F = fun id/1,
    fun() -> exit({result, {lists:map(F, L), [Y || {Y, _} <- [{X, x} || X <- L]]}}) end.

filter_entry(L) ->
    fun() -> exit({result, [X || X <- L, X > 1, (fun(Y) -> Y < 4 end)(X)]}) end.

arity1_entry(K) ->
    F = fun(X) -> X * K end,
    fun() -> exit({result, {lists:map(F, [1, 2, 3]), F(10)}}) end.

arity2_entry(K) ->
    G = fun(X, Y) when X > Y, is_integer(K) -> {gt, X - Y + K};
           (X, X) -> {eq, K};
           ({T}, _) -> {tuple, T};
           (_, Y) -> {other, Y}
        end,
    fun() -> exit({result, [G(A, B) || {A, B} <- [{3, 1}, {2, 2}, {{t}, 0}, {1, 5}]]}) end.

%% The VM names the fun in the stack of its function_clause, with the
%% arguments; the fun is called directly and through lists:map.
clause_error_entry(K) ->
    H = adder(K),
    fun() ->
            Direct = try H(a) catch error:R1:S1 -> {R1, top(S1)} end,
            Mapped = try lists:map(H, [1, b]) catch error:R2:S2 -> {R2, top(S2)} end,
            exit({result, {Direct, Mapped}})
    end.

%% The captured fun blocks in a receive: called directly and by lists:map.
blocking_entry(K) ->
    Ask = fun(X) ->
                  srv ! {self(), X},
                  receive {reply, R} -> R + K end
          end,
    fun() ->
            register(srv, spawn(fun server/0)),
            Mapped = lists:map(Ask, [1, 2]),
            Direct = Ask(3),
            srv ! stop,
            exit({result, {Mapped, Direct}})
    end.

server() ->
    receive
        {From, X} -> From ! {reply, X * 100}, server();
        stop -> ok
    end.

%% An entry {M, F, Args} with a fun in its arguments.
map_entry(F, L) ->
    exit({result, lists:map(F, L)}).

adder(K) ->
    fun(X) when is_integer(X) -> X + K end.

%% A named fun (v3_kernel names it '-named_fun_entry/1-Loop/1-0-'), with
%% a function_clause raised inside its recursion.
named_fun_entry(K) ->
    F = fun Loop(0) -> K; Loop(N) when N > 0 -> Loop(N - 1) end,
    fun() ->
            Caught = try F(-1) catch error:R:S -> {R, top(S)} end,
            exit({result, {F(2), lists:map(F, [1]), Caught}})
    end.

top([{M, F, A, Loc} | _]) -> {M, F, A, proplists:get_value(line, Loc)}.

id(X) -> X.
