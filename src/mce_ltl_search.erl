%% @doc The LTL check: searches the product of the program's state graph
%% and a Büchi automaton of the negated property for an accepting (and,
%% under weak fairness, fair) cycle.
%%
%% The emptiness check itself is C (c_src/buchi.c: nested DFS, or
%% Couvreur's SCC algorithm where weak fairness is exact).  The program's
%% states come from the same C search as safety checks, run in expand-only
%% mode: asked for a state, it runs each enabled transition (answering
%% match/run requests here, as mce_search does) and lists the successors
%% with who moved.  This module owns the product in between: the automaton
%% (mce_ltl), the predicates, the cache of expansions, and turning a lasso
%% back into a readable counterexample.
%%
%% The product reads letters on entering a state: from product state
%% (S, Q), a program step S -l-> S' and an automaton transition
%% Q -G-> Q' whose guard G holds in the letter of S' and l give
%% (S', Q').  The letter of a position is the state predicates true in S'
%% (funs over the view, props the state's processes stand at) and the probe
%% predicates of the step l into it, so `mcerlang:probe/2' marks the step
%% and `mcerlang:prop/1' the state, as in
%% ../shared/papers/003_7dd3bcd1accd73d3.txt.  A pseudo-initial state
%% (S0, pre) reads the initial letter.  A state with no step of any process
%% or channel (everything ended, a deadlock, or only faults left) also
%% stutters: a run may stay there forever.
%%
%% Weak fairness (the `fairness' option): the agents are processes and
%% ether channels; faults and stutter steps belong to nobody.  Product keys
%% are `StateId bsl 32 bor AutomatonState'.
%%
%% Partial-order reduction (for formulas without next over props, with or
%% without weak fairness): the product runs on a reduced program graph G'.
%% Invariants: a program state's successors in G' are decided once, when
%% the product first needs them (lettered/2), and never change, so every
%% automaton state and both nested searches see one G'; a state reduced to
%% one safe step t has t invisible to every predicate and t's target
%% discovered by its own expansion; the agents enabled in a state, which
%% the fairness test reads, are those of its full expansion, never G''s (a
%% process G' leaves out is still enabled there).  The expansions
%% themselves stay full (the C search only marks safe steps), so safety
%% properties and the run-time guards see every step of every state
%% reached.  See docs/ARCHITECTURE.md, "Partial-order reduction of the LTL
%% check" (and its "Weak fairness" for why fair runs are kept).
-module(mce_ltl_search).

-export([run/2]).
%% For replay (mce_session): the formula judged on one lasso.
-export([lasso_violates/4]).

-define(PRE, 16#FFFFFFFF).
%% The kinds of predicate spec judged on the step into a position, and on
%% the status of the processes in its state.
-define(STEP_SPECS, [sent, received, spawned, exited, scheduled]).
-define(STATUS_SPECS, [enabled, blocked]).
%% The LTL translation's bound on its tableau: far more than a property
%% of a few operators per process needs (hundreds; seven nested untils
%% need 45,000), far less than would take minutes (about a second).
-define(MAX_TABLEAU_STEPS, 100000).

-record(st, {ctx :: term(),
             search :: mce_nif:search(),
             opts :: map(),
             text :: string(),
             %% the automaton of the negated property
             init = [] :: [non_neg_integer()],
             trans = #{} :: #{non_neg_integer() => [{mce_ltl:guard(), non_neg_integer()}]},
             accepting = #{} :: #{non_neg_integer() => true},
             %% W -> {[{W', Agent, RawProbes}], Enabled, Stutter, Safe}
             %% (Safe: the indices of the steps por.c calls safe, with the
             %% reduction)
             cache :: ets:tid(),
             %% W -> {[{W', Agent, Index, LetterId}], Enabled}: W's steps
             %% (the stutter step last) with the letters they read; with
             %% the reduction, only the safe step W is reduced to
             lettered :: ets:tid(),
             %% letter -> small integer, and back
             letter_ids = #{} :: #{[term()] => non_neg_integer()},
             id_letters = #{} :: #{non_neg_integer() => [term()]},
             %% W -> state predicates true in W
             letters :: ets:tid(),
             %% W -> {Parent, Index} | root: how the search first reached W
             parents :: ets:tid(),
             %% agent term -> small integer (buchi.c's agents), and back
             agents :: ets:tid(),
             agent_terms :: ets:tid(),
             %% W -> status predicates true in W; W -> {live pids, pid => name}
             statuses :: ets:tid(),
             procs :: ets:tid(),
             state_preds = [] :: [{term(), fun((mcerlang:view()) -> term()) | {prop, term()}}],
             %% the state predicates are all props of plain patterns (no
             %% user fun): judged on the processes' props alone, unguarded
             plain_props = false :: boolean(),
             probe_preds = [] :: [{term(), term(), term()}],
             %% predicates over the step into a state (sent, received,
             %% spawned, exited, scheduled) and over the processes' status
             %% in it (enabled, blocked); see step_matches/3
             step_preds = [] :: [{term(), tuple()}],
             status_preds = [] :: [{term(), tuple()}],
             %% some of them name a process by its registered name
             by_name = false :: boolean(),
             %% memos, exact as predicates are pure: a step's probes -> the
             %% probe predicates they make true; LetterId bsl 32 bor Q ->
             %% the automaton states Q moves to reading that letter
             probe_memo = #{} :: #{list() => [term()]},
             move_memo = #{} :: #{non_neg_integer() => [non_neg_integer()]},
             %% with plain_props: the continuations' part ids of a state ->
             %% the state predicates true in it; a continuation -> its props
             conts_memo = #{} :: #{[pos_integer()] => [term()]},
             cont_props = #{} :: #{pos_integer() => [term()]},
             root = 0 :: non_neg_integer(),
             %% the exploration of the whole graph (forall, safety
             %% properties) left states beyond max_depth unexplored
             explore_cut = false :: boolean(),
             %% partial-order reduction of the program graph (see
             %% reduce/3): on, and the program states reduced so far
             reduce = false :: boolean(),
             reduced = 0 :: non_neg_integer(),
             buchi :: mce_nif:buchi() | undefined}).

%% A position of a lasso judged again (replay): the view of the state with
%% the step into it, that step's probes, and the pids that can move there.
-type position() :: {mcerlang:view(), list(), [pid()]}.
-export_type([position/0]).

-spec run(term(), term()) -> mcerlang:result().
run(InitCall, Ctx) ->
    case run1(InitCall, Ctx) of
        {void, Why} ->
            %% The reduced search proves nothing (a step read another
            %% process's record, or, once a sending step was marked safe,
            %% sent an exit signal, linked or listed the processes: the C
            %% search's guards, c_src/por.h): again without the reduction.
            Off = case mce_search:reduction_of(Ctx) of
                      on -> {off, Why};
                      {off, _} = Already -> Already
                  end,
            run(InitCall, mce_search:without_reduction(Ctx, Off));
        Result ->
            Result
    end.

run1(InitCall, Ctx) ->
    S = mce_search:search(Ctx),
    Opts = mce_search:options(Ctx),
    {Text, Formula} = maps:get(ltl, Opts),
    St0 = #st{ctx = Ctx, search = S, opts = Opts, text = Text,
              reduce = mce_search:reduction_of(Ctx) =:= on,
              cache = ets:new(mce_ltl_cache, [set, private]),
              letters = ets:new(mce_ltl_letters, [set, private]),
              lettered = ets:new(mce_ltl_lettered, [set, private]),
              parents = ets:new(mce_ltl_parents, [set, private]),
              agents = ets:new(mce_ltl_agents, [set, private]),
              agent_terms = ets:new(mce_ltl_agent_terms, [set, private]),
              statuses = ets:new(mce_ltl_statuses, [set, private]),
              procs = ets:new(mce_ltl_procs, [set, private])},
    try
        %% Labels stay binaries: only those with probes are decoded.
        ok = mce_nif:label_binaries(S),
        {expanded, Root, Succs, Deadlock, Safe, St1} = expand_loop(mce_nif:start(S, InitCall, 1), St0),
        ets:insert(St1#st.parents, {Root, root}),
        St2 = record(Root, Succs, Deadlock, Safe, St1#st{root = Root}),
        %% Safety properties asked for hold in every reachable state, not
        %% only in those the product visits (the automaton prunes).
        St2a = case maps:get(property, Opts) of
                   [] -> St2;
                   _ -> explore([Root], St2)
               end,
        {F, St3} = instantiate(Formula, St2a),
        St4 = reduction(automaton(F, St3)),
        B = mce_nif:buchi_new(#{algorithm => case maps:get(fairness, Opts) of
                                                  weak -> scc;
                                                  none -> ndfs
                                              end,
                                fairness => maps:get(fairness, Opts),
                                max_states => maps:get(max_states, Opts),
                                max_depth => product_depth(maps:get(max_depth, Opts))}),
        case B of
            {error, Reason} -> erlang:error({mcerlang_internal, buchi_new, Reason});
            _ -> ok
        end,
        St5 = St4#st{buchi = B},
        search(mce_nif:buchi_start(B, key(Root, ?PRE)), St5)
    catch
        throw:{mce_ltl_stop, Why, StS} -> {inconclusive, Why, stats(StS)};
        %% A limit met while a predicate or the translation ran.
        throw:{mce_guard_interrupted, Why} -> {inconclusive, Why, stats(St0)};
        throw:{mce_ltl_result, Result} -> Result;
        throw:{mce_ltl_void, Why} -> {void, Why}
    after
        [ets:delete(T) || T <- tables(St0)]
    end.

key(W, Q) -> (W bsl 32) bor Q.

%% `max_depth' counts program steps; the product's DFS stack holds the
%% pseudo-initial state and the initial state below the first step.
product_depth(0) -> 0;
product_depth(D) -> D + 2.

tables(St) ->
    [St#st.cache, St#st.letters, St#st.lettered, St#st.parents, St#st.agents, St#st.agent_terms,
     St#st.statuses, St#st.procs].

%%--------------------------------------------------------------------
%% The emptiness check's loop
%%--------------------------------------------------------------------

search({need, Key}, #st{buchi = B} = St) ->
    St1 = tick(St),
    W = Key bsr 32,
    case Key band ?PRE of
        ?PRE ->
            {Edges, St2} = product_edges(W, ?PRE, St1),
            search(mce_nif:buchi_answer(B, false, [], [{K, A} || {K, A, _} <- Edges]), St2);
        Q ->
            {{Steps, Enabled}, St2} = lettered(W, St1),
            {Succs, St3} = product_succs(Steps, Q, St2),
            search(mce_nif:buchi_answer(B, maps:is_key(Q, St3#st.accepting), Enabled, Succs), St3)
    end;
search(empty, #st{buchi = B} = St) ->
    case St#st.explore_cut orelse maps:get(cut, mce_nif:buchi_stats(B)) > 0 of
        true -> {inconclusive, max_depth, stats(St)};
        false -> {ok, stats(St)}
    end;
search(incomplete, St) ->
    {inconclusive, max_states, stats(St)};
search(found, #st{buchi = B} = St) ->
    case mce_nif:buchi_lasso(B) of
        {error, Why} -> erlang:error({mcerlang_internal, buchi_lasso, Why});
        {Stem, Cycle} ->
            {Stem1, Cycle1} = case maps:get(shortest, St#st.opts) of
                                  true -> shorten(Stem, Cycle, St);
                                  false -> {Stem, Cycle}
                              end,
            {error, lasso_counterexample(Stem1, Cycle1, St)}
    end;
search({error, Why}, _St) ->
    erlang:error({mcerlang_internal, buchi, Why}).

%% The successors of product state (W, Q), each with who moves and the
%% index of the program step (in W's expansion; the stutter step comes
%% last) it follows.
product_edges(W, ?PRE, St) ->
    {Letter, St1} = letter(W, [], none, St),
    Edges = dedup([{key(W, To), none, init}
                   || I <- St1#st.init, {G, To} <- maps:get(I, St1#st.trans, []),
                      holds(G, Letter)]),
    {Edges, St1};
product_edges(W, Q, St0) ->
    {{Steps, _Enabled}, St} = lettered(W, St0),
    {Lists, St1} = lists:mapfoldl(
                     fun({W2, Agent, J, Id}, StA) ->
                             {Tos, StB} = moves(Q, Id, StA),
                             {[{key(W2, To), Agent, J} || To <- Tos], StB}
                     end, St, Steps),
    {lists:append(Lists), St1}.

%% product_edges/3 as buchi.c takes them: {Key, Agent}.
product_succs([], _Q, St) ->
    {[], St};
product_succs([{W2, Agent, _J, Id} | Steps], Q, St) ->
    {Tos, St1} = moves(Q, Id, St),
    {Rest, St2} = product_succs(Steps, Q, St1),
    {[{key(W2, To), Agent} || To <- Tos] ++ Rest, St2}.

%% W's steps, the stutter step last, each with its index in W's
%% expansion and the id of the letter it reads; and the agents enabled in
%% W, from its full expansion even when G' keeps one step (the fairness
%% test must see a process the reduction postpones as enabled: taken
%% from the kept steps, a cycle of G' that never runs it would pass as
%% fair).  Computed at the first product state over W, kept for the
%% others.
lettered(W, #st{lettered = Table} = St) ->
    case ets:lookup(Table, W) of
        [{W, Steps, Enabled}] -> {{Steps, Enabled}, St};
        [] ->
            {{Succs, Enabled, Stutter}, St1} = cached(W, St),
            Indexed = lists:zip3(lists:seq(0, length(Succs) - 1), Succs, step_labels(W, Succs, St1))
                ++ [{length(Succs), {W, none, []}, stutter} || Stutter],
            %% Reduced first: the letters of the steps G' leaves out are
            %% never read.
            {Kept, St2} = reduce(W, Indexed, St1),
            {Steps, St3} = lists:mapfoldl(
                             fun({J, {W2, Agent, Probes}, Label}, StA) ->
                                     {Letter, StB} = letter(W2, Probes, Label, StA),
                                     {Id, StC} = letter_id(Letter, StB),
                                     {{W2, Agent, J, Id}, StC}
                             end, St2, Kept),
            ets:insert(Table, {W, Steps, Enabled}),
            {{Steps, Enabled}, St3}
    end.

%%--------------------------------------------------------------------
%% Partial-order reduction of the program graph (docs/ARCHITECTURE.md,
%% "Partial-order reduction of the LTL check")
%%--------------------------------------------------------------------

%% Whether the formula's predicates leave the reduction sound: only props
%% (`{prop, Pattern}'), which a step changes only through its own
%% process's continuation.  A predicate of steps (sent, received, spawned,
%% exited, scheduled, a probe) is a pulse, true at one position and false
%% at the next, so every step after it is visible; a fun of the view or a
%% status (enabled, blocked) may change with a step of another process.
reduction(#st{reduce = false} = St) ->
    St;
reduction(#st{step_preds = Steps, probe_preds = Probes, status_preds = Statuses,
              state_preds = States} = St) ->
    Off = if
              Steps =/= []; Probes =/= [] -> step_predicates;
              Statuses =/= [] -> state_predicates;
              true ->
                  case lists:all(fun({_, P}) -> is_tuple(P) andalso element(1, P) =:= prop end,
                                 States) of
                      true -> none;
                      false -> state_predicates
                  end
          end,
    case Off of
        none -> St;
        _ -> St#st{reduce = false, ctx = mce_search:set_reduction(St#st.ctx, {off, Off})}
    end.

%% W's steps in the reduced program graph G': one safe step (c_src/por.c)
%% t to W2 when (visibility) t changes no predicate of the formula, and
%% (the cycle proviso, on the program graph) W2 was first discovered by
%% W's expansion, so discovery order increases along reduced edges and
%% every cycle of G' has a fully expanded state; else all of them.  Decided
%% once per program state (lettered/2 keeps it), so the nested searches
%% and every automaton state see the same G' (Siegel, CAV 2019).
reduce(_W, Steps, #st{reduce = false} = St) ->
    {Steps, St};
reduce(W, Steps, St) ->
    [{W, _, _, _, Safe}] = ets:lookup(St#st.cache, W),
    case pick(W, [Step || {J, _, _} = Step <- Steps, lists:member(J, Safe)], St) of
        {none, St1} -> {Steps, St1};
        {Step, St1} -> {[Step], St1#st{reduced = St1#st.reduced + 1}}
    end.

pick(_W, [], St) ->
    {none, St};
pick(W, [{_J, {W2, _, _}, _} = Step | Rest], St) ->
    case W2 =/= W andalso ets:lookup(St#st.parents, W2) of
        [{W2, {W, _}}] ->
            case invisible(W, W2, St) of
                {true, St1} -> {Step, St1};
                {false, St1} -> pick(W, Rest, St1)
            end;
        _ ->
            pick(W, Rest, St)
    end.

%% A safe step changes one process's continuation (and, rule 7, others'
%% mailboxes), so the props of the states before and after differ in that
%% continuation alone: the step is invisible, wherever it is taken, when
%% every prop predicate matches the props of the old continuation exactly
%% when it matches those of the new one.
invisible(W, W2, St) ->
    {Before, St1} = conts(W, St),
    {After, St2} = conts(W2, St1),
    case length(Before) =:= length(After) andalso
         [{A, B} || {A, B} <- lists:zip(Before, After), A =/= B] of
        [] -> {true, St2};
        [{A, B}] ->
            {PropsA, St3} = cont_props(A, St2),
            {PropsB, St4} = cont_props(B, St3),
            Same = PropsA =:= PropsB orelse
                lists:all(fun({Name, {prop, Pattern}}) ->
                                  has_prop(Name, Pattern, PropsA) =:= has_prop(Name, Pattern, PropsB)
                          end, St4#st.state_preds),
            {Same, St4};
        _ -> {false, St2}
    end.

conts(W, #st{search = S} = St) ->
    ok = mce_nif:focus(S, W),
    {mce_nif:top_conts(S), St}.

has_prop(Name, Pattern, Props) ->
    mce_search:property_call({predicate, Name},
                             fun() -> lists:any(fun(T) -> matches(Pattern, T) end, Props) end).

%% The labels of W's steps, for the step predicates: the cache keeps none,
%% so W is expanded again (deterministic: the same steps in the same
%% order).  Without step predicates no label is needed.
step_labels(_W, Succs, #st{step_preds = []}) ->
    [none || _ <- Succs];
step_labels(W, Succs, St) ->
    Labels = [Label || {_, _, Label, _} <- reexpand(W, St)],
    length(Labels) =:= length(Succs) orelse
        erlang:error({mcerlang_internal, step_labels, {W, length(Labels), length(Succs)}}),
    Labels.

letter_id(Letter, #st{letter_ids = Ids, id_letters = Letters} = St) ->
    case Ids of
        #{Letter := Id} -> {Id, St};
        _ ->
            Id = map_size(Ids),
            {Id, St#st{letter_ids = Ids#{Letter => Id}, id_letters = Letters#{Id => Letter}}}
    end.

%% The automaton states Q moves to reading the letter numbered Id, in the
%% order of Q's transitions (memoised: few distinct letters meet each Q).
moves(Q, Id, #st{move_memo = Memo} = St) ->
    Key = (Id bsl 32) bor Q,
    case Memo of
        #{Key := Tos} -> {Tos, St};
        _ ->
            Letter = maps:get(Id, St#st.id_letters),
            Tos = [To || {G, To} <- maps:get(Q, St#st.trans, []), holds(G, Letter)],
            {Tos, St#st{move_memo = Memo#{Key => Tos}}}
    end.

dedup(List) -> dedup(List, #{}).
dedup([], _) -> [];
dedup([{K, _, _} = E | Rest], Seen) ->
    case maps:is_key(K, Seen) of
        true -> dedup(Rest, Seen);
        false -> [E | dedup(Rest, Seen#{K => true})]
    end.

holds(Guard, Letter) ->
    lists:all(fun({Name, Bool}) -> lists:member(Name, Letter) =:= Bool end, Guard).

%%--------------------------------------------------------------------
%% Expanding program states
%%--------------------------------------------------------------------

%% W's expansion, from the cache or by running its transitions.  The state
%% comes back too: it counts the steps run towards the next look at the
%% limits.
cached(W, St) ->
    case ets:lookup(St#st.cache, W) of
        [{W, Succs, Enabled, Stutter, _Safe}] -> {{Succs, Enabled, Stutter}, St};
        [] ->
            {expanded, W, Succs, Deadlock, Safe, St1} =
                expand_loop(mce_nif:expand(St#st.search, W), St),
            St2 = record(W, Succs, Deadlock, Safe, St1),
            cached(W, St2)
    end.

%% Answers the match and run requests of one expansion.  A step that is a
%% safety violation (an abnormal exit, its own or by exit signal, when that
%% is a property) ends the expansion at it: `record/4' then reports it.
expand_loop({match, Cont, Msg}, #st{search = S} = St) ->
    expand_loop(mce_nif:match(S, mce_exec:matches(Cont, Msg)), St);
expand_loop({run, Pid, How, Cont, Dict, TrapExit}, #st{search = S, opts = Opts} = St) ->
    {Outcome, Effects, Label} = mce_exec:run(S, Pid, How, Cont, Dict, TrapExit),
    Violation = mce_search:violation(Outcome, Pid, Opts),
    put('$mce_ltl_violation', Violation),
    Next = mce_nif:ran(S, Outcome, Effects, Label, Violation =/= none),
    expand_loop(Next, tick(St));
expand_loop({deaths, Deaths}, #st{search = S, opts = Opts} = St) ->
    Violation = mce_search:death_violation(Deaths, Opts),
    put('$mce_ltl_violation', Violation),
    expand_loop(mce_nif:deaths_judged(S, Violation =/= none), St);
expand_loop({expanded, W, Succs, Deadlock}, St) ->
    %% Each expansion counts toward the limits too: with the step cache a
    %% whole expansion may be done in C, without one run request.
    {expanded, W, Succs, Deadlock, [], tick(St)};
expand_loop({expanded, W, Succs, Deadlock, Safe}, St) ->
    %% With the reduction: which of the steps are safe (por.c).
    {expanded, W, Succs, Deadlock, [J || {J, _Rule} <- Safe], tick(St)};
expand_loop({reduction_void, Why}, _St) ->
    throw({mce_ltl_void, Why});
expand_loop(Other, _St) ->
    mce_search:internal_error(Other),
    erlang:error({mcerlang_internal, expand, Other}).

%% W's expansion into the cache: its successors, enabled agents, whether
%% it stutters, and the indices of its safe steps (with the reduction).
record(W, Succs, Deadlock, Safe, #st{parents = Parents} = St) ->
    Numbered = lists:zip(lists:seq(0, length(Succs) - 1), Succs),
    case [{J, Label} || {J, {_, _, Label, true}} <- Numbered] of
        [{J, _Label} | _] ->
            {W2, _, _, _} = lists:nth(J + 1, Succs),
            ets:insert_new(Parents, {W2, {W, J}}),
            throw({mce_ltl_result, {error, safety_counterexample(erase('$mce_ltl_violation'),
                                                                   W2, St)}});
        [] ->
            ok
    end,
    case Deadlock andalso lists:member(deadlock, maps:get(property, St#st.opts)) of
        true -> throw({mce_ltl_result, {error, safety_counterexample(deadlock, W, St)}});
        false -> ok
    end,
    Entries = [begin
                   ets:insert_new(Parents, {W2, {W, J}}),
                   {W2, agent(Agent, St), raw_probes(Label)}
               end || {J, {W2, Agent, Label, false}} <- Numbered],
    Enabled = lists:usort([A || {_, A, _} <- Entries, A =/= none]),
    ets:insert(St#st.cache, {W, Entries, Enabled, Enabled =:= [], Safe}),
    St.

%% Agents as buchi.c's numbers, the same number for the same process or
%% channel throughout the search.
agent(none, _St) ->
    none;
agent(Agent, #st{agents = Agents} = St) ->
    case ets:lookup(Agents, Agent) of
        [{_, N}] -> N;
        [] ->
            N = ets:info(Agents, size),
            ets:insert(Agents, {Agent, N}),
            ets:insert(St#st.agent_terms, {N, Agent}),
            N
    end.

%% The probes of a step, kept raw: the expansion may come before the
%% predicates are known (a quantified formula explores first).  A label
%% comes as its external format (mce_nif:label_binaries/1): one with a
%% `probes' key spells the atom out, so one without is not decoded.
raw_probes(Label) when is_binary(Label) ->
    case binary:match(Label, <<"probes">>) of
        nomatch -> [];
        _ -> raw_probes(binary_to_term(Label))
    end;
raw_probes(#{probes := Probes}) -> Probes;
raw_probes(_) -> [].

label(Label) when is_binary(Label) -> binary_to_term(Label);
label(Label) -> Label.

%% The probe predicates that a step with these probes makes true.  A
%% pattern may hold user funs: they run guarded (mce_guard), as other
%% predicates do.
probe_names([], _St) ->
    [];
probe_names(_Probes, #st{probe_preds = []}) ->
    [];
probe_names(Probes, #st{probe_preds = Preds}) ->
    mce_guard:call(probe_predicates,
                   fun() ->
                           [Name || {Name, L, Pattern} <- Preds,
                                    lists:any(fun({L1, T}) ->
                                                      L1 =:= L andalso
                                                          mce_guard:call({predicate, Name},
                                                                         fun() -> matches(Pattern, T) end)
                                              end, Probes)]
                   end).

%% The letter of a position: the state predicates true in W, the probe
%% predicates of the step into it (its probes as recorded), the status
%% predicates true in W and the step predicates of the step into it
%% (Label: its label, `stutter', or `none' for the initial position).
letter(W, RawProbes, Label, St) ->
    {True, St1} = state_letter(W, St),
    {Names, St2} = probe_letter(RawProbes, St1),
    {Status, St3} = status_letter(W, St2),
    Events = step_letter(Label, W, St3),
    {Names ++ True ++ Status ++ Events, St3}.

%% probe_names/2 memoised on the probes (a handful of distinct lists).
probe_letter([], St) ->
    {[], St};
probe_letter(Probes, #st{probe_memo = Memo} = St) ->
    case Memo of
        #{Probes := Names} -> {Names, St};
        _ ->
            Names = probe_names(Probes, St),
            {Names, St#st{probe_memo = Memo#{Probes => Names}}}
    end.

state_letter(_W, #st{state_preds = []} = St) ->
    {[], St};
state_letter(W, #st{letters = Letters} = St) ->
    case ets:lookup(Letters, W) of
        [{W, True}] -> {True, St};
        [] when St#st.plain_props ->
            %% No user code runs: the letter is a function of the
            %% processes' continuations (their props), judged once per
            %% combination of continuations, decoded once each.
            ok = mce_nif:focus(St#st.search, W),
            Conts = mce_nif:top_conts(St#st.search),
            {True, St1} = case St#st.conts_memo of
                              #{Conts := T} -> {T, St};
                              Memo -> props_letter(Conts, Memo, St)
                          end,
            ets:insert(Letters, {W, True}),
            {True, St1};
        [] ->
            ok = mce_nif:focus(St#st.search, W),
            View = mce_search:view(St#st.ctx, none),
            Preds = St#st.state_preds,
            %% One guarded call per state: the view is copied to the helper once.
            True = mce_guard:call(predicates,
                                  fun() -> [Name || {Name, Pred} <- Preds, state_pred(Name, Pred, View)] end),
            ets:insert(Letters, {W, True}),
            {True, St}
    end.

%% The status predicates true in W: who can move there (W's expansion, so
%% W is expanded now if it was not yet) and who is alive.
status_letter(_W, #st{status_preds = []} = St) ->
    {[], St};
status_letter(W, #st{statuses = Table} = St) ->
    case ets:lookup(Table, W) of
        [{W, True}] -> {True, St};
        [] ->
            {{_, Enabled, _}, St1} = cached(W, St),
            EnabledPids = [mce_pid:term(P) || N <- Enabled,
                                              [{_, P}] <- [ets:lookup(St1#st.agent_terms, N)],
                                              is_integer(P)],
            {Live, Names} = processes(W, St1),
            Blocked = Live -- EnabledPids,
            Preds = St1#st.status_preds,
            True = mce_guard:call(status_predicates,
                                  fun() ->
                                          [Name || {Name, Spec} <- Preds,
                                                   mce_guard:call({predicate, Name},
                                                                  fun() -> status_matches(Spec, EnabledPids, Blocked, Names) end)]
                                  end),
            ets:insert(Table, {W, True}),
            {True, St1}
    end.

status_matches({enabled, P}, Enabled, _Blocked, Names) ->
    lists:any(fun(Pid) -> match_pid(P, Pid, Names) end, Enabled);
status_matches({blocked, P}, _Enabled, Blocked, Names) ->
    lists:any(fun(Pid) -> match_pid(P, Pid, Names) end, Blocked).

%% The live processes of W and the registered names, read once per state.
processes(W, #st{procs = Table, search = S}) ->
    case ets:lookup(Table, W) of
        [{W, Live, Names}] -> {Live, Names};
        [] ->
            ok = mce_nif:focus(S, W),
            Procs = mce_nif:top_state(S),
            mce_search:internal_error(Procs),
            Live = [mce_pid:term(P) || {P, _, _, _, _, _} <- Procs],
            Names = maps:from_list([{mce_pid:term(P), Name} || {P, _, _, _, _, Name} <- Procs,
                                                               is_atom(Name)]),
            ets:insert(Table, {W, Live, Names}),
            {Live, Names}
    end.

%% The step predicates the step into W makes true.  Names are looked up
%% in W (after the step) only when a predicate names a process.
step_letter(_Label, _W, #st{step_preds = []}) ->
    [];
step_letter(Label, _W, _St) when Label =:= none; Label =:= stutter ->
    [];
step_letter(Label, W, #st{step_preds = Preds} = St) ->
    Step = mce_search:step(label(Label)),
    Names = case St#st.by_name of
                true -> element(2, processes(W, St));
                false -> #{}
            end,
    mce_guard:call(step_predicates,
                   fun() ->
                           [Name || {Name, Spec} <- Preds,
                                    mce_guard:call({predicate, Name},
                                                   fun() -> step_matches(Spec, Step, Names) end)]
                   end).

%% Whether a step (a trace step, as mce_search:step/1 makes it) is one the
%% spec describes.  Only runs of processes send, receive, spawn, exit or
%% are scheduled; deliveries, timers, faults and stutters are none of these.
step_matches({scheduled, P}, #{kind := run, pid := Pid}, Names) ->
    match_pid(P, Pid, Names);
step_matches({sent, From, To, Msg}, #{kind := run, pid := Pid, effects := Effects}, Names) ->
    match_pid(From, Pid, Names) andalso
        lists:any(fun({send, Dest, M}) -> match_dest(To, Dest, Names) andalso matches(Msg, M);
                     (_) -> false
                  end, Effects);
step_matches({received, P, Msg}, #{kind := run, pid := Pid, action := {'receive', M}}, Names) ->
    match_pid(P, Pid, Names) andalso matches(Msg, M);
step_matches({spawned, Parent, Child, Call}, #{kind := run, pid := Pid, effects := Effects}, Names) ->
    match_pid(Parent, Pid, Names) andalso
        lists:any(fun({spawn, C, Call1, _}) ->
                          match_pid(Child, C, Names) andalso matches(Call, original_call(Call1));
                     (_) -> false
                  end, Effects);
step_matches({exited, P, Reason}, #{kind := run, pid := Pid, outcome := {exit, R}}, Names) ->
    match_pid(P, Pid, Names) andalso matches(Reason, R);
step_matches(_, _, _) ->
    false.

%% A spawn's call as the program wrote it: the module before translation.
original_call({M, F, A}) when is_atom(M) ->
    case atom_to_list(M) of
        "mce$" ++ Orig -> {list_to_atom(Orig), F, A};
        _ -> {M, F, A}
    end;
original_call(Call) ->
    Call.

%% A process in a pattern: '_', a fun of the pid, the pid, or the name it
%% is registered under (in the state entered).
match_pid(P, Pid, Names) when is_atom(P), P =/= '_' ->
    maps:get(Pid, Names, undefined) =:= P;
match_pid(P, Pid, _Names) ->
    matches(P, Pid).

%% A send's destination: a pid, `{Name, Node}' for a send by name (which an
%% atom pattern matches by its name), or an alias.
match_dest(P, {Name, Node}, _Names) when is_atom(P), P =/= '_', is_atom(Name), is_atom(Node) ->
    P =:= Name;
match_dest(P, Dest, Names) when is_pid(Dest) ->
    match_pid(P, Dest, Names);
match_dest(P, Dest, _Names) ->
    matches(P, Dest).

props_letter(Conts, Memo, St) ->
    {PropLists, St1} = lists:mapfoldl(fun cont_props/2, St, Conts),
    Props = lists:append(PropLists),
    True = [Name || {Name, Spec} <- St1#st.state_preds, props_hold(Spec, Props)],
    {True, St1#st{conts_memo = Memo#{Conts => True}}}.

cont_props(Id, #st{cont_props = Known} = St) ->
    case Known of
        #{Id := Props} -> {Props, St};
        _ ->
            Cont = mce_nif:part_term(St#st.search, Id),
            mce_search:internal_error(Cont),
            Props = mce_search:props(Cont),
            {Props, St#st{cont_props = Known#{Id => Props}}}
    end.

state_pred(Name, {abs_prop, _, _, _} = Spec, #{processes := Procs}) ->
    mce_search:property_call(
      {predicate, Name},
      fun() -> props_hold(Spec, lists:append([Props || #{props := Props} <- Procs])) end);
state_pred(Name, {abs_fun, Polarity, Fun, Prepared}, View) ->
    %% On a view holding abstract values the fun's own code is judged
    %% three-valued (mce_abs_judge:judge/3); on a concrete one it is
    %% called, and may answer maybe itself.
    case mce_search:property_call({predicate, Name},
                                  fun() -> mce_abs_judge:judge(Prepared, Fun, [View]) end) of
        true -> Polarity =:= sat;
        false -> Polarity =:= refuted;
        maybe -> false;
        Other -> erlang:error({mcerlang, {bad_predicate_value, Name, Other,
                                          "under abstraction a state predicate returns true, "
                                          "false or maybe"}})
    end;
state_pred(Name, {prop, Pattern}, #{processes := Procs}) ->
    mce_search:property_call(
      {predicate, Name},
      fun() ->
              lists:any(fun(#{props := Props}) -> lists:any(fun(T) -> matches(Pattern, T) end, Props) end,
                        Procs)
      end);
state_pred(Name, Fun, View) ->
    case mce_search:property_call({predicate, Name}, fun() -> Fun(View) end) of
        true -> true;
        false -> false;
        Other -> erlang:error({mcerlang, {bad_predicate_value, Name, Other,
                                          "a state predicate returns true or false"}})
    end.

%% Whether the props of a state (of all its processes) make a prop
%% predicate true.  Under abstraction a predicate is split by polarity
%% (abstract_formula/2): `sat' holds where the props surely satisfy the
%% pattern, `refuted' where they surely refute it (paper
%% 003_7dd3bcd1accd73d3.txt, Lemma 6).
props_hold({prop, Pattern}, Props) ->
    lists:any(fun(T) -> matches(Pattern, T) end, Props);
props_hold({abs_prop, sat, Pattern, Dom}, Props) ->
    mce_abs_domain:satisfies(Dom, Props, Pattern);
props_hold({abs_prop, refuted, Pattern, Dom}, Props) ->
    mce_abs_domain:refutes(Dom, Props, Pattern).

%% Under abstraction a proposition is three-valued: a state may neither
%% satisfy nor refute it.  So that "holds" stays a proof, the formula's
%% propositions are decided by the negations in front of them (paper
%% 003_7dd3bcd1accd73d3.txt, section 8): in negation normal form, a
%% positive occurrence must be satisfied and a negated one refuted, each
%% its own two-valued predicate, `{'$abs', [sat | refuted, Name]}'.  Only
%% the predicates of a state's data are split: props and funs of the view
%% (which may answer `maybe'); the steps, probes and statuses are facts.
abstract_formula(F, #{abstraction := none}) ->
    F;
abstract_formula(F, #{predicates := Preds}) ->
    [abstract_fact(N, predicate_spec(N, Preds)) || N <- formula_names(F)],
    polarise(mce_ltl:nnf(F), Preds).

formula_names({prop, N}) -> [N];
formula_names(T) when is_tuple(T) -> lists:append([formula_names(E) || E <- tuple_to_list(T)]);
formula_names(_) -> [].

%% A step's or a probe's data may be abstract, and a pattern matched
%% against it two-valued could be false where a concretisation makes it
%% true: only `'_'' is allowed there (a prop says the same, three-valued).
abstract_fact(N, Spec) ->
    Data = case Spec of
               {sent, _, _, Msg} -> [Msg];
               {received, _, Msg} -> [Msg];
               {exited, _, Reason} -> [Reason];
               {spawned, _, _, Call} -> [Call];
               {probe, _, Pattern} -> [Pattern];
               _ -> []
           end,
    lists:all(fun(D) -> D =:= '_' end, Data) orelse
        erlang:error({mcerlang, {bad_predicate, N, Spec,
                                 "under abstraction the data of a step or probe may be abstract: "
                                 "match it with '_' (a prop decides data three-valued)"}}).

polarise({prop, N} = P, Preds) ->
    case data_predicate(N, Preds) of
        true -> {prop, {'$abs', [sat, N]}};
        false -> P
    end;
polarise({'not', {prop, N}} = P, Preds) ->
    case data_predicate(N, Preds) of
        true -> {prop, {'$abs', [refuted, N]}};
        false -> P
    end;
polarise({next, F}, Preds) -> {next, polarise(F, Preds)};
polarise({Op, F, G}, Preds) -> {Op, polarise(F, Preds), polarise(G, Preds)};
polarise(Constant, _Preds) -> Constant.

data_predicate(N, Preds) ->
    case predicate_spec(N, Preds) of
        {prop, Pattern} ->
            has_fun(Pattern) andalso
                erlang:error({mcerlang, {bad_predicate, N, Pattern,
                                         "under abstraction a prop pattern is a term ('_' for any part), "
                                         "not a fun"}}),
            true;
        Spec -> is_function(Spec, 1)
    end.

%% Patterns of prop and probe predicates: '_' matches anything, a fun of
%% one argument decides, tuples and lists match element by element, any
%% other term only itself.
matches('_', _) -> true;
matches(F, T) when is_function(F, 1) -> F(T) =:= true;
matches({'$mce_abs', _} = Abstract, T) ->
    %% An abstract value (mcerlang:abstract/1) in a concrete check: the
    %% values it stands for, so one formula serves both modes.
    {ok, Dom} = mce_abs_domain:new([]),
    mce_abs_domain:leq(Dom, Abstract, T);
matches(P, T) when is_tuple(P), is_tuple(T), tuple_size(P) =:= tuple_size(T) ->
    matches(tuple_to_list(P), tuple_to_list(T));
matches([P | Ps], [T | Ts]) -> matches(P, T) andalso matches(Ps, Ts);
matches(P, T) -> P =:= T.

%% The memory looked at is the C search's and the product's tables here.
tick(#st{ctx = Ctx} = St) ->
    Tables = fun() ->
                     erlang:system_info(wordsize) *
                         lists:sum([ets:info(T, memory) || T <- tables(St)])
             end,
    case mce_search:tick(Ctx, Tables) of
        {continue, Ctx1} -> St#st{ctx = Ctx1};
        {stop, Why} -> throw({mce_ltl_stop, Why, St})
    end.

%%--------------------------------------------------------------------
%% The formula: quantifiers, predicates, automaton
%%--------------------------------------------------------------------

%% `forall' ranges over the pids of the run, so a quantified formula needs
%% the whole program graph first (every process takes a first step, so
%% its pid is among the agents).
instantiate(Formula, St) ->
    case quantified(Formula) of
        false -> {Formula, St};
        true ->
            St1 = case ets:info(St#st.cache, size) of
                      1 -> explore([St#st.root], St);
                      _ -> St     % explored already
                  end,
            Pids = lists:sort([mce_pid:term(P) || [P] <- ets:match(St1#st.agents, {'$1', '_'}),
                                                  is_integer(P)]),
            {mce_ltl:instantiate(Formula, Pids), St1}
    end.

quantified({forall, _, _}) -> true;
quantified(T) when is_tuple(T) -> lists:any(fun quantified/1, tuple_to_list(T));
quantified(_) -> false.

explore(Roots, St) ->
    explore(queue:from_list([{W, 0} || W <- Roots]), maps:from_keys(Roots, true), St).

%% Breadth-first over the program graph; `Seen': the states queued so far.
%% With max_depth, states more steps away are not expanded.
explore(Queue, Seen, St) ->
    case queue:out(Queue) of
        {empty, _} -> St;
        {{value, {W, Depth}}, Rest} ->
            {{Succs, _, _}, St1} = cached(W, St),
            Max = maps:get(max_states, St#st.opts),
            case Max =/= 0 andalso ets:info(St1#st.cache, size) >= Max of
                true -> throw({mce_ltl_stop, max_states, St1});
                false -> ok
            end,
            MaxDepth = maps:get(max_depth, St#st.opts),
            case MaxDepth =/= 0 andalso Depth >= MaxDepth of
                true ->
                    explore(Rest, Seen, St1#st{explore_cut = St1#st.explore_cut orelse Succs =/= []});
                false ->
                    {Queue1, Seen1} =
                        lists:foldl(fun({W2, _, _}, {Q, S}) when is_map_key(W2, S) -> {Q, S};
                                       ({W2, _, _}, {Q, S}) -> {queue:in({W2, Depth + 1}, Q), S#{W2 => true}}
                                    end, {Rest, Seen}, Succs),
                    explore(Queue1, Seen1, St1)
            end
    end.

automaton(F0, #st{opts = Opts, text = Text} = St) ->
    Preds = maps:get(predicates, Opts),
    F = abstract_formula(F0, Opts),
    #{init := Init, accepting := Acc, trans := Trans} = translate(F, Text),
    Names = lists:usort([N || {_, G, _} <- Trans, {N, _} <- G]),
    Specs = [{N, predicate_spec(N, Preds)} || N <- Names],
    TransMap = lists:foldr(fun({From, G, To}, M) ->
                                   maps:update_with(From, fun(L) -> [{G, To} | L] end, [{G, To}], M)
                           end, #{}, Trans),
    StatePreds = [{N, P} || {N, P} <- Specs,
                            not is_tuple(P) orelse lists:member(element(1, P), [prop, abs_prop, abs_fun])],
    StepPreds = [{N, P} || {N, P} <- Specs, is_tuple(P), lists:member(element(1, P), ?STEP_SPECS)],
    StatusPreds = [{N, P} || {N, P} <- Specs, is_tuple(P), lists:member(element(1, P), ?STATUS_SPECS)],
    St#st{init = Init, trans = TransMap, accepting = maps:from_keys(Acc, true),
          state_preds = StatePreds, step_preds = StepPreds, status_preds = StatusPreds,
          by_name = lists:any(fun({_, Spec}) -> names_process(Spec) end, StepPreds ++ StatusPreds),
          plain_props = lists:all(fun({_, {prop, Pattern}}) -> not has_fun(Pattern);
                                     ({_, {abs_prop, _, _, _}}) -> true;
                                     (_) -> false
                                  end, StatePreds),
          probe_preds = [{N, L, Pat} || {N, {probe, L, Pat}} <- Specs]}.

%% Whether a step or status spec names a process by a registered name.
names_process(Spec) ->
    Positions = case Spec of
                    {sent, From, To, _} -> [From, To];
                    {spawned, Parent, Child, _} -> [Parent, Child];
                    {_, P, _} -> [P];
                    {_, P} -> [P]
                end,
    lists:any(fun(P) -> is_atom(P) andalso P =/= '_' end, Positions).

has_fun(F) when is_function(F) -> true;
has_fun(T) when is_tuple(T) -> has_fun(tuple_to_list(T));
has_fun([H | T]) -> has_fun(H) orelse has_fun(T);
has_fun(_) -> false.

%% The automaton of the negated formula.  The translation runs under the
%% check's time, memory and stop request, and with a bound on its tableau:
%% it is exponential in the nesting of untils.
translate(F, Text) ->
    case mce_guard:call({ltl_translation, Text},
                        fun() -> mce_ltl:to_buchi({'not', F}, #{max_steps => ?MAX_TABLEAU_STEPS}) end,
                        #{budget => none}) of
        {ok, Automaton} -> Automaton;
        {error, {too_large, Limit}} -> erlang:error({mcerlang, {ltl_too_large, Text, Limit}})
    end.

predicate_spec({'$abs', [Polarity, N]}, Preds) ->
    %% A proposition of a check under abstraction (abstract_formula/2).
    case predicate_spec(N, Preds) of
        {prop, Pattern} -> {abs_prop, Polarity, Pattern, get('$mce_abs_dom')};
        Fun when is_function(Fun, 1) -> {abs_fun, Polarity, Fun, mce_abs_judge:prepare(Fun)}
    end;
predicate_spec({Name, [P]} = N, Preds) when not is_map_key(Name, Preds) ->
    %% scheduled(P), enabled(P), blocked(P): built in unless defined
    true = lists:member(Name, mcerlang:builtin_predicates()),
    check_spec(N, {Name, P});
predicate_spec({Name, Args} = N, Preds) ->
    Fun = maps:get(Name, Preds),
    check_spec(N, mce_search:property_call({predicate, Name}, fun() -> apply(Fun, Args) end));
predicate_spec(Name, Preds) ->
    check_spec(Name, maps:get(Name, Preds)).

check_spec(_, F) when is_function(F, 1) -> F;
check_spec(_, {prop, _} = P) -> P;
check_spec(_, {probe, L}) -> {probe, L, '_'};
check_spec(_, {probe, _, _} = P) -> P;
check_spec(_, {sent, _, _, _} = P) -> P;
check_spec(_, {received, _, _} = P) -> P;
check_spec(_, {spawned, _, _, _} = P) -> P;
check_spec(_, {exited, _, _} = P) -> P;
check_spec(_, {running, P}) -> {enabled, P};
check_spec(_, {K, _} = P) when K =:= scheduled; K =:= enabled; K =:= blocked -> P;
check_spec(Name, Other) ->
    erlang:error({mcerlang, {bad_predicate, Name, Other,
                             "expected fun((View) -> boolean()), {prop, Pattern}, {probe, Label}, "
                             "{probe, Label, Pattern}, {sent, From, To, Msg}, {received, Pid, Msg}, "
                             "{spawned, Parent, Child, Call}, {exited, Pid, Reason}, {scheduled, Pid}, "
                             "{enabled, Pid} (or {running, Pid}) or {blocked, Pid}"}}).

%% @doc Does the run Prefix Cycle Cycle ... violate the check's formula?
%% A position is the view of its state (with the step into it, or `none'),
%% the probes of that step and the processes that can move in the state
%% (the product's letters).  `forall' ranges over `Pids'.
-spec lasso_violates(map(), [position()], [position(), ...], [pid()]) -> boolean().
lasso_violates(Opts, Prefix, Cycle, Pids) ->
    {Text, Formula} = maps:get(ltl, Opts),
    F = case quantified(Formula) of
            true -> mce_ltl:instantiate(Formula, Pids);
            false -> Formula
        end,
    #{trans := Trans} = Automaton = translate(F, Text),
    Preds = maps:get(predicates, Opts),
    Specs = [{N, predicate_spec(N, Preds)} || N <- lists:usort([N || {_, G, _} <- Trans, {N, _} <- G])],
    Letter = fun({#{processes := Procs, step := Step} = View, Probes, Enabled}) ->
                     Names = maps:from_list([{P, Name} || #{pid := P, name := Name} <- Procs,
                                                          is_atom(Name)]),
                     Blocked = [P || #{pid := P} <- Procs] -- Enabled,
                     [N || {N, Spec} <- Specs,
                           case Spec of
                               {probe, L, Pattern} ->
                                   lists:any(fun({L1, T}) -> L1 =:= L andalso matches(Pattern, T) end,
                                             Probes);
                               {K, _} when K =:= enabled; K =:= blocked ->
                                   status_matches(Spec, Enabled, Blocked, Names);
                               {K, _} when K =:= scheduled -> is_map(Step) andalso step_matches(Spec, Step, Names);
                               {K, _, _} when K =:= received; K =:= exited ->
                                   is_map(Step) andalso step_matches(Spec, Step, Names);
                               {K, _, _, _} when K =:= sent; K =:= spawned ->
                                   is_map(Step) andalso step_matches(Spec, Step, Names);
                               _ -> state_pred(N, Spec, View)
                           end]
             end,
    mce_ltl:accepts(Automaton, {[Letter(P) || P <- Prefix], [Letter(P) || P <- Cycle]}).

%%--------------------------------------------------------------------
%% Counterexamples
%%--------------------------------------------------------------------

%% A safety violation met while expanding: the path the search first took
%% to W, then W's state as the final state.
safety_counterexample(Violation, W, St) ->
    Path = path_to(W, St, []),
    Steps = labels(Path, St),
    ok = mce_nif:focus(St#st.search, W),
    base(Violation, [mce_search:step(L) || L <- Steps], St).

path_to(W, St, Acc) ->
    case ets:lookup(St#st.parents, W) of
        [{W, root}] -> Acc;
        [{W, {Parent, J}}] -> path_to(Parent, St, [{Parent, J} | Acc])
    end.

%% The labels of program steps {W, J} (J: index in W's expansion), by
%% expanding the states again: expansions are deterministic, and labels
%% are not kept in the cache.
labels(Steps, St) ->
    {Labels, _} = lists:mapfoldl(
                    fun({W, J}, Memo) ->
                            Succs = case Memo of
                                        #{W := Ss} -> Ss;
                                        _ -> reexpand(W, St)
                                    end,
                            Label = case J < length(Succs) of
                                        true -> label(element(3, lists:nth(J + 1, Succs)));
                                        false -> stutter
                                    end,
                            {Label, Memo#{W => Succs}}
                    end, #{}, Steps),
    Labels.

reexpand(W, St) ->
    {expanded, W, Succs, _, _, _} = expand_loop(mce_nif:expand(St#st.search, W), St),
    Succs.

lasso_counterexample(Stem, Cycle, St) ->
    ProgramSteps = fun(Steps) ->
                           [{Key bsr 32, J} || {Key, I} <- Steps, Key band ?PRE =/= ?PRE,
                                               J <- [edge_index(Key, I, St)]]
                   end,
    StemSteps = ProgramSteps(Stem),
    CycleSteps = ProgramSteps(Cycle),
    {EntryKey, _} = hd(Cycle),
    Labels = labels(StemSteps ++ CycleSteps, St),
    {StemLabels, CycleLabels} = lists:split(length(StemSteps), Labels),
    ok = mce_nif:focus(St#st.search, EntryKey bsr 32),
    Cex = base({ltl, St#st.text}, [show(L) || L <- StemLabels], St),
    Cex#{cycle => [show(L) || L <- CycleLabels]}.

%% `shortest' with `ltl': the lasso found, shortened in the product.  The
%% stem becomes a shortest path from the initial state to the cycle (the
%% cycle rotated to start where it arrives).  Without fairness any cycle
%% through an accepting product state is a counterexample, so for each
%% accepting state of the found cycle a shortest cycle through it and a
%% shortest stem to it are tried, and the shortest lasso of all is taken;
%% under weak fairness the cycle is kept (a shorter one may be unfair).
%% Not necessarily the shortest lasso of the whole product (that would
%% need a shortest cycle through every accepting state): the shortest
%% through the accepting states of the cycle the search found.  A limit
%% met on the way keeps the lasso as found.
shorten(Stem, Cycle, St) ->
    Root = key(St#st.root, ?PRE),
    try
        CycleKeys = maps:from_list([{K, true} || {K, _} <- Cycle]),
        {ToCycle, Entry, St1} = bfs_path(Root, fun(K) -> is_map_key(K, CycleKeys) end, St),
        {Before, After} = lists:splitwith(fun({K, _}) -> K =/= Entry end, Cycle),
        Kept = {ToCycle, After ++ Before},
        Candidates = case maps:get(fairness, St#st.opts) of
                         weak -> [Kept];
                         none ->
                             Accepting = lists:usort([K || {K, _} <- Cycle,
                                                           is_map_key(K band ?PRE, St1#st.accepting)]),
                             [Kept | through_accepting(Root, Accepting, St1)]
                     end,
        Shortest = hd(lists:sort([{length(S) + length(C), length(C), L}
                                  || {S, C} = L <- [{Stem, Cycle} | Candidates]])),
        element(3, Shortest)
    catch
        throw:{mce_ltl_stop, _, _} -> {Stem, Cycle};
        throw:{mce_guard_interrupted, _} -> {Stem, Cycle}
    end.

through_accepting(_Root, [], _St) ->
    [];
through_accepting(Root, [A | As], St) ->
    {Cycle, A, St1} = bfs_path(A, fun(K) -> K =:= A end, St),
    {Stem, A, St2} = bfs_path(Root, fun(K) -> K =:= A end, St1),
    [{Stem, Cycle} | through_accepting(Root, As, St2)].

%% A shortest path of product edges from Start to a key for which IsTarget
%% holds (Start itself only by a cycle back to it): the steps {Key,
%% EdgeIndex} and the key reached.  The target is reachable: it lies on
%% the lasso found.
bfs_path(Start, IsTarget, St) ->
    bfs_path(queue:from_list([Start]), #{Start => root}, IsTarget, St).

bfs_path(Queue, Parents, IsTarget, St) ->
    {{value, K}, Rest} = queue:out(Queue),
    {Edges, St1} = product_edges(K bsr 32, K band ?PRE, St),
    Numbered = lists:zip(lists:seq(0, length(Edges) - 1), [K2 || {K2, _, _} <- Edges]),
    case [{I, K2} || {I, K2} <- Numbered, IsTarget(K2)] of
        [{I, K2} | _] ->
            {path_back(K, Parents, [{K, I}]), K2, St1};
        [] ->
            {Queue1, Parents1} =
                lists:foldl(fun({_, K2}, {Q, P}) when is_map_key(K2, P) -> {Q, P};
                               ({I, K2}, {Q, P}) -> {queue:in(K2, Q), P#{K2 => {K, I}}}
                            end, {Rest, Parents}, Numbered),
            bfs_path(Queue1, Parents1, IsTarget, St1)
    end.

path_back(K, Parents, Acc) ->
    case maps:get(K, Parents) of
        root -> Acc;
        {P, I} -> path_back(P, Parents, [{P, I} | Acc])
    end.

edge_index(Key, I, St) ->
    {Edges, _} = product_edges(Key bsr 32, Key band ?PRE, St),
    {_, _, J} = lists:nth(I + 1, Edges),
    J.

show(stutter) -> #{kind => stutter};
show(Label) -> mce_search:step(Label).

base(Violation, Trace, #st{search = S} = St) ->
    #{violation => Violation, trace => Trace, final_state => mce_search:final_state(S),
      ether => mce_search:ether(S), stats => stats(St)}.

stats(#st{ctx = Ctx, buchi = B, cache = Cache, reduced = Reduced}) ->
    Base = mce_search:stats(Ctx),
    Product = case B of
                  undefined -> #{};
                  _ -> maps:fold(fun(K, V, M) -> M#{list_to_atom("product_" ++ atom_to_list(K)) => V} end,
                                 #{}, mce_nif:buchi_stats(B))
              end,
    %% reduced_states: program states whose successors G' cuts to one
    %% (the C search only marks safe steps here).
    maps:merge(Base#{expanded_states => ets:info(Cache, size), reduced_states => Reduced}, Product).
