%% Differential tests of the ETS model (mce_ets) against the real VM: the
%% scenarios of tprog_ets run on the real VM and under the checker, which
%% must find the real result and only that one.  The sweep scenarios hold
%% a generated table of calls (every modelled ets function on bad tables,
%% other processes' tables and bad arguments); a disagreement is reported
%% per call.
-module(mce_ets_diff_tests).
-include_lib("eunit/include/eunit.hrl").

%% The scenarios of tprog_ets, also run by mce_reduction_tests.
-export([sweeps/0, scenarios/0]).

warm_up_test_() ->
    {timeout, 60, fun() -> mce_translate:ensure(tprog_ets) end}.

sweep_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> same_per_call(F) end}}
     || F <- sweeps()].

-spec sweeps() -> [atom()].
sweeps() ->
    [sweep_bad_tables, sweep_other_owner, sweep_bad_args, sweep_info, sweep_new].

scenario_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> mce_otp_harness:same_result(tprog_ets, F) end}}
     || F <- scenarios()].

-spec scenarios() -> [atom()].
scenarios() ->
    [whereis_tid, heir_kept, rename, rename_across_steps, undefined_function,
     ac_tab_env, all_tables, info_of_refs].

%% A system table the model does not hold is refused, naming the table and
%% where the program touched it; on the real VM it exists.
system_table_refused_test() ->
    ?assertMatch({result, N} when is_integer(N), mce_otp_harness:real(tprog_ets, system_table)),
    ?assertError({mcerlang, {unsupported_system_table, global_names, {ets, info, 2},
                             {tprog_ets, system_table, 0, Line}}} when is_integer(Line),
                 mcerlang:check({tprog_ets, system_table, []})),
    ?assertEqual({result, true}, mce_otp_harness:real(tprog_ets, ac_tab_other)),
    ?assertError({mcerlang, {unsupported_system_table, ac_tab, {ets, lookup, 2},
                             {tprog_ets, ac_tab_other, 0, _}}},
                 mcerlang:check({tprog_ets, ac_tab_other, []})).

%% The checker's one result equals the real VM's, compared call by call so
%% that a failure names the calls that differ.
same_per_call(F) ->
    {result, Real} = mce_otp_harness:real(tprog_ets, F),
    case mce_otp_harness:checked(tprog_ets, F) of
        [{result, Checked}] when length(Checked) =:= length(Real) ->
            ?assertEqual([], [{real, R, checked, C} || {R, C} <- lists:zip(Real, Checked), R =/= C]);
        Other ->
            ?assertEqual([{result, Real}], Other)
    end.
