%% The sandbox rule (mce_sandbox): checked code never reaches the host.
%% Every program here ran for real (or crashed the checker) before the
%% rule: its fun, apply, make_fun or spawn passed untranslated to the BIF.
%% Programs that would halt the VM are checked in a peer node, and the ones
%% that would write files write under a fresh temporary directory that the
%% test looks at afterwards.
-module(mce_sandbox_tests).
-include_lib("eunit/include/eunit.hrl").

-export([check_result/1]).

warm_up_test_() ->
    {timeout, 120, fun() -> mce_translate:ensure(tprog_sandbox) end}.

%%--------------------------------------------------------------------
%% Funs of modelled BIFs act on the model, as on the real VM
%%--------------------------------------------------------------------

fun_put_test() -> mce_otp_harness:same_result(tprog_sandbox, fun_put).
fun_erase_test() -> mce_otp_harness:same_result(tprog_sandbox, fun_erase).
apply_fun_put_test() -> mce_otp_harness:same_result(tprog_sandbox, apply_fun_put).
make_fun_put_test() -> mce_otp_harness:same_result(tprog_sandbox, make_fun_put).
foldl_fun_put_test() -> mce_otp_harness:same_result(tprog_sandbox, foldl_fun_put).
spawn_send_test() -> mce_otp_harness:same_result(tprog_sandbox, spawn_send).
fun_from_term_put_test() -> mce_otp_harness:same_result(tprog_sandbox, fun_from_term_put).
computed_fun_put_test() -> mce_otp_harness:same_result(tprog_sandbox, computed_fun_put).

%%--------------------------------------------------------------------
%% A module's on_load function never runs in the checker's VM: neither
%% when it is the entry's module (the entry check read the exports by
%% loading it) nor when checked code calls code:ensure_loaded/1 (which ran
%% natively).  Both ran tprog_onload:mark/0 here before.
%%--------------------------------------------------------------------

