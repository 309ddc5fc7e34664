%% Translator tests.  Differential: each deterministic program runs on the
%% real VM and under the checker; both must end with the same exit reason.
-module(mce_translate_tests).
-include_lib("eunit/include/eunit.hrl").

differential_test_() ->
    Cases = [{diff_nontail, []}, {diff_case_export, []}, {diff_cross_module, []},
             {diff_selective, []}, {diff_bound_pattern, []}, {diff_after_zero, []},
             {diff_sum, [4]}, {diff_fun_call, []}, {diff_dynamic_call, []},
             {diff_block_if, [true]}, {diff_block_if, [false]}, {diff_badarith, []}],
    [{atom_to_list(F) ++ "/" ++ integer_to_list(length(A)), fun() -> same_result(F, A) end}
     || {F, A} <- Cases].

same_result(F, Args) ->
    Real = real_exit(F, Args),
    Checked = checked_exits(F, Args),
    ?assertEqual([Real], Checked).

real_exit(F, Args) ->
    {Pid, Ref} = spawn_monitor(tprog, F, Args),
    receive {'DOWN', Ref, process, Pid, Reason} -> strip_location(Reason) end.

%% Every exit reason of the root process over all interleavings: for a
%% deterministic program there must be exactly one, the real VM's.  The
%% abnormal-exit property stops at the first; treating each found reason as
%% normal and re-checking collects them all.
checked_exits(F, Args) ->
    checked_exits(F, Args, []).

checked_exits(F, Args, Seen) when length(Seen) < 5 ->
    case mcerlang:check({tprog, F, Args}, #{treat_as_normal => [normal | Seen]}) of
        {ok, _} -> [strip_location(R) || R <- lists:reverse(Seen)];
        {error, #{violation := {abnormal_exit, _, Reason}}} ->
            checked_exits(F, Args, [Reason | Seen])
    end.

%% Stack traces differ in file paths only between the runs; keep the
%% reason and the top frame's module, function and arity.
strip_location({Reason, [{M, Fn, A, _} | _]}) when is_atom(M) -> {Reason, {M, Fn, arity(A)}};
strip_location(Reason) -> Reason.

arity(A) when is_list(A) -> length(A);
arity(A) -> A.

nontail_receive_translates_to_frames_test() ->
    {ok, Src} = mcerlang:translate(tprog),
    ?assertMatch({match, _}, re:run(Src, "-module\\('mce\\$tprog'\\)")),
    ?assertMatch({match, _}, re:run(Src, "mce_rt:suspend")),
    ?assertMatch({match, _}, re:run(Src, "'\\$mce_k[0-9]+'")).

translation_is_cached_test() ->
    mcerlang:translate(tprog),
    {module, _} = code:ensure_loaded('mce$tprog'),
    Before = erlang:md5(term_to_binary('mce$tprog':module_info(md5))),
    {ok, _} = mcerlang:check({tprog, all_done, []}),
    ?assertEqual(Before, erlang:md5(term_to_binary('mce$tprog':module_info(md5)))).

self_in_guard_refused_test() ->
    ?assertError({mcerlang, {unsupported_construct, {process_bif_in_guard, self},
                             {tprog_bad_self_in_guard, self_in_guard, 0, _}}},
                 force_retranslate_and_check(self_in_guard)).

receive_in_argument_refused_test() ->
    ?assertError({mcerlang, {unsupported_construct, receive_inside_expression,
                             {tprog_bad_receive_in_argument, receive_in_argument, 0, _}}},
                 force_retranslate_and_check(receive_in_argument)).

blocking_fun_in_library_call_detected_test() ->
    ?assertError({mcerlang, {receive_reached_through_untranslated_code, _, _, _}},
                 mcerlang:check({tprog_lossy, blocking_in_foreach, []})).

%% The translator refuses a whole module when one function is untranslatable;
%% these programs live in their own modules for that reason.
force_retranslate_and_check(F) ->
    Mod = list_to_atom("tprog_bad_" ++ atom_to_list(F)),
    mcerlang:check({Mod, F, []}).
