%% Scheduling points inside funs that helper functions run (issue 14 item 2);
%% see mce_translate_bind_tests.
-module(tprog_helper_funs).
-include_lib("eunit/include/eunit.hrl").
-export([helper_foreach/0, helper_sets_fold/0, helper_assert/0, helper_assert_fails/0,
         helper_immediate_fun/0, helper_passed_fun/0, lost_yield/0,
         lost_choice/0]).

%% Item 2: scheduling points inside funs that helpers run.

helper_foreach() ->
    Ps = start_workers(3),
    stop_all(Ps),
    exit({result, collect(Ps)}).

helper_sets_fold() ->
    Ps = start_workers(2),
    N = stop_set(sets:from_list(Ps)),
    exit({result, {N, collect(Ps)}}).

helper_assert() ->
    T = ets:new(t, [public]),
    true = ets:insert(T, {a, 1}),
    check_size(T, 1),
    true = ets:insert(T, {b, 2}),
    check_size(T, 2),
    exit({result, ets:info(T, size)}).

helper_assert_fails() ->
    T = ets:new(t, [public]),
    true = ets:insert(T, {a, 1}),
    check_size(T, 5),
    exit({result, not_reached}).

helper_immediate_fun() ->
    Ps = start_workers(1),
    stop_now(hd(Ps)),
    exit({result, collect(Ps)}).

helper_passed_fun() ->
    Ps = start_workers(2),
    apply_all(fun(P) -> P ! stop end, Ps),
    exit({result, collect(Ps)}).

apply_all(F, Ps) ->
    lists:foreach(F, Ps).

%% sofs is not translated: its call of the fun loses the suspension of a
%% small step, and the check must say where it was made.
lost_yield() ->
    Self = self(),
    sofs:specification(fun(X) -> Self ! X, true end, sofs:set([1])),
    exit({result, done}).

%% The same for a choice (checker only: mcerlang:choice/1).
lost_choice() ->
    sofs:specification(fun(_) -> mcerlang:choice([fun() -> true end]) end, sofs:set([1])),
    exit({result, done}).

start_workers(N) ->
    Self = self(),
    [spawn(fun() -> worker(Self) end) || _ <- lists:seq(1, N)].

worker(Parent) ->
    receive stop -> Parent ! {stopped, self()} end.

stop_all(Ps) ->
    lists:foreach(fun(P) -> P ! stop end, Ps).

stop_set(Set) ->
    sets:fold(fun(P, N) -> P ! stop, N + 1 end, 0, Set).

stop_now(P) ->
    (fun() -> P ! stop end)(),
    ok.

check_size(T, N) ->
    ?assertEqual(N, ets:info(T, size)),
    ok.

collect(Ps) ->
    length([receive {stopped, P} -> P end || P <- Ps]).