on_load_never_runs_test() ->
    Unload = fun() ->
                     code:purge(tprog_onload),
                     code:delete(tprog_onload),
                     code:purge(tprog_onload),
                     persistent_term:erase(tprog_onload_ran)
             end,
    Unload(),
    ?assertError({mcerlang, {nif_module, tprog_onload, _}},
                 mcerlang:check({tprog_onload, start, []}, #{progress => false})),
    ?assertEqual(false, persistent_term:get(tprog_onload_ran, false)),
    ?assertEqual(false, code:is_loaded(tprog_onload)),
    %% From checked code: the module cannot be checked (it loads native
    %% code), and the step that asked fails saying so.
    R = mcerlang:check({tprog_sandbox, ensure_onload_loaded, []}, #{progress => false}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {{mcerlang, {nif_module, tprog_onload, _}}, _}}}},
                 R),
    ?assertEqual(false, persistent_term:get(tprog_onload_ran, false)),
    ?assertEqual(false, code:is_loaded(tprog_onload)),
    Unload().

%%--------------------------------------------------------------------
%% Host I/O is refused, naming the call and where
%%--------------------------------------------------------------------

refused_io_test_() ->
    [{atom_to_list(F), fun() -> refused_write(F, Call) end}
     || {F, Call} <- [{fun_write_file, {file, write_file, 2}},
                      {prim_file_write, {prim_file, write_file, 2}},
                      {zip_create, {zip, create, 2}},
                      {map_os_cmd, {os, cmd, 1}},
                      {spawn_write_file, {file, write_file, 2}},
                      {make_fun_write_file, {file, write_file, 2}},
                      {term_fun_write_file, {file, write_file, 2}},
                      {parse_term_os_cmd, {os, cmd, 1}}]].

refused_write(F, Call) ->
    Path = temp_path(F),
    ?assertError({mcerlang, {unsupported_call, Call, _, _}},
                 mcerlang:check({tprog_sandbox, F, [Path]})),
    ?assertNot(filelib:is_file(Path)).

%% Checked code cannot call the checker's own modules, however it reaches
%% them; the API documented for checked programs stays callable.
checker_modules_refused_test_() ->
    [{atom_to_list(F), fun() -> checker_refused(F, Call, Where) end}
     || {F, Call, Where} <- [{checker_direct, {mce_pid, term, 1}, checker_direct},
                             {checker_apply, {mce_nif, stats, 1}, dynamic_call},
                             {checker_fun, {mce_pid, term, 1}, checker_fun}]].

%% Where: dynamic_call, or the program's function (any line).
checker_refused(F, Call, Where) ->
    try mcerlang:check({tprog_sandbox, F, []}) of
        R -> ?assertEqual(refused, R)
    catch
        error:{mcerlang, {unsupported_call, Call, {tprog_sandbox, Where, 0, Line}, _}}
          when is_integer(Line) -> ok;
        error:{mcerlang, {unsupported_call, Call, Where, _}} -> ok
    end.

%% Every module of the runtime is covered by the rule as mce_rt is: one of
%% the checker's modules, so never translated as a user module would be,
%% and a redirect target, so checked code calling it is not refused.  A
%% new mce_rt_* module missing from mce_rt:modules/0 or from the
%% translator's lists fails here.
runtime_family_covered_test() ->
    _ = application:load(mcerlang),
    {ok, AppModules} = application:get_key(mcerlang, modules),
    Family = [M || M <- AppModules, lists:prefix("mce_rt", atom_to_list(M))],
    ?assertEqual(lists:sort(Family), lists:sort(mce_rt:modules())),
    [begin
         ?assertNot(mce_translate:translatable(M)),
         [?assertEqual({M, F, A, pure}, {M, F, A, mce_translate:classify_call(M, F, A)})
          || {F, A} <- M:module_info(exports), F =/= module_info]
     end || M <- Family],
    ?assertEqual({unsupported, unsupported_call}, mce_translate:classify_call(mce_nif, stats, 1)).

%% Every call the translator redirects to the runtime names a function the
%% runtime exports: the BIFs of erlang and the other modules it models.
runtime_redirects_exported_test() ->
    Calls = [{erlang, F, A} || {F, A} <- erlang:module_info(exports)] ++
        [{mcerlang, choice, 1}, {mcerlang, prop, 1}, {mcerlang, probe, 2}, {net_adm, ping, 1},
         {timer, send_after, 2}, {timer, send_after, 3}, {timer, cancel, 1}, {os, timestamp, 0},
         {os, system_time, 0}, {os, system_time, 1}, {init, stop, 0}, {init, stop, 1}],
    Redirects = [{Call, RM, RF} || {M, F, A} = Call <- Calls,
                                   {redirect, RM, RF} <- [mce_translate:classify_call(M, F, A)],
                                   lists:member(RM, mce_rt:modules())],
    ?assert(length(Redirects) > 60),
    [begin
         ?assertEqual({module, RM}, code:ensure_loaded(RM)),
         ?assertEqual({Call, true}, {Call, erlang:function_exported(RM, RF, A)})
     end || {{_, _, A} = Call, RM, RF} <- Redirects].

runtime_called_directly_test_() ->
    [?_assertMatch({error, #{violation := {abnormal_exit, _,
                                           {result, {nonode@nohost, true, true}}}}},
                   mcerlang:check({tprog_sandbox, runtime_direct, []})),
     ?_assertMatch({error, #{violation := {abnormal_exit, _, {result, {nonode@nohost, true}}}}},
                   mcerlang:check({tprog_sandbox, runtime_apply, []}))].

checker_api_allowed_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, a}}}},
                 mcerlang:check({tprog_sandbox, checker_api, []})).

%% The location names the program's function and line for calls the
%% translator sees, and `dynamic_call', `make_fun' or `spawn' otherwise.
refusal_location_test() ->
    Path = temp_path(location),
    ?assertError({mcerlang, {unsupported_call, {file, write_file, 2},
                             {tprog_sandbox, fun_write_file, 1, _Line}, _}},
                 mcerlang:check({tprog_sandbox, fun_write_file, [Path]})),
    ?assertError({mcerlang, {unsupported_call, {file, write_file, 2}, spawn, _}},
                 mcerlang:check({tprog_sandbox, spawn_write_file, [Path]})).

entry_argument_fun_test() ->
    Path = temp_path(entry_arg),
    ?assertError({mcerlang, {unsupported_call, {file, write_file, 2}, entry_argument, _}},
                 mcerlang:check({tprog_sandbox, call_arg, [fun file:write_file/2, Path, <<"x">>]})),
    ?assertNot(filelib:is_file(Path)).

%% A closure entry's captured closure runs translated: the write is
%% refused, where the closure was written; one with arguments likewise.
%% (Decoding a closure entry compiles a probe of this module: seconds on a
%% busy machine.)
closure_entry_capture_test_() ->
    {timeout, 120,
     fun() ->
             Path = temp_path(closure),
             Write = fun() -> file:write_file(Path, <<"x">>) end,
             ?assertError({mcerlang, {unsupported_call, {file, write_file, 2},
                                      {?MODULE, _, 0, _}, _}},
                          mcerlang:check(fun() -> Write() end)),
             ?assertNot(filelib:is_file(Path)),
             WriteTo = fun(P) -> file:write_file(P, <<"x">>) end,
             ?assertError({mcerlang, {unsupported_call, {file, write_file, 2},
                                      {?MODULE, _, 1, _}, _}},
                          mcerlang:check(fun() -> WriteTo(Path) end)),
             ?assertNot(filelib:is_file(Path))
     end}.

