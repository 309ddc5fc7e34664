%% The text report of counterexamples (mcerlang:format/1,2): each kind of
%% step, who moves and where, lassos, the final state, and how long terms
%% are cut.  Every test formats a real counterexample found by check/2 or
%% simulate/2.
-module(mce_format_tests).
-include_lib("eunit/include/eunit.hrl").

-define(N1, 'n1@sim').
-define(N2, 'n2@sim').
-define(N3, 'n3@sim').

check(Entry, Opts) ->
    {error, Cex} = mcerlang:check(Entry, Opts#{progress => false}),
    Cex.

text(Cex) ->
    text(Cex, #{}).

text(Cex, Opts) ->
    unicode:characters_to_list(mcerlang:format(Cex, Opts)).

%% Substrings and regular expressions the report must hold, each reported
%% by itself when missing.
has(Text, Part) ->
    ?assertEqual({Part, true}, {Part, string:find(Text, Part) =/= nomatch}).

has_re(Text, Re) ->
    ?assertEqual({Re, true}, {Re, re:run(Text, Re, [unicode]) =/= nomatch}).

%%--------------------------------------------------------------------
%% Steps
%%--------------------------------------------------------------------

%% The header names the violation; each step names its process by pid and
%% initial function; effects go on indented lines; a receive shows where.
deadlock_test() ->
    Cex = check({dining, start, [2]}, #{}),
    Text = text(Cex),
    has_re(Text, "^Counterexample: deadlock after [0-9]+ steps\n"),
    has(Text, "   1. <0.1.0> (dining:start/1) starts\n"
              "        spawns <0.2.0> running dining:fork/1\n"
              "        spawns <0.3.0> running dining:fork/1\n"
              "        spawns <0.4.0> running dining:philosopher/3\n"),
    %% A step without effects is one line.
    has_re(Text, "\n   [0-9]\\. <0\\.2\\.0> \\(dining:fork/1\\) starts; waits in receive at "
                 "dining\\.erl:17 \\(dining:fork/1\\)\n"),
    %% A receive: the message and the source line of the receive; the
    %% message sent, and where the process waits next.
    has_re(Text, "\\(dining:fork/1\\) receives \\{take,<0\\.[45]\\.0>\\} at dining\\.erl:17\n"
                 "        sends \\{taken,<0\\.[23]\\.0>\\} to <0\\.[45]\\.0>\n"
                 "        waits in receive at dining\\.erl:20 \\(dining:fork/1\\)\n"),
    has(Text, "Violation: deadlock (processes are alive but none can move)\nFinal state:\n"),
    has_re(Text, "\n  <0\\.2\\.0> \\(dining:fork/1\\) waits in receive at dining\\.erl:20 "
                 "\\(dining:fork/1\\), mailbox \\[\\{take,<0\\.[45]\\.0>\\}\\]\n"),
    has_re(Text, "\n  <0\\.4\\.0> \\(dining:philosopher/3\\) waits in receive at dining\\.erl:34 "
                 "\\(dining:take/1\\), mailbox empty\n"),
    has_re(Text, "\\([0-9]+ states( \\([0-9]+ more passed through\\))?, [0-9]+ transitions, [0-9]+ ms\\)\n$"),
    %% One node: pids do not carry it.
    ?assertEqual(nomatch, string:find(Text, "@")),
    %% format/1 is format/2 with no options.
    ?assertEqual(Text, unicode:characters_to_list(mcerlang:format(Cex))).

%% A crash: where it happened, and the stack in the violation.
crash_test() ->
    %% The plain search's 4 steps (under symmetry reduction the mapped run
    %% of the representatives has 5: it starts the configurer first).
    Text = text(check({racy_child, start, []}, #{symmetry => false})),
    has(Text, "Counterexample: abnormal exit of <0.2.0> after 4 steps\n"),
    has(Text, "        spawn_links <0.2.0> running racy_child:worker/0\n"),
    has(Text, "   4. <0.2.0> (racy_child:worker/0) receives {job,21,<0.1.0>} at racy_child.erl:24; "
              "crashes: function_clause in racy_child:handle_first/1 at racy_child.erl:28\n"),
    has(Text, "Violation: process <0.2.0> (racy_child:worker/0) exited abnormally: function_clause\n"
              "  stack: racy_child:handle_first({job,21,<0.1.0>}) at racy_child.erl:28\n"),
    has(Text, "  <0.3.0> (racy_child:configurer/1) not started yet, mailbox empty\n").

%% An exit with a plain reason; a receive that times out.
timeout_exit_test() ->
    Text = text(check({tprog_format, timeout, []}, #{})),
    has_re(Text, "   2\\. <0\\.1\\.0> \\(tprog_format:timeout/0\\) times out in receive at "
                 "tprog_format\\.erl:[0-9]+; exits with reason timed_out\n"),
    has(Text, "Violation: process <0.1.0> (tprog_format:timeout/0) exited abnormally: timed_out\n"),
    has(Text, "Final state:\n  (no processes)\n").

timer_test() ->
    Text = text(check({tprog_format, timer, []}, #{})),
    has_re(Text, "        starts a 100 ms timer #Ref<[0-9.]+> to send tick to <0\\.1\\.0>\n"),
    has_re(Text, "   2\\. timer #Ref<[0-9.]+> fires: delivers message tick to <0\\.1\\.0>\n"),
    has_re(Text, "   3\\. <0\\.1\\.0> \\(tprog_format:timer/0\\) receives tick at "
                 "tprog_format\\.erl:[0-9]+; exits with reason ticked\n").

%% Several nodes: pids carry their node (`node/<0.N.S>', as the pid reads
%% on its own node, never this VM's `<8349.N.S>'); the ether delivers
%% messages; output is shown as printed.
ether_and_nodes_test() ->
    Cex = check({world_hello, worldhello, [?N1, ?N2, ?N3]}, #{nodes => [?N1, ?N2, ?N3]}),
    Text = text(Cex),
    has(Text, "   1. n1@sim/<0.1.0> (world_hello:worldhello/3) starts\n"),
    has_re(Text, "ether delivers message world from n1@sim/<0\\.[0-9]+\\.0> to n2@sim/<0\\.[0-9]+\\.0>\n"),
    has_re(Text, "n3@sim/<0\\.[0-9]+\\.0> \\(world_hello:procC/0\\) receives hello at world_hello\\.erl:[0-9]+\n"
                 "        prints \"world hello\\\\n\"\n"
                 "        exits with reason \\{wrong_order,world,hello\\}\n"),
    has_re(Text, "Violation: process n3@sim/<0\\.[0-9]+\\.0> \\(world_hello:procC/0\\) exited abnormally: "
                 "\\{wrong_order,world,hello\\}\n"),
    no_raw_remote_pid(Text).

%% No pid in the VM's own remote form, <NodeIndex.N.S> with NodeIndex > 0.
no_raw_remote_pid(Text) ->
    ?assertEqual(nomatch, re:run(Text, "<[1-9][0-9]*\\.[0-9]+\\.[0-9]+>", [unicode])).

%% Link and monitor requests and the 'DOWN' cross the ether between nodes.
link_monitor_signals_test() ->
    Text = text(check({tprog_format, remote_watch, [?N2]}, #{nodes => [?N1, ?N2]})),
    has_re(Text, "        spawns (n2@sim/<0\\.[0-9]+\\.0>) running tprog_format:waiter/0\n"
                 "        links to \\1\n"
                 "        monitors \\1 \\(#Ref<[0-9.]+>\\)\n"
                 "        sends stop to \\1\n"),
    has_re(Text, "ether delivers link request from n1@sim/<0\\.1\\.0> to n2@sim/<0\\.[0-9]+\\.0>\n"),
    has_re(Text, "ether delivers 'DOWN' #Ref<[0-9.]+> with reason normal from n2@sim/<0\\.[0-9]+\\.0> "
                 "to n1@sim/<0\\.1\\.0>\n"),
    %% inside a message too
    has_re(Text, "\\(tprog_format:remote_watch/1\\) receives \\{'DOWN',#Ref<[0-9.]+>,process,"
                 "n2@sim/<0\\.[0-9]+\\.0>,normal\\} at tprog_format\\.erl:[0-9]+; exits with reason \\{down,normal\\}\n"),
    no_raw_remote_pid(Text).

%% A link in one node: spawn_link and the trapped exit in the mailbox.
link_in_one_node_test() ->
    Text = text(check({tprog, diff_trap_exit_child_crash, []}, #{})),
    has(Text, "        sets trap_exit to true\n"
              "        spawn_links <0.2.0> running fun in tprog:diff_trap_exit_child_crash/0\n"),
    has(Text, "   2. <0.2.0> (fun in tprog:diff_trap_exit_child_crash/0) starts; exits with reason boom\n"),
    has_re(Text, "  <0\\.1\\.0> \\(tprog:diff_trap_exit_child_crash/0\\) waits in receive at "
                 "tprog\\.erl:[0-9]+ \\(tprog:diff_trap_exit_child_crash/0\\), "
                 "mailbox \\[\\{'EXIT',<0\\.2\\.0>,boom\\}\\]\n").

choice_test() ->
    Text = text(check({tprog, choose, []}, #{treat_as_normal => [{result, left}]})),
    has(Text, "   1. <0.1.0> (tprog:choose/0) starts; reaches mcerlang:choice/1 with 2 alternatives\n"),
    has(Text, "   2. <0.1.0> (tprog:choose/0) takes alternative 2 of mcerlang:choice/1; "
              "exits with reason {result,right}\n").

fault_test() ->
    Nodes = #{nodes => [?N1, ?N2]},
    Crash = text(check({tprog_dist, crash_watch, [?N2]}, Nodes#{faults => #{crash_node => 1}})),
    has_re(Crash, "\n   [0-9]\\. FAULT: node n2@sim crashes\n"),
    has_re(Crash, "        spawn_links n2@sim/<0\\.[0-9]+\\.0> running fun in tprog_dist:crash_watch/1\n"),
    no_raw_remote_pid(Crash),
    has_re(Crash, "crashes: \\{badmatch,noconnection\\} in tprog_dist:crash_watch/1 at "
                  "tprog_dist\\.erl:[0-9]+\n"),
    %% A blind kill spares the entry: this one is aimed at it.
    Entry = fun(#{initial_call := IC}) -> IC =:= {tprog_dist, killable, 0} end,
    Kill = text(check({tprog_dist, killable, []}, #{faults => #{kill => {1, [{predicate, Entry}]}}})),
    has(Kill, "   4. FAULT: process <0.1.0> (tprog_dist:killable/0) is killed\n").

%% Probes on the step's lines; a prop where the process stands, and the
%% step that passes it.
probe_prop_test() ->
    Text = text(check({tprog_format, probe_prop, []}, #{})),
    has(Text, "   1. <0.1.0> (tprog_format:probe_prop/0) starts\n"
              "        probe stage: {one,<0.1.0>}\n"
              "        stands at mcerlang:prop(checkpoint)\n"),
    has(Text, "   2. <0.1.0> (tprog_format:probe_prop/0) passes mcerlang:prop(checkpoint); "
              "exits with reason passed\n").

%% A monitor's verdict, and processes of the final state standing at props.
monitor_violation_test() ->
    Text = text(check({tprog_props, mutex, [false]}, #{monitor => {tprog_props, 10}})),
    has(Text, "Counterexample: monitor tprog_props objects after"),
    has(Text, "Violation: monitor tprog_props says {mutex_violated,[1,2]}\n"),
    has(Text, "  <0.2.0> (tprog_props:worker/3) at mcerlang:prop({in_cs,1}), mailbox empty\n").

%% An invariant false everywhere fails in the initial state already.
invariant_violation_test() ->
    Text = text(check({dining, start, [2]}, #{invariant => fun never/1})),
    has(Text, "Counterexample: an invariant fails in the initial state\n"),
    has(Text, "Violation: invariant fun mce_format_tests:never/1 does not hold\n"),
    has(Text, "  <0.1.0> (dining:start/1) not started yet, mailbox empty\n").

never(_View) -> false.

%% Steps of granularity small, ETS writes, and a process that yielded in
%% the final state.
granularity_small_test() ->
    %% The exact reduction rules: with por_renaming the incrementers end
    %% before the violation, and the final state shows no yielded process.
    Text = text(check({tprog, ets_counter_race, []}, #{granularity => small, por_renaming => false})),
    has(Text, "        spawns <0.2.0> running fun in tprog:ets_counter_race/0\n"
              "        yields (granularity small)\n"),
    has(Text, "<0.2.0> (fun in tprog:ets_counter_race/0) continues\n"),
    has_re(Text, "        ETS table [0-9]+ now holds \\[\\{n,1\\}\\]\n"),
    has(Text, "(fun in tprog:ets_counter_race/0) yielded (granularity small), about to continue").

%% Registered names and processes started by proc_lib (supervisor and
%% gen_server with their callback module).
names_and_otp_test() ->
    Text = text(check({locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]}, #{})),
    has(Text, "        spawns <0.2.0> running supervisor locker\n"),
    has(Text, "   3. <0.3.0> (gen_server locker) starts\n"
              "        registers <0.3.0> as locker\n"),
    %% Named from the step after its register on.
    has_re(Text, "   [0-9]+\\. <0\\.3\\.0> locker \\(gen_server locker\\) receives "
                 "\\{'\\$gen_call',"),
    has_re(Text, "        probe request: \\{<0\\.5\\.0>,a,exclusive\\}\n"),
    has_re(Text, "  <0\\.3\\.0> locker \\(gen_server locker\\) waits in receive at "
                 "gen_server\\.erl:[0-9]+ \\(gen_server:loop/[0-9]\\), mailbox empty, linked to <0\\.2\\.0>\n").

registered_name_test() ->
    Text = text(check({tprog_format, long_message, []}, #{})),
    has(Text, "        registers <0.2.0> as format_sink\n"),
    has_re(Text, "   4\\. <0\\.2\\.0> format_sink \\(tprog_format:sink/1\\) receives \\{data,"),
    has(Text, "Violation: process <0.2.0> format_sink (tprog_format:sink/1) exited abnormally: "
              "{too_long,190}\n").

%%--------------------------------------------------------------------
%% Lassos
%%--------------------------------------------------------------------

lasso_test() ->
    Cex = check({tprog_ltl, spin_and_work, []},
                #{ltl => "<> done", predicates => #{done => {prop, done}}, fairness => none}),
    Text = text(Cex),
    has(Text, "Counterexample: the LTL property <> done fails after 2 steps, then a cycle of "
              "1 step repeating forever\n"),
    has(Text, "   2. <0.2.0> (tprog_ltl:spinner/0) starts\n"),
    has_re(Text, "Cycle \\(repeats forever\\):\n"
                 "   3\\. <0\\.2\\.0> \\(tprog_ltl:spinner/0\\) receives tick at tprog_ltl\\.erl:[0-9]+\n"
                 "        sends tick to <0\\.2\\.0>\n"),
    has(Text, "Violation: the LTL property <> done fails on this run"),
    has_re(Text, "State where the cycle starts:\n"
                 "  <0\\.2\\.0> \\(tprog_ltl:spinner/0\\) waits in receive at tprog_ltl\\.erl:[0-9]+ "
                 "\\(tprog_ltl:spinner/0\\), mailbox \\[tick\\]\n"
                 "  <0\\.3\\.0> \\(tprog_ltl:worker/0\\) not started yet, mailbox empty\n"),
    ?assertEqual(nomatch, string:find(Text, "Final state:")).

stutter_test() ->
    Text = text(check({tprog_ltl, never_done, []},
                      #{ltl => "<> done", predicates => #{done => {prop, done}}})),
    has(Text, "after 1 step, then a cycle of 1 step"),
    has(Text, "Cycle (repeats forever):\n"
              "   2. (no process or channel can move: the run stays here)\n").

%%--------------------------------------------------------------------
%% Simulation
%%--------------------------------------------------------------------

simulation_test() ->
    {error, Cex} = mcerlang:simulate({dining, start, [2]}, #{seed => 7, progress => false}),
    Text = text(Cex),
    has_re(Text, "^Counterexample: deadlock after [0-9]+ steps\n"),
    has_re(Text, "\nFound by random simulation: run [0-9]+ with seed 7 "
                 "\\(simulate/2 with seed => 7 walks it again\\)\n").

%% The pieces for tools that show a run a step at a time.
pieces_test() ->
    #{trace := [First, Second | _]} = check({dining, start, [2]}, #{}),
    Step1 = unicode:characters_to_list(mce_format:step(1, First, #{})),
    has_re(Step1, "^   1\\. <0\\.1\\.0> \\(dining:start/1\\) starts\n"
                  "        spawns <0\\.2\\.0> running dining:fork/1\n"),
    %% Out of context the process has no initial function unless it starts.
    has_re(unicode:characters_to_list(mce_format:step(2, Second, #{})),
           "^   2\\. <0\\.[2-5]\\.0> \\(dining:[a-z]+/[13]\\) starts"),
    ?assertEqual("{data,[1|...]}",
                 unicode:characters_to_list(mce_format:term({data, lists:seq(1, 9)}, #{depth => 4}))),
    ?assertEqual("{data,[1,...",
                 unicode:characters_to_list(mce_format:term({data, lists:seq(1, 9)}, #{width => 12}))),
    ?assertError({mcerlang, {bad_format_option, depth, 0}}, mce_format:term(x, #{depth => 0})),
    ?assertEqual("Violation: deadlock (processes are alive but none can move)\n",
                 unicode:characters_to_list(mce_format:violation(deadlock))).

%%--------------------------------------------------------------------
%% Long terms
%%--------------------------------------------------------------------

-define(XS, "\"" ++ lists:duplicate(150, $x) ++ "\"").

%% The message {data, lists:seq(1, 40), lists:duplicate(150, $x)}, as the
%% report prints it in the send.
sent(Text) ->
    {match, [Msg]} = re:run(Text, "\n        sends (\\{data,.*) to <0\\.2\\.0>\n",
                            [unicode, {capture, all_but_first, list}]),
    Msg.

abbreviated_by_default_test() ->
    Text = text(check({tprog_format, long_message, []}, #{})),
    Msg = sent(Text),
    %% Depth 8 cuts the list; the string is cut at 100 characters.
    ?assertEqual(100, length(Msg)),
    ?assertEqual("{data,[1,2,3,4,5|...],\"xxxx", lists:sublist(Msg, 27)),
    ?assertEqual("...", lists:nthtail(97, Msg)),
    ?assertEqual(nomatch, string:find(Text, ?XS)),
    ?assertEqual(nomatch, string:find(Text, "39,40")).

full_test() ->
    Cex = check({tprog_format, long_message, []}, #{}),
    Full = text(Cex, #{full => true}),
    Whole = lists:flatten(["{data,[", lists:join(",", [integer_to_list(I) || I <- lists:seq(1, 40)]),
                           "],", ?XS, "}"]),
    ?assertEqual(Whole, sent(Full)),
    has(Full, "receives " ++ Whole ++ " at tprog_format.erl:"),
    %% full overrides depth and width, and is the same as both infinite.
    ?assertEqual(Full, text(Cex, #{full => true, depth => 2, width => 10})),
    ?assertEqual(Full, text(Cex, #{depth => infinity, width => infinity})),
    ?assertEqual(text(Cex), text(Cex, #{full => false})).

width_and_depth_test() ->
    Cex = check({tprog_format, long_message, []}, #{}),
    %% Width infinity: the string whole, the list still cut at depth 8.
    ?assertEqual("{data,[1,2,3,4,5|...]," ++ ?XS ++ "}", sent(text(Cex, #{width => infinity}))),
    %% Depth infinity: the whole list, the term cut at 100 characters.
    Deep = sent(text(Cex, #{depth => infinity})),
    ?assertEqual(100, length(Deep)),
    ?assertEqual("{data,[1,2,3,4,5,6,7,8,9,10,", lists:sublist(Deep, 28)),
    ?assertEqual("{data,...}", sent(text(Cex, #{depth => 2}))),
    ?assertEqual("{data,[1,2,...", sent(text(Cex, #{width => 14}))),
    %% Every term obeys the width, the exit reason too.
    has(text(Cex, #{width => 8}), "exits with reason {too_..."),
    has(text(Cex, #{depth => 2}), "exits with reason {too_long,...}").

bad_option_test() ->
    Cex = check({tprog, choose, []}, #{treat_as_normal => [{result, left}]}),
    [?assertError({mcerlang, {bad_format_option, K, V}}, mcerlang:format(Cex, #{K => V}))
     || {K, V} <- [{depth, 0}, {depth, -1}, {depth, 2.0}, {depth, deep}, {width, 0},
                   {width, "100"}, {full, yes}, {colour, true}]],
    %% A bad option is an error even next to full => true.
    ?assertError({mcerlang, {bad_format_option, width, 0}},
                 mcerlang:format(Cex, #{full => true, width => 0})).

%% `fold => otp': a gen_server call reads as a call and its reply; the
%% monitor and demonitor of the call are left out, the server's own
%% monitors are not.
fold_otp_test() ->
    Cex = check({locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]}, #{}),
    Plain = text(Cex),
    has(Plain, "'$gen_call'"),
    has(Plain, "        monitors <0.3.0> (#Ref<"),
    Folded = text(Cex, #{fold => otp}),
    has(Folded, "   8. <0.5.0> (locker:client/3) starts\n"
                "        calls <0.3.0> with {request,a,exclusive}\n"),
    has(Folded, " receives call {request,a,exclusive} from <0.5.0> at gen_server.erl:"),
    has(Folded, "        replies granted to <0.5.0>\n"),
    has(Folded, " (locker:client/3) gets reply granted at gen.erl:"),
    %% the locker monitors its clients itself: that stays
    has(Folded, "        monitors <0.5.0> (#Ref<"),
    ?assertEqual(nomatch, string:find(Folded, "$gen_call")),
    ?assertEqual(nomatch, string:find(Folded, "monitors <0.3.0>")),
    ?assertEqual(nomatch, re:run(Folded, "demonitors #Ref<0\\.0\\.5\\.")),
    %% the same steps, numbered alike
    Numbers = fun(T) -> re:run(T, "^ +([0-9]+)\\. ", [global, multiline, {capture, all_but_first, list}]) end,
    ?assertEqual(Numbers(Plain), Numbers(Folded)),
    ?assertEqual(Plain, text(Cex, #{fold => none})),
    ?assertError({mcerlang, {bad_format_option, fold, gen}}, text(Cex, #{fold => gen})).
