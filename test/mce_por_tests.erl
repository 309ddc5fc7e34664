%% Partial-order reduction (option `reduction', c_src/por.h): fewer states
%% where processes take independent local steps, the same verdicts as
%% without it, counterexamples that replay, the stats that say when and
%% why it is off, and the run again without it when a step reads another
%% process's record.
-module(mce_por_tests).

-include_lib("eunit/include/eunit.hrl").

%% Partial-order reduction alone: symmetry reduction (on by default) is
%% off unless a test asks for it.
check(Entry, Opts) ->
    mcerlang:check(Entry, maps:merge(#{symmetry => false}, Opts#{progress => false})).

states({ok, St}) -> maps:get(states, St);
states({error, #{stats := St}}) -> maps:get(states, St);
states({inconclusive, _, St}) -> maps:get(states, St).

stats({ok, St}) -> St;
stats({error, #{stats := St}}) -> St;
stats({inconclusive, _, St}) -> St.

%% The verdict without the numbers: ok, the violation, or the limit.
verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) -> {error, V};
verdict({inconclusive, Why, _}) -> {inconclusive, Why}.

%% Checks Entry with the reduction on and off: the same verdict, a
%% violation found with it on replays, and when it holds at most as many
%% states with it on.  Returns {StatesOn, StatesOff, StatsOn}.
on_off(Entry, Opts) ->
    compared(Entry, Opts, reduction, reduced_states, [option]).

%% Entry checked with option Key on (Opts) and false: the same verdict, a
%% violation found with it on replays, the stat Key of the run with it off
%% is {off, Why} for a Why of OffWhy, its count Count 0, and a whole state
%% space only shrinks (a search stopped at a violation may meet more
%% states first in the other order).
compared(Entry, Opts, Key, Count, OffWhy) ->
    On = check(Entry, Opts),
    Off = check(Entry, Opts#{Key => false}),
    ?assertEqual(verdict(Off), verdict(On)),
    case On of
        {error, Cex} -> ?assertMatch({ok, _}, mcerlang:replay(Cex));
        _ -> ok
    end,
    {off, Why} = maps:get(Key, stats(Off)),
    ?assert(lists:member(Why, OffWhy)),
    ?assertEqual(0, maps:get(Count, stats(Off))),
    ?assert(verdict(On) =/= ok orelse states(On) =< states(Off)),
    {states(On), states(Off), stats(On)}.

%% Workers that go straight to a receive: their first steps are safe.
workers_test() ->
    {On, Off, St} = on_off({tprog_por, workers, [6]}, #{}),
    ?assertEqual(on, maps:get(reduction, St)),
    ?assert(maps:get(reduced_states, St) > 0),
    ?assert(On * 4 < Off).

%% Workers that wait for go and answer done.
go_done_test() ->
    {On, Off, _} = on_off({tprog_por, go_done, [6]}, #{}),
    ?assert(On * 4 < Off).

%% A spawn chain under small granularity: each process's receive after its
%% spawn is a step of its own, and a safe one.
chain_small_test_() ->
    {timeout, 120,
     fun() ->
             {On, Off, _} = on_off({tprog_por, chain, [10]},
                                   #{granularity => small, property => abnormal_exit}),
             ?assert(On * 20 < Off)
     end}.

%% examples/spawn_chain.erl under the default big steps: each process's
%% erlang:yield() is `receive after 0 -> true end', a receive without
%% clauses whose timeout no send disables (rule 1's poll), so the resume
%% after it is safe and the 2^(N+2) states of the chain collapse.
spawn_chain_test_() ->
    {timeout, 120,
     fun() ->
             {On, Off, St} = on_off({spawn_chain, start, [10]}, #{}),
             ?assertEqual(4096, Off),
             ?assert(maps:get(reduced_states, St) > 0),
             ?assert(On < 100)
     end}.

%% The yields' order still matters when the steps after them send: the
%% violation is found with the reduction on and replays.
yield_race_test() ->
    {_, _, _} = on_off({tprog_por, yield_race, []}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {{badmatch, b}, _}}}},
                 check({tprog_por, yield_race, []}, #{})).

%% An `after 0' with a clause is no poll (a message disables it): the
%% crash when the message comes first is still found.
poll_with_clause_test() ->
    {_, _, _} = on_off({tprog_por, poll_or_msg, []}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {message_first, _}}}},
                 check({tprog_por, poll_or_msg, []}, #{})).

%% Local steps (one-way choices) before a receive.
local_steps_test() ->
    {On, Off, _} = on_off({tprog_por, local_steps, [4]}, #{}),
    ?assert(On * 4 < Off).

%% The same violations, and counterexamples that replay.
deadlock_test() ->
    {_, _, _} = on_off({tprog_por, deadlock, [5]}, #{}),
    {error, #{violation := deadlock}} = check({tprog_por, deadlock, [5]}, #{}).

abnormal_exit_test() ->
    {_, _, _} = on_off({tprog_por, crash, [5]}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {boom, _}}}},
                 check({tprog_por, crash, [5]}, #{})).

assertion_test() ->
    {_, _, _} = on_off({tprog_por, assert_race, []}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {{badmatch, 2}, _}}}},
                 check({tprog_por, assert_race, []}, #{})).

kill_test() ->
    {_, _, _} = on_off({tprog_por, kill_race, []}, #{}).

%% Depth-first, breadth-first and the lossy tables reduce alike; the
%% deadlock of the workers that never stop is found in each.
tables_test() ->
    {OnHc, OffHc, _} = on_off({tprog_por, workers, [6]}, #{table => hash_compact}),
    ?assert(OnHc < OffHc),
    {OnBs, OffBs, _} = on_off({tprog_por, go_done, [5]}, #{table => {bitstate, 1 bsl 20}}),
    ?assert(OnBs < OffBs),
    {_, _, _} = on_off({tprog_por, deadlock, [4]}, #{table => hash_compact}).

%% A step that reads another process's record can tell whether a safe
%% step was taken: the reduced search is void and the check runs again
%% without the reduction, which finds the violation only that order shows.
reads_process_state_test() ->
    R = check({tprog_por, observer, []}, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, saw_unstarted}}}, R),
    ?assertEqual({off, reads_process_state}, maps:get(reduction, stats(R))),
    {error, Cex} = R,
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    ?assertEqual(verdict(check({tprog_por, observer, []}, #{reduction => false})), verdict(R)).

%% When the reduction is off, the stats say why, and the counts are those
%% of reduction => false.
off_reasons_test_() ->
    {timeout, 60,
     fun() ->
             E = {tprog_por, go_done, [4]},
             Inv = fun(_) -> true end,
             Off = states(check(E, #{reduction => false})),
             lists:foreach(
               fun({Opts, Why}) ->
                       R = check(E, Opts),
                       ?assertEqual({off, Why}, maps:get(reduction, stats(R))),
                       ?assertEqual(0, maps:get(reduced_states, stats(R))),
                       ?assertEqual(Off, states(R))
               end,
               [{#{invariant => Inv}, invariant},
                {#{mailbox_bound => 10}, mailbox_bound},
                {#{shortest => true}, shortest},
                {#{max_depth => 1000}, max_depth}]),
             %% the LTL check is reduced under weak fairness (the
             %% default) too (mce_ltl_por_tests), but not with next
             R = check(E, #{ltl => "[] true"}),
             ?assertEqual(on, maps:get(reduction, stats(R))),
             RX = check(E, #{ltl => "[] (true -> X true)"}),
             ?assertEqual({off, next}, maps:get(reduction, stats(RX)))
     end}.

bad_option_test() ->
    ?assertError({mcerlang, {bad_option_value, reduction, maybe, _}},
                 check({tprog_por, workers, [2]}, #{reduction => maybe})).

%% bin/mcerlang's --reduction on|off.
cli_test_() ->
    {timeout, 120,
     fun() ->
             {0, On} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "test/tprog_por.erl", "tprog_por:workers(6)"]),
             {0, Off} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--reduction", "off", "test/tprog_por.erl",
                                               "tprog_por:workers(6)"]),
             {0, On2} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--reduction", "on", "test/tprog_por.erl",
                                               "tprog_por:workers(6)"]),
             %% 86 with the exact rules (--por-renaming off): the workers'
             %% ends are safe steps up to a renaming of pids (rule 9).  The
             %% states cut to their safe step are passed through, not kept
             %% (--cut-states store keeps them: 14).
             {0, Exact} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--por-renaming", "off",
                                                 "test/tprog_por.erl", "tprog_por:workers(6)"]),
             {0, Kept} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--cut-states", "store",
                                                "test/tprog_por.erl", "tprog_por:workers(6)"]),
             ?assertNotEqual(nomatch, string:find(On, "holds: 2 states (12 more passed through)")),
             ?assertNotEqual(nomatch, string:find(On2, "holds: 2 states (12 more passed through)")),
             ?assertNotEqual(nomatch, string:find(Exact, "holds: 65 states (21 more passed through)")),
             ?assertNotEqual(nomatch, string:find(Kept, "holds: 14 states,")),
             ?assertNotEqual(nomatch, string:find(Off, "holds: 730 states")),
             {2, BadCut} = mce_cli_tests:run_cli(["check", "--cut-states", "drop", "test/tprog_por.erl",
                                                  "tprog_por:workers(6)"]),
             ?assertNotEqual(nomatch, string:find(BadCut, "--cut-states drop: expected pass or store")),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--reduction", "maybe", "test/tprog_por.erl",
                                               "tprog_por:workers(6)"]),
             ?assertNotEqual(nomatch, string:find(Bad, "--reduction maybe: expected on or off"))
     end}.

%% The examples, big and small steps: the same verdict on and off, and a
%% violation found with the reduction replays (on_off/2).
examples_test_() ->
    {timeout, 600,
     fun() ->
             Small = [{dining, start, [3]}, {pingpong, start, [5]}, {client_server, start, [3, 2]},
                      {racy_child, start, []}],
             Big = Small ++ [{counter_server, start_racy, [2, 1]}, {sup_worker, start, [2, 2]}],
             [on_off(E, #{granularity => big}) || E <- Big],
             [on_off(E, #{granularity => small}) || E <- Small]
     end}.

%% Sending safe steps (rule 7 of docs/ARCHITECTURE.md, c_src/por.c): a
%% server's reply to a caller that waits for it and that no one else can
%% write to.  Each program below has a violation that only the order the
%% reduction would cut shows if the rule's condition were left out.
send_opts(Opts) ->
    Opts#{property => abnormal_exit, treat_as_normal => [normal, shutdown, killed]}.

%% The replies of a server to its callers are taken as safe.
replies_test() ->
    {On, Off, St} = on_off({tprog_por, replies, [3]}, send_opts(#{})),
    ?assertEqual(on, maps:get(reduction, St)),
    ?assert(maps:get(reduced_states, St) > 0),
    ?assert(On < Off).

%% 7a: a server linked to a process that can end with shutdown can die
%% between the request and the reply.
linked_server_test() ->
    {_, _, St} = on_off({tprog_por, linked_server, []}, send_opts(#{})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, saw_down}}},
                 check({tprog_por, linked_server, []}, send_opts(#{}))),
    ?assertEqual(on, maps:get(reduction, St)).

%% 7a: ... or be killed by a fault.
kill_fault_test() ->
    Opts = send_opts(#{faults => #{kill => 1}}),
    {_, _, _} = on_off({tprog_por, killed_server, []}, Opts),
    ?assertMatch({error, #{violation := {abnormal_exit, _, saw_down}}},
                 check({tprog_por, killed_server, []}, Opts)).

%% 7b: a caller whose receive times out: under timeouts => any the
%% timeout fires before the reply in some run; under when_idle in none,
%% and there the reply is safe.
timeout_caller_test() ->
    {_, _, _} = on_off({tprog_por, timeout_caller, []}, send_opts(#{})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, timed_out}}},
                 check({tprog_por, timeout_caller, []}, send_opts(#{}))),
    {On, Off, St} = on_off({tprog_por, timeout_caller, []},
                           send_opts(#{timeouts => when_idle})),
    ?assertEqual(ok, verdict(check({tprog_por, timeout_caller, []},
                                   send_opts(#{timeouts => when_idle})))),
    ?assert(maps:get(reduced_states, St) > 0),
    ?assert(On < Off).

%% 7c: the caller's pid is held by a process that writes to it too.
second_writer_test() ->
    {_, _, _} = on_off({tprog_por, second_writer, []}, send_opts(#{})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, hi_first}}},
                 check({tprog_por, second_writer, []}, send_opts(#{}))).

%% Rule 7 through aliases: a reply sent to the alias of a caller's monitor
%% (as gen:call makes it) is safe like one sent to its pid.
alias_replies_test() ->
    {On, Off, St} = on_off({tprog_por, alias_replies, [3]}, send_opts(#{})),
    ?assertEqual(on, maps:get(reduction, St)),
    %% Local steps alone (the starts) cut a little: 80 of 95 states; the
    %% replies through the aliases bring it to 56.
    ?assert(maps:get(reduced_states, St) > 10),
    ?assert(On * 3 < Off * 2).

%% ... and OTP's own gen_server:call, whose caller's receive has a timeout:
%% safe under when_idle.
gen_replies_test_() ->
    {timeout, 60,
     fun() ->
             Opts = send_opts(#{timeouts => when_idle}),
             {On, Off, St} = on_off({tprog_por, gen_replies, [3, 2]}, Opts),
             ?assertEqual(on, maps:get(reduction, St)),
             ?assert(maps:get(reduced_states, St) > 0),
             ?assert(On < Off)
     end}.

%% 7c through an alias: another process holding the caller's alias writes
%% through it, so the reply is not safe and the order that fails is kept.
alias_second_writer_test() ->
    {_, _, _} = on_off({tprog_por, alias_second_writer, []}, send_opts(#{})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, hi_first}}},
                 check({tprog_por, alias_second_writer, []}, send_opts(#{}))).

%% 7g, the guard: once a sending step was taken as safe, an exit signal to
%% another process, a link to one or processes/0 voids the reduced search,
%% and the check runs again without it.
guard_test_() ->
    [fun() ->
             R = check({tprog_por, F, []}, send_opts(#{})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, V}}}, R),
             ?assertEqual({off, Why}, maps:get(reduction, stats(R))),
             {error, Cex} = R,
             ?assertMatch({ok, _}, mcerlang:replay(Cex)),
             ?assertEqual(verdict(check({tprog_por, F, []},
                                        send_opts(#{reduction => false}))), verdict(R))
     end || {F, V, Why} <- [{exit_guard, saw_down, exit_signal},
                            {link_guard, saw_down, link},
                            {processes_guard, hi_first, processes}]].

%% ... but only then: exit/2 in a program whose safe steps send nothing
%% keeps the reduction.
guard_only_after_send_test() ->
    {_, _, St} = on_off({tprog_por, exit_later, []}, send_opts(#{})),
    ?assertEqual(on, maps:get(reduction, St)),
    ?assert(maps:get(reduced_states, St) > 0).

%% Steps safe up to a renaming of pid numbers and ref counters (option
%% `por_renaming', c_src/por.h rules 4, 5, 7d, 8 and 9 with POR_RENAMED):
%% a spawn, a make_ref, a step that drops a pid or ref, a process's end.
%% The same verdicts with them and without (the exact rules),
%% counterexamples that replay, and fewer states where those steps
%% interleave with others.  {off, reduction} where a read of another
%% process's record voided the reduction itself.
renaming_on_off(Entry, Opts) ->
    compared(Entry, Opts, por_renaming, renamed_states, [option, reduction]).

%%--------------------------------------------------------------------
%% Cut states passed through, not kept (cut_states, search.c)
%%--------------------------------------------------------------------

%% Entry with cut states passed (the default) and kept: the same verdict,
%% a counterexample found either way replays, the stat passed_states only
%% in the first; returns {Kept, KeptWhenStored, StatsPassed}.
passed_stored(Entry, Opts) ->
    Pass = check(Entry, Opts),
    Store = check(Entry, Opts#{cut_states => store}),
    ?assertEqual(verdict(Store), verdict(Pass)),
    [?assertMatch({ok, _}, mcerlang:replay(Cex)) || {error, Cex} <- [Pass, Store]],
    ?assertEqual(0, maps:get(passed_states, stats(Store))),
    %% A kept state is one expanded in full, or cut once and kept; passing
    %% keeps no more than storing (measured on every program below).
    ?assert(verdict(Pass) =/= ok orelse states(Pass) =< states(Store)),
    {states(Pass), states(Store), stats(Pass)}.

cut_states_test_() ->
    {timeout, 300,
     fun() ->
             %% The identical clients: under small steps nearly every state
             %% is a cut one, so small keeps about what big keeps.
             {Small, SmallStored, St} = passed_stored({client_server, start, [4, 2]},
                                                      #{granularity => small, symmetry => true}),
             {Big, _, _} = passed_stored({client_server, start, [4, 2]}, #{symmetry => true}),
             ?assert(maps:get(passed_states, St) > 0),
             ?assert(Small * 5 < SmallStored),
             ?assert(Small * 2 < Big * 3),
             [passed_stored(E, #{granularity => G})
              || E <- [{dining, start, [3]}, {pingpong, start, [4]}, {racy_child, start, []},
                       {counter_server, start_racy, [2, 1]}, {sup_worker, start, [2, 2]},
                       {spawn_chain, start, [6]}, {go_workers, start, [4]},
                       {tprog_por, crash, [4]}, {tprog_por, deadlock, [4]},
                       {tprog_por, kill_race, []}, {tprog_por, chain, [6]},
                       {tprog_por, yield_race, []}, {tprog_por, exit_later, []},
                       {tprog_por, renamed_spawn, []}, {tprog_por, early_end, []}],
                 G <- [big, small]],
             ?assertError({mcerlang, {bad_option_value, cut_states, keep, _}},
                          check({pingpong, start, [2]}, #{cut_states => keep}))
     end}.

%% A spinner whose polls go round two states, beside a process that
%% crashes: each of the spinner's states is cut to its poll and passed, and
%% met again while still on the stack; the step into it is then a back
%% edge, not a new visit (a search that pushed it again went round the two
%% forever), and the proviso expands the state in full, which finds the
%% crash.
passed_cycle_test_() ->
    {timeout, 60,
     fun() ->
             [?assertMatch({error, #{violation := {abnormal_exit, _, crashed}}},
                           check({tprog_ltl_por, E, []}, #{max_time => 20000}))
              || E <- [ignoring_crash, ignoring_crash_two]]
     end}.

%% A program whose every step is safe and whose states never repeat keeps
%% almost nothing: max_states counts the states met, kept or passed.
passed_max_states_test() ->
    {inconclusive, max_states, St} = check({abs_stack, start, []}, #{max_states => 300}),
    ?assertEqual(300, maps:get(states, St) + maps:get(passed_states, St)).

%%--------------------------------------------------------------------
%% Rule 10: demonitor(Ref, [flush]) (c_src/por.c, demonitor_safe)
%%--------------------------------------------------------------------

%% The same verdicts with the reduction on and off: a flushed demonitor
%% racing its target's end (ok), one without the flush (under small steps
%% a 'DOWN' may stay: saw_down), and an alias a third process holds, ended
%% by the demonitor (got_it under small steps, which a rule without
%% key_private misses: checked by hand).  Each condition of the rule on
%% hand-built states: c_src/test/c_tests.c, test_por_demonitor.  A
%% gen_server call's demonitor is the step that gains: counter_server under
%% small steps keeps fewer states.
demonitor_rule_test_() ->
    {timeout, 120,
     fun() ->
             Opts = #{property => abnormal_exit},
             [on_off({tprog_por, F, A}, Opts#{granularity => G})
              || {F, A} <- [{demonitor_flush, [true]}, {demonitor_flush, [false]},
                            {alias_demonitor_race, []}],
                 G <- [big, small]],
             ?assertMatch({ok, _}, check({tprog_por, demonitor_flush, [true]}, Opts)),
             ?assertMatch({error, #{violation := {abnormal_exit, _, saw_down}}},
                          check({tprog_por, demonitor_flush, [false]}, Opts#{granularity => small})),
             ?assertMatch({error, #{violation := {abnormal_exit, _, got_it}}},
                          check({tprog_por, alias_demonitor_race, []}, Opts#{granularity => small})),
             {Small, Exact, _} = renaming_on_off({counter_server, start, [3, 2]},
                                                 #{granularity => small, timeouts => when_idle,
                                                   symmetry => true}),
             ?assert(Small * 5 < Exact)
     end}.

%% Rule 11: a monitor of a live process is safe, guarded against the
%% target's death while the watcher is armed (PF_MON_ARMED) and against a
%% process reading its own watchers.  Each program below answers ok when
%% the guard never voids (checked by hand): the violation is reachable only
%% through the order the reduction cut.
monitor_rule_test_() ->
    {timeout, 300,
     fun() ->
             Opts = #{property => abnormal_exit, timeouts => when_idle},
             Programs = [{monitor_race, [false]}, {monitor_race, [true]}, {call_stop_race, []},
                         {spawn_then_monitor, []}, {monby_self, []}],
             [on_off({tprog_por, F, A}, Opts#{granularity => G})
              || {F, A} <- Programs, G <- [big, small]],
             Violation = fun(F, A) ->
                                 R = check({tprog_por, F, A}, Opts#{granularity => small}),
                                 ?assertMatch({error, #{violation := {abnormal_exit, _, _}}}, R),
                                 {error, #{violation := {abnormal_exit, _, Why}}} = R,
                                 %% The guard made the check run again without
                                 %% rule 11 (and further guards, maybe, with
                                 %% the exact rules).
                                 ?assertEqual([monitor_race], maps:get(por_rules_off, stats(R))),
                                 Why
                         end,
             ?assertEqual(saw_noproc, Violation(monitor_race, [false])),
             ?assertEqual(saw_noproc, Violation(monitor_race, [true])),
             ?assertEqual(saw_noproc, Violation(call_stop_race, [])),
             ?assertEqual(saw_noproc, Violation(spawn_then_monitor, [])),
             ?assertEqual(saw_none, Violation(monby_self, [])),
             %% Where no watched process dies while its watcher is armed the
             %% monitors stay cut: gen_server calls against a server stopped
             %% by the last caller.
             Cs = #{granularity => small, timeouts => when_idle, symmetry => true},
             {Small, Exact, St} = renaming_on_off({counter_server, start, [4, 2]}, Cs),
             ?assertEqual(on, maps:get(por_renaming, St)),
             ?assert(Small * 10 < Exact),
             %% The same wherever the checkout is (mce_translate_gen keeps
             %% the source's directory out of the translated module).
             ?assertEqual(43, Small)
     end}.

%% Rule 12: a lookup of a registered name is safe, guarded against the
%% name being freed.  Each program answers ok when the guard never voids
%% (checked by hand; call_name_stop_race with rule 11's guard off too).
name_rule_test_() ->
    {timeout, 300,
     fun() ->
             Opts = #{property => abnormal_exit, timeouts => when_idle},
             Programs = [{name_race, [stop]}, {name_race, [unregister]},
                         {armed_end_race, [stop]}, {armed_end_race, [unregister]},
                         {call_name_stop_race, []}],
             [on_off({tprog_por, F, A}, Opts#{granularity => G})
              || {F, A} <- Programs, G <- [big, small]],
             [begin
                  R = check({tprog_por, F, A}, Opts#{granularity => small}),
                  ?assertMatch({error, #{violation := {abnormal_exit, _, Why}}}, R),
                  [_ | _] = Off = maps:get(por_rules_off, stats(R)),
                  ?assert(lists:member(name_freed, Off) orelse lists:member(monitor_race, Off))
              end || {F, A, Why} <- [{name_race, [stop], saw_undefined},
                                     {name_race, [unregister], saw_undefined},
                                     {armed_end_race, [stop], saw_undefined},
                                     {armed_end_race, [unregister], saw_undefined},
                                     {call_name_stop_race, [], saw_noproc}]],
             %% The locker's clients call it by name and it never ends.
             {Small, Exact, St} = renaming_on_off({locker, start, [[{a, exclusive}, {a, shared}], 1]},
                                                  #{granularity => small, timeouts => when_idle,
                                                    property => abnormal_exit}),
             ?assertEqual(on, maps:get(por_renaming, St)),
             ?assertEqual([], maps:get(por_rules_off, St)),
             ?assert(Small * 3 < Exact),
             %% A guard turns off its own rule only: sup_worker's worker
             %% crashes free its name and end a monitored process, and the
             %% reruns keep rules 8-10.
             Sup = check({sup_worker, start, [4, 4]}, #{granularity => small, timeouts => when_idle}),
             ?assertMatch({ok, #{por_renaming := on}}, Sup),
             ?assertEqual([monitor_race, name_freed], lists:sort(maps:get(por_rules_off, stats(Sup)))),
             ?assertEqual(189, states(Sup)),
             %% The guard fires only for a name freed while a process that
             %% found a name lives (or after such a process's end was cut):
             %% the door's users are gone when it is stopped.
             Door = check({door, start, [3]}, #{granularity => small,
                                                treat_as_normal => [normal, pushed_locked_door]}),
             ?assertMatch({ok, #{por_renaming := on, por_rules_off := []}}, Door),
             ?assertEqual(26658, states(Door))
     end}.

%% The renaming's rules with two workers (issue 20): each guard's program
%% finds the violation of the unreduced search, whichever worker meets
%% which half of its guard (the pool pairs them: search_pool_guard, raced
%% in the C tests), and the rules cut as with one worker.
renaming_workers_test_() ->
    {timeout, 300,
     fun() ->
             Opts = #{property => abnormal_exit, timeouts => when_idle, workers => 2},
             Guarded = [{renamed_spawn, []}, {ref_reuse, []}, {early_end, []}, {early_end_alive, []},
                        {demonitor_flush, [false]}, {alias_demonitor_race, []},
                        {monitor_race, [false]}, {monitor_race, [true]}, {call_stop_race, []},
                        {spawn_then_monitor, []}, {monby_self, []}, {name_race, [stop]},
                        {name_race, [unregister]}, {armed_end_race, [stop]},
                        {armed_end_race, [unregister]}, {call_name_stop_race, []}],
             [begin
                  Exact = check({tprog_por, F, A}, Opts#{granularity => G, reduction => false}),
                  %% under big steps most of the races are inside one step
                  G =:= big orelse ?assertMatch({error, #{violation := {abnormal_exit, _, _}}}, Exact),
                  R = check({tprog_por, F, A}, Opts#{granularity => G}),
                  ?assertEqual({F, A, G, verdict(Exact)}, {F, A, G, verdict(R)}),
                  ?assertEqual(2, maps:get(workers, stats(R))),
                  [?assertMatch({ok, _}, mcerlang:replay(Cex)) || {error, Cex} <- [R]]
              end || {F, A} <- Guarded, G <- [big, small]],
             Cs = #{granularity => small, timeouts => when_idle, symmetry => true, workers => 2},
             {Small, Exact, St} = renaming_on_off({counter_server, start, [4, 2]}, Cs),
             ?assertEqual(on, maps:get(por_renaming, St)),
             ?assert(Small * 10 < Exact)
     end}.

renaming_test_() ->
    {timeout, 300,
     fun() ->
             %% The coordinator's spawns and its receives of `done' (which
             %% drop the client's pid) no longer interleave with the
             %% clients' steps.
             {Cs, CsExact, CsSt} = renaming_on_off({client_server, start, [3, 2]},
                                                   #{granularity => small}),
             ?assertEqual(on, maps:get(por_renaming, CsSt)),
             ?assert(maps:get(renamed_states, CsSt) > 0),
             ?assert(Cs * 3 < CsExact),
             {Go, GoExact, _} = renaming_on_off({go_workers, start, [6]}, #{granularity => small}),
             ?assert(Go * 2 < GoExact),
             [renaming_on_off(E, #{granularity => G})
              || E <- [{dining, start, [3]}, {pingpong, start, [4]}, {racy_child, start, []},
                       {counter_server, start_racy, [2, 1]}, {sup_worker, start, [2, 2]},
                       {tprog_por, crash, [4]}, {tprog_por, deadlock, [4]},
                       {tprog_por, kill_race, []}, {tprog_por, chain, [6]}],
                 G <- [big, small]]
     end}.

%% The guard: a step that observes pid numbers (here an order comparison
%% of pids) after a step safe only up to a renaming was taken voids the
%% search, which runs again with the exact rules and finds the abnormal
%% exit only the other numbering shows (without the guard the reduced
%% search answers ok: checked by disabling search_numbers_observed).
renaming_guard_test_() ->
    {timeout, 120,
     fun() ->
             E = {tprog_por, renamed_spawn, []},
             lists:foreach(
               fun(Opts) ->
                       R = check(E, Opts),
                       ?assertMatch({error, #{violation := {abnormal_exit, _, renumbered}}}, R),
                       %% Under small steps the reduction tries the
                       %% untried starts first and meets the violation
                       %% before the observation that voids it.
                       maps:get(granularity, Opts, big) =:= small orelse
                           ?assertEqual({off, pid_numbers}, maps:get(por_renaming, stats(R))),
                       ?assertEqual(on, maps:get(reduction, stats(R))),
                       {error, Cex} = R,
                       ?assertMatch({ok, _}, mcerlang:replay(Cex))
               end,
               [#{}, #{granularity => small}, #{symmetry => auto}]),
             ?assertEqual(verdict(check(E, #{reduction => false})), verdict(check(E, #{}))),
             %% Ref counters: the order of two refs of one creator, read
             %% through maps:keys/1 (mce_rt_order:report_refs/0; without
             %% that report the reduced search answers ok).
             lists:foreach(
               fun(Opts) ->
                       R = check({tprog_por, ref_reuse, []}, Opts),
                       ?assertMatch({error, #{violation := {abnormal_exit, _, not_reused}}}, R),
                       ?assertEqual({off, pid_numbers}, maps:get(por_renaming, stats(R))),
                       {error, Cex} = R,
                       ?assertMatch({ok, _}, mcerlang:replay(Cex))
               end,
               [#{}, #{granularity => small}])
     end}.

%% The guard of ends taken as safe (rule 9): a monitor or liveness test of a
%% process that is gone voids the search, which runs again with the exact
%% rules and finds the run in which the process was still alive (without
%% the guard the reduced search answers ok: checked by disabling
%% search_dead_target).
dead_target_guard_test_() ->
    {timeout, 120,
     fun() ->
             lists:foreach(
               fun({F, Opts}) ->
                       E = {tprog_por, F, []},
                       R = check(E, Opts),
                       ?assertMatch({error, #{violation := {abnormal_exit, _, saw_it_alive}}}, R),
                       ?assertEqual({off, dead_target}, maps:get(por_renaming, stats(R))),
                       {error, Cex} = R,
                       ?assertMatch({ok, _}, mcerlang:replay(Cex))
               end,
               [{F, O} || F <- [early_end, early_end_alive],
                          O <- [#{}, #{granularity => small}, #{symmetry => auto}]])
     end}.

%% A process's end is a safe step when nothing but its pid ties it to the
%% others: the spawn chain's processes, each ending once its child started.
exit_rule_test_() ->
    {timeout, 120,
     fun() ->
             {On, Exact, St} = renaming_on_off({tprog_por, chain, [8]},
                                               #{granularity => small, property => abnormal_exit}),
             ?assert(maps:get(renamed_states, St) > 0),
             ?assert(On < Exact)
     end}.

%% Where the renaming is not used, the stats say why.
renaming_off_reasons_test_() ->
    {timeout, 60,
     fun() ->
             E = {tprog_por, go_done, [3]},
             lists:foreach(
               fun({Opts, Why}) ->
                       ?assertEqual({off, Why}, maps:get(por_renaming, stats(check(E, Opts))))
               end,
               [{#{reduction => false}, reduction},
                {#{por_renaming => false}, option},
                {#{faults => #{kill => 1}}, kill},
                {#{treat_as_normal => [normal, {gone, self()}]}, treat_as_normal}]),
             ?assertEqual(on, maps:get(por_renaming,
                                       stats(check(E, #{faults => #{kill => {1, [{name, nobody}]}}})))),
             %% the workers share the guards (search_pool_guard)
             ?assertEqual(on, maps:get(por_renaming, stats(check(E, #{workers => 2})))),
             ?assertError({mcerlang, {bad_option_value, por_renaming, maybe, _}},
                          check(E, #{por_renaming => maybe})),
             {0, Out} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--granularity", "small",
                                              "--por-renaming", "off", "test/tprog_por.erl",
                                              "tprog_por:go_done(3)"]),
             {0, OutOn} = mce_cli_tests:run_cli(["check", "--symmetry", "off", "--granularity", "small",
                                                "test/tprog_por.erl", "tprog_por:go_done(3)"]),
             ?assertNotEqual(Out, OutOn),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--por-renaming", "maybe", "test/tprog_por.erl",
                                               "tprog_por:go_done(3)"]),
             ?assertNotEqual(nomatch, string:find(Bad, "--por-renaming maybe: expected on or off"))
     end}.