%% A decoded fun of a modelled BIF, called by untranslated code
%% (erl_parse:map_anno/2), acts on the model, as on the VM: it is replaced
%% when decoded.
decoded_modelled_fun_test() ->
    Bin = term_to_binary(fun erlang:erase/1),
    {Pid, Ref} = spawn_monitor(tprog_sandbox, map_anno_decoded, [Bin]),
    Real = receive {'DOWN', Ref, process, Pid, R} -> R end,
    ?assertEqual({result, undefined}, Real),
    ?assertMatch({error, #{violation := {abnormal_exit, _, Real}}},
                 mcerlang:check({tprog_sandbox, map_anno_decoded, [Bin]})).

%% crypto's hashes are pure; its engines load shared libraries.
crypto_test() ->
    ?assertEqual([{result, crypto:hash(sha256, <<"x">>)}],
                 mce_otp_harness:checked(tprog_sandbox, crypto_hash)),
    ?assertError({mcerlang, {unsupported_call, {crypto, engine_list, 0}, _, _}},
                 mcerlang:check({tprog_sandbox, crypto_engine, []})).

%% A closure that reaches the program as data would run untranslated: it is
%% refused when decoded, although this module's name looks like the
%% checker's.
decoded_closure_test() ->
    Path = temp_path(decoded),
    Bin = term_to_binary(fun() -> file:write_file(Path, <<"x">>) end),
    ?assertError({mcerlang, {untranslated_closure, {?MODULE, _}, binary_to_term}},
                 mcerlang:check({tprog_sandbox, call_decoded, [Bin]})),
    ?assertNot(filelib:is_file(Path)).

%% A shell fun in the arguments would be evaluated by erl_eval, outside
%% the model: it runs translated instead, so its file write is refused.
shell_fun_argument_test() ->
    Path = temp_path(shell_fun),
    Text = "fun() -> file:write_file(\"" ++ Path ++ "\", <<\"x\">>) end.",
    {value, Fun, _} = erl_eval:exprs(element(2, erl_parse:parse_exprs(
                                                  element(2, erl_scan:string(Text)))), []),
    ?assertError({mcerlang, {unsupported_call, {file, write_file, 2}, _, _}},
                 mcerlang:check({tprog_sandbox, call0, [Fun]})),
    ?assertNot(filelib:is_file(Path)).

%%--------------------------------------------------------------------
%% halt, through every path, in a peer node
%%--------------------------------------------------------------------

halt_test_() ->
    {timeout, 120,
     fun() ->
             {ok, Peer, _Node} = peer:start_link(#{connection => standard_io,
                                                   args => ["-pa" | code:get_path()]}),
             try
                 Results = [{F, peer:call(Peer, ?MODULE, check_result, [{tprog_sandbox, F, Args}],
                                          60000)}
                            || {F, Args} <- [{fun_halt, []}, {apply_fun_halt, []},
                                             {make_fun_halt, []}, {spawn_halt, []},
                                             {foreach_fun_halt, []},
                                             {call0, [fun init:stop/0]}]],
                 %% halt is modelled (the simulated node stops, see
                 %% mce_procs_tests), whichever path reaches it; the peer
                 %% VM survives every one.
                 ?assertMatch([{fun_halt, {ok, _}}, {apply_fun_halt, {ok, _}},
                               {make_fun_halt, {ok, _}}, {spawn_halt, {ok, _}},
                               {foreach_fun_halt, {ok, _}}, {call0, {ok, _}}],
                              Results),
                 ?assertEqual(pong, peer:call(Peer, erlang, apply, [fun() -> pong end, []]))
             after
                 catch peer:stop(Peer)
             end
     end}.

%% Run in the peer: the check's result or its {mcerlang, _} error.
check_result(Entry) ->
    try mcerlang:check(Entry)
    catch error:{mcerlang, Reason} -> {error, Reason}
    end.

%%--------------------------------------------------------------------
%% Executor bounds
%%--------------------------------------------------------------------

