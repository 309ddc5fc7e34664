%% Translator tests.  Differential: each deterministic program runs on the
%% real VM and under the checker; both must end with the same exit reason.
-module(mce_translate_tests).
-include_lib("eunit/include/eunit.hrl").

%% Shared with mce_translate_bind_tests: how a real and a checked exit
%% reason are compared.
-export([strip_location/1]).
%% The differential programs, also run by mce_reduction_tests.
-export([diff_cases/0]).

% Translating the test programs (and the library modules they use) on a
% cold VM takes seconds: done first, under a generous time limit, so the
% tests below measure behaviour, not compilation.
warm_up_test_() ->
    {timeout, 120,
     fun() ->
             [mce_translate:ensure(M) || M <- [tprog, tprog_helper]],
             [mce_translate:ensure_library(L) || L <- [lists, maps, dict]]
     end}.

differential_test_() ->
    [{atom_to_list(F) ++ "/" ++ integer_to_list(length(A)), fun() -> same_result(F, A) end}
     || {F, A} <- diff_cases()].

%% The differential programs: {Function of tprog, Arguments}.
-spec diff_cases() -> [{atom(), list()}].
diff_cases() ->
    [{diff_nontail, []}, {diff_case_export, []}, {diff_cross_module, []},
     {diff_selective, []}, {diff_bound_pattern, []}, {diff_after_zero, []},
     {diff_sum, [4]}, {diff_fun_call, []}, {diff_dynamic_call, []},
     {diff_block_if, [true]}, {diff_block_if, [false]}, {diff_badarith, []},
     {diff_nested_args, []}, {diff_receive_in_list, []}, {diff_case_head, []},
     {diff_andalso, [true]}, {diff_andalso, [false]}, {diff_orelse, []},
     {diff_andalso_badarg, []}, {diff_lc, []}, {diff_lc_filter_nested, []},
     {diff_lc_bad_generator, []}, {diff_self_in_receive_guard, []},
     {diff_self_in_head_guard, []}, {diff_eval_order, []}, {diff_map_record, []},
     {diff_binop_chain, []}, {diff_fun_arg, []},
     {diff_blocking_in_case_clause_expr, []},
     {diff_try_catch_after_resume, []}, {diff_try_of, []},
     {diff_try_after_once_normal, []}, {diff_try_after_once_exception, []},
     {diff_try_no_match_reraises, []}, {diff_try_exception_in_of_not_caught, []},
     {diff_try_class_and_stack, []}, {diff_catch_suspending, []},
     {diff_nested_try, []}, {diff_try_in_loop, []},
     {diff_lists_hofs, []}, {diff_lists_filter_sort, []}, {diff_maps_fold, []},
     {diff_dict_fold, []}, {diff_library_via_variable_fun, []},
     {diff_library_dynamic_module, []}, {diff_library_pure_fun_stays_direct, []},
     %% Issue 4: links, trap_exit, exit/2, registry, process dictionary.
     {diff_trap_exit_child_crash, []}, {diff_link_normal_exit_harmless, []},
     {diff_exit2_kill_trapping_target, []}, {diff_exit2_normal_ignored, []},
     {diff_exit2_trapped_becomes_message, []}, {diff_exit2_kills_untrapping, []},
     {diff_exit_self_normal, []}, {diff_exit_self_kill_uncatchable, []},
     {diff_exit_self_reason, []}, {diff_exit_self_trapping, []},
     {diff_link_to_dead, []}, {diff_unlink_stops_cascade, []},
     {diff_registry, []}, {diff_register_errors, []},
     {diff_registered_process_dies, []}, {diff_process_dictionary, []},
     {diff_dictionary_is_per_process, []},
     {diff_monitor_down_reason, []}, {diff_monitor_dead_process, []},
     {diff_monitor_by_name, []}, {diff_demonitor_flush, []},
     {diff_demonitor_active, []}, {diff_refs, []}, {diff_timer_sleep, []},
     {diff_spawn_variants, []},
     %% Aliases, timers, unique integers.
     {diff_alias_send, []}, {diff_alias_reply, []}, {diff_monitor_alias, []},
     {diff_monitor_alias_down, []}, {diff_send_after, []}, {diff_start_timer, []},
     {diff_cancel_timer, []}, {diff_cancel_timer_async, []}, {diff_timer_to_name, []},
     {diff_timer_to_dead_process, []}, {diff_timer_module, []},
     {diff_unique_integer, []}, {diff_process_info_self, []},
     {diff_process_info_other, []}, {diff_send3, []},
     %% ETS
     {diff_ets_set, []}, {diff_ets_bags, []}, {diff_ets_ordered_set, []},
     {diff_ets_match_select, []}, {diff_ets_access, []}, {diff_ets_owner_death, []},
     {diff_ets_heir, []}, {diff_ets_give_away, []}].

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

