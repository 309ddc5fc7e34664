%% timeouts => {infinite_above, Ms} (issue 19 item 2): a receive `after' or
%% a timer of at least Ms never fires (a process waiting only on it is
%% blocked), a shorter one races freely as under `any'.  Checked through
%% mcerlang:check/2 and the command line.
-module(mce_timeouts_tests).
-include_lib("eunit/include/eunit.hrl").

-define(ABOVE(Ms), #{timeouts => {infinite_above, Ms}}).

check(F, Args, Opts) ->
    mcerlang:check({tprog_time, F, Args}, Opts#{progress => false}).

warm_up_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [tprog_time, gen_server, gen,
                                                               proc_lib]] end}.

%% A short timeout races the message, as under any; a long one never fires.
race_test_() ->
    {timeout, 60,
     fun() ->
             ?assertMatch({error, #{violation := {abnormal_exit, _, timed_out}}},
                          check(race, [10], ?ABOVE(5000))),
             ?assertMatch({error, #{violation := {abnormal_exit, _, timed_out}}},
                          check(race, [10], #{timeouts => any})),
             ?assertMatch({ok, _}, check(race, [5000], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(race, [10], ?ABOVE(10))),
             %% The bound is inclusive, and `after 0' is a poll, not time.
             ?assertMatch({ok, _}, check(race, [11], ?ABOVE(10))),
             ?assertMatch({error, #{violation := {abnormal_exit, _, timed_out}}},
                          check(race, [9], ?ABOVE(10))),
             ?assertMatch({error, #{violation := {abnormal_exit, _, timed_out}}},
                          check(race, [0], ?ABOVE(0)))
     end}.

%% A process whose only way on is a timeout the bound suppresses is
%% blocked: a deadlock, as with `after infinity'.
blocked_test_() ->
    {timeout, 60,
     fun() ->
             ?assertMatch({error, #{violation := deadlock}}, check(lone_wait, [5000], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(lone_wait, [4999], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(lone_wait, [5000], #{timeouts => any})),
             ?assertMatch({ok, _}, check(lone_wait, [5000], #{timeouts => when_idle})),
             ?assertMatch({error, #{violation := deadlock}}, check(sleeper, [60000], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(sleeper, [10], ?ABOVE(5000)))
     end}.

%% Timers follow the same bound: erlang:send_after, start_timer and
%% timer:send_interval (a process of the model waiting with `after').
timers_test_() ->
    {timeout, 60,
     fun() ->
             ?assertMatch({error, #{violation := deadlock}}, check(timer_wait, [5000], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(timer_wait, [100], ?ABOVE(5000))),
             ?assertMatch({ok, _}, check(timer_wait, [0], ?ABOVE(0))),
             ?assertMatch({error, #{violation := deadlock}}, check(interval, [5000], ?ABOVE(5000))),
             %% A timer that never fires is pending: its whole time is left.
             Opts = ?ABOVE(5000),
             ?assertMatch({error, #{violation := {abnormal_exit, _, {result, {9000, 9000, false}}}}},
                          check(timer_read, [9000], Opts#{treat_as_normal => []}))
     end}.

%% What the option is for: a gen_server:call's default 5 s timeout never
%% fires, a short one still races the reply.
otp_call_test_() ->
    {timeout, 120,
     fun() ->
             ?assertMatch({ok, _}, check(call_default, [], ?ABOVE(5000))),
             ?assertMatch({error, #{violation := {abnormal_exit, _, {timeout, _}}}},
                          check(call_default, [], #{timeouts => any})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, {timeout, _}}}},
                          check(call_short, [], ?ABOVE(5000)))
     end}.

bad_value_test() ->
    [?assertError({mcerlang, {bad_option_value, timeouts, V, _}}, check(race, [1], #{timeouts => V}))
     || V <- [{infinite_above, -1}, {infinite_above, infinity}, {infinite_above}, sometimes]].

cli_test_() ->
    {timeout, 120,
     fun() ->
             {1, Dead} = mce_cli_tests:run_cli(["check", "--timeouts", "infinite_above:5000",
                                                "test/tprog_time.erl", "tprog_time:lone_wait(5000)"]),
             ?assertNotEqual(nomatch, string:find(Dead, "deadlock")),
             {0, _} = mce_cli_tests:run_cli(["check", "--timeouts", "infinite_above:5001",
                                             "test/tprog_time.erl", "tprog_time:lone_wait(5000)"]),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--timeouts", "infinite_above:soon",
                                               "test/tprog_time.erl", "tprog_time:lone_wait(5000)"]),
             ?assertNotEqual(nomatch, string:find(Bad, "infinite_above"))
     end}.
