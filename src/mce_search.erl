%% @doc The search driver: the loop that answers the C search's requests.
%%
%% The C search (mce_nif) decides what to explore; this loop only runs the
%% Erlang code it asks for (a match test or a process step) and hands the
%% answer back, one NIF call per request.  It also owns the checks that are
%% policy rather than mechanism: which exits are abnormal, the time limit,
%% and building the result.
-module(mce_search).

-export([run/2]).
%% For the LTL product search (mce_ltl_search), which drives the same C
%% search in expand-only mode and shares the limits, views and reports.
-export([search/1, options/1, tick/1, tick/2, view/2, step/1, stats/1, violation/3, death_violation/2,
         internal_error/1, final_state/1, ether/1, property_call/2, props/1]).
%% For stepping sessions (mce_session: replay, simulation, the debugger).
-export([new_context/2, judge/3, initial_observer/1]).
%% For the LTL check's reduction (mce_ltl_search): whether it is on, off
%% for a reason found once the formula's predicates are known, and a new
%% search without it when the reduced one proves nothing.
-export([reduction_of/1, set_reduction/2, without_reduction/2]).
%% For the MSC drawing (mce_msc), which marks the exits a check tolerates.
-export([normal_reason/2]).
%% For the parallel search (mce_workers): the loop of one worker, and what
%% a worker's context shares with the first's.
-export([loop/2, worker_loop/2, workers/1, progress_off/1, with_others/2]).
%% For the distributed search (mce_cluster): a participant's search on
%% another node, the share of the work a context carries, and the
%% options a participant runs with.
-export([participant/3, share/1, set_share/2, init_call/1]).
-export([concrete/1]).
%% For both: the stats of a search made of several.
-export([combine_stats/4]).

