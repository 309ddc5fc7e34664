%% @doc The differential harness of the OTP tests (mce_otp_tests,
%% mce_otp_diff_tests): a scenario is a 0-arity function whose root process
%% ends with exit({result, R}); it runs on the real VM and under the checker
%% (timeouts => when_idle), where every result the root can end with, over
%% all interleavings, is collected.  results/2 collects the `{result, R}'
%% exits of any process under given options (mce_stubs_tests,
%% mce_netkernel_tests, mce_pg_tests).
-module(mce_otp_harness).
-include_lib("eunit/include/eunit.hrl").

-export([same_result/2, real/2, checked/2, results/2]).

%% @doc Asserts that the checker finds exactly the real VM's result.
-spec same_result(module(), atom()) -> ok.
same_result(M, F) ->
    Real = real(M, F),
    ?assertEqual([Real], checked(M, F)).

%% @doc The root's exit reason on the real VM (the scenario's servers' crash
%% reports are not printed meanwhile).
-spec real(module(), atom()) -> term().
real(M, F) ->
    #{level := Level} = logger:get_primary_config(),
    ok = logger:set_primary_config(level, none),
    try
        {Pid, Ref} = spawn_monitor(M, F, []),
        receive {'DOWN', Ref, process, Pid, Reason} -> Reason end
    after
        logger:set_primary_config(level, Level)
    end.

%% @doc Every result of the root process over all interleavings (the
%% servers' own abnormal exits are set aside), or {unexpected, Violation}.
-spec checked(module(), atom()) -> [term()] | {unexpected, term()}.
checked(M, F) ->
    checked(M, F, [], []).

checked(M, F, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1),
    case mcerlang:check({M, F, []},
                        #{timeouts => when_idle,
                          treat_as_normal => [normal, shutdown | Seen ++ Others]}) of
        {ok, _} -> lists:reverse(Seen);
        {error, #{violation := {abnormal_exit, Root, Reason}}} -> checked(M, F, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _, Reason}}} -> checked(M, F, Seen, [Reason | Others]);
        {error, #{violation := V}} -> {unexpected, V}
    end.

%% @doc Every R of an exit `{result, R}' some process can end with under
%% Opts, over all interleavings (and faults), sorted: each one found is
%% treated as normal and the program checked again.
-spec results(mcerlang:entry(), map()) -> [term()].
results(Entry, Opts) ->
    results(Entry, Opts, []).

results(Entry, Opts, Seen) ->
    case mcerlang:check(Entry, Opts#{treat_as_normal => [normal | Seen]}) of
        {ok, _} -> lists:sort([R || {result, R} <- Seen]);
        {error, #{violation := {abnormal_exit, _, {result, _} = R}}} ->
            results(Entry, Opts, [R | Seen])
    end.
