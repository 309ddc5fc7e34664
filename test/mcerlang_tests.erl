%% Tests of the public API: verdicts of the examples, built-in properties,
%% limits, reproducibility, and clear errors for bad input.
-module(mcerlang_tests).
-include_lib("eunit/include/eunit.hrl").

% Translating the test programs (and the library modules they use) on a
% cold VM takes seconds: done first, under a generous time limit, so the
% tests below measure behaviour, not compilation.
warm_up_test_() ->
    {timeout, 120,
     fun() ->
             [mce_translate:ensure(M) || M <- [tprog, tprog_helper, pingpong, dining, racy_child, client_server]],
             [mce_translate:ensure_library(L) || L <- [lists, maps, dict]]
     end}.

%%--------------------------------------------------------------------
%% Examples
%%--------------------------------------------------------------------

%% Ping-pong is deterministic once both processes run, so its space is a
%% single path: every transition reaches a new state, kept or passed through
%% (cut_states); with every cut state kept, all are counted in `states'.
%% A counterexample names the user's source file as OTP names its own
%% (gen_server.erl), without the directory: the translated module must not
%% depend on where the checkout is, or state counts would (the round-12
%% note in docs/ARCHITECTURE.md, "Reductions: the evidence").
source_base_name_test() ->
    {error, Cex} = mcerlang:check({counter_server, start, [2, 1]}, #{granularity => small}),
    Files = lists:usort([File || #{outcome := {waiting, {M, _, _, File, _}}} <- maps:get(trace, Cex),
                                 M =:= counter_server orelse M =:= gen_server]),
    ?assertEqual(["counter_server.erl", "gen_server.erl"], Files).

pingpong_holds_test() ->
    {ok, #{states := S, passed_states := P, transitions := T}} =
        mcerlang:check({pingpong, start, [3]}),
    ?assert(S > 1),
    ?assert(P > 0),
    ?assertEqual(S + P, T + 1),
    ?assertMatch({ok, #{states := 10, passed_states := 0, transitions := 9}},
                 mcerlang:check({pingpong, start, [3]}, #{cut_states => store})).

dining_deadlock_test() ->
    {error, Cex} = mcerlang:check({dining, start, [3]}),
    ?assertMatch(#{violation := deadlock}, Cex),
    #{final_state := Final} = Cex,
    %% The circular wait: three philosophers and three forks stuck.
    ?assertEqual(6, length(Final)),
    ?assert(lists:all(fun(#{status := S}) -> S =:= waiting end, Final)),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "Violation: deadlock")),
    ?assertMatch({match, _}, re:run(Text, "dining.erl:[0-9]+")).

racy_child_crash_test() ->
    {error, Cex} = mcerlang:check({racy_child, start, []}),
    #{violation := {abnormal_exit, Pid, Reason}} = Cex,
    ?assert(is_pid(Pid)),
    ?assertMatch({function_clause, [{racy_child, handle_first, [{job, 21, _}], _} | _]}, Reason).

%% Differential: every outcome the real VM produces is one the checker
%% explores (42, or the crash it reports); the run queue's order usually
%% gives 42, and the crash needs another interleaving, which is what the
%% checker is for.
racy_child_real_vm_outcomes_test() ->
    Outcomes = [begin
                    {Pid, Ref} = spawn_monitor(fun() -> exit({result, racy_child:start()}) end),
                    receive {'DOWN', Ref, process, Pid, R} -> R end
                end || _ <- lists:seq(1, 50)],
    ?assert(lists:member({result, 42}, Outcomes)),
    ?assertEqual([], [O || O <- Outcomes,
                           O =/= {result, 42},
                           not is_function_clause_in_worker(O)]).

is_function_clause_in_worker({function_clause, [{racy_child, handle_first, _, _} | _]}) -> true;
is_function_clause_in_worker(_) -> false.

%%--------------------------------------------------------------------
%% Properties
%%--------------------------------------------------------------------

normal_termination_is_not_deadlock_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog, all_done, []})).

orphan_server_is_deadlock_test() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog, orphan_server, []})).

after_infinity_never_fires_test() ->
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog, after_infinity, []})).

timeout_may_fire_test() ->
    %% Untimed semantics: `after 100' may fire before the ping arrives.
    {error, Cex} = mcerlang:check({tprog, timeout_race, []}),
    ?assertMatch(#{violation := {abnormal_exit, _, timed_out}}, Cex),
    #{trace := Trace} = Cex,
    ?assert(lists:any(fun(#{action := A}) -> A =:= timeout end, Trace)).

%% With timeouts => when_idle an `after' fires only when nothing else can
%% happen: the ping is always received first.
timeouts_when_idle_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog, timeout_race, []}, #{timeouts => when_idle})),
    %% Still fires when it is the only thing that can happen.
    ?assertMatch({ok, _}, mcerlang:check({tprog, diff_after_zero, []},
                                         #{timeouts => when_idle,
                                           treat_as_normal => [{result, timeout}]})),
    ?assertError({mcerlang, {bad_option_value, timeouts, sometimes, _}},
                 mcerlang:check({tprog, timeout_race, []}, #{timeouts => sometimes})),
    %% `after 0' is a poll, not time passing: it fires at once under either
    %% option, so the message can be missed (as on the real VM, usually).
    Real = lists:usort([catch tprog:after_zero_poll() || _ <- lists:seq(1, 20)]),
    ?assert(lists:member({'EXIT', {result, missed}}, Real)),
    [?assertEqual({Timeouts, [{result, got}, {result, missed}]},
                  {Timeouts, lists:sort(all_root_exits({tprog, after_zero_poll, []},
                                                       [], #{timeouts => Timeouts}))})
     || Timeouts <- [any, when_idle]].

choice_explores_every_alternative_test() ->
    Outcomes = all_root_exits({tprog, choose, []}),
    ?assertEqual([{result, left}, {result, right}], lists:sort(Outcomes)),
    ?assertEqual([{result, 10}, {result, 11}],
                 lists:sort(all_root_exits({tprog, choose_and_wait, []}))),
    %% Run normally, choice takes the first alternative.
    ?assertEqual(left, mcerlang:choice([fun() -> left end, fun() -> right end])),
    {error, Cex} = mcerlang:check({tprog, choose, []}, #{treat_as_normal => [{result, left}]}),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "takes alternative 2 of mcerlang:choice/1")).

all_root_exits(Entry) ->
    all_root_exits(Entry, []).

all_root_exits(Entry, Seen) ->
    all_root_exits(Entry, Seen, #{}).

%% Only the root's exits are collected (the real VM's side sees that one);
%% other processes' deaths (a victim of exit/2, of timer:kill_after) are
%% set aside as normal.
all_root_exits(Entry, Seen, Opts) ->
    all_root_exits(Entry, Seen, [], Opts).

all_root_exits(Entry, Seen, Others, Opts) ->
    Root = mce_pid:term(1),
    case mcerlang:check(Entry, Opts#{treat_as_normal => [normal | Seen ++ Others]}) of
        {ok, _} -> Seen;
        {error, #{violation := {abnormal_exit, Root, R}}} ->
            all_root_exits(Entry, [R | Seen], Others, Opts);
        {error, #{violation := {abnormal_exit, _, R}}} ->
            all_root_exits(Entry, Seen, [R | Others], Opts)
    end.

order_race_found_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, wrong_order}}},
                 mcerlang:check({tprog, order_race, []})).

abnormal_exit_can_be_switched_off_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog, order_race, []},
                                         #{property => deadlock})).

treat_as_normal_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog, order_race, []},
                                         #{treat_as_normal => [normal, wrong_order]})),
    ?assertMatch({ok, _}, mcerlang:check({tprog, shutdown_exit, []})).

link_cascade_test() ->
    {error, Cex} = mcerlang:check({tprog, link_cascade, []}),
    ?assertMatch(#{violation := {abnormal_exit, _, child_failed}}, Cex),
    %% The parent was linked and did not trap exits: it is gone too.
    ?assertMatch(#{final_state := []}, Cex).

link_cascade_real_vm_test() ->
    {Pid, Ref} = spawn_monitor(tprog, link_cascade, []),
    receive {'DOWN', Ref, process, Pid, R} -> ?assertEqual(child_failed, R) end.

output_is_recorded_not_printed_test() ->
    {error, #{trace := [Step]}} = mcerlang:check({tprog, prints_then_crashes, []}),
    ?assertEqual(["about to fail 42\n"], maps:get(output, Step)).

%%--------------------------------------------------------------------
%% Limits and reproducibility
%%--------------------------------------------------------------------

%% The limit counts the states met, kept or passed through (cut_states): it
%% bounds the work.
max_states_test() ->
    {inconclusive, max_states, #{states := S, passed_states := P}} =
        mcerlang:check({tprog, counter, [4]}, #{max_states => 5}),
    ?assertEqual(5, S + P),
    ?assertMatch({inconclusive, max_states, #{states := 5}},
                 mcerlang:check({tprog, counter, [4]}, #{max_states => 5, cut_states => store})).

max_depth_test() ->
    ?assertMatch({inconclusive, max_depth, #{max_depth := 3}},
                 mcerlang:check({tprog, counter, [4]}, #{max_depth => 3})).

max_time_accepted_test() ->
    ?assertMatch({ok, _}, mcerlang:check({pingpong, start, [1]}, [{max_time, 60000}])).

state_counts_are_reproducible_test() ->
    Runs = [mcerlang:check({tprog, counter, [4]}) || _ <- [1, 2, 3]],
    Counts = [{S, T} || {ok, #{states := S, transitions := T}} <- Runs],
    ?assertMatch([_, _, _], Counts),
    ?assertEqual(1, length(lists:usort(Counts))).

%% Four senders, each a separate process: the interleavings of starts and
%% deliveries give a known number of states (counted by hand for N = 2 and
%% checked against this run's count for larger N staying stable).
counter_state_count_test() ->
    {ok, #{states := S2}} = mcerlang:check({tprog, counter, [2]}),
    {ok, #{states := S3}} = mcerlang:check({tprog, counter, [3]}),
    ?assert(S3 > S2).

state_counts_do_not_depend_on_table_size_test() ->
    Counts = [begin
                  {ok, #{states := S, transitions := T}} =
                      mcerlang:check({client_server, start, [3, 2]}, #{table_size => Size}),
                  {S, T}
              end || Size <- [1, 64, 4096, 1 bsl 20]],
    ?assertEqual(1, length(lists:usort(Counts))),
    {error, #{stats := #{states := D1}}} = mcerlang:check({dining, start, [3]}, #{table_size => 1}),
    {error, #{stats := #{states := D2}}} = mcerlang:check({dining, start, [3]}, #{table_size => 1 bsl 16}),
    ?assertEqual(D1, D2).

%% Hand-counted reference: the bench helper's independent Python
%% enumerator of the same semantics gave 484 states, 1005 transitions
%% (the whole state space: without partial-order reduction).
client_server_state_count_test() ->
    ?assertMatch({ok, #{states := 484, transitions := 1005}},
                 mcerlang:check({client_server, start, [3, 2]}, #{reduction => false, symmetry => false})).

no_deadlock_property_explores_past_stuck_states_test() ->
    {ok, #{states := S}} = mcerlang:check({dining, start, [3]}, #{property => none}),
    {error, #{stats := #{states := Partial}}} = mcerlang:check({dining, start, [3]}),
    ?assert(S > Partial).

bytes_per_state_is_measured_from_used_memory_test() ->
    {ok, #{bytes_per_state := B, memory_used := U, memory := M}} =
        mcerlang:check({client_server, start, [4, 2]}, #{symmetry => false}),
    ?assert(U =< M),
    ?assert(B < 1000).

same_counterexample_every_run_test() ->
    {error, C1} = mcerlang:check({dining, start, [3]}),
    {error, C2} = mcerlang:check({dining, start, [3]}),
    ?assertEqual(maps:get(trace, C1), maps:get(trace, C2)).

checks_run_concurrently_test() ->
    Self = self(),
    Pids = [spawn(fun() -> Self ! {self(), mcerlang:check({tprog, counter, [4]})} end)
            || _ <- [1, 2, 3, 4]],
    Results = [receive {P, R} -> R end || P <- Pids],
    ?assertEqual(1, length(lists:usort([S || {ok, #{states := S}} <- Results]))).

%%--------------------------------------------------------------------
%% Bad input
%%--------------------------------------------------------------------

undefined_module_test() ->
    ?assertError({mcerlang, {undefined_module, no_such_module, _}},
                 mcerlang:check({no_such_module, start, []})).

undefined_function_test() ->
    ?assertError({mcerlang, {undefined_function, {pingpong, nope, 2}}},
                 mcerlang:check({pingpong, nope, [a, b]})).

bad_entry_test() ->
    ?assertError({mcerlang, {bad_entry, 42, _}}, mcerlang:check(42)),
    ?assertError({mcerlang, {bad_entry, _, {arity, 1}, _}},
                 mcerlang:check(fun pingpong:start/1)).

external_fun_entry_test() ->
    ?assertMatch({ok, _}, mcerlang:check(fun tprog:all_done/0)).

%% Funs typed in the shell carry their code: they are checked as entries,
%% with their captured variables.
shell(Text) ->
    {ok, Ts, _} = erl_scan:string(Text),
    {ok, Es} = erl_parse:parse_exprs(Ts),
    {value, V, _} = erl_eval:exprs(Es, []),
    V.

shell_fun_entry_test() ->
    ?assertMatch({ok, #{states := 3, passed_states := 7}},
                 shell("N = 3, mcerlang:check(fun() -> pingpong:start(N) end).")),
    ?assertMatch({error, #{violation := deadlock}},
                 shell("mcerlang:check(fun() -> dining:start(3) end).")),
    ?assertMatch({error, #{violation := {abnormal_exit, _, got_hi}}},
                 shell("mcerlang:check(fun() -> Me = self(), spawn(fun() -> Me ! hi end), "
                       "receive hi -> exit(got_hi) end end).")).

shell_fun_calling_shell_only_function_refused_test() ->
    ?assertError({mcerlang, {unsupported_entry, _, _, _}},
                 shell("mcerlang:check(fun() -> only_in_shell() end).")).

%% A fun of a user module in the entry's arguments runs translated.
external_fun_in_arguments_is_translated_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, 5}}}},
                 mcerlang:check({tprog, apply_to, [fun tprog_helper:wait_for/1, five]})).

runaway_step_is_stopped_and_named_test() ->
    {Time, Result} = timer:tc(fun() -> catch mcerlang:check({tprog, spin, []},
                                                          #{max_reductions => 2000000}) end),
    ?assertMatch({'EXIT', {{mcerlang, {runaway_step, _, {tprog, spin_loop, 1, _, _},
                                       {max_reductions, 2000000}}}, _}}, Result),
    ?assert(Time < 10000000).

%% A check whose caller dies is stopped too.
abandoned_check_is_stopped_test() ->
    Before = length(processes()),
    Caller = spawn(fun() -> mcerlang:check({tprog, spin, []}) end),
    timer:sleep(200),
    exit(Caller, kill),
    timer:sleep(500),
    ?assert(length(processes()) =< Before).

%% mcerlang:stop/1 ends a running check with its statistics so far, and
%% the search's memory is freed; so is that of a check whose caller is
%% killed mid-search.
stop_running_check_test_() ->
    {timeout, 60,
     fun() ->
             Live = mce_nif:live_searches(),
             Self = self(),
             Checker = spawn(fun() -> Self ! {self(), mcerlang:check({client_server, start, [6, 3]}, #{symmetry => false, reduction => false})} end),
             timer:sleep(500),
             ok = mcerlang:stop(Checker),
             Result = receive {Checker, R} -> R after 10000 -> timeout end,
             ?assertMatch({inconclusive, stopped, #{states := N}} when N > 0, Result),
             wait_until(fun() -> mce_nif:live_searches() =:= Live end),
             Killed = spawn(fun() -> mcerlang:check({client_server, start, [6, 3]}, #{symmetry => false, reduction => false}) end),
             timer:sleep(500),
             ?assertEqual(Live + 1, mce_nif:live_searches()),
             exit(Killed, kill),
             wait_until(fun() -> mce_nif:live_searches() =:= Live end),
             ?assertError({mcerlang, {bad_checker, _, _}}, mcerlang:stop(self))
     end}.

%% A stop sent to a process that is not checking used to wait in its
%% mailbox and abort its next check; now it is dropped, and so is a stop
%% for a check that has ended.
stale_stop_test_() ->
    {timeout, 60,
     fun() ->
             ok = mcerlang:stop(self()),
             ?assertMatch({ok, _}, mcerlang:check({client_server, start, [4, 2]})),
             Self = self(),
             Checker = spawn(fun() ->
                                     R1 = mcerlang:check({client_server, start, [4, 2]}),
                                     Self ! {first, R1},
                                     receive go -> ok end,
                                     Self ! {second, mcerlang:check({client_server, start, [4, 2]})}
                             end),
             receive {first, R1} -> ?assertMatch({ok, _}, R1) end,
             ok = mcerlang:stop(Checker),
             Checker ! go,
             receive {second, R2} -> ?assertMatch({ok, _}, R2) end,
             {messages, Msgs} = erlang:process_info(self(), messages),
             ?assertNot(lists:member('$mce_stop', Msgs))
     end}.

wait_until(Cond) ->
    wait_until(Cond, 100).
wait_until(Cond, 0) ->
    ?assert(Cond());
wait_until(Cond, N) ->
    case Cond() of
        true -> ok;
        false -> erlang:garbage_collect(), timer:sleep(50), wait_until(Cond, N - 1)
    end.

%% shortest => true searches breadth-first: the violation found is one
%% nearest the initial state, where depth-first finds the first in its order.
shortest_counterexample_test() ->
    {error, Deep} = mcerlang:check({tprog, far_or_near, []}),
    ?assertMatch(#{violation := {abnormal_exit, _, far}}, Deep),
    {error, Near} = mcerlang:check({tprog, far_or_near, []}, #{shortest => true}),
    ?assertMatch(#{violation := {abnormal_exit, _, near}}, Near),
    ?assertEqual(2, length(maps:get(trace, Near))),
    ?assert(length(maps:get(trace, Deep)) > 2),
    %% Same state spaces in both orders; deadlocks are found too.
    ?assertMatch({ok, #{states := 484}},
                 mcerlang:check({client_server, start, [3, 2]}, #{shortest => true, symmetry => false})),
    {error, D} = mcerlang:check({dining, start, [3]}, #{shortest => true}),
    ?assertMatch(#{violation := deadlock, final_state := [_, _, _ | _]}, D),
    {error, D2} = mcerlang:check({dining, start, [3]}),
    ?assert(length(maps:get(trace, D)) =< length(maps:get(trace, D2))),
    ?assertError({mcerlang, {bad_option_value, shortest, yes}},
                 mcerlang:check({tprog, far_or_near, []}, #{shortest => yes})).

%% memory => Bytes caps the state store and the executor's memory (its
%% heap and binaries, not in memory_used): the search ends inconclusive.
memory_cap_test() ->
    ?assertMatch({inconclusive, {memory, 200000}, #{memory_used := M}} when M > 100000,
                 mcerlang:check({client_server, start, [4, 2]}, #{memory => 200000, symmetry => false})),
    ?assertError({mcerlang, {bad_option_value, memory, -1}}, mcerlang:check({tprog, hello, []}, #{memory => -1})).

%% Progress lines go to stderr once a second, unless progress => false
%% (the default under EUnit).
progress_lines_test_() ->
    {timeout, 60,
     fun() ->
             Erl = filename:join([code:root_dir(), "bin", "erl"]),
             Paths = lists:append([["-pa", D] || D <- code:get_path(),
                                                 string:find(D, "_build") =/= nomatch]),
             Run = fun(Progress) ->
                           Expr = lists:flatten(io_lib:format(
                                    "mcerlang:check({client_server, start, [6, 3]}, "
                                    "#{max_time => 3500, progress => ~p, symmetry => false, "
                                    "reduction => false}), halt().", [Progress])),
                           Port = open_port({spawn_executable, Erl},
                                            [{args, ["-noshell" | Paths] ++ ["-eval", Expr]},
                                             stderr_to_stdout, exit_status, binary]),
                           collect_port(Port, <<>>)
                   end,
             %% client_server(6, 3) runs for minutes (without the
             %% reductions): max_time ends it.
             With = Run(true),
             case re:run(With, "mcerlang: [0-9,]+ states, [0-9,]+ states/s, depth", [global]) of
                 {match, [_, _ | _]} -> ok;
                 _ -> erlang:error({too_few_progress_lines, With})
             end,
             ?assertEqual(nomatch, re:run(Run(false), "mcerlang:"))
     end}.

collect_port(Port, Acc) ->
    receive
        {Port, {data, D}} -> collect_port(Port, <<Acc/binary, D/binary>>);
        {Port, {exit_status, _}} -> Acc
    after 30000 -> Acc
    end.

%% Refs are numbered least-fresh: a fresh ref per round does not make the
%% state space grow with the number of rounds beyond the rounds themselves.
refs_are_reused_when_free_test() ->
    {ok, #{states := S3}} = mcerlang:check({tprog, ref_rounds, [3]}),
    {ok, #{states := S6}} = mcerlang:check({tprog, ref_rounds, [6]}),
    ?assert(S6 < 3 * S3).

%% A closure with arguments in the entry's arguments runs translated (it
%% was refused before): its receive is a receive of the model, as the
%% real VM's run ends ({result, 5}).
closure_in_arguments_translated_test() ->
    F = fun(T) -> receive {T, V} -> V end end,
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, 5}}}},
                 mcerlang:check({tprog, apply_to, [F, x]}, #{progress => false})).

%% Closures compiled into a module are entries, with their captured
%% variables: parameters, constants the compiler propagated, computed values.
%% Each check translates tprog's closures (a probe compile per fun): seconds
%% of compiling, past EUnit's default 5 s on a loaded machine.
closure_entry_test_() ->
    {timeout, 120, fun closure_entries/0}.

%% Every state kept (cut_states => store): pingpong(3)'s ten.
closure_entries() ->
    Kept = #{cut_states => store},
    ?assertMatch({ok, #{states := 10}}, mcerlang:check(tprog:closure_param(3), Kept)),
    ?assertMatch({ok, #{states := 8}}, mcerlang:check(tprog:closure_const(), Kept)),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, 42}}}},
                 mcerlang:check(tprog:closure_computed(21))),
    N = 3,
    ?assertMatch({ok, #{states := 10}}, mcerlang:check(fun() -> pingpong:start(N) end, Kept)),
    ?assertMatch({error, #{violation := deadlock}}, mcerlang:check(fun() -> dining:start(3) end)).

closure_capturing_a_real_pid_test() ->
    ?assertError({mcerlang, {send_to_real_process, _}}, mcerlang:check(tprog:closure_real_pid())).

otp_module_refused_test() ->
    ?assertError({mcerlang, {not_translatable, lists, _}},
                 mcerlang:check({lists, reverse, [[]]})).

unknown_option_test() ->
    ?assertError({mcerlang, {unknown_option, bogus}},
                 mcerlang:check({pingpong, start, [1]}, #{bogus => 1})).

bad_option_value_test() ->
    ?assertError({mcerlang, {bad_option_value, max_states, -1}},
                 mcerlang:check({pingpong, start, [1]}, #{max_states => -1})),
    ?assertError({mcerlang, {bad_option_value, property, liveness}},
                 mcerlang:check({pingpong, start, [1]}, #{property => liveness})),
    ?assertError({mcerlang, {bad_option_value, property, "q"}},
                 mcerlang:check({pingpong, start, [1]}, #{property => "q"})),
    ?assertError({mcerlang, {bad_options, _}}, mcerlang:check({pingpong, start, [1]}, 7)).

unsupported_bif_cannot_be_caught_by_the_program_test() ->
    ?assertError({mcerlang, {unsupported_bif, {erlang, suspend_process, 1},
                             {tprog, uses_timer_caught, 0, _}, _}},
                 mcerlang:check({tprog, uses_timer_caught, []})).

unsupported_bif_names_call_and_location_test() ->
    ?assertError({mcerlang, {unsupported_bif, {erlang, suspend_process, 1},
                             {tprog, uses_timer, 0, Line}, _}} when is_integer(Line),
                 mcerlang:check({tprog, uses_timer, []})).

%% Printing, clocks and scheduling hints of ordinary programs: the real VM
%% runs misc_bifs to the end, and so does the checker, recording the text.
misc_bifs_test() ->
    ?assertEqual({'EXIT', {result, done}},
                 catch (fun() -> {ok, Dev} = file:open("/dev/null", [write]),
                                 group_leader(Dev, self()), tprog:misc_bifs() end)()),
    {error, #{violation := {abnormal_exit, _, {result, done}}, trace := Steps}} =
        mcerlang:check({tprog, misc_bifs, []}, #{progress => false}),
    %% erlang:yield() is a scheduling point: the text is in the step after it
    ?assertEqual(["chars ", "bin", "\n", "{a,1}", "\n"], lists:append([maps:get(output, S) || S <- Steps])).

%% rand keeps its state in the process dictionary: under the checker it is
%% each simulated process's own (seeds do not leak between processes) and
%% part of the state, so verdicts are the same from run to run.
rand_state_is_per_process_and_reproducible_test() ->
    ?assertEqual({'EXIT', {result, true}}, catch tprog:rand_seeded()),
    ?assertEqual([{result, true}], all_root_exits({tprog, rand_seeded, []})),
    Verdicts = [all_root_exits({tprog, rand_unseeded, []}) || _ <- lists:seq(1, 5)],
    ?assertMatch([[{result, V}]] when V =:= 1; V =:= 2, lists:usort(Verdicts)).

%% Observations right after a signal in the same step: as the real VM
%% gives them (OTP orders a process's signals before its own later
%% observations of the target).
observations_after_signals_test_() ->
    [{atom_to_list(F),
      fun() ->
              {'EXIT', Real} = (catch tprog:F()),
              ?assertEqual({F, [Real]}, {F, all_root_exits({tprog, F, []})})
      end}
     || F <- [exit_then_alive, exit_trapping_then_alive, register_then_info,
              exit_then_link_trapping, pterm]].

%% timer:send_interval, apply_after and apply_interval run as processes of
%% the model; with timeouts => when_idle an interval fires when its
%% receiver is idle, so the state space is finite.
interval_and_apply_timers_test_() ->
    [{atom_to_list(F),
      {timeout, 60,
       fun() ->
               {'EXIT', Real} = (catch tprog:F()),
               ?assertEqual({F, [Real]},
                            {F, all_root_exits({tprog, F, []}, [], #{timeouts => when_idle})})
       end}}
     || F <- [interval_ticks, apply_later, apply_every, tc_blocking, misc_calls]].

%% The built-in mailbox bound: a violation names the process and how many
%% messages it holds; an interval timer flooding a mailbox under
%% timeouts => any (an unbounded state space) is caught by it.
mailbox_bound_test() ->
    Opts = #{treat_as_normal => [normal, {result, sent}], progress => false},
    ?assertMatch({ok, _}, mcerlang:check({tprog, producer_consumer, []}, Opts#{mailbox_bound => 4})),
    {error, Cex} = mcerlang:check({tprog, producer_consumer, []}, Opts#{mailbox_bound => 3}),
    ?assertMatch(#{violation := {mailbox_bound, _, 4, 3}}, Cex),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertMatch({match, _}, re:run(Text, "has 4 messages in its mailbox \\(mailbox_bound 3\\)")),
    ?assertMatch({error, #{violation := {mailbox_bound, _, 3, 2}}},
                 mcerlang:check({tprog, interval_ticks, []},
                                #{mailbox_bound => 2, progress => false,
                                  treat_as_normal => [normal, {result, done}]})),
    ?assertMatch({error, #{violation := {mailbox_bound, _, _, 3}}},
                 mcerlang:simulate({tprog, producer_consumer, []},
                                   Opts#{mailbox_bound => 3, seed => 1, runs => 200})),
    ?assertError({mcerlang, {bad_option_value, mailbox_bound, -1}},
                 mcerlang:check({tprog, producer_consumer, []}, #{mailbox_bound => -1})),
    ?assertError({mcerlang, {incompatible_options, ltl, mailbox_bound}},
                 mcerlang:check({tprog, producer_consumer, []},
                                #{mailbox_bound => 3, ltl => "[] true"})).

%% gen_server:multi_call/4's middleman ends with its result as exit reason:
%% not an abnormal exit.  spawn_request (a real process) is refused.
multi_call_with_timeout_test() ->
    ?assertEqual(ok, tprog_mcall:main()),
    ?assertMatch({ok, _}, mcerlang:check({tprog_mcall, main, []},
                                         #{timeouts => when_idle, progress => false})).

spawn_request_refused_test() ->
    ?assertError({mcerlang, {unsupported_bif, {erlang, spawn_request, 2}, _, _}},
                 mcerlang:check(fun() -> spawn_request(fun() -> ok end, [monitor]) end,
                                #{progress => false})).

%% A fun made by erlang:make_fun/3 used to run untranslated, its real
%% receive blocking the worker (blocked_outside_the_model).  The sandbox
%% points it at the translation: the receive is the model's, and the
%% process waits for go_never for ever, as on the VM: a deadlock.
blocked_outside_the_model_test_() ->
    {timeout, 60,
     fun() ->
             ?assertMatch({error, #{violation := deadlock}},
                          mcerlang:check({tprog, make_fun_receive, []},
                                         #{progress => false, max_time => 1000}))
     end}.

%% Bad input to the API, as test suites write it: named, never a crash.
api_input_checks_test() ->
    ?assertError({mcerlang, {bad_counterexample, foo, _}}, mcerlang:format(foo)),
    ?assertError({mcerlang, {bad_format_options, [full], _}},
                 mcerlang:format(#{violation => deadlock, trace => [], final_state => []}, [full])),
    [?assertError({mcerlang, {bad_option_value, table, {bitstate, B}}},
                  mcerlang:check({pingpong, start, [1]}, #{table => {bitstate, B}}))
     || B <- [0, -8, 1 bsl 41, x]],
    ?assertMatch({ok, _}, mcerlang:check({pingpong, start, [1]},
                                         #{table => {bitstate, 1 bsl 10}, progress => false})),
    %% Proplists: the first of repeated keys counts.
    ?assertMatch({inconclusive, max_states, _},
                 mcerlang:check({dining, start, [3]}, [{max_states, 5}, {max_states, 100000},
                                                       {progress, false}])),
    ?assertError({mcerlang, {bad_invariant_value, _, yes, _}},
                 mcerlang:check({pingpong, start, [1]}, #{invariant => fun(_) -> yes end,
                                                         progress => false})).

%% A library that keeps its data in ETS (digraph): every outcome the
%% checker reports is one the real VM can give, and both orders are found.
digraph_test() ->
    Real = [begin
                {_, Ref} = spawn_monitor(tprog, digraph_race, []),
                receive {'DOWN', Ref, process, _, R} -> R end
            end || _ <- lists:seq(1, 5)],
    Checked = lists:sort(all_root_exits({tprog, digraph_race, []})),
    ?assertEqual([{result, {1, false, [a]}}, {result, {1, true, [a, b]}}], Checked),
    ?assert(lists:all(fun(R) -> lists:member(R, Checked) end, Real)).

%% timeouts => when_idle lets time pass in order: the shortest pending
%% receive timeout fires first, and the others have that much less left.
when_idle_orders_receive_timeouts_test() ->
    Idle = #{timeouts => when_idle},
    [begin
         {_, Ref} = spawn_monitor(tprog, F, []),
         Real = receive {'DOWN', Ref, process, _, R} -> R end,
         ?assertEqual({F, [Real]}, {F, all_root_exits({tprog, F, []}, [], Idle)})
     end || F <- [slow_server_call, ordered_waits]],
    %% Untimed (any), the long wait may end first.
    ?assertEqual([{result, ok}, {result, timeout}],
                 lists:sort(all_root_exits({tprog, slow_server_call, []}))).
