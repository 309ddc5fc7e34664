%% @doc mcerlang: an explicit-state model checker for Erlang programs.
%%
%% `check/1,2' explores every interleaving of the processes that an entry
%% point spawns and returns `{ok, Stats}' when every reachable state
%% satisfies the properties, `{error, Counterexample}' with a replayable
%% trace otherwise, and `{inconclusive, Reason, Stats}' when a limit stopped
%% the search first.  Bad input (an undefined entry, an unknown option, a
%% construct the checker cannot model) raises `error({mcerlang, Reason})'
%% naming the culprit.
-module(mcerlang).

-export([check/1, check/2, check_concrete/3, stop/1, format/1, format/2, msc/2, msc/3, replay/1, replay/2, simulate/2,
         save/2, load/1, debug/1, debug/2, translate/1, choice/1, prop/1, probe/2,
         clear_translation_cache/0, abstract/1]).
%% For the debugger (mce_debug) and the command line (mce_cli).
-export([options/1, entry/1, entry/2, isolated/2, replayable/2]).
%% For the abstract mode (mce_abstract): the entry checked, untranslated.
-export([entry_call/1]).
%% For the LTL search (mce_ltl_search): the predicates built in.
-export([builtin_predicates/0]).

-type entry() :: {module(), atom(), [term()]} | fun(() -> term()).
-type property() :: deadlock | abnormal_exit.
-type options() :: #{property => property() | [property()] | none,
                     treat_as_normal => [atom() | term() | fun((term()) -> boolean())],
                     max_states => pos_integer() | infinity,
                     max_depth => pos_integer() | infinity,
                     max_time => pos_integer() | infinity,
                     max_reductions => pos_integer(),
                     memory => pos_integer() | infinity,
                     shortest => boolean(),
                     monitor => {module(), term()} | [{module(), term()}],
                     invariant => fun((view()) -> boolean()) | [fun((view()) -> boolean())],
                     mailbox_bound => pos_integer() | infinity,
                     ltl => string() | binary(),
                     predicates => #{atom() => predicate() | fun((...) -> predicate())},
                     fairness => weak | none,
                     progress => boolean(),
                     timeouts => any | when_idle | {infinite_above, non_neg_integer()},
                     table_size => pos_integer(),
                     table => exact | hash_compact | {bitstate, pos_integer()},
                     nodes => [node(), ...],
                     delivery => instant | ether,
                     ordering => process_pair | node_pair,
                     granularity => big | small,
                     translation_cache => file:filename() | boolean(),
                     env => #{atom() => #{atom() => term()}} | [{atom(), [{atom(), term()}]}],
                     faults => #{crash_node => non_neg_integer() | {non_neg_integer(), [node()]},
                                 disconnect => non_neg_integer()
                                             | {non_neg_integer(), [node() | {node(), node()}]},
                                 kill => non_neg_integer()
                                       | {non_neg_integer(), [mce_marks:target()]}},
                     idle => mce_marks:idle(),
                     step_cache => boolean(),
                     reduction => boolean(),
                     dead_payloads => boolean(),
                     por_renaming => boolean(),
                     cut_states => pass | store,
                     symmetry => boolean() | auto,
                     workers => pos_integer() | auto,
                     cluster => [node()],
                     stubs => #{mfa() => function()}}.
%% The read-only view of a state that monitors and invariants judge (see
%% docs/USER_GUIDE.md): every process with its pid, node, registered name,
%% status, mailbox, where it stands and the props it is at; the ether; the
%% nodes; and the step into the state with its probes.
-type view() :: #{processes := [#{pid := pid(), node := node(), name := atom(),
                                  status := init | waiting | choosing,
                                  mailbox := [term()], where := term(), props := [term()]}],
                  ether := [map()], nodes := [#{name := node(), up := boolean()}],
                  step := map() | none, probes := [{term(), term()}]}.
%% A predicate of an LTL formula: a fun over the view of a state; the
%% props (mcerlang:prop/1) some process of the state stands at; the
%% probes (mcerlang:probe/2) of the step into the state.  Patterns: '_'
%% matches anything, a fun of one argument decides, tuples and lists match
%% element by element, other terms match themselves.  The step into the
%% state: `{sent, From, To, Msg}', `{received, Pid, Msg}', `{spawned,
%% Parent, Child, Call}', `{exited, Pid, Reason}', `{scheduled, Pid}'; the
%% processes' status in it: `{enabled, Pid}' (also written `{running,
%% Pid}'), `{blocked, Pid}' (a process
%% pattern is '_', a pid, a fun of the pid or a registered name).
-type predicate() :: fun((view()) -> boolean()) | {prop, term()} | {probe, term()}
                   | {probe, term(), term()}
                   | {sent, term(), term(), term()} | {received, term(), term()}
                   | {spawned, term(), term(), term()} | {exited, term(), term()}
                   | {scheduled | enabled | running | blocked, term()}.
-type stats() :: #{states := non_neg_integer(), transitions := non_neg_integer(),
                   max_depth := non_neg_integer(), time_ms := non_neg_integer(),
                   memory := non_neg_integer(), atom() => term()}.
