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

-export([check/1, check/2, stop/1, format/1, format/2, msc/2, replay/1, simulate/2,
         save/2, load/1, debug/1, debug/2, translate/1, choice/1, prop/1, probe/2]).
%% For the debugger (mce_debug) and the command line (mce_cli).
-export([options/1, entry/1, isolated/2]).

-type entry() :: {module(), atom(), [term()]} | fun(() -> term()).
-type property() :: deadlock | abnormal_exit.
-type options() :: #{property => property() | [property()] | none,
                     treat_as_normal => [term()],
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
                     timeouts => any | when_idle,
                     table_size => pos_integer(),
                     table => exact | hash_compact | {bitstate, pos_integer()},
                     nodes => [node(), ...],
                     delivery => instant | ether,
                     granularity => big | small,
                     env => #{atom() => #{atom() => term()}} | [{atom(), [{atom(), term()}]}],
                     faults => #{crash_node => non_neg_integer(),
                                 disconnect => non_neg_integer(),
                                 kill => non_neg_integer()}}.
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
%% element by element, other terms match themselves.
-type predicate() :: fun((view()) -> boolean()) | {prop, term()} | {probe, term()}
                   | {probe, term(), term()}.
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
                    granularity => big,
                    env => #{},
                    faults => #{}}).

%% @equiv check(Entry, #{})
-spec check(entry()) -> result().
check(Entry) ->
    check(Entry, #{}).

%% @doc Model-checks the program started by `Entry'.
-spec check(entry(), options() | [{atom(), term()}]) -> result().
check(Entry, Options) ->
    Opts = options(Options),
    InitCall = entry(Entry),
    case isolated(fun() -> mce_search:run(InitCall, Opts) end, Opts) of
        {error, Cex} -> {error, Cex#{entry => Entry, options => given(Options)}};
        Result -> Result
    end.

%% The options as given, as a map: what replay/1 and load/1 need to run
%% the same check again.
given(List) when is_list(List) -> maps:from_list(lists:reverse(List));
given(Map) -> Map.

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
                           Result = try {ok, Work()}
                                    catch error:{mcerlang, _} = E -> {raise, E};
                                          error:{mcerlang_internal, _, _} = E -> {raise, E}
                                    end,
                           Caller ! {self(), Result}
                   end),
    Counter = mce_watchdog:start(Caller, Pid, maps:get(max_reductions, Opts)),
    Pid ! {Go, Counter},
    await(Pid, Ref, Opts#{'$mce_counter' => Counter, '$mce_heap_limit' => HeapLimit}).

%% The worker's heap limit in words: the memory cap when there is one
%% (the executor's memory counts against it too), else 1 GiB.
heap_limit(Opts) ->
    Bytes = case maps:get(memory, Opts, infinity) of
                infinity -> 1 bsl 30;
                Cap -> Cap
            end,
    max(Bytes div erlang:system_info(wordsize), 1 bsl 16).

await(Pid, Ref, Opts) ->
    receive
        '$mce_stop' ->
            Pid ! '$mce_stop',
            await(Pid, Ref, Opts);
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
%% and frees its state space.  A process that is not checking ignores it.
-spec stop(pid()) -> ok.
stop(Checker) when is_pid(Checker) ->
    Checker ! '$mce_stop',
    ok;
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
        _ -> erlang:error(badarg, [Alternatives])
    end;
choice(Other) ->
    erlang:error(badarg, [Other]).

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
    valid_counterexample(Cex),
    mce_msc:write(Cex, File).

%% @doc Runs a counterexample's steps again, from its entry and options,
%% each step matched exactly among the transitions enabled at that point,
%% and checks that they end in the same violation.  Returns the
%% counterexample as replayed (its final state recomputed), or where it
%% diverged: `{diverged, StepNumber, Expected, Enabled}', or
%% `{not_reproduced, Why}' when the steps replay but the violation does not
%% follow.
-spec replay(counterexample()) -> {ok, counterexample()} | {error, term()}.
replay(Cex) ->
    valid_counterexample(Cex),
    case Cex of
        #{entry := Entry, options := Given} ->
            Opts = (options(Given))#{progress => false},
            InitCall = entry(Entry),
            isolated(fun() -> mce_session:replay(InitCall, Opts, Cex) end, Opts);
        _ ->
            erlang:error({mcerlang, {not_replayable, "the counterexample has no entry and options "
                                     "(made by check/2, simulate/2 or load/1)"}})
    end.

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
    InitCall = entry(Entry),
    case isolated(fun() -> mce_session:simulate(InitCall, Opts, SimOpts) end, Opts) of
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
    Text = unicode:characters_to_binary(format(Cex)),
    Term = term_to_binary(Cex, [compressed]),
    file:write_file(File, [<<"mcerlang-counterexample 1 ">>, integer_to_binary(byte_size(Text)),
                           <<"\n">>, Text, Term]).

%% @doc Reads a counterexample that save/2 wrote.
-spec load(file:name_all()) -> {ok, counterexample()} | {error, term()}.
load(File) ->
    case file:read_file(File) of
        {ok, <<"mcerlang-counterexample 1 ", Rest/binary>>} ->
            try
                [LenText, Body] = binary:split(Rest, <<"\n">>),
                Len = binary_to_integer(LenText),
                <<_Text:Len/binary, Term/binary>> = Body,
                Cex = binary_to_term(Term),
                valid_counterexample(Cex),
                {ok, Cex}
            catch
                error:_ -> {error, {bad_counterexample_file, File, "damaged contents"}}
            end;
        {ok, _} ->
            {error, {bad_counterexample_file, File, "not written by mcerlang:save/2"}};
        {error, _} = Error ->
            Error
    end.

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
    mce_debug:repl(What, Options).

valid_counterexample(#{violation := _, trace := Trace, final_state := _}) when is_list(Trace) ->
    ok;
valid_counterexample(Other) ->
    erlang:error({mcerlang, {bad_counterexample, Other,
                             "expected the map of {error, Counterexample} from check/2"}}).

%% @doc The translation of `Module' as Erlang source text.
-spec translate(module()) -> {ok, string()}.
translate(Module) when is_atom(Module) ->
    check_module(Module),
    mce_translate:translate(Module).

%%--------------------------------------------------------------------

%% @doc The initial call of the program `Entry' starts, in translated code.
-spec entry(entry()) -> term().
entry({M, F, Args}) when is_atom(M), is_atom(F), is_list(Args) ->
    check_module(M),
    Arity = length(Args),
    case erlang:function_exported(M, F, Arity) of
        true -> mce_translate:init_call({M, F, mce_sandbox:entry_args(Args)});
        false -> erlang:error({mcerlang, {undefined_function, {M, F, Arity}}})
    end;
entry(Fun) when is_function(Fun, 0) ->
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {module, M} = erlang:fun_info(Fun, module),
            {name, F} = erlang:fun_info(Fun, name),
            entry({M, F, []});
        {type, local} ->
            {module, M} = erlang:fun_info(Fun, module),
            case mce_translate:translatable(M) of
                true -> mce_closure:entry(Fun);         % compiled into a user module
                false -> mce_translate:init_call(Fun)   % a shell fun, or refused
            end
    end;
entry(Fun) when is_function(Fun) ->
    {arity, A} = erlang:fun_info(Fun, arity),
    erlang:error({mcerlang, {bad_entry, Fun, {arity, A}, "an entry fun takes no arguments"}});
entry(Other) ->
    erlang:error({mcerlang, {bad_entry, Other, "expected {Module, Function, Args} or fun M:F/0"}}).

check_module(M) ->
    case code:ensure_loaded(M) of
        {module, M} ->
            case mce_translate:translatable(M) of
                true -> ok;
                false -> erlang:error({mcerlang, {not_translatable, M,
                                                  "only user modules (outside OTP and mcerlang) "
                                                  "can be checked"}})
            end;
        {error, Why} ->
            erlang:error({mcerlang, {undefined_module, M, Why}})
    end.

%% @doc Checked options with their defaults (raises naming a bad one).
-spec options(options() | [{atom(), term()}]) -> map().
options(List) when is_list(List) ->
    case lists:all(fun(X) -> is_tuple(X) andalso tuple_size(X) =:= 2 end, List) of
        %% As proplists: the first of repeated keys counts.
        true -> options(maps:from_list(lists:reverse(List)));
        false -> erlang:error({mcerlang, {bad_options, List}})
    end;
options(Map) when is_map(Map) ->
    Opts0 = maps:fold(fun(K, V, Acc) -> Acc#{K => option(K, V)} end, ?DEFAULTS, Map),
    table_options(Opts0),
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
    case lists:all(fun(P) -> P =:= deadlock orelse P =:= abnormal_exit end, Ps) of
        true -> lists:usort(Ps);
        false -> erlang:error({mcerlang, {bad_option_value, property, Ps}})
    end;
option(treat_as_normal, Rs) when is_list(Rs) -> Rs;
option(K, infinity) when K =:= max_states; K =:= max_depth; K =:= max_time -> infinity_value(K);
option(K, N) when (K =:= max_states orelse K =:= max_depth orelse K =:= max_time),
                  is_integer(N), N > 0 -> N;
option(table_size, N) when is_integer(N), N > 0, N =< 1 bsl 40 -> N;
option(table, T) when T =:= exact; T =:= hash_compact -> T;
option(table, {bitstate, Bits} = T) when is_integer(Bits), Bits > 0, Bits =< 1 bsl 40 -> T;
option(max_reductions, N) when is_integer(N), N > 0 -> N;
option(memory, infinity) -> infinity;
option(memory, N) when is_integer(N), N > 0 -> N;
option(progress, P) when is_boolean(P) -> P;
option(shortest, B) when is_boolean(B) -> B;
option(monitor, {M, _} = Mon) when is_atom(M) -> option(monitor, [Mon]);
option(monitor, Mons) when is_list(Mons) ->
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
    [case F of
         _ when is_function(F, 1) -> F;
         _ -> erlang:error({mcerlang, {bad_option_value, invariant, F, "expected a fun of one argument"}})
     end || F <- Fs];
option(mailbox_bound, infinity) -> infinity;
option(mailbox_bound, N) when is_integer(N), N >= 0 -> N;
option(ltl, F) when is_list(F); is_binary(F) ->
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
option(delivery, D) when D =:= instant; D =:= ether -> D;
option(granularity, G) when G =:= big; G =:= small -> G;
option(env, Env) when is_map(Env); is_list(Env) ->
    Pairs = case Env of
                _ when is_map(Env) -> maps:to_list(Env);
                _ -> Env
            end,
    maps:from_list(
      [case P of
           {App, Vars} when is_atom(App), is_map(Vars) -> {App, Vars};
           {App, Vars} when is_atom(App), is_list(Vars) ->
               lists:all(fun(V) -> is_tuple(V) andalso tuple_size(V) =:= 2 andalso
                                       is_atom(element(1, V)) end, Vars)
                   orelse erlang:error({mcerlang, {bad_option_value, env, P,
                                                   "expected {App, [{Key, Value}]}"}}),
               {App, maps:from_list(Vars)};
           _ -> erlang:error({mcerlang, {bad_option_value, env, P,
                                         "expected App => #{Key => Value}"}})
       end || P <- Pairs]);
option(nodes, Nodes) when is_list(Nodes), Nodes =/= [], length(Nodes) =< 64 ->
    lists:foreach(fun(N) when is_atom(N) ->
                          case string:split(atom_to_list(N), "@") of
                              [Name, Host] when Name =/= "", Host =/= "", length(Name) + length(Host) < 255 -> ok;
                              _ -> erlang:error({mcerlang, {bad_option_value, nodes, N,
                                                            "a node name is an atom name@host"}})
                          end;
                     (N) -> erlang:error({mcerlang, {bad_option_value, nodes, N,
                                                     "a node name is an atom name@host"}})
                  end, Nodes),
    length(lists:usort(Nodes)) =:= length(Nodes) orelse
        erlang:error({mcerlang, {bad_option_value, nodes, Nodes, "node names repeat"}}),
    Nodes;
option(faults, Faults) when is_map(Faults) ->
    maps:foreach(fun(K, V) when (K =:= crash_node orelse K =:= disconnect orelse K =:= kill),
                                is_integer(V), V >= 0, V < 1 bsl 32 -> ok;
                    (K, V) -> erlang:error({mcerlang, {bad_option_value, faults, {K, V},
                                                       "expected crash_node, disconnect or kill "
                                                       "=> a count"}})
                 end, Faults),
    Faults;
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
     || K <- [shortest, monitor, invariant, mailbox_bound, max_depth], maps:is_key(K, Given)],
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
                  error -> erlang:error({mcerlang, {undefined_predicate, Name, Arity}})
              end
      end, mce_ltl:predicates(Formula)),
    case maps:is_key(property, Given) of
        true -> Opts;
        false -> Opts#{property => []}
    end.

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