%% Only the root process's exits are compared (the real VM's side sees
%% only that one); other processes' abnormal exits are set aside.
checked_exits(F, Args, Seen) ->
    checked_exits(F, Args, Seen, []).

checked_exits(F, Args, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1),
    case mcerlang:check({tprog, F, Args}, #{treat_as_normal => [normal | Seen ++ Others]}) of
        {ok, _} when Seen =:= [] -> [normal];
        {ok, _} -> [strip_location(R) || R <- lists:reverse(Seen)];
        {error, #{violation := {abnormal_exit, Root, Reason}}} ->
            checked_exits(F, Args, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _Other, Reason}}} ->
            checked_exits(F, Args, Seen, [Reason | Others])
    end.

%% Stack traces differ in file paths only between the runs; keep the
%% reason and the top frame's module, function and arity.  A frame of a
%% compiler-generated function ('-f/0-lc$^0/1-0-' for a comprehension) is
%% named after the function that contains it, as the checker's are.
strip_location({Reason, [{M, Fn, A, _} | _]}) when is_atom(M) ->
    {Reason, {M, enclosing_function(Fn, arity(A))}};
strip_location(Reason) -> Reason.

enclosing_function(Fn, A) ->
    case re:run(atom_to_list(Fn), "^-([^/]+)/([0-9]+)-", [{capture, all_but_first, list}]) of
        {match, [Name, Arity]} -> {list_to_atom(Name), list_to_integer(Arity)};
        nomatch -> {Fn, A}
    end.

arity(A) when is_list(A) -> length(A);
arity(A) -> A.

nontail_receive_translates_to_frames_test() ->
    {ok, Src} = mcerlang:translate(tprog),
    ?assertMatch({match, _}, re:run(Src, "-module\\('mce\\$tprog'\\)")),
    ?assertMatch({match, _}, re:run(Src, "mce_rt:suspend")),
    ?assertMatch({match, _}, re:run(Src, "'\\$mce_k[0-9]+'")).

pure_library_calls_stay_direct_test() ->
    {ok, Src} = mcerlang:translate(tprog),
    %% The fun doubling numbers cannot block: lists:map stays the real one.
    ?assertMatch({match, _}, re:run(Src, "lists:map\\(fun\\(X\\)")),
    ?assertMatch({match, _}, re:run(Src, "'mce\\$lists':map\\(")).

nif_module_refused_test() ->
    ?assertError({mcerlang, {nif_module, tprog_nif, _}}, mcerlang:check({tprog_nif, start, []})).

