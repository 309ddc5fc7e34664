%% The option `stubs' (mce_stubs): a call of M:F/A from checked code runs
%% the stub's fun inside the model, whatever path reaches it; bad stubs are
%% refused naming the culprit; an unsupported call's error names the way
%% out.
-module(mce_stubs_tests).

-include_lib("eunit/include/eunit.hrl").

-define(O, #{progress => false}).

%% The root's exit reason, {result, R} by the programs' convention.
result(Entry, Opts) ->
    case mcerlang:check(Entry, maps:merge(?O, Opts)) of
        {error, #{violation := {abnormal_exit, _, {result, R}}}} -> R;
        Other -> erlang:error({unexpected, Other})
    end.

%% Every result the root can exit with, over all interleavings.
results(Entry, Opts) ->
    mce_otp_harness:results(Entry, maps:merge(?O, Opts)).

-define(INFO, #{{file, read_file_info, 1} => fun tprog_stubs:fake_info/1}).

unsupported_call_stubbed_test_() ->
    {timeout, 120, fun unsupported_call_stubbed/0}.

unsupported_call_stubbed() ->
    ?assertEqual({ok, {fake_info, "/etc/passwd"}}, result({tprog_stubs, read_info, []}, #{stubs => ?INFO})).

%% Without the stub the call stops the check, and the error says how to
%% stub it (the option's name, and the command line's).
unsupported_call_error_names_the_option_test_() ->
    {timeout, 120, fun unsupported_call_error_names_the_option/0}.

unsupported_call_error_names_the_option() ->
    try mcerlang:check({tprog_stubs, read_info, []}, ?O) of
        Other -> erlang:error({unexpected, Other})
    catch error:{mcerlang, {unsupported_call, {file, read_file_info, 1},
                            {tprog_stubs, read_info, 0, _Line}, Hint}} ->
            ?assertNotEqual(nomatch, string:find(Hint, "stubs => #{{file,read_file_info,1} => fun")),
            ?assertNotEqual(nomatch, string:find(Hint, "--stub file:read_file_info/1=Mod:Fun"))
    end.

%% A call the translator sees only at run time says so too.
dynamic_unsupported_call_error_names_the_option_test_() ->
    {timeout, 120, fun dynamic_unsupported_call_error_names_the_option/0}.

dynamic_unsupported_call_error_names_the_option() ->
    ?assertError({mcerlang, {unsupported_call, {file, read_file_info, 1}, _, "not modelled: " ++ _}},
                 mcerlang:check({tprog_stubs, dynamic_calls, []}, ?O)).

%% The stubs take part in the translation's key: the module translated
%% with the stub is not used by a check without it, and the other way round.
translation_depends_on_the_stubs_test_() ->
    {timeout, 120, fun translation_depends_on_the_stubs/0}.

translation_depends_on_the_stubs() ->
    ?assertError({mcerlang, {unsupported_call, {file, read_file_info, 1}, _, _}},
                 mcerlang:check({tprog_stubs, read_info, []}, ?O)),
    ?assertMatch({ok, _}, result({tprog_stubs, read_info, []}, #{stubs => ?INFO})),
    ?assertError({mcerlang, {unsupported_call, {file, read_file_info, 1}, _, _}},
                 mcerlang:check({tprog_stubs, read_info, []}, ?O)),
    Other = #{{file, read_file_info, 1} => fun(N) -> {ok, {other, N}} end},
    ?assertEqual({ok, {other, "/etc/passwd"}}, result({tprog_stubs, read_info, []}, #{stubs => Other})).

dynamic_calls_run_the_stub_test_() ->
    {timeout, 120, fun dynamic_calls_run_the_stub/0}.

dynamic_calls_run_the_stub() ->
    ?assertEqual([{ok, {fake_info, X}} || X <- ["a", "b", "c", "d", "e"]] ++ [[{ok, {fake_info, "f"}}]],
                 result({tprog_stubs, dynamic_calls, []}, #{stubs => ?INFO})).

spawn_of_a_stubbed_call_runs_the_stub_test_() ->
    {timeout, 120, fun spawn_of_a_stubbed_call_runs_the_stub/0}.

spawn_of_a_stubbed_call_runs_the_stub() ->
    Stub = fun(Parent) -> Parent ! {from_stub, node()} end,
    ?assertEqual({from_stub, nonode@nohost},
                 result({tprog_stubs, spawn_stubbed, []},
                        #{stubs => #{{tprog_stubs_absent, run, 1} => Stub}})).

%% A modelled call (application:get_env/2 is mce_app's) is overridden.
modelled_call_stubbed_test_() ->
    {timeout, 120, fun modelled_call_stubbed/0}.

modelled_call_stubbed() ->
    ?assertEqual({ok, {kernel, anything, stubbed}},
                 result({tprog_stubs, env, []},
                        #{stubs => #{{application, get_env, 2} => fun tprog_stubs:fake_get_env/2}})).

%% A function of checked code stubbed: every call of it runs the stub,
%% the local call and `fun helper/1' inside its own module included.
checked_function_stubbed_test_() ->
    {timeout, 120, fun checked_function_stubbed/0}.

