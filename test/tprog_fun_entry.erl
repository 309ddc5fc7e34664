%% Closures compiled into a module as check entries (issue 14 item 4b); see
%% mce_translate_bind_tests.
-module(tprog_fun_entry).

-export([lc_entry/1, nested_fun_entry/1, fun_ref_entry/1, filter_entry/1]).

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

id(X) -> X.
