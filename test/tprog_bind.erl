%% Programs for mce_translate_bind_tests: each ends with exit({result, V})
%% (or an error) and runs the same on the real VM and under the checker.
-module(tprog_bind).
-include_lib("eunit/include/eunit.hrl").

-export([helper_foreach/0, helper_sets_fold/0, helper_assert/0, helper_assert_fails/0,
         helper_immediate_fun/0, lost_yield/0,
         send_bind/0, notify_abort/0, remote_bind/0, nested_bind/0, bind_badmatch/0,
         bind_order/0, same_var_twice/0, same_var_clash/0, local_bind_tail/0,
         unsupported_bind/0,
         rec_default/0, rec_order/0, rec_wildcard/0,
         lc_entry/1, nested_fun_entry/1, fun_ref_entry/1, filter_entry/1]).

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

%% sofs is not translated: its call of the fun loses the suspension of a
%% small step, and the check must say where it was made.
lost_yield() ->
    Self = self(),
    sofs:specification(fun(X) -> Self ! X, true end, sofs:set([1])),
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

%% Item 4: variables bound inside the arguments of calls that may block.

send_bind() ->
    Echo = spawn(fun echo/0),
    Echo ! {req, Ref = make_ref(), self()},
    receive {Ref, Answer} -> exit({result, Answer}) end.

notify_abort() ->
    P = spawn(fun acker/0),
    X = 7,
    notify(P, {abort, Reason = {deadlock, X}}),
    error(Reason).

remote_bind() ->
    Self = self(),
    spawn(fun() -> Self ! {item, 5} end),
    V = tprog_helper:wait_for(Tag = item),
    exit({result, {Tag, V}}).

nested_bind() ->
    V = pass({A, B} = C = make_pair()),
    exit({result, {A, B, C, V}}).

bind_badmatch() ->
    R = try pass2(self() ! one, {ok, _} = id({error, x})) of
            _ -> no_error
        catch
            error:E -> E
        end,
    Got = receive M -> M after 0 -> none end,
    exit({result, {R, Got}}).

bind_order() ->
    V = pass3(log(a), W = log(b), log(c)),
    exit({result, {V, W, drain()}}).

same_var_twice() ->
    pass2(X = id(1), X = 1),
    exit({result, X}).

same_var_clash() ->
    pass2(X = id(1), X = id(2)),
    exit({result, X}).

%% The binding call last in the body: its value is the function's.
local_bind_tail() ->
    exit({result, {tail_bind(), drain()}}).

tail_bind() ->
    pass(Y = log(y)),
    pass2(Y, _Z = log(z)).

unsupported_bind() ->
    check_process_code(S = self(), tprog_bind),
    exit({result, S}).

echo() ->
    receive {req, Ref, From} -> From ! {Ref, pong} end.

acker() ->
    receive {From, _Msg} -> From ! ack end.

notify(P, Msg) ->
    P ! {self(), Msg},
    receive ack -> ok end.

make_pair() -> {1, 2}.

id(X) -> X.

pass(X) ->
    receive after 0 -> X end.

pass2(X, Y) ->
    receive after 0 -> {X, Y} end.

pass3(X, Y, Z) ->
    receive after 0 -> {X, Y, Z} end.

log(X) ->
    self() ! {log, X},
    X.

drain() ->
    receive {log, X} -> [X | drain()] after 0 -> [] end.

%% Item 4b: record defaults that run process code, fun entries.

-record(st, {helper = start_helper(), n = 0}).
-record(ord, {a = log(def_a), b, c = log(def_c)}).

rec_default() ->
    S = #st{n = 1},
    S#st.helper ! {ping, self()},
    receive pong -> exit({result, S#st.n}) end.

rec_order() ->
    R = #ord{b = log(b), a = log(a)},
    exit({result, {R, drain()}}).

rec_wildcard() ->
    R = #ord{_ = log(w)},
    exit({result, {R, drain()}}).

start_helper() ->
    spawn(fun() -> receive {ping, From} -> From ! pong end end).

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