%% Atoms are never freed: the atoms checked code makes are bounded per
%% check, well before the VM's table (1,048,576 by default) would be full.
%% Run in a peer node, so that this VM's table does not keep them.
atom_budget_test_() ->
    {timeout, 120,
     fun() ->
             {ok, Peer, _Node} = peer:start_link(#{connection => standard_io,
                                                   args => ["-pa" | code:get_path()]}),
             try
                 Budget = mce_sandbox:atom_budget(),
                 %% Translating the program makes atoms of its own.
                 {ok, _} = peer:call(Peer, ?MODULE, check_result,
                                     [{tprog_sandbox, many_atoms, [10]}], 60000),
                 Before = peer:call(Peer, erlang, system_info, [atom_count]),
                 ?assertMatch({error, {atom_budget, Budget, _, _}},
                              peer:call(Peer, ?MODULE, check_result,
                                        [{tprog_sandbox, many_atoms, [Budget + 50000]}], 60000)),
                 After = peer:call(Peer, erlang, system_info, [atom_count]),
                 ?assert(After - Before =< Budget + 1000),
                 ?assertMatch({error, {atom_budget, Budget, _, _}},
                              peer:call(Peer, ?MODULE, check_result,
                                        [{tprog_sandbox, many_atoms_term, [Budget + 1000]}], 60000))
             after
                 catch peer:stop(Peer)
             end
     end}.

%% A few atoms are fine.
few_atoms_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_sandbox, many_atoms, [10]})).

%% A step that builds a term larger than the heap limit (here the memory
%% cap, 40 MB) stops the check, naming the process, instead of the VM.
step_heap_limit_test() ->
    ?assertError({mcerlang, {step_heap_limit, _, {max_heap_size, _}}},
                 mcerlang:check({tprog_sandbox, big_list, [8000000]}, #{memory => 40000000})).

%% A binary appended to piece by piece in one step (1.5 GB in 1 MB pieces)
%% is off the heap, and no one call is large: the watchdog sums the
%% worker's binaries and stops the step near the cap (200 MB), long before
%% 1.5 GB.
step_piecewise_binary_limit_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 200000000,
             {Time, Result} =
                 timer:tc(fun() ->
                                  try mcerlang:check({tprog_sandbox, piecewise_binary, [1500]},
                                                     #{memory => Cap, max_reductions => 1 bsl 40})
                                  catch error:E -> {raised, E}
                                  end
                          end),
             ?assertMatch({raised, {mcerlang, {step_heap_limit, _, {binary, _, Cap}}}}, Result),
             {raised, {mcerlang, {step_heap_limit, _, {binary, Bytes, Cap}}}} = Result,
             %% Stopped within a few polls of the cap.
             ?assert(Bytes < 3 * Cap),
             ?assert(Time < 20000000)
     end}.

%% The memory cap counts the executor besides the state store: the worker
%% holds the entry's 40 MB binary argument for the whole check (off-heap,
%% as the caller does), the store its encoding in the initial state.  With
%% a 60 MB cap, the store alone stays under it, the two together do not:
%% the check stops at its first memory tick (every 256 steps).
memory_cap_counts_the_executor_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 60 bsl 20,
             Bin = binary:copy(<<7>>, 40 bsl 20),
             R = mcerlang:check({tprog_sandbox, count_down, [Bin, 600]},
                                #{memory => Cap, property => deadlock}),
             ?assertMatch({inconclusive, {memory, Cap}, _}, R),
             {_, _, #{memory_used := Store}} = R,
             ?assert(Store > 40 bsl 20),
             ?assert(Store < Cap),
             %% Without a cap the same check completes.
             ?assertMatch({ok, _}, mcerlang:check({tprog_sandbox, count_down, [Bin, 600]},
                                                  #{property => deadlock}))
     end}.

%% A path that does not exist, in one directory per test run (a file there
%% would be a write that escaped the model).
temp_path(Tag) ->
    Dir = filename:join(["/tmp", "mce_sandbox_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    filename:join(Dir, atom_to_list(Tag) ++ "_" ++
                      integer_to_list(erlang:unique_integer([positive]))).

%% Binaries are not on the heap: the BIFs that build one of a size known
%% beforehand check it against the same limit (here 40 MB).
step_binary_limit_test() ->
    ?assertError({mcerlang, {step_heap_limit, _, {binary, 100000000, _}}},
                 mcerlang:check({tprog_sandbox, big_binary_copy, [100000000]},
                                #{memory => 40000000})),
    ?assertError({mcerlang, {step_heap_limit, _, {binary, 100000000, _}}},
                 mcerlang:check({tprog_sandbox, big_iolist_binary, [100]},
                                #{memory => 40000000})).
