%% The EUnit test-object macros of include/mcerlang.hrl (?_assertHolds,
%% ?_assertViolation): the timeout they wrap a check in, and that the test
%% objects run the check (through eunit:test/2, as a user's suite would).
-module(mce_eunit_macro_tests).

-include_lib("eunit/include/eunit.hrl").
-include("../include/mcerlang.hrl").

-define(OPTS, #{progress => false}).

timeout_from_max_time_test() ->
    ?assertEqual(600, ?mcerlangTimeout(#{})),
    ?assertEqual(600, ?mcerlangTimeout(#{max_time => infinity})),
    ?assertEqual(65, ?mcerlangTimeout(#{max_time => 5000})),
    ?assertEqual(62, ?mcerlangTimeout(#{max_time => 1001})),
    ?assertEqual(65, ?mcerlangTimeout([{max_time, 5000}])),
    ?assertEqual(600, ?mcerlangTimeout([])).

test_objects_carry_the_timeout_test() ->
    ?assertMatch({timeout, 600, {_, F}} when is_function(F, 0), ?_assertHolds({pingpong, start, [3]})),
    ?assertMatch({timeout, 70, {_, F}} when is_function(F, 0),
                 ?_assertHolds({pingpong, start, [3]}, #{max_time => 10000})),
    ?assertMatch({timeout, 600, {_, F}} when is_function(F, 0),
                 ?_assertViolation({dining, start, [2]}, ?OPTS)),
    ?assertMatch({timeout, 600, {_, F}} when is_function(F, 0),
                 ?_assertViolation(deadlock, {dining, start, [2]}, ?OPTS)).

%% The objects as EUnit runs them: the right ones pass, the wrong ones fail.
test_objects_run_test_() ->
    {timeout, 120,
     fun() ->
             Passing = [?_assertHolds({pingpong, start, [3]}, #{progress => false, max_time => 60000}),
                        ?_assertViolation({dining, start, [2]}, ?OPTS),
                        ?_assertViolation(deadlock, {dining, start, [2]}, ?OPTS)],
             ?assertEqual(ok, eunit:test(Passing, [no_tty])),
             ?assertEqual(error, eunit:test([?_assertHolds({dining, start, [2]}, ?OPTS)], [no_tty])),
             ?assertEqual(error, eunit:test([?_assertViolation({pingpong, start, [3]}, ?OPTS)], [no_tty]))
     end}.

%% A user's own margin and default, defined before the include.
user_margin_test() ->
    ?assertEqual({timeout, 7, ok}, mce_eunit_macro_margin:objects()).