%% A counterexample: the violation; the steps from the initial state (maps
%% with `kind' run, deliver, timer, fault or stutter; see mce_format); for
%% an LTL violation the `cycle' of steps that repeats forever after them;
%% the processes of the `final_state' (for a lasso, where the cycle
%% starts) and the signals in the `ether' there; the search's `stats';
%% and the `entry' and `options' of the check, for replay/1.
-type counterexample() :: #{violation := term(), trace := [map()],
                            final_state := [map()], stats := stats(),
                            cycle => [map()], ether => [map()],
                            entry => entry(), options => map(),
                            simulation => #{seed := integer(), run := pos_integer()}}.
-type result() :: {ok, stats()} | {error, counterexample()}
                | {inconclusive, term(), stats()}.
-include_lib("kernel/include/file.hrl").

%% Bounds on a counterexample file (load/1): its size, and its term's once
%% inflated (a 1 MB file could otherwise inflate to gigabytes).
-define(MAX_FILE_BYTES, (64 bsl 20)).
-define(MAX_TERM_BYTES, (256 bsl 20)).
%% Atoms are never collected: a file may name at most this many that the
%% node does not know yet (a saved counterexample names a few dozen).
-define(MAX_NEW_ATOMS, 1000).
%% Counts and limits go to the NIF as 64-bit integers (infinity is the
%% way to say "no limit").
-define(MAX_COUNT, (1 bsl 64)).
%% What load/1 puts in place of a fun of the file's entry or options.
-define(FILE_FUN, '$mcerlang_fun_from_file').

-export_type([entry/0, options/0, stats/0, counterexample/0, result/0, view/0, predicate/0]).

-define(DEFAULTS, #{property => [deadlock, abnormal_exit],
                    treat_as_normal => [normal, shutdown],
                    max_states => 0,      % 0: no limit (the NIF's convention)
                    max_depth => 0,
                    max_time => infinity,
                    max_reductions => 20000000,
                    memory => infinity,
                    shortest => false,
                    monitor => [],
                    invariant => [],
                    mailbox_bound => infinity,
                    ltl => none,
                    predicates => #{},
                    fairness => weak,
                    progress => auto,     % on, except under EUnit
                    timeouts => any,
                    table_size => 0,      % 0: the NIF's default
                    table => exact,
                    nodes => ['nonode@nohost'],
                    delivery => instant,
                    ordering => process_pair,
                    granularity => big,
                    translation_cache => true,  % true: mce_translate_cache:default_dir()
                    env => #{},
                    faults => #{},
                    idle => otp,          % OTP servers idle in their main loop: no deadlock
                    step_cache => true,
                    %% Partial-order reduction (mce_search:reduction/2 says
                    %% when a check cannot use it).
                    reduction => true,
                    %% Dead payloads, with the reduction of a safety check
                    %% (mce_search:dead_payload/5, mce_payload).
                    dead_payloads => true,
                    %% With the reduction, steps safe up to a renaming of
                    %% pid numbers (mce_search:renaming/5, c_src/por.h).
                    por_renaming => true,
                    cut_states => pass,
                    %% Symmetry reduction where the program never observes
                    %% pid order (mce_symmetry:status/2, mce_rt_order).
                    symmetry => auto,
                    %% Workers searching at once (mce_workers): a
                    %% breadth-first search sharing one store.
                    workers => 1,
                    %% Other nodes that search with this one, each over
                    %% the states it owns (mce_cluster); []: this node alone.
                    cluster => [],
                    %% An over-approximating abstraction (mce_abstract):
                    %% none, or the domains' spec (mce_abs_domain:new/1).
                    abstraction => none,
                    stubs => #{}}).

%% @equiv check(Entry, #{})
-spec check(entry()) -> result().
check(Entry) ->
    check(Entry, #{}).

%% @doc Model-checks the program started by `Entry'.
-spec check(entry(), options() | [{atom(), term()}]) -> result().
check(Entry, Options) ->
    Opts = options(Options),
    case Opts of
        #{abstraction := none} -> check_concrete(Entry, Options, Opts);
        #{} -> mce_abstract:check(Entry, Options, Opts)
    end.

%% @doc The check of `Entry' on the real values (no abstraction), with the
%% options already validated; mce_abstract's concrete replay runs it too.
-spec check_concrete(entry(), options() | [{atom(), term()}], map()) -> result().
check_concrete(Entry, Options, Opts) ->
    InitCall = entry(Entry, Opts),
    case isolated(fun() -> mce_search:run(InitCall, Opts) end, Opts) of
        {error, Cex} -> {error, Cex#{entry => Entry, options => given(Options)}};
        Result -> Result
    end.

%% The options as given, as a map: what replay/1 and load/1 need to run
%% the same check again.
given(List) when is_list(List) ->
    pairs(List) orelse erlang:error({mcerlang, {bad_options, List}}),
    maps:from_list(lists:reverse(List));
given(Map) when is_map(Map) -> Map;
given(Other) -> erlang:error({mcerlang, {bad_options, Other}}).

%% A proper list of {Key, Value}.
pairs([{_, _} | T]) -> pairs(T);
pairs([]) -> true;
pairs(_) -> false.

%% Characters unicode can convert (a string or binary, not any list).
text(F) ->
    try unicode:characters_to_binary(F) of
        B -> is_binary(B)
    catch error:_ -> false
    end.

%% A proper list (length/1 and the lists module raise on improper ones).
proper([_ | T]) -> proper(T);
proper([]) -> true;
proper(_) -> false.

%% What file:name_all() allows: an atom, a binary, or a deep list of
%% characters (file functions given a pid would talk to it as an I/O
%% server and wait forever).
file_name(File) when is_atom(File); is_binary(File) -> ok;
file_name(File) when is_list(File) ->
    try lists:all(fun(C) -> is_integer(C) andalso C >= 0 end, lists:flatten(File)) of
        true -> ok;
        false -> bad_file_name(File)
    catch error:_ -> bad_file_name(File)
    end;
file_name(File) -> bad_file_name(File).

bad_file_name(File) ->
    erlang:error({mcerlang, {bad_file_name, File, "expected a file name (string, binary or atom)"}}).

%% @doc Runs `Work' (a search over translated code) in a process of its
%% own: translated code uses the executor's process dictionary.  A
%% watchdog stops a runaway step and kills the work if the caller dies,
%% freeing its NIF resources; errors naming a culprit are raised again in
%% the caller.
-spec isolated(fun(() -> T), map()) -> T.
isolated(Work, Opts) ->
    Caller = self(),
    Go = make_ref(),
    HeapLimit = heap_limit(Opts),
    {Pid, Ref} = spawn_monitor(
                   fun() ->
                           Counter = receive {Go, C} -> C end,
                           put('$mce_watch', Counter),
                           %% The steps run in this process: a step that
                           %% builds a huge term kills it instead of the VM.
                           _ = process_flag(max_heap_size, #{size => HeapLimit, kill => true,
                                                             error_logger => false}),
                           put('$mce_heap_limit', HeapLimit),
                           Cache = maps:get(translation_cache, Opts, true),
                           %% The stubs are translated with the worker's
                           %% disk cache, before the work (mce_stubs).
                           Stubs = maps:get(stubs, Opts, #{}),
                           Result = try {ok, mce_translate_cache:with(
                                               Cache, fun() -> ok = mce_stubs:install(Stubs),
                                                               Work()
                                                      end)}
                                    catch error:{mcerlang, _} = E -> {raise, E};
                                          error:{mcerlang_internal, _, _} = E -> {raise, E}
                                    end,
                           Caller ! {self(), Result}
                   end),
    Counter = mce_watchdog:start(Caller, Pid, maps:get(max_reductions, Opts),
                                 HeapLimit * erlang:system_info(wordsize)),
    Pid ! {Go, Counter},
    %% stop/1 finds the worker here: a stop goes to the check running now,
    %% never into the caller's mailbox where a later check would read it.
    Outer = put('$mce_check', Pid),
    try await(Pid, Ref, Opts#{'$mce_counter' => Counter, '$mce_heap_limit' => HeapLimit})
    after
        restore('$mce_check', Outer)
    end.

restore(Key, undefined) -> erase(Key);
restore(Key, Value) -> put(Key, Value).

%% The worker's heap limit in words: the memory cap when there is one,
%% else 1 GiB, but never under 64 MB.  The limit guards the VM against one
%% step that builds a huge term; between steps the memory cap is enforced
%% by the driver's tick, which counts the executor too.  The worker also
%% holds the checker's own bookkeeping (the LTL search's caches, sessions),
%% which a small cap such as 4 MB must stop cleanly as `{memory, Cap}'
%% rather than kill the worker outside any step.
heap_limit(Opts) ->
    Bytes = case maps:get(memory, Opts, infinity) of
                infinity -> 1 bsl 30;
                Cap -> max(Cap, 64 bsl 20)
            end,
    Bytes div erlang:system_info(wordsize).

await(Pid, Ref, Opts) ->
    receive
        {Pid, {ok, Result}} ->
            erlang:demonitor(Ref, [flush]),
            Result;
        {Pid, {raise, E}} ->
            erlang:demonitor(Ref, [flush]),
            erlang:error(E);
        {mce_runaway, Pid, SimPid, Where, Budget} ->
            erlang:demonitor(Ref, [flush]),
            erlang:error({mcerlang, {runaway_step, mce_pid:term(SimPid, maps:get(nodes, Opts)), Where,
                                     {max_reductions, Budget}}});
        {mce_binary_limit, Pid, SimPid, Bytes, Limit} ->
            erlang:demonitor(Ref, [flush]),
            erlang:error({mcerlang, {step_heap_limit, mce_pid:term(SimPid, maps:get(nodes, Opts)),
                                     {binary, Bytes, Limit}}});
        {mce_blocked, Pid, SimPid, Where} ->
            erlang:demonitor(Ref, [flush]),
            erlang:error({mcerlang, {blocked_outside_the_model, mce_pid:term(SimPid, maps:get(nodes, Opts)),
                                     Where, "a receive ran in code the checker did not translate "
                                     "(a fun made by erlang:make_fun/3, a fun in the env option, "
                                     "...): call translated functions instead"}});
        {'DOWN', Ref, process, Pid, killed} ->
            %% Killed by the watchdog (its message follows at once) or by
            %% the heap limit, in a step.
            receive
                {mce_runaway, Pid, _, _, _} = M -> self() ! M, await(Pid, Ref, Opts);
                {mce_binary_limit, Pid, _, _, _} = M -> self() ! M, await(Pid, Ref, Opts);
                {mce_blocked, Pid, _, _} = M -> self() ! M, await(Pid, Ref, Opts)
            after 200 ->
                    Running = atomics:get(maps:get('$mce_counter', Opts), 2),
                    case Running of
                        0 -> erlang:error({mcerlang, {checker_crashed, killed}});
                        _ -> erlang:error({mcerlang, {step_heap_limit,
                                                      mce_pid:term(Running, maps:get(nodes, Opts)),
                                                      {max_heap_size,
                                                       maps:get('$mce_heap_limit', Opts)}}})
                    end
            end;
        {'DOWN', Ref, process, Pid, Reason} ->
            erlang:error({mcerlang, {checker_crashed, Reason}})
    end.

%% @doc Stops the check that process `Checker' is running (in `check/2'):
%% the check returns `{inconclusive, stopped, Stats}' within milliseconds
%% and frees its state space.  The stop addresses the check running when
%% it is called: if `Checker' is not checking (or its check has ended) it
%% is dropped, and it never stops a later check.
-spec stop(pid()) -> ok.
stop(Checker) when is_pid(Checker), node(Checker) =:= node() ->
    case erlang:process_info(Checker, dictionary) of
        {dictionary, Dict} ->
            case lists:keyfind('$mce_check', 1, Dict) of
                %% The worker receives it; once the check ends the worker
                %% is gone and the stop with it.
                {_, Worker} when is_pid(Worker) -> Worker ! '$mce_stop', ok;
                _ -> ok
            end;
        undefined -> ok
    end;
stop(Checker) when is_pid(Checker) ->
    erpc:cast(node(Checker), ?MODULE, stop, [Checker]);
stop(Other) ->
    erlang:error({mcerlang, {bad_checker, Other, "expected the pid of a process running check/2"}}).

%% @doc Nondeterminism in checked code: the checker explores every
%% alternative (a fun of no arguments or `{M, F, Args}'); run normally it
%% takes the first.
-spec choice([fun(() -> T) | {module(), atom(), [term()]}, ...]) -> T.
choice([First | _] = Alternatives) when is_list(Alternatives) ->
    case First of
        F when is_function(F, 0) -> F();
        {M, F, A} when is_atom(M), is_atom(F), is_list(A) -> erlang:apply(M, F, A);
        _ -> bad_choice(Alternatives)
    end;
choice(Other) ->
    bad_choice(Other).

bad_choice(Alternatives) ->
    erlang:error({mcerlang, {bad_choice, Alternatives,
                             "expected a non-empty list of funs of no arguments or {M, F, Args}"}}).

%% @doc The abstract value `Name' (`abstraction' option, issue 21), for
%% prop patterns and views: `any' (every term), `int', `even', `odd'
%% (domain even_odd), `neg', `pos', `nonneg', `nonpos' (domain sign).  In
%% a concrete check a prop pattern holding one matches the values it
%% stands for (`{prop, {count, mcerlang:abstract(nonneg)}}').
-spec abstract(any | int | even | odd | neg | pos | nonneg | nonpos) -> {'$mce_abs', atom()}.
abstract(Name) when Name =:= any; Name =:= int; Name =:= even; Name =:= odd; Name =:= neg;
                    Name =:= pos; Name =:= nonneg; Name =:= nonpos ->
    {'$mce_abs', Name};
abstract(Other) ->
    erlang:error({mcerlang, {bad_abstract_value, Other,
                             "expected any, int, even, odd, neg, pos, nonneg or nonpos"}}).

%% @doc A state proposition (paper 003, section 4): in checked code, the
%% state where the process is about to evaluate `prop(Term)' has `Term' as a
%% proposition (a step of its own); monitors and invariants see it in the
%% process's `props'.  Returns `Term'; run normally it is the identity.
-spec prop(T) -> T.
prop(Term) ->
    Term.

%% @doc Marks the step that runs it with `{Label, Term}': monitors and
%% invariants see it in the view's `probes'.  Run normally it does nothing.
-spec probe(term(), term()) -> ok.
probe(_Label, _Term) ->
    ok.

%% @equiv format(Counterexample, #{})
-spec format(counterexample()) -> unicode:chardata().
format(Cex) ->
    format(Cex, #{}).

%% @doc A counterexample as readable text: numbered steps (who moves,
%% what it does, where in the source), the violation, and the processes
%% of the final state.  Long terms are abbreviated: `depth' (default 8)
%% and `width' (characters, default 100) bound each term; `full => true'
%% shows them whole.
-spec format(counterexample(), #{depth => pos_integer() | infinity,
                                 width => pos_integer() | infinity,
                                 full => boolean()}) -> unicode:chardata().
format(Cex, FormatOpts) when is_map(FormatOpts) ->
    valid_counterexample(Cex),
    mce_format:counterexample(Cex, FormatOpts);
format(_Cex, FormatOpts) ->
    erlang:error({mcerlang, {bad_format_options, FormatOpts, "expected a map"}}).

%% @doc Writes the message sequence chart of a counterexample to `File':
%% an SVG drawing if the name ends in `.svg', else a self-contained HTML
%% page holding the SVG (hover a message to see it whole).
-spec msc(counterexample(), file:name_all()) -> ok | {error, file:posix() | term()}.
msc(Cex, File) ->
    msc(Cex, File, #{}).

%% @doc msc/2 with options: `fold => otp' draws OTP's call protocol
%% (`$gen_call' request, monitor, alias, reply, demonitor) as one arrow per
%% call and one per reply; `fold => none' (the default) every message.
-spec msc(counterexample(), file:name_all(), map()) -> ok | {error, file:posix() | term()}.
msc(Cex, File, Opts) when is_map(Opts) ->
    valid_counterexample(Cex),
    file_name(File),
    maps:foreach(fun(fold, V) when V =:= otp; V =:= none -> ok;
                    (K, V) -> erlang:error({mcerlang, {bad_msc_option, K, V}})
                 end, Opts),
    mce_msc:write(Cex, File, Opts);
msc(_Cex, _File, Opts) ->
    erlang:error({mcerlang, {bad_msc_options, Opts, "expected a map"}}).

%% @equiv replay(Counterexample, #{})
-spec replay(counterexample()) -> {ok, counterexample()} | {error, term()}.
replay(Cex) ->
    replay(Cex, #{}).

%% @doc Runs a counterexample's steps again, from its entry and options,
%% each step matched exactly among the transitions enabled at that point,
%% and checks that they end in the same violation.  `Options' override the
%% counterexample's own: a counterexample read by load/1 has its funs
%% replaced (they are never run), so the options that held funs must be
%% given again here.  Returns the counterexample as replayed (its final
%% state recomputed), or where it diverged: `{diverged, StepNumber,
%% Expected, Enabled}', or `{not_reproduced, Why}' when the steps replay
%% but the violation does not follow.
-spec replay(counterexample(), options() | [{atom(), term()}]) ->
          {ok, counterexample()} | {error, term()}.
replay(Cex, Options) ->
    valid_counterexample(Cex),
    Extra = given(Options),
    {Entry, Given} = replayable(Cex, Extra),
    Opts = (options(Given))#{progress => false},
    InitCall = entry(Entry, Opts),
    isolated(fun() -> mce_session:replay(InitCall, Opts, Cex) end, Opts).

%% @doc The entry and options to run a counterexample again with: its own
%% options overridden by `Extra', refused if a fun that load/1 replaced
%% would be needed (for replay/2 and the debugger).
-spec replayable(counterexample(), map()) -> {entry(), map()}.
replayable(#{entry := Entry, options := Stored}, Extra) when is_map(Stored) ->
    no_file_funs(entry, Entry),
    %% A counterexample of a distributed check is a run of the program:
    %% this node replays it alone, whether the other nodes are up or not.
    Given = maps:remove(cluster, maps:merge(Stored, Extra)),
    maps:foreach(fun no_file_funs/2, Given),
    {Entry, Given};
replayable(_Cex, _Extra) ->
    erlang:error({mcerlang, {not_replayable, "the counterexample has no entry and options "
                             "(made by check/2, simulate/2 or load/1)"}}).

no_file_funs(Where, Term) ->
    case file_fun(Term) of
        false -> ok;
        {true, Text} ->
            erlang:error({mcerlang, {fun_from_file, Where, Text,
                                     "funs read by load/1 are never run: give the option again, "
                                     "replay(Cex, #{Key => Value}) (a fun entry cannot be replayed "
                                     "from a file)"}})
    end.

file_fun({?FILE_FUN, Text}) -> {true, Text};
file_fun(T) when is_tuple(T) -> file_fun(tuple_to_list(T));
file_fun(M) when is_map(M) -> file_fun(maps:to_list(M));
file_fun([H | T]) ->
    case file_fun(H) of
        false -> file_fun(T);
        Found -> Found
    end;
file_fun(_) -> false.

%% @doc Random exploration: `runs' walks (default 100) of at most
%% `max_steps' steps each (default 1000) from the initial state, each step
%% chosen at random among the enabled ones, checking the same properties
%% as check/2 on every state entered.  `seed' (an integer; by default
%% drawn, and reported in the stats) makes the walks reproducible.
%% Returns `{error, Counterexample}' for the first violation met (replay/1
%% reruns it), `{ok, Stats}' when no walk met one (which proves nothing),
%% `{inconclusive, Reason, Stats}' when `max_time' or `memory' ended the
%% walks early.  Not with `ltl'.
-spec simulate(entry(), options() | [{atom(), term()}]) -> result().
simulate(Entry, Options) ->
    Given = given(Options),
    is_map(Given) orelse erlang:error({mcerlang, {bad_options, Options}}),
    {SimOpts, CheckGiven} = simulation_options(Given),
    maps:is_key(ltl, CheckGiven) andalso
        erlang:error({mcerlang, {incompatible_options, simulate, ltl}}),
    Opts = options(CheckGiven),
    InitCall = entry(Entry, Opts),
    case isolated(fun() -> mce_session:simulate(InitCall, Opts, SimOpts) end, Opts) of
        {error, Cex} when map_get(abstraction, Opts) =/= none ->
            %% A walk of the abstract system: its violation may be one of
            %% the abstraction only.
            mce_abstract:confirm(Entry, CheckGiven, Opts, Cex);
        {error, Cex} -> {error, Cex#{entry => Entry, options => CheckGiven}};
        Result -> Result
    end.

simulation_options(Given) ->
    Sim = maps:with([runs, max_steps, seed], Given),
    maps:foreach(fun(K, V) when (K =:= runs orelse K =:= max_steps), is_integer(V), V > 0 -> ok;
                    (seed, V) when is_integer(V) -> ok;
                    (K, V) -> erlang:error({mcerlang, {bad_option_value, K, V}})
                 end, Sim),
    Defaults = #{runs => 100, max_steps => 1000,
                 seed => erlang:phash2({erlang:monotonic_time(), erlang:unique_integer()})},
    {maps:merge(Defaults, Sim), maps:without([runs, max_steps, seed], Given)}.

%% @doc Saves a counterexample to `File', for a bug report: a text header
%% (the formatted counterexample, readable with `head') followed by the
%% counterexample as an Erlang term.  load/1 reads it back; replay/1 then
%% reruns it where the same code is loaded.
-spec save(counterexample(), file:name_all()) -> ok | {error, file:posix()}.
save(Cex, File) ->
    valid_counterexample(Cex),
    file_name(File),
    Text = unicode:characters_to_binary(format(Cex)),
    Term = term_to_binary(Cex, [compressed]),
    file:write_file(File, [<<"mcerlang-counterexample 1 ">>, integer_to_binary(byte_size(Text)),
                           <<"\n">>, Text, Term]).

%% @doc Reads a counterexample that save/2 wrote.  The file is untrusted:
%% it may be at most 64 MiB and its term at most 256 MiB once inflated
%% (checked before inflating and while inflating), it may name at most
%% 1000 atoms the node does not know (atoms are never collected), it is
%% decoded with the `safe' option of binary_to_term/2, and every fun in
%% its entry and options is replaced by `{'$mcerlang_fun_from_file', Text}',
%% so that replay/1 and debug/1 never run code the file brings.
-spec load(file:name_all()) -> {ok, counterexample()} | {error, term()}.
load(File) ->
    file_name(File),
    case file:read_file_info(File) of
        {ok, #file_info{type = regular, size = Size}} when Size =< ?MAX_FILE_BYTES ->
            load_contents(File, file:read_file(File));
        {ok, #file_info{type = regular}} ->
            {error, {bad_counterexample_file, File, "larger than 64 MiB"}};
        {ok, #file_info{}} ->
            {error, {bad_counterexample_file, File, "not a regular file"}};
        {error, _} = Error ->
            Error
    end.

load_contents(File, {ok, <<"mcerlang-counterexample 1 ", Rest/binary>>}) ->
    case header(Rest) of
        {ok, Term} ->
            case mce_etf:decode(Term, #{max_inflated => ?MAX_TERM_BYTES,
                                        max_new_atoms => ?MAX_NEW_ATOMS}) of
                {ok, #{violation := _, trace := T, final_state := _} = Cex} when is_list(T) ->
                    {ok, without_funs(Cex)};
                {ok, _} -> {error, {bad_counterexample_file, File, "damaged contents"}};
                {error, Why} -> {error, {bad_counterexample_file, File, lists:flatten(Why)}}
            end;
        error ->
            {error, {bad_counterexample_file, File, "damaged contents"}}
    end;
load_contents(File, {ok, _}) ->
    {error, {bad_counterexample_file, File, "not written by mcerlang:save/2"}};
load_contents(_File, {error, _} = Error) ->
    Error.

%% The text report's length, the report, then the term.
header(Rest) ->
    case binary:split(Rest, <<"\n">>) of
        [LenText, Body] ->
            case string:to_integer(LenText) of
                {Len, <<>>} when Len >= 0, Len =< byte_size(Body) ->
                    <<_Text:Len/binary, Term/binary>> = Body,
                    {ok, Term};
                _ -> error
            end;
        _ -> error
    end.

without_funs(#{entry := Entry, options := Options} = Cex) ->
    Cex#{entry := mce_sandbox:deep_map(fun file_fun_placeholder/1, Entry),
         options := mce_sandbox:deep_map(fun file_fun_placeholder/1, Options)};
without_funs(Cex) ->
    Cex.

file_fun_placeholder(F) when is_function(F) -> {?FILE_FUN, erlang:fun_to_list(F)};
file_fun_placeholder(X) -> X.

%% @equiv debug(CounterexampleOrEntry, #{})
-spec debug(counterexample() | entry()) -> ok.
debug(What) ->
    debug(What, #{}).

%% @doc An interactive step debugger in the shell, over a counterexample
%% (starting at its initial state, `next' following its steps) or over a
%% program (`Entry' with check options).  Type `help' at its prompt for
%% the commands; mce_debug offers the same commands as functions.
-spec debug(counterexample() | entry(), options() | [{atom(), term()}]) -> ok.
debug(What, Options) ->
    mce_debug:repl(What, given(Options)).

valid_counterexample(#{violation := _, trace := Trace, final_state := _}) when is_list(Trace) ->
    ok;
valid_counterexample(Other) ->
    erlang:error({mcerlang, {bad_counterexample, Other,
                             "expected the map of {error, Counterexample} from check/2"}}).

%% @doc The translation of `Module' as Erlang source text.
-spec translate(module()) -> {ok, string()}.
translate(Module) when is_atom(Module) ->
    check_module(Module),
    mce_translate:translate(Module);
translate(Other) ->
    erlang:error({mcerlang, {bad_module, Other, "expected a module name"}}).

%%--------------------------------------------------------------------

%% @doc The initial call of `Entry', translated with the disk cache the
%% options name.
-spec entry(entry(), map()) -> term().
entry(Entry, #{abstraction := Spec}) when Spec =/= none ->
    mce_abstract:initial_call(Entry);
entry(Entry, Opts) ->
    mce_translate_cache:with(maps:get(translation_cache, Opts, true),
                             fun() -> mce_stubs:with_keys(maps:get(stubs, Opts, #{}),
                                                          fun() -> entry(Entry) end)
                             end).

%% @doc Deletes the translations kept on disk in the default directory
%% (the option `translation_cache' names another).  The next check in a
%% fresh VM translates again.
-spec clear_translation_cache() -> ok.
clear_translation_cache() ->
    mce_translate_cache:clear(mce_translate_cache:default_dir()).

%% @doc The initial call of the program `Entry' starts, in translated code.
-spec entry(entry()) -> term().
entry(Entry) ->
    case entry_call(Entry) of
        {closure, Fun} ->
            {module, M} = erlang:fun_info(Fun, module),
            case mce_translate:translatable(M) of
                true -> mce_closure:entry(Fun);         % compiled into a user module
                false -> mce_translate:init_call(Fun)   % a shell fun, or refused
            end;
        {M, F, Args} ->
            mce_translate:init_call({M, F, mce_sandbox:entry_args(Args)})
    end.

%% @doc The call `Entry' names, checked and untranslated: `{M, F, Args}'
%% of a user module's exported function (`fun M:F/0' is `{M, F, []}'), or
%% `{closure, Fun}' for a local fun of no arguments.  Bad entries raise
%% `{mcerlang, Why}' naming the culprit.
-spec entry_call(entry()) -> {module(), atom(), [term()]} | {closure, fun(() -> term())}.
entry_call({M, F, Args} = Entry) when is_atom(M), is_atom(F), is_list(Args) ->
    proper(Args) orelse
        erlang:error({mcerlang, {bad_entry, Entry, "the arguments are an improper list"}}),
    check_module(M),
    Arity = length(Args),
    lists:member({F, Arity}, exports(M)) orelse
        erlang:error({mcerlang, {undefined_function, {M, F, Arity}}}),
    Entry;
entry_call(Fun) when is_function(Fun, 0) ->
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {module, M} = erlang:fun_info(Fun, module),
            {name, F} = erlang:fun_info(Fun, name),
            entry_call({M, F, []});
        {type, local} ->
            {closure, Fun}
    end;
entry_call(Fun) when is_function(Fun) ->
    {arity, A} = erlang:fun_info(Fun, arity),
    erlang:error({mcerlang, {bad_entry, Fun, {arity, A}, "an entry fun takes no arguments"}});
entry_call(Other) ->
    erlang:error({mcerlang, {bad_entry, Other, "expected {Module, Function, Args} or fun M:F/0"}}).

%% treat_as_normal: atoms and other terms are reasons, a fun of one
%% argument decides for any reason (mce_search:normal_reason/2).
treat_as_normal([F | _], _All) when is_function(F), not is_function(F, 1) ->
    erlang:error({mcerlang, {bad_option_value, treat_as_normal, F}});
treat_as_normal([_ | T], All) -> treat_as_normal(T, All);
treat_as_normal([], All) -> All;
treat_as_normal(_Tail, All) -> erlang:error({mcerlang, {bad_option_value, treat_as_normal, All}}).

%% The user's module is never loaded here: loading runs its on_load
%% function in the checker's VM, which checked code must never reach (the
%% translator refuses such a module, but only after reading it).  Its
%% beam file says whether it exists and what it exports.
check_module(M) ->
    case code:which(M) of
        non_existing ->
            erlang:error({mcerlang, {undefined_module, M, nofile}});
        _ ->
            case mce_translate:translatable(M) of
                true -> ok;
                false -> erlang:error({mcerlang, {not_translatable, M,
                                                  "only user modules (outside OTP and mcerlang) "
                                                  "can be checked"}})
            end
    end.

%% A checked module's exports: the loaded code's, else its beam file's.
exports(M) ->
    case code:is_loaded(M) of
        {file, _} ->
            M:module_info(exports);
        false ->
            case beam_lib:chunks(code:which(M), [exports]) of
                {ok, {M, [{exports, Exports}]}} -> Exports;
                {error, beam_lib, Why} -> erlang:error({mcerlang, {undefined_module, M, Why}})
            end
    end.

%% The nodes a crash_node or disconnect budget names are nodes of the
%% check: a node, or for disconnect also a pair of two different nodes.
fault_targets(#{faults := Faults, nodes := Nodes}) ->
    Known = fun(N) -> lists:member(N, Nodes) end,
    maps:foreach(
      fun(crash_node, {_, Ns} = V) ->
              proper(Ns) andalso lists:all(Known, Ns) orelse
                  erlang:error({mcerlang, {bad_option_value, faults, {crash_node, V},
                                           "a crash_node target is one of the nodes"}});
         (disconnect, {_, Ts} = V) ->
              proper(Ts) andalso
                  lists:all(fun({A, B}) -> A =/= B andalso Known(A) andalso Known(B);
                               (N) -> Known(N)
                            end, Ts) orelse
                  erlang:error({mcerlang, {bad_option_value, faults, {disconnect, V},
                                           "a disconnect target is one of the nodes or a pair "
                                           "{NodeA, NodeB} of two of them"}});
         (_, _) -> ok
      end, Faults).

%% @doc Checked options with their defaults (raises naming a bad one).
-spec options(options() | [{atom(), term()}]) -> map().
options(List) when is_list(List) ->
    case pairs(List) of
        %% As proplists: the first of repeated keys counts.
        true -> options(maps:from_list(lists:reverse(List)));
        false -> erlang:error({mcerlang, {bad_options, List}})
    end;
options(Map) when is_map(Map) ->
    Opts0 = maps:fold(fun(K, V, Acc) -> Acc#{K => option(K, V)} end, ?DEFAULTS, Map),
    table_options(Opts0),
    fault_targets(Opts0),
    cluster_options(Opts0, Map),
    Opts = ltl_options(Opts0, Map),
    case Opts of
        #{progress := auto} -> Opts#{progress => not under_eunit()};
        _ -> Opts
    end;
options(Other) ->
    erlang:error({mcerlang, {bad_options, Other}}).

option(property, none) -> [];
option(property, P) when P =:= deadlock; P =:= abnormal_exit -> [P];
option(property, Ps) when is_list(Ps), Ps =/= [] ->
    case proper(Ps) andalso lists:all(fun(P) -> P =:= deadlock orelse P =:= abnormal_exit end, Ps) of
        true -> lists:usort(Ps);
        false -> erlang:error({mcerlang, {bad_option_value, property, Ps}})
    end;
option(treat_as_normal, Rs) when is_list(Rs) ->
    treat_as_normal(Rs, Rs);
option(K, infinity) when K =:= max_states; K =:= max_depth; K =:= max_time -> infinity_value(K);
option(K, N) when (K =:= max_states orelse K =:= max_depth orelse K =:= max_time),
                  is_integer(N), N > 0, N < ?MAX_COUNT -> N;
option(table_size, N) when is_integer(N), N > 0, N =< 1 bsl 40 -> N;
option(table, T) when T =:= exact; T =:= hash_compact -> T;
option(table, {bitstate, Bits} = T) when is_integer(Bits), Bits > 0, Bits =< 1 bsl 40 -> T;
option(max_reductions, N) when is_integer(N), N > 0, N < ?MAX_COUNT -> N;
option(memory, infinity) -> infinity;
option(memory, N) when is_integer(N), N > 0, N < ?MAX_COUNT -> N;
option(progress, P) when is_boolean(P) -> P;
option(step_cache, B) when is_boolean(B) -> B;
option(reduction, B) when is_boolean(B) -> B;
option(reduction, V) ->
    erlang:error({mcerlang, {bad_option_value, reduction, V, "expected true or false"}});
option(cut_states, V) when V =:= pass; V =:= store -> V;
option(cut_states, V) ->
    erlang:error({mcerlang, {bad_option_value, cut_states, V, "expected pass or store"}});
option(por_renaming, B) when is_boolean(B) -> B;
option(por_renaming, V) ->
    erlang:error({mcerlang, {bad_option_value, por_renaming, V, "expected true or false"}});
option(dead_payloads, B) when is_boolean(B) -> B;
option(dead_payloads, V) ->
    erlang:error({mcerlang, {bad_option_value, dead_payloads, V, "expected true or false"}});
option(symmetry, B) when is_boolean(B) -> B;
option(symmetry, auto) -> auto;
option(symmetry, V) ->
    erlang:error({mcerlang, {bad_option_value, symmetry, V, "expected auto, true or false"}});
option(abstraction, none) -> none;
option(abstraction, Spec) ->
    case mce_abs_domain:new(Spec) of
        {ok, _} -> Spec;
        {error, Why} -> erlang:error({mcerlang, {bad_option_value, abstraction, Spec, Why}})
    end;
option(workers, auto) -> erlang:system_info(schedulers_online);
option(workers, N) when is_integer(N), N >= 1, N =< 1024 -> N;
option(workers, V) ->
    erlang:error({mcerlang, {bad_option_value, workers, V, "expected auto or an integer from 1 to 1024"}});
option(cluster, Nodes) when is_list(Nodes) ->
    proper(Nodes) andalso lists:all(fun is_atom/1, Nodes) orelse
        erlang:error({mcerlang, {bad_option_value, cluster, Nodes, "expected a list of node names"}}),
    length(lists:usort(Nodes)) =:= length(Nodes) orelse
        erlang:error({mcerlang, {bad_option_value, cluster, Nodes, "a node is named twice"}}),
    lists:member(node(), Nodes) andalso
        erlang:error({mcerlang, {bad_option_value, cluster, Nodes,
                                 "this node searches anyway: name only the others"}}),
    Nodes =/= [] andalso not erlang:is_alive() andalso
        erlang:error({mcerlang, {bad_option_value, cluster, Nodes,
                                 "this node is not distributed (start it with -sname or -name)"}}),
    Nodes;
option(cluster, V) ->
    erlang:error({mcerlang, {bad_option_value, cluster, V, "expected a list of node names"}});
option(shortest, B) when is_boolean(B) -> B;
option(monitor, {M, _} = Mon) when is_atom(M) -> option(monitor, [Mon]);
option(monitor, Mons) when is_list(Mons) ->
    proper(Mons) orelse erlang:error({mcerlang, {bad_option_value, monitor, Mons}}),
    [case Mon of
         {M, _} when is_atom(M) ->
             code:ensure_loaded(M),
             erlang:function_exported(M, init, 1) andalso erlang:function_exported(M, state_change, 3)
                 orelse erlang:error({mcerlang, {bad_option_value, monitor, Mon,
                                                 "a monitor module exports init/1 and state_change/3"}}),
             Mon;
         _ -> erlang:error({mcerlang, {bad_option_value, monitor, Mon,
                                       "expected {Module, InitArg}"}})
     end || Mon <- Mons];
option(invariant, F) when is_function(F, 1) -> [F];
option(invariant, Fs) when is_list(Fs) ->
    proper(Fs) orelse erlang:error({mcerlang, {bad_option_value, invariant, Fs}}),
    [case F of
         _ when is_function(F, 1) -> F;
         _ -> erlang:error({mcerlang, {bad_option_value, invariant, F, "expected a fun of one argument"}})
     end || F <- Fs];
option(mailbox_bound, infinity) -> infinity;
option(mailbox_bound, N) when is_integer(N), N >= 0, N < ?MAX_COUNT -> N;
option(ltl, F) when is_list(F); is_binary(F) ->
    text(F) orelse erlang:error({mcerlang, {bad_option_value, ltl, F, "expected a string"}}),
    case mce_ltl:parse(F) of
        {ok, Formula} -> {unicode:characters_to_list(F), Formula};
        {error, {ltl_parse, Col, Msg}} ->
            erlang:error({mcerlang, {bad_ltl, F, {column, Col}, Msg}})
    end;
option(predicates, Ps) when is_map(Ps) ->
    maps:foreach(fun(Name, _) when not is_atom(Name) ->
                         erlang:error({mcerlang, {bad_option_value, predicates, Name,
                                                  "predicate names are atoms"}});
                    (_, _) -> ok
                 end, Ps),
    Ps;
option(fairness, F) when F =:= weak; F =:= none -> F;
option(timeouts, T) when T =:= any; T =:= when_idle -> T;
option(timeouts, {infinite_above, Ms} = T) when is_integer(Ms), Ms >= 0 -> T;
option(timeouts, T) ->
    erlang:error({mcerlang, {bad_option_value, timeouts, T,
                             "expected any, when_idle or {infinite_above, Ms} (Ms >= 0)"}});
option(delivery, D) when D =:= instant; D =:= ether -> D;
option(ordering, O) when O =:= process_pair; O =:= node_pair -> O;
option(granularity, G) when G =:= big; G =:= small -> G;
option(translation_cache, C) when is_boolean(C) -> C;
option(translation_cache, Dir) when is_list(Dir); is_binary(Dir) ->
    file_name(Dir),
    Dir;
option(env, Env) when is_map(Env); is_list(Env) ->
    is_map(Env) orelse proper(Env) orelse
        erlang:error({mcerlang, {bad_option_value, env, Env, "expected App => #{Key => Value}"}}),
    Pairs = case Env of
                _ when is_map(Env) -> maps:to_list(Env);
                _ -> Env
            end,
    maps:from_list(
      [case P of
           {App, Vars} when is_atom(App), is_map(Vars) -> {App, Vars};
           {App, Vars} when is_atom(App), is_list(Vars) ->
               proper(Vars) andalso lists:all(fun(V) -> is_tuple(V) andalso tuple_size(V) =:= 2 andalso
                                       is_atom(element(1, V)) end, Vars)
                   orelse erlang:error({mcerlang, {bad_option_value, env, P,
                                                   "expected {App, [{Key, Value}]}"}}),
               {App, maps:from_list(Vars)};
           _ -> erlang:error({mcerlang, {bad_option_value, env, P,
                                         "expected App => #{Key => Value}"}})
       end || P <- Pairs]);
option(nodes, Nodes) when is_list(Nodes), Nodes =/= [] ->
    proper(Nodes) andalso length(Nodes) =< 64 orelse
        erlang:error({mcerlang, {bad_option_value, nodes, Nodes, "expected a list of at most 64 nodes"}}),
    lists:foreach(fun(N) when is_atom(N) ->
                          case string:split(atom_to_list(N), "@") of
                              %% Node names are Latin-1 atoms (the NIF and the
                              %% distribution protocol encode them so).
                              [Name, Host] when Name =/= "", Host =/= "", length(Name) + length(Host) < 255 ->
                                  lists:all(fun(C) -> C =< 255 end, Name ++ Host) orelse
                                      erlang:error({mcerlang, {bad_option_value, nodes, N,
                                                               "a node name is a Latin-1 atom"}}),
                                  ok;
                              _ -> erlang:error({mcerlang, {bad_option_value, nodes, N,
                                                            "a node name is an atom name@host"}})
                          end;
                     (N) -> erlang:error({mcerlang, {bad_option_value, nodes, N,
                                                     "a node name is an atom name@host"}})
                  end, Nodes),
    length(lists:usort(Nodes)) =:= length(Nodes) orelse
        erlang:error({mcerlang, {bad_option_value, nodes, Nodes, "node names repeat"}}),
    Nodes;
option(stubs, Stubs) -> mce_stubs:option(Stubs);
option(faults, Faults) when is_map(Faults) ->
    maps:foreach(fun(K, V) when (K =:= crash_node orelse K =:= disconnect orelse K =:= kill),
                                is_integer(V), V >= 0, V < 1 bsl 32 -> ok;
                    (kill, {N, Ts}) when is_integer(N), N >= 0, N < 1 bsl 32 ->
                         _ = mce_marks:targets_option(faults, Ts),
                         ok;
                    (K, {N, Ns}) when (K =:= crash_node orelse K =:= disconnect),
                                      is_integer(N), N >= 0, N < 1 bsl 32, is_list(Ns) ->
                         %% Checked against the nodes in fault_targets/1.
                         ok;
                    (K, V) -> erlang:error({mcerlang, {bad_option_value, faults, {K, V},
                                                       "expected crash_node, disconnect or kill "
                                                       "=> a count or {Count, Targets}"}})
                 end, Faults),
    Faults;
option(idle, I) -> mce_marks:idle_option(I);
option(K, V) ->
    case maps:is_key(K, ?DEFAULTS) of
        true -> erlang:error({mcerlang, {bad_option_value, K, V}});
        false -> erlang:error({mcerlang, {unknown_option, K}})
    end.

%% An LTL check: every predicate of the formula defined with its arity;
%% deadlocks and abnormal exits are not violations unless asked for (a run
%% that ends stays in its last state; the formula is the property), and
%% options of safety searches that have no meaning
%% for a cycle search are refused.
ltl_options(#{ltl := none} = Opts, _Given) ->
    Opts;
ltl_options(#{ltl := {_, Formula}, predicates := Preds} = Opts, Given) ->
    [erlang:error({mcerlang, {incompatible_options, ltl, K}})
     || K <- [monitor, invariant, mailbox_bound], maps:is_key(K, Given)],
    lists:foreach(
      fun({Name, Arity}) ->
              case maps:find(Name, Preds) of
                  {ok, F} when Arity > 0, is_function(F, Arity) -> ok;
                  {ok, F} when Arity =:= 0, not is_function(F) orelse is_function(F, 1) -> ok;
                  {ok, F} -> erlang:error({mcerlang, {bad_predicate, Name, F,
                                                      case Arity of
                                                          0 -> "expected a fun of the view or a spec";
                                                          _ -> io_lib:format("used with ~b arguments: expected a fun of arity ~b", [Arity, Arity])
                                                      end}});
                  error when Arity =:= 1 ->
                      lists:member(Name, builtin_predicates()) orelse
                          erlang:error({mcerlang, {undefined_predicate, Name, Arity}});
                  error -> erlang:error({mcerlang, {undefined_predicate, Name, Arity}})
              end
      end, mce_ltl:predicates(Formula)),
    case maps:is_key(property, Given) of
        true -> Opts;
        false -> Opts#{property => []}
    end.

%% @doc The predicates an LTL formula may use without defining them, each
%% of one process (a pid, as `forall' binds it): `scheduled(P)', the step
%% into the state was P's; `enabled(P)', P can move in the state;
%% `blocked(P)', P is alive and cannot move (waiting in a receive that
%% nothing in its mailbox matches); `running(P)' is `enabled(P)'.  A
%% definition in `predicates' wins.
-spec builtin_predicates() -> [atom()].
builtin_predicates() ->
    [scheduled, enabled, running, blocked].

%% The lossy visited tables keep a state's root vector only in its DFS
%% stack frame: breadth-first order and the LTL product search name states
%% by their interned root, so they need the exact table.
table_options(#{table := exact}) ->
    ok;
table_options(#{shortest := true}) ->
    erlang:error({mcerlang, {incompatible_options, table, shortest}});
table_options(#{ltl := Ltl}) when Ltl =/= none ->
    erlang:error({mcerlang, {incompatible_options, table, ltl}});
table_options(_) ->
    ok.

%% A distributed search (mce_cluster) is a breadth-first safety search
%% over the exact table, with one worker a node; the states each node
%% judges are those it owns, so checks that judge every state along a path
%% (monitors, invariants, the mailbox bound) and the shortest path are not
%% offered.
cluster_options(#{cluster := []}, _Given) ->
    ok;
cluster_options(Opts, Given) ->
    [erlang:error({mcerlang, {incompatible_options, cluster, K}})
     || {K, Bad} <- [{ltl, maps:get(ltl, Opts) =/= none},
                     {table, maps:get(table, Opts) =/= exact},
                     {shortest, maps:get(shortest, Opts)},
                     {workers, maps:get(workers, Opts) > 1},
                     {abstraction, maps:get(abstraction, Opts) =/= none},
                     {monitor, maps:is_key(monitor, Given)},
                     {invariant, maps:is_key(invariant, Given)},
                     {mailbox_bound, maps:is_key(mailbox_bound, Given)}],
        Bad],
    ok.

%% EUnit runs a test with a group leader of its own that captures output:
%% progress lines would only clutter its report.
under_eunit() ->
    case erlang:process_info(group_leader(), [initial_call, dictionary]) of
        [{initial_call, {eunit_proc, _, _}} | _] -> true;
        [{initial_call, {proc_lib, init_p, 5}}, {dictionary, D}] ->
            case lists:keyfind('$initial_call', 1, D) of
                {_, {eunit_proc, _, _}} -> true;
                _ -> false
            end;
        _ -> false
    end.

%% The NIF takes 0 for "no limit"; max_time keeps `infinity'.
infinity_value(max_time) -> infinity;
infinity_value(_) -> 0.
