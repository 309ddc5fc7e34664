%% @doc Stepping sessions: a program's states one at a time.
%%
%% The C search, in expand-only mode, gives the successors of any state
%% it has named, each with the step that leads there; a session walks
%% the state space along paths the caller picks.  Replaying a
%% counterexample (mcerlang:replay/1), random simulation
%% (mcerlang:simulate/2) and the debugger (mce_debug) are walks of this
%% kind.  Safety monitors and invariants are judged here, in Erlang, on
%% each state a walk enters, since a walk, not the C search, owns the path.
%%
%% A session uses the process dictionary of translated code: it must be
%% used only from the process that opened it (see mcerlang:isolated/2).
-module(mce_session).

-export([open/2, root/1, expand/2, judge/4, initial_observer/1, final_state/2,
         view/3, violation_of/2, options/1, tick/1, stats/1, same_step/2, has_dead/1]).
-export([replay/3, simulate/3]).
-export_type([session/0, successor/0]).

-record(session, {ctx :: term(),
                  search :: mce_nif:search(),
                  root :: pos_integer(),
                  memo = #{} :: #{pos_integer() => {[successor()], boolean()}},
                  started :: integer()}).
-opaque session() :: #session{}.

%% One transition out of a state: where it leads, the step as users read
%% it (mce_search:step/1), the raw label (for views), who moves, and the
%% safety violation the step itself is (an abnormal exit), if any.
-type successor() :: #{state := pos_integer(), step := map(), label := term(),
                       agent := mce_nif:agent(), violation := none | term()}.

%% Expansions kept for the states of the walk, so that going back and
%% forth costs nothing; a simulation's memo is bounded by this.
-define(MEMO_LIMIT, 100000).

%%--------------------------------------------------------------------
%% Sessions
%%--------------------------------------------------------------------

%% @doc A session over the program that `InitCall' (mce_translate:init_call/1)
%% starts, with checked options `Opts'.
-spec open(term(), map()) -> session().
open(InitCall, Opts) ->
    %% A session keeps no visited set: the table options of a check (the
    %% NIF refuses a lossy table in expand-only mode) do not apply.
    Ctx = mce_search:new_context(Opts#{max_states => 0, max_depth => 0, table => exact,
                                       table_size => 0, expand_past_stops => true}, true),
    S = mce_search:search(Ctx),
    put('$mce_session_deaths', []),
    {expanded, Root, Succs, Deadlock} = answer(mce_nif:start(S, InitCall, 1), S, Opts),
    Sess = #session{ctx = Ctx, search = S, root = Root,
                    started = erlang:monotonic_time(millisecond)},
    remember(Root, successors(Succs, Opts), Deadlock, Sess).

