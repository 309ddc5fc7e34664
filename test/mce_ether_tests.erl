%% @doc The ether and the limits: a search whose work is all deliveries
%% computed in C still answers max_time, memory and stop/1 promptly.
-module(mce_ether_tests).

-include_lib("eunit/include/eunit.hrl").

-define(FLOOD, {tprog_ether, flood, [6, 8]}).
-define(ETHER, #{delivery => ether, property => [abnormal_exit], progress => false}).

setup_test_() ->
    {timeout, 120, fun() -> mce_translate:ensure(tprog_ether) end}.

%% (9^6 states, almost all reached by deliveries, which the C search
%% computes without Erlang.)  Before the C search yielded, the whole space
%% was explored inside one NIF call and max_time was looked at only after.
max_time_holds_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             T0 = erlang:monotonic_time(millisecond),
             R = mcerlang:check(?FLOOD, ?ETHER#{max_time => 500}),
             Ms = erlang:monotonic_time(millisecond) - T0,
             ?assertMatch({inconclusive, max_time, _}, R),
             ?assert(Ms < 3000)
     end}.

memory_cap_holds_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 8 bsl 20,
             R = mcerlang:check(?FLOOD, ?ETHER#{memory => Cap}),
             ?assertMatch({inconclusive, {memory, Cap}, _}, R),
             {_, _, #{memory_used := Used}} = R,
             %% Checked at least every SEARCH_WORK_BUDGET deliveries: far less
             %% than a megabyte past the cap.
             ?assert(Used < Cap + (1 bsl 20))
     end}.

stop_answered_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             Self = self(),
             Checker = spawn(fun() -> Self ! {self(), mcerlang:check(?FLOOD, ?ETHER)} end),
             timer:sleep(300),
             T0 = erlang:monotonic_time(millisecond),
             ok = mcerlang:stop(Checker),
             R = receive {Checker, Res} -> Res after 10000 -> timeout end,
             Ms = erlang:monotonic_time(millisecond) - T0,
             ?assertMatch({inconclusive, stopped, _}, R),
             ?assert(Ms < 500)
     end}.