%% A module recompiled between two checks is translated again.
recompiled_module_is_retranslated_test() ->
    Dir = filename:join(["/tmp", "mce_recompile_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Src = filename:join(Dir, "tprog_changing.erl"),
    Write = fun(Body) ->
                    ok = file:write_file(Src, ["-module(tprog_changing).\n-export([start/0]).\n",
                                               "start() -> ", Body, ".\n"]),
                    {ok, tprog_changing} = compile:file(Src, [debug_info, {outdir, Dir}]),
                    code:purge(tprog_changing),
                    {module, tprog_changing} = code:load_abs(filename:join(Dir, "tprog_changing"))
            end,
    true = code:add_patha(Dir),
    try
        Write("receive never -> ok end"),
        ?assertMatch({error, #{violation := deadlock}}, mcerlang:check({tprog_changing, start, []})),
        Write("ok"),
        ?assertMatch({ok, _}, mcerlang:check({tprog_changing, start, []}))
    after
        code:del_path(Dir)
    end.

%% A module the program reaches only by a dynamic call, never loaded in
%% the checker's VM (its translation runs, from its .beam file), changed on
%% disk between two checks: the second check runs the new code.  Within a
%% check what the code path says about a module is asked once
%% (mce_translate:check_memo/2), so this is the memo's boundary.
unloaded_callee_recompiled_between_checks_test() ->
    Dir = filename:join(["/tmp", "mce_dyn_recompile_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Compile = fun(Name, Body) ->
                      Src = filename:join(Dir, Name ++ ".erl"),
                      ok = file:write_file(Src, ["-module(", Name, ").\n-export([start/0, run/0]).\n",
                                                 Body]),
                      {ok, _} = compile:file(Src, [debug_info, {outdir, Dir}])
              end,
    Compile("tprog_dyn_caller", "start() -> M = list_to_atom(\"tprog_dyn_callee\"), M:run().\n"
                                "run() -> ok.\n"),
    Callee = fun(Body) -> Compile("tprog_dyn_callee", ["start() -> ok.\nrun() -> ", Body, ".\n"]) end,
    true = code:add_patha(Dir),
    try
        Callee("receive never -> ok end"),
        ?assertMatch({error, #{violation := deadlock}}, mcerlang:check({tprog_dyn_caller, start, []})),
        ?assertEqual(false, code:is_loaded(tprog_dyn_callee)),
        Callee("ok"),
        ?assertMatch({ok, _}, mcerlang:check({tprog_dyn_caller, start, []}))
    after
        code:del_path(Dir)
    end.

translation_is_cached_test() ->
    mcerlang:translate(tprog),
    {module, _} = code:ensure_loaded('mce$tprog'),
    Before = erlang:md5(term_to_binary('mce$tprog':module_info(md5))),
    {ok, _} = mcerlang:check({tprog, all_done, []}),
    ?assertEqual(Before, erlang:md5(term_to_binary('mce$tprog':module_info(md5)))).

%% Once refused, now translated: a receive whose guard uses self() (nobody
%% sends, so it deadlocks) and a receive inside an argument.
self_in_guard_works_test() ->
    ?assertMatch({error, #{violation := deadlock}}, check_bad(self_in_guard)).

receive_in_argument_works_test() ->
    ?assertMatch({error, #{violation := deadlock}}, check_bad(receive_in_argument)).

blocking_fun_in_library_call_detected_test() ->
    ?assertError({mcerlang, {receive_reached_through_untranslated_code, _, _, _}},
                 mcerlang:check({tprog_lossy, blocking_in_foreach, []})).

check_bad(F) ->
    Mod = list_to_atom("tprog_bad_" ++ atom_to_list(F)),
    mcerlang:check({Mod, F, []}).

%% `P = Call()' last in a body, the call blocking: checked like the real VM
%% runs it (the translator used to refuse it).
last_expression_match_of_a_blocking_call_test() ->
    ?assertEqual(ok, tprog_last:main()),
    ?assertMatch({ok, _}, mcerlang:check({tprog_last, main, []}, #{progress => false})),
    Real = (catch tprog_last:wrong()),
    ?assertMatch({'EXIT', {result, {'EXIT', {{badmatch, 1}, _}}}}, Real),
    {error, #{violation := {abnormal_exit, _, {result, Checked}}}} =
        mcerlang:check({tprog_last, wrong, []}, #{progress => false}),
    ?assertMatch({'EXIT', {{badmatch, 1}, [{tprog_last, mismatch, 1, _} | _]}}, Checked).

%% `maybe' (OTP 25: behind a feature flag, so the module loads only in a
%% VM started with -enable-feature maybe_expr): refused with the function
%% and line, never run untranslated.  Checked in such a VM of its own.
maybe_expression_refused_test_() ->
    {timeout, 120,
     fun() ->
             Dir = filename:join("/tmp", "mce_maybe_" ++ os:getpid()),
             ok = filelib:ensure_path(Dir),
             Src = filename:join(Dir, "tprog_maybe.erl"),
             ok = file:write_file(Src, "-module(tprog_maybe).\n-feature(maybe_expr, enable).\n"
                                  "-export([main/0]).\nmain() ->\n    maybe\n        P = self(),\n"
                                  "        P ! hi\n    end,\n    receive hi -> ok end.\n"),
             {ok, tprog_maybe} = compile:file(Src, [debug_info, {outdir, Dir}, return_errors]),
             Ebin = filename:dirname(code:which(mcerlang)),
             Cmd = io_lib:format("erl -noshell -enable-feature maybe_expr -pa ~ts -pa ~ts -eval "
                                 "'io:format(\"~~p\", [catch mcerlang:check({tprog_maybe, main, []}, "
                                 "#{progress => false})]), halt().'", [Ebin, Dir]),
             Out = os:cmd(lists:flatten(Cmd)),
             ?assertMatch({match, _},
                          re:run(Out, "unsupported_construct,maybe_expression,\\{tprog_maybe,main,0,5\\}"))
     end}.

%% Whether a call blocks is known for modules translated by an earlier
%% check too, also for calls inside funs (the try around it then catches
%% an exit raised after the process resumes).
fun_try_around_cached_module_call_test() ->
    ?assertEqual(ok, tprog_fun_try:main()),
    ?assertMatch({ok, _}, mcerlang:check({tprog_mcall, main, []},
                                         #{timeouts => when_idle, progress => false})),
    ?assertMatch({ok, _}, mcerlang:check({tprog_fun_try, main, []},
                                         #{timeouts => when_idle, progress => false})).

%% Record defaults (owner = self(), tab = ets:new(...)) are translated like
%% the module's other code: the real VM and the checker agree.
record_defaults_test_() ->
    [{atom_to_list(F),
      fun() ->
              {_, Ref} = spawn_monitor(tprog_records, F, []),
              Real = receive {'DOWN', Ref, process, _, R} -> R end,
              {error, #{violation := {abnormal_exit, _, Checked}}} =
                  mcerlang:check({tprog_records, F, []}, #{progress => false}),
              ?assertEqual(Real, Checked)
      end} || F <- [main, table]].