-spec root(session()) -> pos_integer().
root(#session{root = Root}) -> Root.

-spec options(session()) -> map().
options(#session{ctx = Ctx}) -> mce_search:options(Ctx).

%% @doc The successors of state `W' (one the session has named), and
%% whether `W' is a deadlock (processes alive, none can move).
-spec expand(session(), pos_integer()) -> {[successor()], boolean(), session()}.
expand(#session{memo = Memo} = Sess, W) ->
    case Memo of
        #{W := {Succs, Deadlock}} ->
            {Succs, Deadlock, Sess};
        _ ->
            Opts = options(Sess),
            put('$mce_session_deaths', []),
            {expanded, W, Raw, Deadlock} = answer(mce_nif:expand(Sess#session.search, W),
                                                  Sess#session.search, Opts),
            Succs = successors(Raw, Opts),
            {Succs, Deadlock, remember(W, Succs, Deadlock, Sess)}
    end.

remember(W, Succs, Deadlock, #session{memo = Memo} = Sess) ->
    Memo1 = case map_size(Memo) >= ?MEMO_LIMIT of
                true -> #{};
                false -> Memo
            end,
    Sess#session{memo = Memo1#{W => {Succs, Deadlock}}}.

%% The expansion lists every successor, those that stop the search too;
%% the deaths judged violations (answer/3) are those of the stopping
%% successors that are no violation by themselves, in the same order.
successors(Raw, Opts) ->
    successors(Raw, Opts, lists:reverse(get('$mce_session_deaths'))).

successors([], _Opts, _Deaths) ->
    [];
successors([{W, Agent, Label, Stop} | Raw], Opts, Deaths) ->
    {Violation, Deaths1} = case Stop of
                               true -> stop_violation(Label, Opts, Deaths);
                               false -> {none, Deaths}
                           end,
    [#{state => W, step => mce_search:step(Label), label => Label, agent => Agent,
       violation => Violation}
     | successors(Raw, Opts, Deaths1)].

%% @doc The safety violation that a step is by itself: an abnormal exit
%% when that is a property.
-spec violation_of(term(), map()) -> none | term().
violation_of(#{pid := Pid, outcome := Outcome}, Opts) ->
    mce_search:violation(Outcome, Pid, Opts);
violation_of(_, _Opts) ->
    none.

%% A step that stops the search is a violation by itself, or killed a
%% process by an exit signal (answer/3 remembers which, in order).
stop_violation(Label, Opts, Deaths) ->
    case {violation_of(Label, Opts), Deaths} of
        {none, [V | Rest]} -> {V, Rest};
        {none, []} -> {undefined, []};
        {V, _} -> {V, Deaths}
    end.

%% Answers the match and run requests of one expansion.
answer({deaths, Deaths}, S, Opts) ->
    Violation = mce_search:death_violation(Deaths, Opts),
    Violation =/= none andalso put('$mce_session_deaths', [Violation | get('$mce_session_deaths')]),
    answer(mce_nif:deaths_judged(S, Violation =/= none), S, Opts);
answer({match, Cont, Msg}, S, Opts) ->
    answer(mce_nif:match(S, mce_exec:matches(Cont, Msg)), S, Opts);
answer({run, Pid, How, Cont, Dict, TrapExit}, S, Opts) ->
    {Outcome, Effects, Label} = mce_exec:run(S, Pid, How, Cont, Dict, TrapExit),
    Violation = mce_search:violation(Outcome, Pid, Opts),
    answer(mce_nif:ran(S, Outcome, Effects, Label, Violation =/= none), S, Opts);
answer({expanded, _, _, _} = Expanded, _S, _Opts) ->
    Expanded;
answer(Other, _S, _Opts) ->
    mce_search:internal_error(Other),
    erlang:error({mcerlang_internal, expand, Other}).

%% @doc The monitors' states before the first step.
-spec initial_observer(session()) -> [term()].
initial_observer(#session{ctx = Ctx}) -> mce_search:initial_observer(Ctx).

%% @doc Judges state `W', entered by the step with raw label `Label'
%% (`none' for the initial state), by the invariants and monitors.
-spec judge(session(), pos_integer(), term(), [term()]) ->
          {ok, [term()]} | skip | {violation, term()}.
judge(#session{ctx = Ctx} = Sess, W, Label, Observer) ->
    Opts = mce_search:options(Ctx),
    case maps:get(monitor, Opts) =:= [] andalso maps:get(invariant, Opts) =:= [] andalso
         maps:get(mailbox_bound, Opts) =:= infinity of
        true -> {ok, Observer};
        false -> mce_search:judge(view(Sess, W, Label), Observer, Ctx)
    end.

%% @doc The read-only view (mcerlang:view()) of state `W'.
-spec view(session(), pos_integer(), term()) -> mcerlang:view().
view(#session{ctx = Ctx, search = S}, W, Label) ->
    ok = mce_nif:focus(S, W),
    mce_search:view(Ctx, Label).

%% @doc The processes and the ether of state `W', as in counterexamples.
-spec final_state(session(), pos_integer()) -> #{final_state := [map()], ether := [map()]}.
final_state(#session{search = S}, W) ->
    ok = mce_nif:focus(S, W),
    #{final_state => mce_search:final_state(S), ether => mce_search:ether(S)}.

%% @doc The time, memory and stop-request checks of a long walk.
-spec tick(session()) -> {continue, session()} | {stop, term()}.
tick(#session{ctx = Ctx} = Sess) ->
    case mce_search:tick(Ctx) of
        {continue, Ctx1} -> {continue, Sess#session{ctx = Ctx1}};
        {stop, _} = Stop -> Stop
    end.

-spec stats(session()) -> map().
stats(#session{ctx = Ctx}) ->
    maps:with([states, transitions, time_ms, memory, memory_used, parts], mce_search:stats(Ctx)).

%%--------------------------------------------------------------------
%% Replay
%%--------------------------------------------------------------------

%% @doc Walks the steps of counterexample `Cex' from the initial state,
%% each step matched exactly among the successors of the state reached,
%% and checks that the walk ends in the same violation.
-spec replay(term(), map(), map()) -> {ok, map()} | {error, term()}.
replay(InitCall, Opts, #{trace := Trace, violation := Violation} = Cex) ->
    %% A replay is not a search: the check's time limit is not its own.
    Sess0 = open(InitCall, Opts#{max_time => infinity}),
    put('$mce_walked', []),
    Root = root(Sess0),
    Cycle = maps:get(cycle, Cex, []),
    case judge(Sess0, Root, none, initial_observer(Sess0)) of
        {ok, Observer} ->
            case walk(Trace ++ Cycle, 1, Root, Observer, Sess0) of
                {ok, Ends, Sess1} ->
                    Stem = lists:sublist(Ends, length(Trace) + 1),
                    verdict(Violation, Ends, lists:last(Stem), Cycle, Sess1, Cex);
                {violation, N, Got, _Sess1} when N =:= length(Trace) + length(Cycle) ->
                    %% The last step is itself the violation (an abnormal exit
                    %% or a state a property rejects).
                    same_violation(Violation, Got, Cex, _Sess1);
                {violation, N, Got, _} ->
                    {error, {not_reproduced, {early_violation, N, Got}}};
                {error, _} = Error ->
                    Error
            end;
        {violation, Got} when Trace =:= [], Cycle =:= [] ->
            same_violation(Violation, {Got, Root}, Cex, Sess0);
        {violation, Got} ->
            {error, {not_reproduced, {early_violation, 0, Got}}};
        skip ->
            {error, {not_reproduced, {pruned, 0}}}
    end.

%% Each expected step among the successors; the positions of the run, in
%% order: the states entered with the raw label of the step into each
%% (the initial state first, with none).
walk(Steps, N, W, Observer, Sess) ->
    walk(Steps, N, W, Observer, Sess, [{W, none}]).

walk([], _N, _W, _Observer, Sess, Ends) ->
    {ok, lists:reverse(Ends), Sess};
walk([#{kind := stutter} = Stutter | Rest], N, W, Observer, Sess, Ends) ->
    walked(Stutter),
    {Succs, _Deadlock, Sess1} = expand(Sess, W),
    case [S || #{agent := A} = S <- Succs, A =/= none] of
        [] -> walk(Rest, N + 1, W, Observer, Sess1, [{W, stutter} | Ends]);
        Moving -> {error, {diverged, N, #{kind => stutter}, [S || #{step := S} <- Moving]}}
    end;
walk([Expected | Rest], N, W, Observer, Sess, Ends) ->
    {Succs, _Deadlock, Sess1} = expand(Sess, W),
    case [S || #{step := Step} = S <- Succs, same_step(Expected, Step)] of
        [] ->
            {error, {diverged, N, Expected, [S || #{step := S} <- Succs]}};
        [#{state := W1, violation := V, step := Step} | _] when V =/= none ->
            walked(Step),
            {violation, N, {V, W1}, Sess1};
        [#{state := W1, label := Label, step := Step} | _] ->
            walked(Step),
            case judge(Sess1, W1, Label, Observer) of
                {ok, Observer1} -> walk(Rest, N + 1, W1, Observer1, Sess1, [{W1, Label} | Ends]);
                {violation, V} -> {violation, N, {V, W1}, Sess1};
                skip -> {error, {not_reproduced, {pruned, N}}}
            end
    end.

%% @doc Is `Step' the step `Expected' of a counterexample, source lines
%% aside?
-spec same_step(map(), map()) -> boolean().
same_step(Expected, Step) ->
    %% An abstract counterexample shows its processes' initial calls as
    %% the program's (mce_abstract:readable/1).
    same_modulo_dead(unplaced(Expected), mce_abstract:readable(unplaced(Step))).

%% A search with dead payloads (mce_payload) stored some messages with
%% parts replaced by '$mce_dead', and its steps show them so: such a part
%% stands for whatever the real run had there.
same_modulo_dead(T, T) -> true;
same_modulo_dead('$mce_dead', _) -> true;
same_modulo_dead(A, B) when is_tuple(A), is_tuple(B), tuple_size(A) =:= tuple_size(B) ->
    same_modulo_dead(tuple_to_list(A), tuple_to_list(B));
same_modulo_dead([A | As], [B | Bs]) ->
    same_modulo_dead(A, B) andalso same_modulo_dead(As, Bs);
same_modulo_dead(A, B) when is_map(A), is_map(B), map_size(A) =:= map_size(B) ->
    lists:all(fun({K, V}) -> is_map_key(K, B) andalso same_modulo_dead(V, map_get(K, B)) end,
              maps:to_list(A));
same_modulo_dead(_, _) -> false.

%% @doc Does the counterexample show a dead payload ('$mce_dead')?
-spec has_dead(term()) -> boolean().
has_dead('$mce_dead') -> true;
has_dead(T) when is_tuple(T) -> has_dead(tuple_to_list(T));
has_dead([H | T]) -> has_dead(H) orelse has_dead(T);
has_dead(M) when is_map(M) -> has_dead(maps:to_list(M));
has_dead(_) -> false.

walked(Step) ->
    put('$mce_walked', [Step | get('$mce_walked')]).

%% A step without the source lines it stops at: a counterexample still
%% replays on a program whose lines moved (comments added, code elsewhere
%% changed), as long as the processes do the same things.  Its output with
%% the text of pids and refs masked: symmetry reduction maps a
%% counterexample's steps to the pids of a real run (mce_symmetry:concrete/2),
%% but not the text a step printed (a supervisor's report names the child's
%% pid), so that text may name the representative's pids.
unplaced(#{outcome := {waiting, {M, F, A, _File, _Line}}} = Step) ->
    masked(Step#{outcome := {waiting, {M, F, A}}});
unplaced(Step) ->
    masked(Step).

masked(#{output := Out} = Step) when is_list(Out) ->
    Step#{output := [mask_ids(O) || O <- Out]};
masked(Step) ->
    Step.

mask_ids(Text) ->
    try re:replace(Text, "(#Ref)?<[0-9]+(\\.[0-9]+)+>", "<_>", [global, unicode, {return, binary}])
    catch error:badarg -> Text
    end.

%% The walk went through every step without a step or state being a
%% violation: a deadlock at its end, or an LTL lasso whose cycle closes and
%% on which the formula fails.
verdict({ltl, _} = Violation, Ends, {StemEnd, _}, Cycle, Sess, Cex) when Cycle =/= [] ->
    {Prefix, Loop} = lists:split(length(Ends) - length(Cycle), Ends),
    case lists:last(Ends) of
        {StemEnd, _} ->
            Positions = fun(Ps) -> [position(Sess, W, L) || {W, L} <- Ps] end,
            PrefixPos = Positions(Prefix),
            LoopPos = Positions(Loop),
            Pids = lists:usort([P || {#{processes := Procs}, _, _} <- PrefixPos ++ LoopPos,
                                     #{pid := P} <- Procs]),
            case mce_ltl_search:lasso_violates(options(Sess), PrefixPos, LoopPos, Pids) of
                true -> rebuilt(Cex, Violation, StemEnd, Sess);
                false -> {error, {not_reproduced, {ltl_holds_on_this_run, element(2, Violation)}}}
            end;
        {Other, _} ->
            {error, {not_reproduced, {cycle_not_closed, StemEnd, Other}}}
    end;
verdict(deadlock, Ends, _StemEnd, [], Sess, Cex) ->
    {W, _} = lists:last(Ends),
    case expand(Sess, W) of
        {_, true, Sess1} -> rebuilt(Cex, deadlock, W, Sess1);
        {Succs, false, _} -> {error, {not_reproduced, {no_deadlock, [S || #{step := S} <- Succs]}}}
    end;
verdict(Violation, _Ends, _StemEnd, _Cycle, _Sess, _Cex) ->
    {error, {not_reproduced, {no_violation, Violation}}}.

probes(#{probes := Probes}) -> Probes;
probes(_) -> [].

%% A lasso position as mce_ltl_search:lasso_violates/4 judges it: the view
%% with the step into the state (none for a stutter), its probes, and the
%% processes that can move in the state.
position(Sess, W, Label) ->
    {Succs, _Deadlock, _} = expand(Sess, W),
    Enabled = lists:usort([mce_pid:term(A) || #{agent := A} <- Succs, is_integer(A)]),
    View = view(Sess, W, case is_map(Label) of
                             true -> Label;
                             false -> none
                         end),
    {View, probes(Label), Enabled}.

same_violation(Expected, {Got, W}, Cex, Sess) ->
    case same(Expected, Got) of
        true -> rebuilt(Cex, Got, W, Sess);
        false -> {error, {not_reproduced, {other_violation, Got}}}
    end.

%% Invariants are funs: a loaded counterexample names them by a copy that
%% may not compare equal; the violation's kind is what must match.
same({invariant, _}, {invariant, _}) -> true;
same(V, V) -> true;
same(_, _) -> false.

rebuilt(Cex, Violation, W, Sess) ->
    Final = final_state(Sess, W),
    %% The steps walked are the real run's: they replace those showing
    %% dead payloads.
    Walked = lists:reverse(erase('$mce_walked')),
    Trace = maps:get(trace, Cex),
    Cex1 = case has_dead(Trace) andalso length(Walked) >= length(Trace) of
               true -> Cex#{trace => lists:sublist(Walked, length(Trace))};
               false -> Cex
           end,
    {ok, maps:merge(Cex1#{violation => Violation}, Final)}.

%%--------------------------------------------------------------------
%% Simulation
%%--------------------------------------------------------------------

%% @doc Random walks from the initial state: `runs' walks of at most
%% `max_steps' steps each, every step chosen uniformly among the enabled
%% ones by a generator seeded with `seed' (the same seed, the same walks).
%% Stops at the first violation with its walk as a counterexample.
-spec simulate(term(), map(), #{runs := pos_integer(), max_steps := pos_integer(),
                                 seed := integer()}) ->
          {ok, map()} | {error, map()} | {inconclusive, term(), map()}.
simulate(InitCall, Opts, #{runs := Runs, max_steps := MaxSteps, seed := Seed}) ->
    Sess = open(InitCall, Opts),
    Rand = rand:seed_s(exsss, Seed),
    Tally = #{runs => 0, steps => 0, ended => 0, cut => 0, pruned => 0},
    runs(Runs, MaxSteps, Rand, Tally, Sess, Seed).

runs(0, _MaxSteps, _Rand, Tally, Sess, Seed) ->
    {ok, sim_stats(Tally, Sess, Seed)};
runs(Left, MaxSteps, Rand, #{runs := R} = Tally, Sess, Seed) ->
    Run = R + 1,
    try run(MaxSteps, Rand, Tally, Sess, Seed, Run) of
        {next, Rand1, Tally1, Sess1} -> runs(Left - 1, MaxSteps, Rand1, Tally1, Sess1, Seed);
        Result -> Result
    catch
        %% max_time or stop/1 met while a property ran.
        throw:{mce_guard_interrupted, Why} ->
            {inconclusive, Why, sim_stats(Tally#{runs := Run}, Sess, Seed)}
    end.

%% One walk: the next walk's generator and tally, or the result.
run(MaxSteps, Rand, Tally, Sess, Seed, Run) ->
    Root = root(Sess),
    case judge(Sess, Root, none, initial_observer(Sess)) of
        {violation, V} ->
            {error, sim_cex(V, [], Root, Sess, Tally, Seed, Run)};
        skip ->
            {next, Rand, Tally#{runs := Run, pruned := maps:get(pruned, Tally) + 1}, Sess};
        {ok, Observer} ->
            case walk_random(Root, Observer, [], MaxSteps, Rand, Sess) of
                {Ended, Steps, Rand1, Sess1} when is_atom(Ended) ->
                    {next, Rand1, Tally#{runs := Run, steps := maps:get(steps, Tally) + length(Steps),
                                         Ended := maps:get(Ended, Tally) + 1}, Sess1};
                {violation, V, W, Steps, Sess1} ->
                    {error, sim_cex(V, lists:reverse(Steps), W, Sess1,
                                    Tally#{steps := maps:get(steps, Tally) + length(Steps)},
                                    Seed, Run)};
                {stop, Why, Steps} ->
                    {inconclusive, Why,
                     sim_stats(Tally#{runs := Run, steps := maps:get(steps, Tally) + length(Steps)},
                               Sess, Seed)}
            end
    end.

walk_random(_W, _Observer, Steps, 0, Rand, Sess) ->
    {cut, Steps, Rand, Sess};
walk_random(W, Observer, Steps, Budget, Rand, Sess) ->
    case tick(Sess) of
        {stop, Why} ->
            {stop, Why, Steps};
        {continue, Sess0} ->
            Opts = options(Sess0),
            {Succs, Deadlock, Sess1} = expand(Sess0, W),
            case Succs of
                [] when Deadlock ->
                    case lists:member(deadlock, maps:get(property, Opts)) of
                        true -> {violation, deadlock, W, Steps, Sess1};
                        false -> {ended, Steps, Rand, Sess1}
                    end;
                [] ->
                    {ended, Steps, Rand, Sess1};
                _ ->
                    {I, Rand1} = rand:uniform_s(length(Succs), Rand),
                    #{state := W1, step := Step, label := Label, violation := V} =
                        lists:nth(I, Succs),
                    case V of
                        none ->
                            case judge(Sess1, W1, Label, Observer) of
                                {ok, Observer1} ->
                                    walk_random(W1, Observer1, [Step | Steps], Budget - 1, Rand1,
                                                Sess1);
                                skip ->
                                    {pruned, [Step | Steps], Rand1, Sess1};
                                {violation, PV} ->
                                    {violation, PV, W1, [Step | Steps], Sess1}
                            end;
                        _ ->
                            {violation, V, W1, [Step | Steps], Sess1}
                    end
            end
    end.

sim_cex(Violation, Trace, W, Sess, Tally, Seed, Run) ->
    Final = final_state(Sess, W),
    Final#{violation => Violation, trace => Trace,
           stats => sim_stats(Tally#{runs => Run}, Sess, Seed),
           simulation => #{seed => Seed, run => Run}}.

sim_stats(Tally, Sess, Seed) ->
    Base = stats(Sess),
    Ms = max(erlang:monotonic_time(millisecond) - Sess#session.started, 0),
    maps:merge(Base, (maps:with([runs, steps], Tally))#{
                        seed => Seed, time_ms => Ms,
                        runs_ended => maps:get(ended, Tally),
                        runs_cut => maps:get(cut, Tally),
                        runs_pruned => maps:get(pruned, Tally)}).