checked_function_stubbed() ->
    ?assertEqual({{real, 1}, {real, 2}, {real, 3}}, result({tprog_stubs, helper_calls, []}, #{})),
    ?assertEqual({{stub, 1}, {stub, 2}, {stub, 3}},
                 result({tprog_stubs, helper_calls, []},
                        #{stubs => #{{tprog_stubs, helper, 1} => fun(X) -> {stub, X} end}})).

%% The stub sends and receives inside the model: its steps are the
%% calling process's, and both orders of two clients are explored.
stub_talks_to_the_model_test_() ->
    {timeout, 120, fun stub_talks_to_the_model/0}.

stub_talks_to_the_model() ->
    Stubs = #{{tprog_stubs_absent, request, 1} => fun tprog_stubs:service_stub/1},
    ?assertEqual({1, 2}, result({tprog_stubs, service, []}, #{stubs => Stubs})),
    ?assertEqual([{a_got, 1}, {a_got, 2}], results({tprog_stubs, service_race, []}, #{stubs => Stubs, property => abnormal_exit})).

%% A stub that blocks for ever leaves its caller blocked: a deadlock.
stub_may_block_test_() ->
    {timeout, 120, fun stub_may_block/0}.

stub_may_block() ->
    Stubs = #{{tprog_stubs_absent, wait, 0} => fun() -> receive never -> ok end end},
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_stubs, blocking_stub, []}, ?O#{stubs => Stubs})).

%% A closure captures values; a shell fun runs translated too.
closure_and_shell_fun_stubs_test_() ->
    {timeout, 120, fun closure_and_shell_fun_stubs/0}.

closure_and_shell_fun_stubs() ->
    Tag = captured,
    ?assertEqual({ok, {captured, "/etc/passwd"}},
                 result({tprog_stubs, read_info, []},
                        #{stubs => #{{file, read_file_info, 1} => fun(N) -> {ok, {Tag, N}} end}})),
    {ok, Tokens, _} = erl_scan:string("fun(N) -> {ok, {shell, N}} end."),
    {ok, Exprs} = erl_parse:parse_exprs(Tokens),
    {value, Shell, _} = erl_eval:exprs(Exprs, []),
    ?assertEqual({ok, {shell, "/etc/passwd"}},
                 result({tprog_stubs, read_info, []}, #{stubs => #{{file, read_file_info, 1} => Shell}})).

bad_stubs_are_refused_test_() ->
    {timeout, 120, fun bad_stubs_are_refused/0}.

bad_stubs_are_refused() ->
    Check = fun(Stubs) -> mcerlang:check({tprog_stubs, read_info, []}, ?O#{stubs => Stubs}) end,
    ?assertError({mcerlang, {bad_option_value, stubs, [], _}}, Check([])),
    ?assertError({mcerlang, {bad_option_value, stubs, {file, read_file_info}, _}},
                 Check(#{{file, read_file_info} => fun(_) -> ok end})),
    ?assertError({mcerlang, {bad_option_value, stubs, {file, "f", 1}, _}},
                 Check(#{{file, "f", 1} => fun(_) -> ok end})),
    ?assertError({mcerlang, {bad_option_value, stubs, {file, f, 256}, _}},
                 Check(#{{file, f, 256} => fun(_) -> ok end})),
    ?assertError({mcerlang, {bad_stub, {file, read_file_info, 1}, _, "expected a fun of arity 1"}},
                 Check(#{{file, read_file_info, 1} => fun() -> ok end})),
    ?assertError({mcerlang, {bad_stub, {file, read_file_info, 1}, not_a_fun, _}},
                 Check(#{{file, read_file_info, 1} => not_a_fun})),
    %% The model keeps the process BIFs, apply and guard BIFs.
    [?assertError({mcerlang, {bad_stub, {erlang, F, A}, _, "the model keeps this call: it cannot be stubbed"}},
                  Check(#{{erlang, F, A} => erlang:make_fun(tprog_stubs, id, 1)}))
     || {F, A} <- [{send, 2}, {spawn, 1}, {self, 0}, {apply, 3}, {is_pid, 1}, {'+', 2},
                   {monitor, 2}, {list_to_atom, 1}, {spawn_request, 2}]],
    ?assertError({mcerlang, {bad_stub, {mcerlang, choice, 1}, _, _}},
                 Check(#{{mcerlang, choice, 1} => fun(_) -> ok end})),
    ?assertError({mcerlang, {bad_stub, {tprog_stubs, helper, 1}, _, "a stub cannot be the call it stubs"}},
                 Check(#{{tprog_stubs, helper, 1} => fun tprog_stubs:helper/1})),
    ?assertError({mcerlang, {bad_stub, {file, read_file_info, 1}, _,
                             "tprog_stubs:nothing/1 is not exported by a module on the code path"}},
                 Check(#{{file, read_file_info, 1} => fun tprog_stubs:nothing/1})),
    %% A stub that would run host code is refused like a fun in an entry.
    ?assertError({mcerlang, {bad_stub, {tprog_stubs_absent, request, 1}, _,
                             {unsupported_call, {file, delete, 1}, entry_argument, _}}},
                 mcerlang:check({tprog_stubs, unknown_service, []},
                                ?O#{stubs => #{{tprog_stubs_absent, request, 1} => fun file:delete/1}})).

%% A pure OTP function may be the stub itself.
pure_otp_function_as_stub_test_() ->
    {timeout, 120, fun pure_otp_function_as_stub/0}.

pure_otp_function_as_stub() ->
    ?assertEqual("dwssap/cte/", result({tprog_stubs, read_info, []},
                                        #{stubs => #{{file, read_file_info, 1} => fun lists:reverse/1}})).

%% The command line: --stub M:F/A=Mod:Fun.
cli_stub_test_() ->
    {timeout, 120, fun cli_stub/0}.

cli_stub() ->
    {Code, Out} = mce_cli_tests:run_cli(["check", "--stub", "file:read_file_info/1=tprog_stubs:fake_info",
                                         "-pa", "_build/test/lib/mcerlang/test",
                                         "tprog_stubs:read_info()"]),
    ?assertEqual(1, Code),
    ?assertNotEqual(nomatch, string:find(Out, "fake_info")),
    {2, Bad} = mce_cli_tests:run_cli(["check", "--stub", "file:read_file_info=tprog_stubs:fake_info",
                                      "tprog_stubs:read_info()"]),
    ?assertNotEqual(nomatch, string:find(Bad, "--stub")).

%% A counterexample of a check with stubs replays (its options carry the
%% stubs), and so does a simulation find it.
replay_and_simulate_with_stubs_test_() ->
    {timeout, 120, fun replay_and_simulate_with_stubs/0}.

replay_and_simulate_with_stubs() ->
    Stubs = #{{tprog_stubs_absent, request, 1} => fun tprog_stubs:service_stub/1},
    {error, Cex} = mcerlang:check({tprog_stubs, service, []}, ?O#{stubs => Stubs}),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, {1, 2}}}}},
                 mcerlang:simulate({tprog_stubs, service, []}, ?O#{stubs => Stubs, runs => 3})).

%% An erlang BIF the checker refuses (not one the model keeps) may be
%% stubbed, and its error says so.
refused_bif_stubbed_test_() ->
    {timeout, 120, fun refused_bif_stubbed/0}.

refused_bif_stubbed() ->
    ?assertError({mcerlang, {unsupported_bif, {erlang, suspend_process, 1}, _,
                             "not modelled: give the check a stub" ++ _}},
                 mcerlang:check({tprog, uses_timer, []}, ?O)),
    ?assertMatch({ok, _}, mcerlang:check({tprog, uses_timer, []},
                                         ?O#{stubs => #{{erlang, suspend_process, 1} => fun(_) -> true end}})),
    %% The model keeps spawn_request: its error does not offer a stub.
    ?assertError({mcerlang, {unsupported_bif, {erlang, spawn_request, 2}, _,
                             "the model keeps this call and cannot run it"}},
                 mcerlang:check(fun() -> spawn_request(fun() -> ok end, [monitor]) end, ?O)).