-record(ctx, {search :: mce_nif:search(),
              opts :: map(),
              started :: integer(),
              deadline :: integer() | infinity,
              memory :: pos_integer() | infinity,
              progress :: boolean(),
              steps = 0 :: non_neg_integer(),
              last_report :: integer(),
              monitors = [] :: [{module(), term()}],
              invariants = [] :: [fun((mcerlang:view()) -> term())],
              initial_observer = [] :: [term()],
              reduction = {off, option} :: reduction(),
              %% Whether the reduction also takes the steps safe up to a
              %% renaming of pid numbers and ref counters (the `por_renaming' stat).
              renaming = {off, option} :: renaming(),
              init_call :: term(),
              %% workers (mce_workers): the other workers' searches, whose
              %% shares the first worker's progress lines show
              others = [] :: [mce_nif:search()],
              %% A distributed search: which participant of how many
              %% this search is, and the participant's state
              %% (mce_cluster:share()) once the exchange has started.
              cluster = none :: none | {pos_integer(), non_neg_integer()},
              share = none :: term()}).

%% Whether the check uses partial-order reduction, or why not (the
%% `reduction' stat).
-type reduction() :: on | {off, option | monitor | invariant | mailbox_bound | shortest | ltl
                              | max_depth | expand_only | void_reason()}
                   %% the LTL check (mce_ltl_search): a formula with next,
                   %% predicates of steps (sent, probes, scheduled ...), of the
                   %% view or of the processes' status
                   | {off, next | step_predicates | state_predicates}.
%% Why a reduced search proved nothing and ran again without the
%% reduction: a step read another process's record, or, once a step that
%% sends was taken as safe, a step sent an exit signal to another process,
%% linked to one, or listed the processes (c_src/por.h, rule 7).
-type void_reason() :: reads_process_state | exit_signal | link | processes.
%% Whether the safety search's reduction also cuts with the steps that are
%% safe only up to a renaming of pid numbers and ref counters (c_src/por.h:
%% a spawn, a make_ref, a step that drops a pid or ref, a process's end), or
%% why not: `pid_numbers', the program observed pid numbers or the order of
%% refs (their order, text or hash), `dead_target',
%% it linked to, monitored, signalled or tested a process gone after an end
%% was taken as safe, `monitor_race', a monitored process died before its
%% watcher sent to it, or a process read its own monitors, after a monitor
%% or demonitor was taken as safe, `name_freed', a registered name was freed
%% after a lookup of one was taken as safe; each way the check ran again
%% without them.
-type renaming() :: on | {off, option | reduction | expand_only | cluster | kill
                              | treat_as_normal | pid_numbers | dead_target | monitor_race
                              | name_freed}.
-type ctx() :: #ctx{}.
-export_type([reduction/0, void_reason/0, ctx/0]).

%% Requests answered between two looks at the clock, the mailbox (for
%% mcerlang:stop/1) and the memory in use: a few milliseconds of work.
-define(TICK, 256).

-spec run(term(), map()) -> mcerlang:result().
run(InitCall, Opts) ->
    Ltl = maps:get(ltl, Opts) =/= none,
    Reduction = case maps:get(ltl, Opts) of
                    {_, Formula} when map_get(reduction, Opts) -> ltl_reduction(Formula, Opts);
                    _ -> reduction(Opts, Ltl)
                end,
    Ctx = (new_context(Opts, Ltl, Reduction))#ctx{init_call = InitCall},
    case Ltl of
        true -> mce_ltl_search:run(InitCall, Ctx);
        false -> safety(InitCall, Ctx)
    end.

%% The safety search.  A reduced search in which a step read another
%% process's record (process_info/2) proves nothing, since that read can
%% tell a safe step taken from one not taken: the C search ends it
%% (`{reduction_void, Why}'; so does, once a sending step was taken as
%% safe, an exit signal or link to another process or a list of the
%% processes: c_src/por.h, rule 7) and the check runs again, from the start, without
%% the reduction, within the same time limit.  A symmetric search in which
%% the program observed the order of pids (`{reduction_void, pid_order}',
%% mce_rt_order) runs again the same way without symmetry; one in which it
%% iterated a map whose keys hold pids (`{reduction_void, key_order}')
%% runs again with symmetry, the processes named in map keys pinned.
safety(InitCall, Ctx) ->
    First = mce_nif:start(Ctx#ctx.search, InitCall, 1),
    case try judge_initial(First, Ctx)
         catch throw:{mce_guard_interrupted, Stop} -> {inconclusive, Stop, stats(Ctx)}
         end of
        {reduction_void, pid_order} ->
            %% Symmetry's guard (mce_rt_order): again without symmetry,
            %% with the reduction as it was, but exact in pid numbers,
            %% which the program observes.
            Opts = exact_numbers(mce_symmetry:void(Ctx#ctx.opts, pid_order), Ctx, pid_numbers),
            safety(InitCall, again(Ctx, new_context(Opts, false, Ctx#ctx.reduction)));
        {reduction_void, few_renamed} ->
            %% symmetry => auto found too few states renamed to pay for
            %% it (c_src/search_reduce.c, search_sym_judge): again
            %% without symmetry, everything else as it was.
            Stopped = maps:get(symmetry_stopped, mce_nif:stats(Ctx#ctx.search), 0),
            Opts = (mce_symmetry:void(Ctx#ctx.opts, few_renamed))#{'$mce_symmetry_stopped' => Stopped},
            safety(InitCall, again(Ctx, new_context(Opts, false, Ctx#ctx.reduction)));
        {reduction_void, key_order} ->
            %% The program iterated a map whose keys hold pids, which the
            %% symmetric search renamed: again with symmetry, those pinned.
            Opts = exact_numbers(mce_symmetry:void(Ctx#ctx.opts, key_order), Ctx, pid_numbers),
            safety(InitCall, again(Ctx, new_context(Opts, false, Ctx#ctx.reduction)));
        {reduction_void, Why} when Why =:= monitor_race; Why =:= name_freed ->
            %% A watched process died, or a name was freed, where a monitor
            %% or lookup taken as safe may have come first: again without
            %% that rule (rules 11, 12), the renaming's other rules kept;
            %% met again without it (rule 10's guard), with the exact rules.
            Opts = guarded_rule_off(Ctx#ctx.opts, Ctx, Why),
            safety(InitCall, again(Ctx, new_context(Opts, false, Ctx#ctx.reduction)));
        {reduction_void, Why} when Why =:= pid_numbers; Why =:= dead_target ->
            %% A step observed pid numbers after a step safe only up to a
            %% renaming of them was taken, or aimed at a process gone after
            %% an exit was taken as safe: again with the exact rules.
            Opts = exact_numbers(Ctx#ctx.opts, Ctx, Why),
            safety(InitCall, again(Ctx, new_context(Opts, false, Ctx#ctx.reduction)));
        {reduction_void, Why} ->
            %% Off in the options too: a distributed search's other
            %% participants take theirs from them (mce_cluster).
            Opts = (Ctx#ctx.opts)#{reduction => false},
            safety(InitCall, again(Ctx, new_context(Opts, false, {off, Why})));
        Result ->
            Result
    end.

rule_on(Why, Opts) ->
    case lists:member(Why, maps:get(por_rules_off, Opts, [])) of
        true -> 0;
        false -> 1
    end.

%% The options of a check run again because a guard of rule 11 or 12
%% fired (stat `por_rules_off'): that rule off, or, off already, the exact
%% rules.
guarded_rule_off(Opts, Ctx, Why) ->
    Off = maps:get(por_rules_off, Opts, []),
    case lists:member(Why, Off) of
        false -> Opts#{por_rules_off => [Why | Off]};
        true -> exact_numbers(Opts, Ctx, Why)
    end.

%% The options of a check run again because the program observed pid
%% numbers (or, `dead_target', aimed at a process gone after an exit was
%% taken as safe): the reduction no longer takes steps safe only up to a
%% renaming of pids (stat `por_renaming => {off, Why}').
exact_numbers(Opts, #ctx{renaming = on}, Why) ->
    Opts#{por_renaming => {off, Why}};
exact_numbers(Opts, #ctx{}, _Why) ->
    Opts.

%% The context `Again' of the check run once more, from the start, after
%% the search of `Ctx' proved nothing: within the first run's time limit.
again(#ctx{started = Started, deadline = Deadline, init_call = InitCall}, #ctx{opts = Opts} = Again) ->
    ok = guard_limits(Opts, Deadline),
    Again#ctx{started = Started, deadline = Deadline, init_call = InitCall}.

%% The initial state (the entry's process about to start, before any
%% step) is judged like every other: an invariant may be false there
%% already.  Monitors see it with step `none'; the states they return are
%% those the initial state's successors start from (the C search gives
%% them as the observer `none').
judge_initial(First, Ctx) ->
    case observes(Ctx) of
        false -> drive(First, Ctx);
        true ->
            internal_error(First),
            case judge(view(Ctx, none), Ctx#ctx.initial_observer, Ctx) of
                {ok, New} -> drive(First, Ctx#ctx{initial_observer = New});
                skip -> {ok, stats(Ctx)};
                {violation, V} -> counterexample(V, Ctx)
            end
    end.

%% One worker, or several (mce_workers) sharing the search's states, or
%% this node's share of a distributed search (mce_cluster).
drive(First, #ctx{cluster = {_, 0}} = Ctx) ->
    mce_cluster:run(First, Ctx);
drive(First, Ctx) ->
    case workers(Ctx) of
        1 -> loop(First, Ctx);
        _ -> mce_workers:run(First, Ctx)
    end.

%% Which participant of how many a search is: the calling node is the
%% first of a check with `cluster'; a participant on another node is told
%% ('$mce_cluster').  Never for sessions (replay, simulate: expand-only).
cluster_conf(_Opts, true) -> none;
cluster_conf(#{'$mce_cluster' := {N, I}}, false) -> {N, I};
cluster_conf(#{cluster := [_ | _] = Nodes}, false) -> {length(Nodes) + 1, 0};
cluster_conf(_Opts, false) -> none.

%% A participant's search on another node (mce_cluster): the check of
%% Opts (with '$mce_cluster' => {N, I}) from its initial state, the
%% exchange with the others in `Share'.
-spec participant(term(), map(), term()) -> {mce_nif:search(), term()}.
participant(InitCall, Opts, Share) ->
    Ctx = (new_context(Opts, false, reduction(Opts, false)))#ctx{init_call = InitCall,
                                                                share = Share},
    {Ctx#ctx.search, loop(mce_nif:start(Ctx#ctx.search, InitCall, 1), Ctx)}.

-spec init_call(#ctx{}) -> term().
init_call(#ctx{init_call = InitCall}) -> InitCall.

-spec share(#ctx{}) -> term().
share(#ctx{share = Share}) -> Share.

-spec set_share(#ctx{}, term()) -> #ctx{}.
set_share(Ctx, Share) -> Ctx#ctx{share = Share}.

%% How many workers search at once: `workers' where a parallel search can
%% do the check, else 1 (the stats say why: `workers_off').
-spec workers(#ctx{}) -> pos_integer().
workers(#ctx{opts = Opts}) ->
    element(1, workers_used(Opts, false)).

%% How many workers a search of these options runs, and why one when more
%% were asked (none: as asked).
workers_used(Opts, ExpandOnly) ->
    case {maps:get(workers, Opts, 1), workers_off(Opts, ExpandOnly)} of
        {1, _} -> {1, none};
        {N, none} -> {N, none};
        {_, Why} -> {1, Why}
    end.

%% Why a check with `workers => N' (N > 1) runs one worker: the parallel
%% search is breadth-first over the exact table, for safety checks; the
%% shortest counterexample needs the sequential breadth-first order.
workers_off(_Opts, true) -> expand_only;
workers_off(#{ltl := Ltl}, _) when Ltl =/= none -> ltl;
workers_off(#{table := Table}, _) when Table =/= exact -> table;
workers_off(#{shortest := true}, _) -> shortest;
workers_off(_, _) -> none.

%% The loop of a worker that joined the first's search (mce_workers): this
%% process answers the requests of S, with the first's limits.
-spec worker_loop(mce_nif:search(), #ctx{}) -> term().
worker_loop(S, #ctx{opts = Opts, deadline = Deadline} = Ctx) ->
    setup_process(Opts),
    put('$mce_dead_payload', dead_payload(Opts, Ctx#ctx.reduction, false, Ctx#ctx.cluster,
                                          observes(Ctx))),
    ok = guard_limits(Opts, Deadline),
    loop(mce_nif:work(S, 1), Ctx#ctx{search = S, steps = 0}).

-spec progress_off(#ctx{}) -> #ctx{}.
progress_off(Ctx) -> Ctx#ctx{progress = false}.

%% The first worker's context, knowing the others' searches (its progress
%% lines show their shares).
-spec with_others(#ctx{}, [mce_nif:search()]) -> #ctx{}.
with_others(Ctx, Others) -> Ctx#ctx{others = Others}.

observes(#ctx{monitors = Monitors, invariants = Invariants, opts = Opts}) ->
    Monitors =/= [] orelse Invariants =/= [] orelse maps:get(mailbox_bound, Opts) =/= infinity.

%% A new C search for these options, and the context of the loop that
%% drives it.  `ExpandOnly': the caller decides what to explore (the LTL
%% product search, stepping sessions), asking for one state's successors at
%% a time.  Sets up the calling process for translated code: it must be
%% the process that then answers the search's requests.
-spec new_context(map(), boolean()) -> #ctx{}.
new_context(Opts, ExpandOnly) ->
    new_context(Opts, ExpandOnly, reduction(Opts, ExpandOnly)).

%% Partial-order reduction (c_src/por.h) keeps deadlocks, abnormal exits,
%% assertions and runaway steps, not every state: not with checks that
%% judge every state or want the shortest path; not with max_depth, since
%% a reduced path to a violation may be a step longer.  The LTL check has
%% its own conditions (ltl_reduction/2).  See docs/ARCHITECTURE.md.
-spec reduction(map(), boolean()) -> reduction().
reduction(#{reduction := false}, _ExpandOnly) ->
    {off, option};
reduction(#{abstraction := Spec}, _ExpandOnly) when Spec =/= none ->
    {off, abstraction};
reduction(Opts, ExpandOnly) ->
    %% The first that rules it out, in this order.
    Off = [Why || {Why, true} <- [{ltl, maps:get(ltl, Opts) =/= none},
                                  {expand_only, ExpandOnly},
                                  {monitor, maps:get(monitor, Opts) =/= []},
                                  {invariant, maps:get(invariant, Opts) =/= []},
                                  {mailbox_bound, maps:get(mailbox_bound, Opts) =/= infinity},
                                  {shortest, maps:get(shortest, Opts)},
                                  {max_depth, maps:get(max_depth, Opts) =/= 0}]],
    case Off of
        [Why | _] -> {off, Why};
        [] -> on
    end.

%% The LTL check reduces its program graph (mce_ltl_search, see
%% docs/ARCHITECTURE.md "Partial-order reduction of the LTL check") only
%% for formulas without next, whose truth no stuttering changes; with or
%% without weak fairness (the fairness test reads every state's full set
%% of enabled agents, and a weakly fair run of the program graph maps to
%% a weakly fair run of the reduced one: "Weak fairness" there).  Not with
%% max_depth (a reduced path may be longer).  Predicates of steps are
%% found later, once the formula's predicates are resolved
%% (set_reduction/2).
ltl_reduction(Formula, Opts) ->
    Off = [Why || {Why, true} <- [{abstraction, maps:get(abstraction, Opts, none) =/= none},
                                  {next, has_next(Formula)},
                                  {max_depth, maps:get(max_depth, Opts) =/= 0}]],
    case Off of
        [Why | _] -> {off, Why};
        [] -> on
    end.

%% Over the operators only (mce_ltl:quantified()): a predicate may be
%% named `next'.
has_next({next, _}) -> true;
has_next({prop, _}) -> false;
has_next({eq, _, _}) -> false;
has_next({forall, _, F}) -> has_next(F);
has_next(T) when is_tuple(T) -> lists:any(fun has_next/1, tl(tuple_to_list(T)));
has_next(_) -> false.

%% The steps safe up to a renaming of pid numbers and refs (c_src/por.h,
%% rules 4, 5, 7d and 8-12 with POR_RENAMED) need the C search's guards:
%% one node (the workers of a pool share them, a cluster does not), a
%% safety search (an expand-only one marks steps for its caller), no
%% kill fault that spares the entry by its pid number, and exit reasons
%% not judged by their pids (treat_as_normal, as for symmetry).  See
%% docs/ARCHITECTURE.md, "Safe steps up to a renaming of pids and refs".
renaming(_Opts, {off, _}, _ExpandOnly, _Cluster) ->
    {off, reduction};
renaming(Opts, on, ExpandOnly, Cluster) ->
    case maps:get(por_renaming, Opts, true) of
        false -> {off, option};
        {off, Why} -> {off, Why};
        true ->
            Off = [Why || {Why, true} <- [{expand_only, ExpandOnly},
                                          {cluster, Cluster =/= none},
                                          {kill, untargeted_kills(maps:get(faults, Opts))},
                                          {treat_as_normal,
                                           mce_symmetry:names_pids(maps:get(treat_as_normal, Opts))}]],
            case Off of
                [Why | _] -> {off, Why};
                [] -> on
            end
    end.

untargeted_kills(#{kill := N}) when is_integer(N), N > 0 -> true;
untargeted_kills(#{}) -> false.

-spec reduction_of(#ctx{}) -> reduction().
reduction_of(#ctx{reduction = R}) -> R.

%% The stat only: the C search keeps marking safe steps, the caller no
%% longer uses the marks.
-spec set_reduction(#ctx{}, reduction()) -> #ctx{}.
set_reduction(Ctx, R) -> Ctx#ctx{reduction = R}.

%% A new expand-only search with the reduction off (`Why'), within the
%% time limit of the first: the reduced one ended void.
-spec without_reduction(#ctx{}, reduction()) -> #ctx{}.
without_reduction(#ctx{opts = Opts} = Ctx, Why) ->
    again(Ctx, new_context(Opts, true, Why)).

new_context(Opts, ExpandOnly, Reduction) ->
    CheckDeadlock = case lists:member(deadlock, maps:get(property, Opts)) of
                        true -> 1;
                        false -> 0
                    end,
    JudgeDeaths = case lists:member(abnormal_exit, maps:get(property, Opts)) of
                      true -> 1;
                      false -> 0
                  end,
    Nodes = maps:get(nodes, Opts),
    setup_process(Opts),
    Faults = maps:get(faults, Opts),
    Monitors = maps:get(monitor, Opts),
    Invariants = maps:get(invariant, Opts),
    Observe = (Monitors =/= [] orelse Invariants =/= [] orelse
               maps:get(mailbox_bound, Opts) =/= infinity) andalso not ExpandOnly,
    Cluster = cluster_conf(Opts, ExpandOnly),
    {Workers, _} = workers_used(Opts, ExpandOnly),
    Renaming = renaming(Opts, Reduction, ExpandOnly, Cluster),
    DeadPayload = dead_payload(Opts, Reduction, ExpandOnly, Cluster, Observe),
    put('$mce_dead_payload', DeadPayload),
    ClusterConfig = case Cluster of
                        none -> #{};
                        {N, I} -> #{cluster_n => N, cluster_me => I}
                    end,
    Search = new_search(Opts, ClusterConfig#{nodes => Nodes,
                           creation => mce_pid:creation(),
                           workers => Workers,
                           delivery_ether => case maps:get(delivery, Opts) of
                                                 ether -> 1;
                                                 instant -> 0
                                             end,
                           node_pair => case maps:get(ordering, Opts) of
                                            node_pair -> 1;
                                            process_pair -> 0
                                        end,
                           max_crashes => budget(maps:get(crash_node, Faults, 0)),
                           max_disconnects => budget(maps:get(disconnect, Faults, 0)),
                           max_kills => budget(maps:get(kill, Faults, 0)),
                           max_states => maps:get(max_states, Opts),
                           max_depth => maps:get(max_depth, Opts),
                           table_size => maps:get(table_size, Opts),
                           table_mode => case maps:get(table, Opts) of
                                             exact -> 0;
                                             hash_compact -> 1;
                                             {bitstate, _} -> 2
                                         end,
                           bitstate_bits => case maps:get(table, Opts) of
                                                {bitstate, Bits} -> Bits;
                                                _ -> 0
                                            end,
                           check_deadlock => CheckDeadlock,
                           judge_deaths => JudgeDeaths,
                           observe => case Observe of
                                          true -> 1;
                                          false -> 0
                                      end,
                           breadth_first => case maps:get(shortest, Opts) orelse Workers > 1
                                                     orelse Cluster =/= none of
                                                true -> 1;
                                                false -> 0
                                            end,
                           timeouts_when_idle => case maps:get(timeouts, Opts) of
                                                     when_idle -> 1;
                                                     _ -> 0
                                                 end,
                           expand_only => case ExpandOnly of
                                              %% sessions: every successor
                                              true -> expand_mode(Opts);
                                              false -> 0
                                          end,
                           step_cache => case maps:get(step_cache, Opts) of
                                             true -> 1;
                                             false -> 0
                                         end,
                           reduction => case {Reduction, Renaming} of
                                            {on, on} -> 2;
                                            {on, _} -> 1;
                                            {{off, _}, _} -> 0
                                        end,
                           %% Depth-first with the reduction: a state cut to its
                           %% safe step is passed through, not kept
                           %% (docs/ARCHITECTURE.md, "Cut states are passed").
                           pass_cut => case maps:get(cut_states, Opts, pass) of
                                           pass -> 1;
                                           store -> 0
                                       end,
                           %% Rules 11 and 12, unless a guard turned them off.
                           monitor_rule => rule_on(monitor_race, Opts),
                           name_rule => rule_on(name_freed, Opts),
                           %% Only an order of the reduction's tries.
                           small_steps => case maps:get(granularity, Opts) of
                                              small -> 1;
                                              big -> 0
                                          end,
                           dead_payload => case DeadPayload of
                                               true -> 1;
                                               false -> 0
                                           end,
                           symmetry => mce_symmetry:nif_setting(Opts, ExpandOnly)}),
    internal_error(Search),
    Now = erlang:monotonic_time(millisecond),
    Deadline = case maps:get(max_time, Opts) of
                   infinity -> infinity;
                   Ms -> Now + Ms
               end,
    ok = guard_limits(Opts, Deadline),
    Initial = [monitor_init(M, Arg) || {M, Arg} <- Monitors],
    #ctx{search = Search, opts = Opts, started = Now, deadline = Deadline,
         memory = maps:get(memory, Opts), progress = maps:get(progress, Opts),
         last_report = Now, monitors = Monitors, invariants = Invariants,
         initial_observer = Initial, reduction = Reduction, renaming = Renaming,
         cluster = Cluster}.

%% Dead payloads (mce_payload, c_src/dead_payload.h) go with the
%% partial-order reduction of a safety check: the conditions that keep it
%% (no monitor, invariant or mailbox bound looks at messages in states or
%% labels; a read of another process's mailbox voids the search, as it
%% voids the reduction) keep them.  Not in a distributed search, whose
%% participants would each know the descriptors of their own steps only.
%% The option `dead_payloads => false' turns them off alone.
dead_payload(Opts, on, false, none, false) -> maps:get(dead_payloads, Opts, true);
dead_payload(_Opts, _Reduction, _ExpandOnly, _Cluster, _Observe) -> false.

%% The limits of the user callbacks this process runs (mce_guard): the
%% check's deadline, memory cap and reductions budget.
guard_limits(Opts, Deadline) ->
    mce_guard:setup(#{deadline => Deadline, memory => maps:get(memory, Opts),
                      reductions => maps:get(max_reductions, Opts)}).

%% What translated code running in this process reads of the check's
%% options (the process dictionary, as for every step's own record).
setup_process(Opts) ->
    mce_pid:set_nodes(maps:get(nodes, Opts)),
    put('$mce_granularity', maps:get(granularity, Opts)),
    %% timeouts => {infinite_above, Ms}: the executor reports an `after' of
    %% at least Ms as `after infinity' (mce_exec:timeout_kind/3), the C
    %% search never fires a timer that long (ether_timer_can_fire).
    InfiniteAbove = case maps:get(timeouts, Opts) of
                        {infinite_above, Above} -> Above;
                        _ -> infinity
                    end,
    put('$mce_infinite_above', InfiniteAbove),
    %% The marks steps carry (mce_marks): which waits are idle, which
    %% processes a kill may hit.
    put('$mce_idle', maps:get(idle, Opts)),
    put('$mce_kill_targets', case maps:get(faults, Opts) of
                                 #{kill := {_, Targets}} -> Targets;
                                 #{} -> none
                             end),
    put('$mce_app_env', maps:get(env, Opts)),
    %% The abstract interpreter's domains (mce_abs_eval), if any.
    case maps:get(abstraction, Opts, none) of
        none -> erase('$mce_abs_dom');
        Spec -> {ok, Dom} = mce_abs_domain:new(Spec),
                put('$mce_abs_dom', Dom)
    end,
    ok.

%% An expand-only search ends an expansion at a successor that stops the
%% search (the LTL product reports it at once); a session's lists every
%% successor (`expand_past_stops', set by mce_session:open/2), so that a
%% replay finds a later process's step from a state where an earlier one's
%% is a violation.
expand_mode(#{expand_past_stops := true}) -> 2;
expand_mode(_Opts) -> 1.

%% The monitors' states before the first step.
-spec initial_observer(#ctx{}) -> [term()].
initial_observer(#ctx{initial_observer = Initial}) -> Initial.

-spec search(#ctx{}) -> mce_nif:search().
search(#ctx{search = S}) -> S.

-spec options(#ctx{}) -> map().
options(#ctx{opts = Opts}) -> Opts.

%% Answers the search's requests until it ends.
-spec loop(mce_nif:request(), #ctx{}) -> term().
loop({match, Cont, Msg}, #ctx{search = S} = Ctx) ->
    loop(mce_nif:match(S, mce_exec:matches(Cont, Msg)), Ctx);
loop({run, Pid, How, Cont, Dict, TrapExit}, #ctx{search = S, opts = Opts} = Ctx) ->
    {Outcome, Effects, Label} = mce_exec:run(S, Pid, How, Cont, Dict, TrapExit),
    Violation = violation(Outcome, Pid, Opts),
    Next = mce_nif:ran(S, Outcome, Effects, Label, Violation =/= none),
    case Violation of
        none ->
            case tick(Ctx) of
                {continue, Ctx1} -> loop(Next, Ctx1);
                {stop, Why} -> {inconclusive, Why, stats(Ctx)}
            end;
        _ ->
            internal_error(Next),
            counterexample(Violation, Ctx)
    end;
loop({deaths, Deaths}, #ctx{search = S, opts = Opts} = Ctx) ->
    case death_violation(Deaths, Opts) of
        none ->
            loop(mce_nif:deaths_judged(S, false), Ctx);
        Violation ->
            internal_error(mce_nif:deaths_judged(S, true)),
            counterexample(Violation, Ctx)
    end;
loop({observe, Observer, Label}, #ctx{search = S} = Ctx) ->
    States = case Observer of
                 none -> Ctx#ctx.initial_observer;
                 _ -> Observer
             end,
    case judge(view(Ctx, Label), States, Ctx) of
        {ok, New} ->
            Next = mce_nif:observed(S, ok, New),
            case tick(Ctx) of
                {continue, Ctx1} -> loop(Next, Ctx1);
                {stop, Why} -> {inconclusive, Why, stats(Ctx)}
            end;
        skip ->
            loop(mce_nif:observed(S, skip, none), Ctx);
        {violation, V} ->
            internal_error(mce_nif:observed(S, violation, none)),
            counterexample(V, Ctx)
    end;
loop(yield, #ctx{search = S} = Ctx) ->
    %% The C search explored deliveries or faults, or backtracked, for its
    %% whole budget: look at the limits now, whatever the step count.
    case tick(Ctx#ctx{steps = ?TICK}) of
        {continue, Ctx1} -> loop(mce_nif:resume(S), Ctx1);
        {stop, Why} -> {inconclusive, Why, stats(Ctx)}
    end;
loop(idle, #ctx{search = S, share = Share} = Ctx) when Share =/= none ->
    %% A participant of a distributed search with nothing to expand: it
    %% waits for the others' states, or for the end.
    case mce_cluster:poll(S, Share, idle) of
        {ok, Share1} ->
            case limits(Ctx#ctx{steps = ?TICK, share = Share1}, fun() -> 0 end) of
                {continue, Ctx1} -> loop(mce_nif:resume(S), Ctx1);
                {stop, Why} -> {inconclusive, Why, stats(Ctx)}
            end;
        {stop, Why} ->
            {inconclusive, Why, stats(Ctx)}
    end;
loop(idle, #ctx{search = S} = Ctx) ->
    %% A worker with nothing to expand while others are expanding: a pause
    %% (a millisecond: they add states in far less) rather than a spin
    %% that takes their core.
    receive after 1 -> ok end,
    case tick(Ctx#ctx{steps = ?TICK}) of
        {continue, Ctx1} -> loop(mce_nif:resume(S), Ctx1);
        {stop, Why} -> {inconclusive, Why, stats(Ctx)}
    end;
loop(abandoned, Ctx) ->
    {abandoned, stats(Ctx)};
loop(done, Ctx) ->
    Stats = stats(Ctx),
    case maps:get(truncated, Stats) of
        true -> {inconclusive, max_depth, Stats};
        false -> {ok, Stats}
    end;
loop(max_states, Ctx) ->
    {inconclusive, max_states, stats(Ctx)};
loop(deadlock, Ctx) ->
    counterexample(deadlock, Ctx);
loop({reduction_void, Why}, _Ctx) ->
    {reduction_void, Why};
loop(Other, _Ctx) ->
    internal_error(Other).

%%--------------------------------------------------------------------
%% Safety monitors and invariants (mcerlang_monitor)
%%--------------------------------------------------------------------

%% A property that raises is a bug in the property, not a violation by the
%% program: the check stops with an error that names it.
-spec property_call(term(), fun(() -> T)) -> T.
property_call(Which, Fun) ->
    mce_guard:call(Which, Fun).

monitor_init(M, Arg) ->
    case property_call({monitor, M}, fun() -> M:init(Arg) end) of
        {ok, State} -> State;
        Other -> erlang:error({mcerlang, {bad_monitor_init, M, Other, "init/1 returns {ok, State}"}})
    end.

%% Invariants first, then each monitor in turn; the first violation wins.
-spec judge(mcerlang:view(), [term()], #ctx{}) -> {ok, [term()]} | skip | {violation, term()}.
judge(View, States, #ctx{monitors = Monitors, invariants = Invariants0, opts = Opts}) ->
    Bound = maps:get(mailbox_bound, Opts),
    %% Under abstraction each invariant is judged by its own code
    %% (mce_abs_judge:judge/3), prepared here, in the check's process.
    Invariants = case get('$mce_abs_dom') of
                     undefined -> [{F, none} || F <- Invariants0];
                     _ -> [{F, mce_abs_judge:prepare(F)} || F <- Invariants0]
                 end,
    case Monitors =:= [] andalso Invariants =:= [] of
        true ->
            %% The mailbox bound alone: no user code to guard.
            judge(View, States, [], [], Bound);
        false ->
            %% One guarded call per state: the view is copied to the helper once.
            mce_guard:call(properties, fun() -> judge(View, States, Monitors, Invariants, Bound) end)
    end.

judge(View, States, Monitors, Invariants, Bound) ->
    case [{invariant, F} || {F, Prepared} <- Invariants, not invariant_holds(F, View, Prepared)] of
        [V | _] -> {violation, V};
        [] ->
            case over_bound(View, Bound) of
                none -> judge_monitors(Monitors, States, View, []);
                V -> {violation, V}
            end
    end.

invariant_holds(F, View, Prepared) ->
    Call = case Prepared of
               none -> fun() -> F(View) end;
               _ -> fun() -> mce_abs_judge:judge(Prepared, F, [View]) end
           end,
    case property_call({invariant, F}, Call) of
        true -> true;
        false -> false;
        %% Under abstraction an invariant may not know (its view holds
        %% abstract values): only a sure `true' is a proof; the concrete
        %% replay (mce_abstract) tells a real violation.
        maybe when Prepared =/= none -> false;
        maybe -> erlang:error({mcerlang, {bad_invariant_value, F, maybe,
                                          "an invariant returns true or false "
                                          "(maybe only under abstraction)"}});
        Other -> erlang:error({mcerlang, {bad_invariant_value, F, Other,
                                          "an invariant returns true or false"}})
    end.

%% The built-in mailbox bound: no process holds more messages than Bound.
over_bound(_View, infinity) ->
    none;
over_bound(#{processes := Procs}, Bound) ->
    case [{mailbox_bound, Pid, length(Box), Bound} || #{pid := Pid, mailbox := Box} <- Procs,
                                                      length(Box) > Bound] of
        [V | _] -> V;
        [] -> none
    end.

judge_monitors([], [], _View, Acc) ->
    {ok, lists:reverse(Acc)};
judge_monitors([{M, _} | Ms], [S | Ss], View, Acc) ->
    case property_call({monitor, M}, fun() -> M:state_change(View, S, maps:get(step, View)) end) of
        {ok, S1} -> judge_monitors(Ms, Ss, View, [S1 | Acc]);
        skip -> skip;
        Other -> {violation, {monitor, M, Other}}
    end.

%% The read-only view of the state being judged (mcerlang:view()).
-spec view(#ctx{}, none | term()) -> mcerlang:view().
view(#ctx{search = S, opts = Opts}, Label) ->
    Procs = mce_nif:top_state(S),
    internal_error(Procs),
    Nodes = maps:get(nodes, Opts),
    Step = case Label of
               none -> none;
               _ -> step(Label)
           end,
    #{processes => [#{pid => mce_pid:term(P), node => mce_pid:node_of(P), name => Name,
                      status => Status, mailbox => Msgs, where => mce_exec:location(Cont),
                      props => props(Cont)}
                    || {P, Status, Cont, Msgs, _Links, Name} <- Procs],
      ether => ether(S),
      nodes => [#{name => N, up => mce_nif:node_status(S, I, I) =/= down}
                || {I, N} <- lists:zip(lists:seq(0, length(Nodes) - 1), Nodes)],
      step => Step,
      probes => case Step of
                    #{probes := Probes} -> Probes;
                    _ -> []
                end}.

%% The props a process stands at (`mcerlang:prop/1'), from its continuation.
-spec props(term()) -> [term()].
props({{'$mce_choice', [{mce_rt, prop_resume, [Prop]}]}, _Frames}) -> [Prop];
props(_) -> [].

ether_channels(Channels) ->
    [#{from => target(F, Name), to => target(T, Name), signals => [signal(Sig) || Sig <- Sigs]}
     || {F, T, Name, Sigs} <- Channels].

-spec internal_error(term()) -> ok.
internal_error({error, Where, Why}) ->
    erlang:error({mcerlang_internal, Where, Why});
internal_error(_) ->
    ok.

-spec violation(term(), pos_integer(), map()) -> none | {abnormal_exit, pid(), term()}.
violation({exit, Reason}, Pid, Opts) ->
    case lists:member(abnormal_exit, maps:get(property, Opts)) andalso
         not normal_reason(Reason, maps:get(treat_as_normal, Opts)) andalso
         not result_carrier(Reason, Pid) of
        true -> {abnormal_exit, mce_pid:term(Pid), Reason};
        false -> none
    end;
violation(_, _, _) ->
    none.

%% Processes killed by exit signals in one step (the C search lists them,
%% in the order they died, as pid keys): the first whose reason is not
%% normal for the check is the violation, whoever sent the signal.
-spec death_violation([{pos_integer(), term()}], map()) -> none | {abnormal_exit, pid(), term()}.
death_violation(Deaths, Opts) ->
    Normal = maps:get(treat_as_normal, Opts),
    case [D || {_, Reason} = D <- Deaths, not normal_reason(Reason, Normal)] of
        [{Pid, Reason} | _] -> {abnormal_exit, mce_pid:term(Pid), Reason};
        [] -> none
    end.

%% gen_server:multi_call/4's middleman (OTP 25) hands its result back in
%% its exit reason {self(), Tag, Result}: not a failure.
result_carrier({Self, Tag, _Result}, Pid) when is_pid(Self), is_reference(Tag) ->
    mce_pid:term(Pid) =:= Self;
result_carrier(_, _) ->
    false.

%% Whether an exit reason is normal for a check whose treat_as_normal
%% option is `Normal': an atom A covers A and {A, _} (OTP's {shutdown, _}
%% convention, for any atom), a fun of one argument decides, any other
%% term covers itself.  The process of an rpc/erpc call ends by carrying
%% its result in its exit reason (see mce_rpc), and timer:cancel/1 ends
%% the process of an mce_timer timer (mce_rt_time:timer_cancel/1): not
%% failures of the program.
-spec normal_reason(term(), [term()]) -> boolean().
normal_reason({'$mce_erpc_result', _}, _Normal) ->
    true;
normal_reason('$mce_timer_cancelled', _Normal) ->
    true;
normal_reason(Reason, Normal) ->
    lists:any(fun(N) -> covers(N, Reason) end, Normal).

covers(F, Reason) when is_function(F, 1) ->
    case property_call({treat_as_normal, F}, fun() -> F(Reason) end) of
        Bool when is_boolean(Bool) -> Bool;
        Other -> erlang:error({mcerlang, {bad_treat_as_normal_value, F, Other,
                                          "a treat_as_normal fun returns true or false"}})
    end;
covers(A, Reason) when is_atom(A) ->
    Reason =:= A orelse
        (is_tuple(Reason) andalso tuple_size(Reason) =:= 2 andalso element(1, Reason) =:= A);
covers(Term, Reason) ->
    Term =:= Reason.

%% Every ?TICK steps: the limits, a stop request, and a progress line a
%% second.
-spec tick(#ctx{}) -> {continue, #ctx{}} | {stop, term()}.
tick(Ctx) ->
    tick(Ctx, fun() -> 0 end).

%% As tick/1, with the bytes `Extra()' the caller holds besides the C
%% search counted against the memory cap.
-spec tick(#ctx{}, fun(() -> non_neg_integer())) -> {continue, #ctx{}} | {stop, term()}.
tick(#ctx{steps = N} = Ctx, _Extra) when N < ?TICK ->
    {continue, Ctx#ctx{steps = N + 1}};
tick(#ctx{share = Share, search = S} = Ctx, Extra) when Share =/= none ->
    %% A participant of a distributed search: its batches go out and come
    %% in, and the coordinator's questions are answered, between steps.
    case mce_cluster:poll(S, Share, busy) of
        {ok, Share1} -> limits(Ctx#ctx{share = Share1}, Extra);
        {stop, _} = Stop -> Stop
    end;
tick(Ctx, Extra) ->
    limits(Ctx, Extra).

limits(#ctx{deadline = Deadline, memory = Cap} = Ctx, Extra) ->
    Now = erlang:monotonic_time(millisecond),
    receive
        '$mce_stop' -> {stop, stopped}
    after 0 ->
            if
                Deadline =/= infinity, Now >= Deadline -> {stop, max_time};
                true ->
                    %% The cap covers the executor (this process: its heap and
                    %% the binaries it holds) as well as the state store.
                    Used = case Cap of
                               infinity -> 0;
                               _ -> maps:get(memory_used, mce_nif:stats(Ctx#ctx.search))
                                        + mce_sandbox:executor_memory() + Extra()
                           end,
                    case Cap =/= infinity andalso Used > Cap of
                        true -> {stop, {memory, Cap}};
                        false -> {continue, report(Ctx#ctx{steps = 0}, Now)}
                    end
            end
    end.

report(#ctx{progress = true, last_report = Last} = Ctx, Now) when Now - Last >= 1000 ->
    #{states := Own, max_depth := Depth, parts := Parts, memory_used := Mem,
      time_ms := Ms} = St = stats(Ctx),
    %% With workers, all of them found the states of the pool; the line
    %% ends with each one's share.
    States = maps:get(pool_states, St, Own),
    Shares = case Ctx#ctx.others of
                 [] -> "";
                 Others -> [" (workers: ", lists:join(" + ", [grouped(N) || N <- [Own | shares(Others)]]),
                            ")"]
             end,
    io:format(standard_error, "mcerlang: ~s states, ~s states/s, depth ~b, ~s parts, ~s~s~n",
              [grouped(States), grouped(States * 1000 div max(Ms, 1)), Depth, grouped(Parts),
               megabytes(Mem), Shares]),
    Ctx#ctx{last_report = Now};
report(Ctx, _Now) ->
    Ctx.

%% The states each other worker found so far (a worker's search answers
%% between two of its requests).
shares(Others) ->
    [case mce_nif:stats(S) of
         #{states := N} -> N;
         _ -> 0
     end || S <- Others].

grouped(N) ->
    S = integer_to_list(N),
    Head = length(S) rem 3,
    Groups = [lists:sublist(S, I, 3) || I <- lists:seq(Head + 1, length(S), 3)],
    string:join([lists:sublist(S, Head) || Head > 0] ++ Groups, ",").

megabytes(Bytes) ->
    io_lib:format("~.1f MB", [Bytes / 1048576]).

%% A violation in the very step that observed pid order (the guard's
%% report is answered at the next request, which a stop never makes) is
%% one of a state the symmetric search reached, but its mapping to the
%% pids of a run rests on renamings the observation disproves: the check
%% runs again without symmetry, as for any report.
counterexample(Violation, #ctx{search = S} = Ctx) ->
    case maps:get(pid_order, mce_nif:stats(S), 0) of
        1 -> {reduction_void, pid_order};
        2 -> {reduction_void, key_order};
        _ -> {error, build_cex(Violation, Ctx)}
    end.

build_cex(Violation, #ctx{search = S, opts = Opts} = Ctx) ->
    Trace = mce_nif:trace(S),
    internal_error(Trace),
    Cex = #{violation => Violation, trace => [step(L) || L <- Trace], final_state => final_state(S),
            ether => ether(S),
            stats => stats(Ctx)},
    case mce_symmetry:active(Opts, false) of
        true ->
            %% The stack holds representatives: back to the pids of a real run.
            Renamings = mce_nif:renamings(S),
            internal_error(Renamings),
            Raw = Cex#{'$mce_concrete' => {Renamings, Ctx#ctx.init_call, Opts}},
            case Ctx#ctx.cluster of
                %% A distributed search's path may start on another node:
                %% mce_cluster adds the steps before it, then maps back.
                {_, _} -> Raw;
                none -> concrete(Raw)
            end;
        false ->
            case mce_session:has_dead(maps:with([trace, final_state, ether], Cex)) of
                %% Steps that show dead payloads: the replay takes the
                %% real run's.
                true -> mce_symmetry:replayable(Cex, Ctx#ctx.init_call, Opts);
                false -> Cex
            end
    end.

%% @doc A counterexample of representatives (as build_cex leaves it for a
%% distributed search, `'$mce_concrete'' holding the renamings of its
%% states, the initial one first) with the pids of a real run; any other
%% unchanged.
-spec concrete(map()) -> map().
concrete(#{'$mce_concrete' := {Renamings, InitCall, Opts}} = Cex) ->
    mce_symmetry:replayable(mce_symmetry:concrete(maps:remove('$mce_concrete', Cex), Renamings),
                            InitCall, Opts);
concrete(Cex) ->
    Cex.

%% The processes of the state on top of the search (a counterexample's
%% last state).
-spec final_state(mce_nif:search()) -> [map()].
final_state(S) ->
    Procs = mce_nif:top_state(S),
    internal_error(Procs),
    [#{pid => mce_pid:term(P), node => mce_pid:node_of(P), status => Status,
       where => mce_exec:location(Cont), mailbox => Msgs,
       links => [mce_pid:term(L) || L <- Links], name => Name}
     || {P, Status, Cont, Msgs, Links, Name} <- Procs].

%% The ether of the state on top of the search, as users read it.
-spec ether(mce_nif:search()) -> [map()].
ether(S) ->
    Ether = mce_nif:ether(S),
    internal_error(Ether),
    ether_channels(Ether).

%% Steps as users read them: pids as pid terms, refs as refs.
-spec step(term()) -> map().
step({'$mce_deliver', From, To, Signal}) ->
    #{kind => deliver, from => From, to => To, signal => Signal};
step({'$mce_timer', Ref, To, Signal}) ->
    #{kind => timer, ref => Ref, to => To, signal => Signal};
step({'$mce_fault', Fault}) ->
    #{kind => fault, fault => Fault};
step(#{pid := Pid, effects := Effects} = Label) ->
    Label#{kind => run, pid => mce_pid:term(Pid),
           effects => [effect(E) || E <- Effects, E =/= {keep_message, true}]}.

effect({send, N, Msg}) -> {send, mce_pid:term(N), Msg};
effect({send_name, N, Name, Msg}) -> {send, {Name, mce_pid:node_of(N)}, Msg};
effect({spawn, N, Call, Link}) -> {spawn, mce_pid:term(N), Call, Link};
effect({link, N}) -> {link, mce_pid:term(N)};
effect({unlink, N}) -> {unlink, mce_pid:term(N)};
effect({exit, N, Reason}) -> {exit, mce_pid:term(N), Reason};
effect({register, N, Name}) -> {register, Name, mce_pid:term(N)};
effect({monitor, N, R, Item}) -> {monitor, monitored(N, Item), mce_ref:term(R)};
effect({monitor, _N, R, Item, _Name}) -> {monitor, Item, mce_ref:term(R)};
effect({spawn_monitor, N, R, Item}) -> {monitor, monitored(N, Item), mce_ref:term(R)};
effect({demonitor, R, Flush}) -> {demonitor, mce_ref:term(R), Flush};
effect({monitor_node, I, Flag}) when I >= 16#100 ->
    %% A net_kernel:monitor_nodes subscription (mce_rt_netkernel): the
    %% options its messages show.
    {monitor_nodes, Flag, [nodedown_reason || I band 16#2 =/= 0]
                          ++ [case I band 16#8 of
                                  0 -> {node_type, visible};
                                  _ -> {node_type, hidden}
                              end || I band 16#4 =/= 0]};
effect({monitor_node, I, Flag}) -> {monitor_node, mce_pid:node_of(mce_pid:key(I, 0)), Flag};
effect({send_alias, R, Msg}) -> {send, mce_ref:term(R), Msg};
effect({alias, R, _Mode}) -> {alias, mce_ref:term(R)};
effect({unalias, R}) -> {unalias, mce_ref:term(R)};
effect({timer, R, N, Name, Msg, Time}) ->
    {timer, mce_ref:term(R), case Name of none -> mce_pid:term(N); _ -> Name end, Msg, Time};
effect({cancel_timer, R}) -> {cancel_timer, mce_ref:term(R)};
effect({group_leader, N, _Stored, L}) -> {group_leader, mce_pid:term(N), mce_pid:term(L)};
effect(Other) -> Other.

monitored(N, none) -> mce_pid:term(N);
monitored(_N, Item) -> Item.

target(Key, _Name) when Key band 16#80000000 =/= 0 ->
    {timer, mce_ref:term(Key band 16#7fffffff)};
target(Key, Name) ->
    case mce_pid:is_by_name(Key) of
        true -> {Name, mce_pid:node_of(Key)};
        false -> mce_pid:term(Key)
    end.

signal({monitor, R}) -> {monitor, mce_ref:term(R)};
signal({demonitor, R}) -> {demonitor, mce_ref:term(R)};
signal({down, R, Reason}) -> {down, mce_ref:term(R), Reason};
signal(Other) -> Other.

-spec stats(#ctx{}) -> map().
stats(#ctx{search = S, started = T0, reduction = Reduction, renaming = Renaming, opts = Opts}) ->
    St = maps:remove(pid_order, mce_nif:stats(S)),
    Ms = max(erlang:monotonic_time(millisecond) - T0, 0),
    States = maps:get(states, St),
    {Workers, Off} = workers_used(Opts, false),
    WorkersOff = case Off of
                     none -> #{};
                     _ -> #{workers_off => Off}
                 end,
    maps:merge(WorkersOff, St#{time_ms => Ms,
        workers => Workers,
        reduction => Reduction,
        por_renaming => Renaming,
        %% The renaming's rules a guard turned off (guarded_rule_off/3).
        por_rules_off => maps:get(por_rules_off, Opts, []),
        symmetry => mce_symmetry:status(Opts, false),
        %% Where symmetry => auto gave up: in the search before this one.
        symmetry_stopped => max(maps:get(symmetry_stopped, St, 0),
                                maps:get('$mce_symmetry_stopped', Opts, 0)),
        %% Whether symmetry renamed pids in map keys, or (the program
        %% iterated such a map: mce_rt_order) ran again with them pinned.
        symmetry_keys => case {mce_symmetry:status(Opts, false), maps:get(symmetry, Opts, auto)} of
                             {on, {auto, keys_pinned}} -> pinned;
                             {on, _} -> renamed;
                             _ -> none
                         end,
        states_per_second => States * 1000 div max(Ms, 1),
        %% The state store's bytes: the step cache and the decoded terms
        %% (c_src/nif_term_cache.c) are bounded and apart.
        bytes_per_state => (maps:get(memory_used, St) - maps:get(step_cache_bytes, St, 0)
                            - maps:get(decoded_terms_bytes, St, 0))
                               div max(States, 1)}).

%% The stats of a search made of several (the workers of mce_workers, the
%% nodes of mce_cluster), from theirs, the first's keys kept: the `Sum'
%% keys add up, the `Max' keys take the largest; `Used' is the memory all
%% of them use, what they share counted once.
-spec combine_stats([map(), ...], [atom()], [atom()], non_neg_integer()) -> map().
combine_stats([First | _] = All, SumKeys, MaxKeys, Used) ->
    Sum = fun(K) -> lists:sum([maps:get(K, St, 0) || St <- All]) end,
    Max = fun(K) -> lists:max([maps:get(K, St, 0) || St <- All]) end,
    States = Sum(states),
    Ms = Max(time_ms),
    Combined = maps:from_list([{K, Sum(K)} || K <- [states | SumKeys]]
                              ++ [{K, Max(K)} || K <- [time_ms | MaxKeys]]),
    (maps:merge(First, Combined))#{
        memory_used => Used,
        truncated => lists:any(fun(St) -> maps:get(truncated, St, false) end, All),
        states_per_second => States * 1000 div max(Ms, 1),
        bytes_per_state => (Used - Sum(step_cache_bytes) - Sum(decoded_terms_bytes))
                               div max(States, 1)}.

%% The options accept tables up to 2^40 slots or bits; whether one fits is
%% the machine's to say: a failed allocation names the option.
%% A fault budget: a count, or {Count, Targets}.
budget({N, _Targets}) -> N;
budget(N) -> N.

%% The targets of the fault budgets as the C search takes them: kill
%% aimed (only processes marked `target' by mce_marks), and the nodes a
%% crash may hit and the pairs a disconnect may cut, by node index.
fault_targets(Faults, Nodes) ->
    Kill = case Faults of
               #{kill := {_, _}} -> #{kill_targeted => 1};
               #{} -> #{}
           end,
    Index = maps:from_list(lists:zip(Nodes, lists:seq(0, length(Nodes) - 1))),
    All = lists:seq(0, length(Nodes) - 1),
    case {maps:get(crash_node, Faults, 0), maps:get(disconnect, Faults, 0)} of
        {C, D} when is_integer(C), is_integer(D) -> Kill;
        {C, D} ->
            Crash = case C of
                        {_, CNs} -> [maps:get(N, Index) || N <- CNs];
                        _ -> All
                    end,
            Pairs = case D of
                        {_, Ts} ->
                            lists:usort(
                              lists:append(
                                [case T of
                                     {A, B} -> [pair(maps:get(A, Index), maps:get(B, Index))];
                                     N -> [pair(maps:get(N, Index), O)
                                           || O <- All, O =/= maps:get(N, Index)]
                                 end || T <- Ts]));
                        _ -> [pair(A, B) || A <- All, B <- All, A < B]
                    end,
            Kill#{crash_nodes => lists:foldl(fun(I, M) -> M bor (1 bsl I) end, 0, Crash),
                  disconnect_pairs => Pairs}
    end.

pair(A, B) when A < B -> A * 64 + B;
pair(A, B) -> B * 64 + A.

new_search(Opts, Config0) ->
    Config1 = case maps:get(timeouts, Opts) of
                  {infinite_above, Ms} -> Config0#{timers_never_from => Ms};
                  _ -> Config0
              end,
    Config = maps:merge(Config1, fault_targets(maps:get(faults, Opts), maps:get(nodes, Opts))),
    case mce_nif:new(Config) of
        {error, _, "out of memory"} ->
            Culprit = case maps:get(table, Opts) of
                          {bitstate, _} = T -> {table, T};
                          _ -> {table_size, maps:get(table_size, Opts)}
                      end,
            erlang:error({mcerlang, {cannot_allocate, Culprit,
                                     "the visited table does not fit in memory: ask for a smaller one"}});
        Search ->
            Search
    end.
