%% Programs for the abstract mode's soundness test (mce_abs_soundness_tests)
%% whose violation lies behind an undecided receive match: under every
%% abstraction the test uses, the payload `[1, 2, 3, 4, 5, X]' is abstract
%% (X's parity or sign, the list cut below the depth, the chain's summary),
%% so whether a message matches `[1, 2, 3, 4, 5, 3]' is `maybe', and the
%% abstract system must explore both: the message taken, and the scan going
%% on past it.  Checked with `property => [abnormal_exit]', so that a
%% receive that wrongly matches nothing ends quietly instead of deadlocking.
-module(tprog_abs_sound).
-export([past_first/0, only_one/0, server/0]).
%% One construct each whose outcome the abstraction cannot decide; each
%% crashes concretely.
-export([after_zero/0, case_value/0, compare/0, head_guard/0, div_zero/0, caught/0,
         equal_values/0, exit_reason/0, list_sum/0, element_index/0, lc_filter/0,
         nested_call/0, spawned_args/0, receive_payload/0, dict_value/0, crash_on/2]).
%% Checked with an invariant or an LTL formula on the props.
-export([count_to/1]).
-export([repeated_var/0, bound_in_receive/0, ets_key/0, dict_key/0, list_length/0,
         probe_count/1, deep_recursion/0]).
-export([deadlock_behind/0, catch_expr/0, after_timeout/0]).
-export([exit_signal/0, guard_on_cut/0, abstract_after/0, send_after_abstract/0, float_compare/0,
         throw_through_frames/0, exit_child/0]).

%% Concretely the first message does not match and the second does: the
%% server crashes.  An interpreter that never looks past a message that may
%% match, or never takes one, proves the program safe.
past_first() ->
    S = spawn(?MODULE, server, []),
    S ! {req, [1, 2, 3, 4, 5, 1], first},
    S ! {req, [1, 2, 3, 4, 5, 3], second},
    ok.

%% One message, which concretely matches: the server crashes.  An
%% interpreter that answers "no" to a match that may succeed proves it safe.
only_one() ->
    S = spawn(?MODULE, server, []),
    S ! {req, [1, 2, 3, 4, 5, 3], second},
    ok.

server() ->
    receive
        {req, [1, 2, 3, 4, 5, 3], Tag} ->
            case Tag of
                second -> erlang:error(second_taken);
                first -> ok
            end
    end.

%% The message concretely does not match, so the `after 0' runs.
after_zero() ->
    self() ! {v, [1, 2, 3, 4, 5, 1]},
    receive
        {v, [1, 2, 3, 4, 5, 3]} -> ok
    after 0 -> erlang:error(timeout_taken)
    end.

case_value() ->
    case id([1, 2, 3, 4, 5, 3]) of
        [1, 2, 3, 4, 5, 1] -> ok;
        _ -> erlang:error(other)
    end.

compare() ->
    X = id(3),
    if X > 2 -> erlang:error(big);
       true -> ok
    end.

head_guard() -> odd_one(3).

odd_one(X) when X rem 2 =:= 1, X > 1 -> erlang:error({odd, X});
odd_one(_) -> ok.

div_zero() ->
    X = id(3),
    10 div (X - 3).

caught() ->
    X = id(3),
    try 10 div (X - 3) of
        _ -> ok
    catch
        error:badarith -> erlang:error(caught)
    end.

equal_values() ->
    X = id(1),
    Y = 3,
    case X =:= Y of
        true -> ok;
        false -> erlang:error(differ)
    end.

%% Checked with treat_as_normal => [normal, 1]: 3 is not 1.
exit_reason() ->
    exit(3).

list_sum() ->
    case sum([1, 2, 3, 4, 5, 6]) of
        21 -> erlang:error(sum_is_21);
        _ -> ok
    end.

sum([]) -> 0;
sum([H | T]) -> H + sum(T).

element_index() ->
    I = id(3),
    element(I, {a, b}).

lc_filter() ->
    case [X || X <- [1, 2, 3, 4, 5, 6], X > 5] of
        [] -> ok;
        [_ | _] -> erlang:error(found)
    end.

nested_call() ->
    case wrap(wrap(3)) of
        {ok, 5} -> erlang:error(five);
        _ -> ok
    end.

wrap(3) -> {ok, 4};
wrap({ok, 4}) -> {ok, 5};
wrap(_) -> error.

%% The spawned function's arguments: a tuple two levels deep and a number.
spawned_args() ->
    spawn(?MODULE, crash_on, [{a, {b, {c}}}, 3]),
    ok.

