%% @doc LTL checks of programs through mcerlang:check/2: liveness under
%% weak fairness and without, probes and props as predicates, lassos as
%% counterexamples, quantification over pids, and the database of
%% ../shared/papers/003_7dd3bcd1accd73d3.txt (Section 9).
-module(mce_ltl_check_tests).
-include_lib("eunit/include/eunit.hrl").

check(Entry, Opts) ->
    mcerlang:check(Entry, Opts#{progress => false}).

spin() -> {tprog_ltl, spin_and_work, []}.
done_prop() -> #{done => {prop, done}}.

%% The worker is always enabled, so a weakly fair run lets it finish.
spinner_weak_fairness_test() ->
    ?assertMatch({ok, #{states := _}},
                 check(spin(), #{ltl => "<> done", predicates => done_prop()})).

%% Without fairness the spinner may run forever: a lasso whose cycle is
%% the spinner's step, and the worker never moves.
spinner_no_fairness_test() ->
    {error, Cex} = check(spin(), #{ltl => "<> done", predicates => done_prop(),
                                   fairness => none}),
    #{violation := {ltl, "<> done"}, trace := Stem, cycle := Cycle} = Cex,
    ?assert(Cycle =/= []),
    [Spinner] = [P || #{effects := Es} <- Stem, {spawn, P, {_, spinner, []}, _} <- Es],
    ?assert(lists:all(fun(#{kind := run, pid := P}) -> P =:= Spinner;
                         (_) -> false
                      end, Cycle)),
    %% the worker never ran: no step of the stem or cycle is at prop(done)
    ?assertNot(lists:any(fun(#{action := {prop_passed, done}}) -> true;
                            (_) -> false end, Stem ++ Cycle)).

%% Nested DFS and the SCC search agree when fairness is off.
no_fairness_both_algorithms_test() ->
    {error, #{cycle := _}} = check(spin(), #{ltl => "[] !done", predicates => done_prop(),
                                             fairness => none}),
    {error, #{cycle := _}} = check(spin(), #{ltl => "[] !done", predicates => done_prop(),
                                             fairness => weak}).

%% A process that waits forever: the state stutters, and `<> done' fails
%% even under fairness; the cycle is the stutter step.
stuck_process_stutters_test() ->
    {error, #{violation := {ltl, _}, cycle := Cycle}} =
        check({tprog_ltl, never_done, []}, #{ltl => "<> done", predicates => done_prop()}),
    ?assertEqual([#{kind => stutter}], Cycle).

%% Probes mark the step into a state; props the state where a process
%% stands at one.
probe_and_prop_predicates_test() ->
    Preds = #{pong => {probe, pong}, stopped => {prop, stopped}},
    PP = {tprog_ltl, ping_pong, [2]},
    ?assertMatch({ok, _}, check(PP, #{ltl => "<> stopped", predicates => Preds})),
    ?assertMatch({ok, _}, check(PP, #{ltl => "[] (pong -> !stopped)", predicates => Preds})),
    ?assertMatch({ok, _}, check(PP, #{ltl => "<> pong", predicates => Preds})),
    %% a pong happens, so "never a pong" fails; the stem reaches the probe
    {error, #{trace := Stem, cycle := _}} =
        check(PP, #{ltl => "[] !pong", predicates => Preds}),
    ?assert(lists:any(fun(#{probes := [{pong, _}]}) -> true; (_) -> false end, Stem)),
    %% after the pinger stops, pong never comes back: "infinitely often pong" fails
    ?assertMatch({error, _}, check(PP, #{ltl => "[] <> pong", predicates => Preds})),
    %% patterns: a probe's value, a fun over the view
    Pinger = fun(P) -> is_pid(P) end,
    ?assertMatch({ok, _}, check(PP, #{ltl => "<> pong", predicates => #{pong => {probe, pong, Pinger}}})),
    Alive = fun(#{processes := Ps}) -> Ps =/= [] end,
    %% in the last state every process has ended
    ?assertMatch({error, #{cycle := [#{kind := stutter}]}},
                 check(PP, #{ltl => "[] alive", predicates => #{alive => Alive}})),
    ?assertMatch({ok, _}, check(PP, #{ltl => "alive U stopped",
                                      predicates => Preds#{alive => Alive}})).

%% In an LTL check the formula is the property; safety properties asked
%% for as well hold in every reachable state, and a violation of one is
%% reported with the path to it.
abnormal_exit_during_ltl_test() ->
    ?assertMatch({ok, _}, check({tprog_ltl, crash_later, []}, #{ltl => "[] true"})),
    {error, #{violation := {abnormal_exit, _, {boom, _}}, trace := Trace}} =
        check({tprog_ltl, crash_later, []}, #{ltl => "[] true", property => abnormal_exit}),
    ?assert(length(Trace) >= 2),
    ?assertMatch({error, #{violation := deadlock}},
                 check({tprog_ltl, never_done, []}, #{ltl => "[] true", property => deadlock})).

%% Paper 003, Section 9: "if a process allocates a key, then no other
%% process sets a value before it sets one, or the key is already
%% allocated", expanded over the pids of the run.
-define(DB_FORMULA, "forall P, Q: P != Q -> [](allocate(P) -> (!value(Q) U (value(P) || allocated)))").
db_preds() ->
    #{allocate => fun(P) -> {prop, {allocate, P}} end,
      value => fun(P) -> {prop, {value, P}} end,
      allocated => {prop, allocated}}.

%% Every send a step of its own, so the clients' messages race.
db_opts() ->
    #{ltl => ?DB_FORMULA, predicates => db_preds(), granularity => small}.

database_holds_test_() ->
    {timeout, 120,
     fun() ->
             ?assertMatch({ok, _}, check({tprog_ltl, db_main, [false]}, db_opts()))
     end}.

database_mutant_refuted_test_() ->
    {timeout, 120,
     fun() ->
             {error, #{violation := {ltl, ?DB_FORMULA}, trace := Stem, cycle := Cycle} = Cex} =
                 check({tprog_ltl, db_main, [true]}, db_opts()),
             %% the wrong client's value was taken: the first value the
             %% database accepts after an allocation is another client's
             Passed = [T || #{kind := run, action := {prop_passed, T}} <- Stem ++ Cycle],
             [{allocate, P} | AfterAlloc] = lists:dropwhile(fun(T) -> not is_tuple(T) orelse
                                                                       element(1, T) =/= allocate
                                                          end, Passed),
             [{value, Q} | _] = [T || {value, _} = T <- AfterAlloc],
             ?assertNotEqual(P, Q),
             %% The lasso replays, and the quantified formula fails on it.
             ?assertMatch({ok, #{violation := {ltl, ?DB_FORMULA}}}, mcerlang:replay(Cex))
     end}.

%% Bad formulas and predicates are named.
errors_test() ->
    ?assertError({mcerlang, {bad_ltl, "[] (a", {column, _}, _}},
                 check(spin(), #{ltl => "[] (a", predicates => #{a => {prop, a}}})),
    ?assertError({mcerlang, {undefined_predicate, b, 0}},
                 check(spin(), #{ltl => "[] b", predicates => #{a => {prop, a}}})),
    ?assertError({mcerlang, {bad_predicate, a, _, _}},
                 check(spin(), #{ltl => "forall P: [] a(P)", predicates => #{a => {prop, a}}})),
    ?assertError({mcerlang, {bad_predicate, a, 42, _}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => 42}})),
    ?assertError({mcerlang, {incompatible_options, ltl, invariant}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => {prop, a}}, invariant => fun(_) -> true end})),
    ?assertError({mcerlang, {bad_option_value, fairness, strong}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => {prop, a}}, fairness => strong})),
    ?assertError({mcerlang, {property_crashed, {predicate, a}, _}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => fun(_) -> erlang:error(oops) end}})),
    ?assertError({mcerlang, {bad_predicate_value, a, maybe, _}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => fun(_) -> maybe end}})).

%% Limits end an LTL check as inconclusive, and its NIF state is freed.
limits_test() ->
    Before = mce_nif:live_searches(),
    ?assertMatch({inconclusive, max_states, _},
                 check({tprog_ltl, db_main, [false]},
                       #{ltl => "[] !allocated", predicates => db_preds(), max_states => 20})),
    %% The check's worker exits just after sending its result, and only then
    %% are its resources released: wait for it.  At most Before, not equal:
    %% the workers of earlier tests may still be exiting when Before is read.
    erlang:garbage_collect(),
    wait_until(fun() -> mce_nif:live_searches() =< Before end, 40).

wait_until(Cond, 0) ->
    ?assert(Cond());
wait_until(Cond, N) ->
    case Cond() of
        true -> ok;
        false -> timer:sleep(100), wait_until(Cond, N - 1)
    end.

%% A lasso reads as stem, cycle and the state where the cycle starts.
format_lasso_test() ->
    {error, Cex} = check(spin(), #{ltl => "<> done", predicates => done_prop(),
                                   fairness => none}),
    Text = lists:flatten(io_lib:format("~ts", [mcerlang:format(Cex)])),
    ?assertNotEqual(nomatch, string:find(Text, "then a cycle of 1")),
    ?assertNotEqual(nomatch, string:find(Text, "Cycle (repeats forever):\n   3. <0.2.0> (tprog_ltl:spinner/0) receives tick")),
    ?assertNotEqual(nomatch, string:find(Text, "Violation: the LTL property <> done fails")),
    ?assertNotEqual(nomatch, string:find(Text, "State where the cycle starts:")),
    {error, Stuck} = check({tprog_ltl, never_done, []}, #{ltl => "<> done", predicates => done_prop()}),
    StuckText = lists:flatten(io_lib:format("~ts", [mcerlang:format(Stuck)])),
    ?assertNotEqual(nomatch, string:find(StuckText, "the run stays here")).

%% examples/locker.erl (paper 004): every request a client makes is
%% eventually granted, for each client.  It holds even without fairness:
%% the locker grants in request order, and while a request waits the other
%% clients block on the locker, so no run can leave the locker idle.
-define(LOCKER_LIVENESS, "forall C: [](requested(C) -> <> holding(C))").
locker_preds() ->
    #{requested => fun(C) -> {probe, request, {C, '_', '_'}} end,
      holding => fun(C) -> {prop, {holding, C, '_', '_'}} end}.

locker_liveness_test_() ->
    {timeout, 300,
     fun() ->
             Entry = {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], forever]},
             ?assertMatch({ok, _}, check(Entry, #{ltl => ?LOCKER_LIVENESS,
                                                  predicates => locker_preds()})),
             ?assertMatch({ok, _}, check(Entry, #{ltl => ?LOCKER_LIVENESS,
                                                  predicates => locker_preds(),
                                                  fairness => none})),
             %% "some client never holds the lock" fails: the lasso shows a
             %% client's grant
             {error, #{trace := Stem, cycle := Cycle}} =
                 check(Entry, #{ltl => "forall C: [] !holding(C)", predicates => locker_preds()}),
             ?assert(lists:any(fun(#{action := {prop_passed, {holding, _, a, _}}}) -> true;
                                  (#{outcome := {prop, {holding, _, a, _}}}) -> true;
                                  (_) -> false
                               end, Stem ++ Cycle))
     end}.

%% Oracle: `[] !p' by the Büchi product search and the invariant "no
%% process stands at a prop matching p" by the safety search agree, on
%% every program and prop pattern below.
safety_formulas_agree_with_invariants_test_() ->
    Programs = [{{tprog_ltl, db_main, [false]}, #{granularity => small}},
                {{tprog_ltl, db_main, [true]}, #{granularity => small}},
                {{tprog_ltl, ping_pong, [2]}, #{}},
                {{tprog_ltl, spin_and_work, []}, #{}},
                {{locker, start, [[{a, exclusive}, {a, shared}], 1]}, #{}}],
    Patterns = [top, allocated, lookup, stopped, done, {allocate, '_'}, {value, '_'},
                {holding, '_', a, shared}, {holding, '_', '_', exclusive}, nothing],
    {timeout, 300,
     fun() ->
             Verdicts =
                 [begin
                      At = fun(#{processes := Ps}) ->
                                   lists:any(fun(#{props := Props}) ->
                                                     lists:any(fun(T) -> matches(Pat, T) end, Props)
                                             end, Ps)
                           end,
                      Ltl = check(Entry, Opts#{ltl => "[] !p", predicates => #{p => {prop, Pat}}}),
                      Inv = check(Entry, Opts#{invariant => fun(V) -> not At(V) end,
                                               property => none}),
                      ?assertEqual({Entry, Pat, element(1, Inv)}, {Entry, Pat, element(1, Ltl)}),
                      %% Both counterexamples replay: the invariant's state and
                      %% the lasso on which the formula fails.
                      [?assertMatch({Entry, Pat, {ok, _}}, {Entry, Pat, mcerlang:replay(Cex)})
                       || {error, Cex} <- [Ltl, Inv]],
                      element(1, Ltl)
                  end || {Entry, Opts} <- Programs, Pat <- Patterns],
             %% the comparison is not vacuous: both verdicts occur
             ?assert(lists:member(ok, Verdicts) andalso lists:member(error, Verdicts))
     end}.

matches('_', _) -> true;
matches(P, T) when is_tuple(P), is_tuple(T), tuple_size(P) =:= tuple_size(T) ->
    lists:all(fun({A, B}) -> matches(A, B) end, lists:zip(tuple_to_list(P), tuple_to_list(T)));
matches(P, T) -> P =:= T.

%% Probe predicates of quantified formulas: the program graph is explored
%% before the predicates are known, and its probes still count.
quantified_probe_predicates_test() ->
    Entry = {locker, start, [[{a, exclusive}, {a, exclusive}], 1]},
    {error, #{violation := {ltl, _}}} =
        check(Entry, #{ltl => "forall C: [] !requested(C)", predicates => locker_preds()}),
    {error, #{violation := {ltl, _}}} =
        check(Entry, #{ltl => "[] !requested", predicates => #{requested => {probe, request}},
                       property => abnormal_exit}).

%%% ------------------------------------------------------------------------
%%% Issue 19 item 7: McErlang's spellings, predicates over the step's events
%%% and over the processes' status, through check/2.

%% `&', `|' and `=>' mean `&&', `||' and `->' in a check too.
mcerlang_spellings_test() ->
    Preds = #{pong => {probe, pong}, stopped => {prop, stopped}},
    PP = {tprog_ltl, ping_pong, [2]},
    ?assertMatch({ok, _}, check(PP, #{ltl => "[] (pong => !stopped) & <> stopped",
                                      predicates => Preds})),
    ?assertMatch({ok, _}, check(PP, #{ltl => "<> pong | [] !stopped", predicates => Preds})),
    ?assertMatch({error, #{cycle := _}},
                 check(PP, #{ltl => "[] !pong | [] !stopped", predicates => Preds})),
    ?assertMatch({error, #{cycle := _}},
                 check(PP, #{ltl => "<> stopped => [] !pong", predicates => Preds})).

ping_pong_events() ->
    #{ping_sent => {sent, '_', '_', {ping, '_'}},
      pong_sent => {sent, '_', '_', pong},
      stop_sent => {sent, '_', '_', stop},
      ping_received => {received, '_', {ping, '_'}},
      pong_received => {received, '_', pong},
      spawned_ponger => {spawned, '_', '_', {tprog_ltl, ponger, []}},
      spawned_pinger => {spawned, '_', '_', {tprog_ltl, pinger, '_'}},
      pinger_exits => {exited, fun is_pid/1, normal},
      crashed => {exited, '_', {boom, '_'}}}.

%% Sends, receives, spawns and exits of the step into a state.
event_predicates_test() ->
    PP = {tprog_ltl, ping_pong, [2]},
    Opts = fun(F) -> #{ltl => F, predicates => ping_pong_events()} end,
    Holds = ["<> ping_sent", "<> pong_sent", "<> ping_received", "<> pong_received",
             "<> spawned_ponger", "<> spawned_pinger", "<> pinger_exits", "<> stop_sent",
             "[] (ping_received => <> pong_received)", "[] (ping_sent => <> pong_sent)",
             "[] !crashed",
             %% the step that sends pong is the ponger's, after it received a ping
             "!pong_sent U ping_received",
             "[] (stop_sent => X [] !ping_sent)"],
    [?assertMatch({{ok, _}, F}, {check(PP, Opts(F)), F}) || F <- Holds],
    Fails = ["[] !ping_sent", "[] !pong_received", "[] !spawned_ponger", "[] !pinger_exits",
             "<> crashed", "[] (ping_sent => X pong_sent)"],
    [?assertMatch({{error, #{cycle := _}}, F}, {check(PP, Opts(F)), F}) || F <- Fails],
    %% the lasso shows the step the predicate names: a send of pong
    {error, #{trace := Stem, cycle := Cycle} = Cex} = check(PP, Opts("[] !pong_sent")),
    ?assert(lists:any(fun(#{kind := run, effects := Es}) -> lists:keymember(pong, 3, Es);
                         (_) -> false
                      end, Stem ++ Cycle)),
    %% and replays: the formula is judged again on the replayed run
    ?assertMatch({ok, #{violation := {ltl, "[] !pong_sent"}}}, mcerlang:replay(Cex)).

%% Processes named by registered name, in the step predicates and in the
%% status predicates; a parameterised predicate of a pid.
named_process_predicates_test() ->
    L = {tprog_ltl, s2_locker, [2]},
    Preds = #{c1_ok => {received, c1, ok}, c1_req => {sent, c1, locker, {req, '_'}},
              c2_ok => {received, c2, ok}, locker_blocked => {blocked, locker},
              c1_blocked => {blocked, c1}, c1_enabled => {enabled, c1},
              gets_ok => fun(C) -> {received, C, ok} end},
    Opts = fun(F) -> #{ltl => F, predicates => Preds} end,
    ?assertMatch({ok, _}, check(L, Opts("[] (c1_req => <> c1_ok)"))),
    %% a client's step that gets ok also releases and asks again
    ?assertMatch({ok, _}, check(L, Opts("[] (c1_ok => c1_req)"))),
    ?assertMatch({error, _}, check(L, Opts("[] (c1_req => c1_ok)"))),
    %% c1 is registered by the first step: from then on it can move or is blocked
    ?assertMatch({error, _}, check(L, Opts("[] (c1_enabled | c1_blocked)"))),
    ?assertMatch({ok, _}, check(L, Opts("X [] (c1_enabled | c1_blocked)"))),
    ?assertMatch({ok, _}, check(L, Opts("[] !(c1_enabled & c1_blocked)"))),
    {error, Blocked} = check(L, Opts("[] !locker_blocked")),
    %% a lasso of status predicates replays: judged again on the replayed run
    ?assertMatch({ok, #{violation := {ltl, "[] !locker_blocked"}}}, mcerlang:replay(Blocked)),
    ?assertMatch({error, _}, check(L, Opts("[] !c1_blocked"))),
    %% every process that ever gets ok, gets it again (under weak fairness)
    ?assertMatch({ok, _}, check(L, Opts("forall C: [] (gets_ok(C) => X <> gets_ok(C))"))).

%% ../shared/ACCEPTANCE.md AC-10 (a)-(c).  The scheduler premise written
%% by hand, with the built-in scheduled/enabled/blocked predicates, does
%% what built-in weak fairness does.
-define(WEAK_FAIRNESS, "(forall P: []<> (scheduled(P) | !enabled(P)))").
ac10_spinner_test() ->
    Spin = spin(),
    %% (a): holds with fairness, a counterexample (the spinner forever) without
    ?assertMatch({ok, _}, check(Spin, #{ltl => "<> done", predicates => done_prop()})),
    ?assertMatch({error, #{cycle := _}},
                 check(Spin, #{ltl => "<> done", predicates => done_prop(), fairness => none})),
    %% (c) for (a): the premise makes it hold without built-in fairness
    ?assertMatch({ok, _}, check(Spin, #{ltl => ?WEAK_FAIRNESS ++ " => <> done",
                                        predicates => done_prop(), fairness => none})),
    %% and the premise is not vacuous: some run satisfies it
    ?assertMatch({error, #{cycle := _}}, check(Spin, #{ltl => "!" ++ ?WEAK_FAIRNESS,
                                                       predicates => done_prop(),
                                                       fairness => none})).

-define(PHI2, "[]<> c1_ok & []<> c2_ok").
-define(PHI_SCHEDULER, "[]<> (locker_sched | locker_blocked) & []<> (c1_sched | c1_blocked) & "
        "[]<> (c2_sched | c2_blocked)").
ac10_locker_preds() ->
    #{c1_ok => {received, c1, ok}, c2_ok => {received, c2, ok},
      locker_sched => {scheduled, locker}, locker_blocked => {blocked, locker},
      c1_sched => {scheduled, c1}, c1_blocked => {blocked, c1},
      c2_sched => {scheduled, c2}, c2_blocked => {blocked, c2}}.

ac10_locker_test_() ->
    {timeout, 120,
     fun() ->
             L = {tprog_ltl, s2_locker, [2]},
             Preds = ac10_locker_preds(),
             %% (b): starvation freedom holds under weak fairness, fails without
             ?assertMatch({ok, _}, check(L, #{ltl => ?PHI2, predicates => Preds})),
             {error, #{cycle := Cycle}} = check(L, #{ltl => ?PHI2, predicates => Preds,
                                                     fairness => none}),
             ?assert(Cycle =/= []),
             %% (c): with the scheduler premise it holds without fairness,
             %% the premise written per process by name ...
             ?assertMatch({ok, _}, check(L, #{ltl => "(" ++ ?PHI_SCHEDULER ++ ") => (" ++ ?PHI2 ++ ")",
                                              predicates => Preds, fairness => none})),
             %% the premise is not vacuous
             ?assertMatch({error, _}, check(L, #{ltl => "!(" ++ ?PHI_SCHEDULER ++ ")",
                                                 predicates => Preds, fairness => none})),
             %% and a premise that leaves a client out does not suffice
             ?assertMatch({error, _}, check(L, #{ltl => "([]<> (locker_sched | locker_blocked) & "
                                                 "[]<> (c2_sched | c2_blocked)) => (" ++ ?PHI2 ++ ")",
                                                 predicates => Preds, fairness => none}))
     end}.

%% A spec of the wrong shape is named; built-in predicates need no
%% definition, and a definition of the same name wins.
event_predicate_errors_test() ->
    ?assertError({mcerlang, {bad_predicate, a, {sent, x}, _}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => {sent, x}}})),
    ?assertError({mcerlang, {bad_predicate, a, {blocked, x, y}, _}},
                 check(spin(), #{ltl => "[] a", predicates => #{a => {blocked, x, y}}})),
    ?assertError({mcerlang, {undefined_predicate, scheduled, 0}},
                 check(spin(), #{ltl => "[] scheduled", predicates => #{}})),
    ?assertError({mcerlang, {undefined_predicate, waiting, 1}},
                 check(spin(), #{ltl => "forall P: [] waiting(P)", predicates => #{}})),
    %% running(P) is enabled(P)
    ?assertMatch({ok, _}, check(spin(), #{ltl => "forall P: [] (running(P) <=> enabled(P))",
                                          predicates => #{}})),
    ?assertMatch({ok, _}, check(spin(), #{ltl => "[] (r <=> e)",
                                          predicates => #{r => {running, '_'}, e => {enabled, '_'}}})),
    ?assertMatch({error, _}, check(spin(), #{ltl => "forall P: [] !scheduled(P)", predicates => #{}})),
    %% a user's `blocked' (here: never true) replaces the built-in one
    ?assertMatch({ok, _}, check(spin(), #{ltl => "forall P: [] !blocked(P)",
                                          predicates => #{blocked => fun(_) -> {prop, nothing} end}})),
    ?assertMatch({error, _}, check({tprog_ltl, never_done, []},
                                   #{ltl => "forall P: [] !blocked(P)", predicates => #{}})).

%%% ------------------------------------------------------------------------
%%% `shortest' and `max_depth' with `ltl'

lasso_length({error, #{trace := Stem, cycle := Cycle}}) -> {length(Stem), length(Cycle)}.

%% The lasso shortened: never longer than the one found, still a
%% counterexample that replays.  The spinner's are the shortest there are:
%% without fairness the main process, the worker (at prop(done)) and the
%% spinner's start, then the spinner's tick forever; under weak fairness
%% the worker must also end first.
shortest_lasso_test_() ->
    {timeout, 120,
     fun() ->
             Spin = spin(),
             ?assertEqual({3, 1}, lasso_length(check(Spin, #{ltl => "[] !done", predicates => done_prop(),
                                                            fairness => none, shortest => true}))),
             ?assertEqual({4, 1}, lasso_length(check(Spin, #{ltl => "[] !done", predicates => done_prop(),
                                                            shortest => true}))),
             L = {tprog_ltl, s2_locker, [2]},
             Preds = ac10_locker_preds(),
             [begin
                  Opts = #{ltl => F, predicates => Preds, fairness => Fair},
                  Found = check(L, Opts),
                  {error, Cex} = Short = check(L, Opts#{shortest => true}),
                  {S0, C0} = lasso_length(Found),
                  {S1, C1} = lasso_length(Short),
                  ?assert(S1 + C1 =< S0 + C0),
                  ?assertMatch({{ok, #{violation := {ltl, F}}}, _}, {mcerlang:replay(Cex), {F, Fair}})
              end || F <- ["[] !c2_ok", "<>[] !c1_ok", ?PHI2], Fair <- [none, weak],
                     not (F =:= ?PHI2 andalso Fair =:= weak)],
             %% on this one the search's lasso has a longer stem than needed
             {S2, C2} = lasso_length(check(L, #{ltl => "[] !c2_ok", predicates => Preds})),
             {S3, C3} = lasso_length(check(L, #{ltl => "[] !c2_ok", predicates => Preds, shortest => true})),
             ?assert(S3 + C3 < S2 + C2)
     end}.

%% max_depth bounds the product search: inconclusive when the bound cut
%% something and no lasso fits, the verdict of the unbounded check once it
%% is deep enough; the exploration for `forall' is bounded too.
max_depth_test_() ->
    {timeout, 120,
     fun() ->
             PP = {tprog_ltl, ping_pong, [3]},
             Preds = #{stopped => {prop, stopped}},
             Opts = #{ltl => "[] !stopped", predicates => Preds},
             ?assertMatch({inconclusive, max_depth, _}, check(PP, Opts#{max_depth => 3})),
             ?assertMatch({error, #{cycle := _}}, check(PP, Opts#{max_depth => 20})),
             ?assertMatch({inconclusive, max_depth, _},
                          check(PP, #{ltl => "<> stopped", predicates => Preds, max_depth => 3})),
             ?assertMatch({ok, _}, check(PP, #{ltl => "<> stopped", predicates => Preds, max_depth => 20})),
             ?assertMatch({ok, _}, check(PP, #{ltl => "<> stopped", predicates => Preds, max_depth => infinity})),
             L = {tprog_ltl, s2_locker, [2]},
             ?assertMatch({inconclusive, max_depth, _},
                          check(L, #{ltl => "forall P: [] !blocked(P)", predicates => #{}, max_depth => 3})),
             ?assertMatch({error, _},
                          check(L, #{ltl => "forall P: [] !blocked(P)", predicates => #{}, max_depth => 20})),
             %% a lasso found within the bound is a real one
             {error, Cex} = check(L, #{ltl => "[] !c2_ok", predicates => ac10_locker_preds(), max_depth => 20}),
             ?assertMatch({ok, _}, mcerlang:replay(Cex))
     end}.
