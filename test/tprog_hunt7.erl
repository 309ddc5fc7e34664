%% ETS accesses inside funs that code the checker does not translate
%% calls (mce_hunt_tests): ets:foldl/3, sofs.  They cannot suspend, so the
%% shared-memory scheduling point lets them run on.
-module(tprog_hunt7).
-compile([export_all, nowarn_export_all]).

ets_foldl_copy() ->
    T = ets:new(a, [public]), T2 = ets:new(b, [public]),
    ets:insert(T, [{1, a}, {2, b}]),
    N = ets:foldl(fun(X, A) -> ets:insert(T2, X), A + 1 end, 0, T),
    exit({result, {N, lists:sort(ets:tab2list(T2))}}).

sort_with_ets() ->
    T = ets:new(a, [public]),
    ets:insert(T, [{1, 3}, {2, 1}]),
    L = lists:sort(fun(A, B) -> ets:lookup_element(T, A, 2) =< ets:lookup_element(T, B, 2) end, [1, 2]),
    exit({result, L}).

sofs_ets() ->
    T = ets:new(a, [public]),
    ets:insert(T, [{1, 3}, {2, 1}]),
    S = sofs:specification(fun(X) -> ets:member(T, X) end, sofs:set([1, 2, 3])),
    exit({result, sofs:to_external(S)}).