crash_on({a, {b, {c}}}, 3) -> erlang:error(crashed);
crash_on(_, _) -> ok.

%% The payload, abstract in every domain, decides the reply.
receive_payload() ->
    Me = self(),
    spawn(fun() -> Me ! {n, [1, 2, 3, 4, 5, 3]} end),
    receive
        {n, [1, 2, 3, 4, 5, 3]} -> erlang:error(three);
        {n, _} -> ok
    end.

dict_value() ->
    put(k, 3),
    case get(k) of
        3 -> erlang:error(three);
        _ -> ok
    end.

%% Opaque to the compiler's constant folding.
id(X) -> X.

%% Stands at {count, N} for N from 0 to Max, then ends.
count_to(Max) -> count(0, Max).

count(N, Max) ->
    mcerlang:prop({count, N}),
    case N < Max of
        true -> count(N + 1, Max);
        false -> ok
    end.

repeated_var() ->
    case {id(1), id(3)} of
        {X, X} -> ok;
        _ -> erlang:error(differ)
    end.

bound_in_receive() ->
    X = id(3),
    self() ! {v, id(1)},
    receive
        {v, X} -> ok
    after 0 -> erlang:error(not_received)
    end.

%% The key is computed, 5 - 2, and looked up as the literal 3: equal
%% concretely, and abstract values that may be equal.
ets_key() ->
    T = ets:new(t, []),
    ets:insert(T, {id(5) - id(2), v}),
    case ets:lookup(T, 3) of
        [_] -> erlang:error(found);
        [] -> ok
    end.

dict_key() ->
    put(id(5) - id(2), v),
    case get(3) of
        v -> erlang:error(found);
        _ -> ok
    end.

list_length() ->
    case length(lists:reverse(id([1, 2, 3, 4, 5, 6]))) of
        6 -> erlang:error(six);
        _ -> ok
    end.

%% A probe per value; checked with [] !three on {probe, count, 3}.
probe_count(Max) -> probe(0, Max).

probe(N, Max) ->
    mcerlang:probe(count, N),
    case N < Max of
        true -> probe(N + 1, Max);
        false -> ok
    end.

%% Forty frames deep (deeper than the interpreter keeps unfolded).
deep_recursion() ->
    case depth(40) of
        40 -> erlang:error(forty);
        _ -> ok
    end.

depth(0) -> 0;
depth(N) -> 1 + depth(N - 1).

%% Checked for deadlock: concretely the message does not match and the
%% process waits forever.
deadlock_behind() ->
    self() ! {v, [1, 2, 3, 4, 5, 1]},
    receive
        {v, [1, 2, 3, 4, 5, 3]} -> ok
    end.

catch_expr() ->
    X = id(3),
    case catch 10 div (X - 3) of
        {'EXIT', _} -> erlang:error(caught);
        _ -> ok
    end.

%% A receive with a timeout (not 0) behind a message that may match.
after_timeout() ->
    self() ! {v, [1, 2, 3, 4, 5, 1]},
    receive
        {v, [1, 2, 3, 4, 5, 3]} -> ok
    after 100 -> erlang:error(timeout_taken)
    end.

exit_signal() ->
    process_flag(trap_exit, true),
    spawn_link(?MODULE, exit_child, []),
    receive
        {'EXIT', _, [1, 2, 3, 4, 5, 3]} -> erlang:error(three);
        {'EXIT', _, _} -> ok
    end.

exit_child() -> exit(id([1, 2, 3, 4, 5, 3])).

guard_on_cut() ->
    case id({a, {b, {c, 3}}}) of
        {a, {b, {c, N}}} when is_integer(N) -> erlang:error(integer);
        _ -> ok
    end.

abstract_after() ->
    receive
        never -> ok
    after id(5) -> erlang:error(timed_out)
    end.

send_after_abstract() ->
    erlang:send_after(id(5), self(), {tick, id(3)}),
    receive
        {tick, 3} -> erlang:error(ticked);
        {tick, _} -> ok
    end.

float_compare() ->
    case id(3) < 3.5 of
        true -> erlang:error(less);
        false -> ok
    end.

throw_through_frames() ->
    try thrower(40) of
        _ -> ok
    catch
        throw:40 -> erlang:error(forty)
    end.

thrower(0) -> throw(0);
thrower(N) ->
    try thrower(N - 1) of
        V -> V
    catch
        throw:M -> throw(M + 1)
    end.
