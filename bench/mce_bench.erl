%% @doc A fixed benchmark of the mcerlang search (`make bench').
%%
%% Each model in `models/0' is checked once with `mcerlang:check/2', one
%% after the other, in the same VM.  For each model one row is printed:
%%
%% <ul>
%% <li>verdict: `ok', `violation' (the counterexample's stats are used),
%%     `inconclusive' (a limit stopped the search) or `error' (the check
%%     raised; the error is shown in the row and the bench goes on);</li>
%% <li>states and transitions explored, as counted by the C search;</li>
%% <li>time: the checker's own `time_ms' (search only, not the translation
%%     of the module), and states/s and transitions/s derived from it;</li>
%% <li>bytes/state: `memory_used' (bytes in use in the C state store,
%%     allocated with malloc and so not part of `erlang:memory/0') divided
%%     by states; small models are dominated by the store's initial
%%     tables.  A row labelled `hc' runs with `table => hash_compact',
%%     whose memory_used includes the fingerprint table and the root
%%     vectors on the DFS stack;</li>
%% <li>VM memory: `erlang:memory(total)' right after the check returned,
%%     a rough indication of the Erlang side's footprint;</li>
%% <li>cpu(s): the CPU seconds the VM used during the check (the entry
%%     module's translation is made before, so it is not counted), from
%%     `erlang:statistics(runtime)': the operating system's count for the
%%     whole VM process, every thread (schedulers, dirty schedulers where
%%     the NIF's search may run, the garbage collector).  Chosen over the
%%     sum of `scheduler_wall_time' busy times, which are wall-clock spans
%%     while a scheduler is busy and so grow, as wall time does, when the
%%     OS gives the core to another process of a shared machine; CPU time
%%     does not.  Schedulers that spin waiting for work would add CPU time
%%     of their own: `make bench' starts the VM with `+sbwt none' (and the
%%     dirty schedulers' equivalents) so they sleep at once;</li>
%% <li>hit%: the step cache's hit rate, `step_cache_hits' over hits plus
%%     `step_cache_misses' from the check's stats (`-' when the stats do
%%     not have them: the cache is off, or not built).</li>
%% </ul>
%%
%% A second table measures the translator: a generated module of about
%% 2,000 lines (receives, case, try, comprehensions, library higher-order
%% functions, blocking calls in arguments) is translated from scratch and
%% then checked; the issue's target is under one second for both together.
%%
%% Issue 18 (reductions) adds a third table, `reduction_models/0': the
%% bench models again, each with the reductions on (the default options,
%% plus `symmetry => true' where the model's processes are interchangeable
%% and it orders no pids), off (`reduction => false, symmetry => false')
%% and with `granularity => small' (reductions on), beside the series of
%% identical clients and counter-server clients for N = 2..8, the spawn
%% chain of 100 processes and the 16 workers waiting for `go'.  Those rows
%% have a shorter guard (`?REDUCTION_MAX_TIME'): an unreduced large model
%% ends `inconclusive' with the states it reached by then.  In every row the
%% note starts with the reductions' stats the check gave (`reduction',
%% `reduced_states', `symmetry', `symmetric_states', `symmetry_groups').
%% After the table, each model's `small' states over its reduced `big'
%% states: the issue's condition for `granularity => small' by default.
%%
%% The same rows are written as JSON to `bench/results/latest.json'
%% (relative to the current directory, which is the project root under
%% `make bench').  Every check gets a `max_time' guard so that a regression
%% shows up as an `inconclusive' row rather than a hung bench.
-module(mce_bench).

-export([main/0, run/0, models/0, counts/0, translation_bench/0, real_code_bench/1]).
-export([reduction_models/0, reduction_counts/0, off_options/0]).

-define(RESULTS, "bench/results/latest.json").
%% Per-model guard on the search time, in ms.
-define(MAX_TIME, 240000).
%% The guard of the reduction table's rows, in ms: the unreduced large
%% models (and a reduction that fails its target) end inconclusive by then.
-define(REDUCTION_MAX_TIME, 20000).
%% The width of the model column in the two tables.
-define(MODEL_WIDTH, 22).
-define(REDUCTION_MODEL_WIDTH, 34).

-type row() :: #{model := string(), verdict := string(),
                 states => non_neg_integer(), transitions => non_neg_integer(),
                 time_s => float(), states_per_s => non_neg_integer(),
                 transitions_per_s => non_neg_integer(),
                 bytes_per_state => non_neg_integer(),
                 vm_memory => non_neg_integer(), cpu_s => float(),
                 step_cache_hits => non_neg_integer(), step_cache_misses => non_neg_integer(),
                 step_cache_hit_rate => float(), note => string()}.

%% The fixed list of models: {Label, Entry, Options}.
-spec models() -> [{string(), mcerlang:entry(), map()}].
models() ->
    [{cs(N, K), {client_server, start, [N, K]}, #{}}
     || {N, K} <- [{3, 2}, {4, 2}, {5, 2}, {6, 2}, {4, 3}, {5, 3}, {5, 4}, {6, 3}]]
    %% The largest of them again with hash compaction, beside the exact row.
    ++ [{"client_server(6,3) hc", {client_server, start, [6, 3]}, #{table => hash_compact}}]
    ++ [{"counter_server(3,2)", {counter_server, start, [3, 2]}, #{timeouts => when_idle}},
        {"counter_server(3,3)", {counter_server, start, [3, 3]}, #{timeouts => when_idle}},
        {"locker(aEaS,1)", {locker, start, [[{a, exclusive}, {a, shared}], 1]},
         #{timeouts => when_idle, property => abnormal_exit}},
        {"locker(aEaEaS,1)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
         #{timeouts => when_idle, property => abnormal_exit}},
        {"locker(aEx5,1)", {locker, start, [lists:duplicate(5, {a, exclusive}), 1]},
         #{timeouts => when_idle, property => abnormal_exit}},
        %% The same clients under a simple_one_for_one supervisor: symmetric.
        {"locker_pool(aEx5,1)", {locker, start_pool, [lists:duplicate(5, {a, exclusive}), 1]},
         #{timeouts => when_idle, property => abnormal_exit}},
        {"locker(aEaEaS,forever)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], forever]},
         #{timeouts => when_idle, property => abnormal_exit}},
        {"locker_buggy(aEx4aS,1)", {locker, start_buggy,
                                    [[{a, exclusive}, {a, exclusive}, {a, exclusive},
                                      {a, exclusive}, {a, shared}], 1]},
         #{timeouts => when_idle, property => abnormal_exit}},
        {"door(4)", {door, start, [4]}, #{treat_as_normal => [normal, pushed_locked_door]}},
        {"sup_worker(4,4)", {sup_worker, start, [4, 4]}, #{timeouts => when_idle}},
        {"pingpong(10)", {pingpong, start, [10]}, #{property => deadlock}},
        {"dining(3)", {dining, start, [3]}, #{property => deadlock}},
        %% LTL: every request is eventually granted, for every client, under
        %% weak fairness (the product of program and Büchi automaton; the
        %% row counts product states, the note the program's).
        {"locker(aEaEaS,forever) ltl",
         {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], forever]}, locker_ltl()},
        {"locker(aEx3aS,forever) ltl",
         {locker, start, [[{a, exclusive}, {a, exclusive}, {a, exclusive}, {a, shared}], forever]},
         locker_ltl()}].

locker_ltl() ->
    #{ltl => "forall C: [](requested(C) -> <> holding(C))",
      predicates => #{requested => fun(C) -> {probe, request, {C, '_', '_'}} end,
                      holding => fun(C) -> {prop, {holding, C, '_', '_'}} end}}.

cs(N, K) ->
    lists:flatten(io_lib:format("client_server(~b,~b)", [N, K])).

%%------------------------------------------------------------- reductions

%% @doc The rows of the reduction table (issue 18), in this order: the
%% models of the issue's targets, each as `red' (reductions on: the default
%% options, plus `symmetry => true' for a model marked symmetric), `off'
%% (`off_options/0') and `small' (`granularity => small', reductions on);
%% then every model of `models/0' but the hash-compaction row as `off' and
%% `small' (its own row in `models/0' is the reduced one: reductions are on
%% by default).
%%
%% Symmetric models (marked `sym' in the label): identical processes spawned
%% by the same code with the same arguments up to pids, which never compare
%% or sort pids.  The clients of client_server, the counter server's
%% clients (funs of one closure) and the go_workers are; the spawn chain's
%% processes are not (each has its index), nor are the locker's clients
%% under its one_for_one supervisor (it names them by child id); under a
%% simple_one_for_one one (`locker_pool') they are, and `auto' finds it.
-spec reduction_models() -> [{string(), mcerlang:entry(), map()}].
reduction_models() ->
    Targets =
        [{cs(N, 2), {client_server, start, [N, 2]}, #{}, true} || N <- lists:seq(2, 8)]
        ++ [{counter(N, 2), {counter_server, start, [N, 2]}, #{timeouts => when_idle}, true}
            || N <- lists:seq(2, 8)]
        ++ [{"spawn_chain(10)", {spawn_chain, start, [10]}, #{}, false},
            {"spawn_chain(100)", {spawn_chain, start, [100]}, #{}, false},
            {"go_workers(8)", {go_workers, start, [8]}, #{}, true},
            {"go_workers(16)", {go_workers, start, [16]}, #{}, true}],
    Off = off_options(),
    Sym = maps:filter(fun(K, _) -> known_option(K) end, #{symmetry => true}),
    Small = #{granularity => small},
    [Row || {Label, Entry, Opts, Symmetric} <- Targets,
            Red <- [case Symmetric of
                        true -> maps:merge(Opts, Sym);
                        false -> Opts
                    end],
            Row <- [{Label ++ " red" ++ sym_tag(Symmetric), Entry, Red},
                    {Label ++ " off", Entry, maps:merge(Opts, Off)},
                    {Label ++ " small" ++ sym_tag(Symmetric), Entry, maps:merge(Red, Small)}]]
    ++ [Row || {Label, Entry, Opts} <- models(), not lists:suffix(" hc", Label),
               not lists:keymember(Label, 1, Targets),
               Row <- [{Label ++ " off", Entry, maps:merge(Opts, Off)},
                       {Label ++ " small", Entry, maps:merge(Opts, Small)}]]
    ++ [Row || {Label, Entry, Opts} <- ltl_reduction_models(),
               Row <- [{Label ++ " red", Entry, Opts}, {Label ++ " off", Entry, maps:merge(Opts, Off)}]].

%% The LTL check's reduction (issue 18 item 1): it is used for formulas
%% over props, with and without weak fairness.  The
%% locker rows' formula has a probe, a predicate of steps, so the stats say
%% `{off, step_predicates}' there (and the locker has no safe step: a
%% gen_server's replies go through aliases, its clients are linked); the
%% others check `[] !p' for a prop no process sets, which explores the
%% whole reduced program graph (one product state per program state and
%% the initial one).
ltl_reduction_models() ->
    Never = #{ltl => "[] !p", predicates => #{p => {prop, never}}, fairness => none},
    [{"locker(aEaEaS) ltl nofair",
      {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], forever]},
      (locker_ltl())#{fairness => none}},
     {"locker(aEx3aS) ltl nofair",
      {locker, start, [[{a, exclusive}, {a, exclusive}, {a, exclusive}, {a, shared}], forever]},
      (locker_ltl())#{fairness => none}},
     {"spawn_chain(10) ltl nofair", {spawn_chain, start, [10]}, Never},
     {"go_workers(8) ltl nofair", {go_workers, start, [8]}, Never},
     {"client_server(3,2) ltl nofair", {client_server, start, [3, 2]}, Never}]
    %% The same under weak fairness (the default), which the reduction
    %% keeps (docs/ARCHITECTURE.md, "Weak fairness"): the same reduced
    %% graph, judged by the SCC check with every state's full enabled set.
    ++ [{"spawn_chain(10) ltl fair", {spawn_chain, start, [10]}, Never#{fairness => weak}},
        {"go_workers(8) ltl fair", {go_workers, start, [8]}, Never#{fairness => weak}},
        {"client_server(3,2) ltl fair", {client_server, start, [3, 2]}, Never#{fairness => weak}}].

sym_tag(true) -> " sym";
sym_tag(false) -> "".

counter(N, K) ->
    lists:flatten(io_lib:format("counter_server(~b,~b)", [N, K])).

%% The issue's condition for making `granularity => small' the default:
%% on every model, the states of its `small' row at most 1.5 times those
%% of its reduced `big' row (`X red', `X red sym' or the first table's `X').
%% A ratio is printed only where both rows reached a verdict.
print_small_ratios(Rows) ->
    Done = maps:from_list([{Label, S} || #{model := Label, verdict := V, states := S} <- Rows,
                                         V =/= "inconclusive", V =/= "error"]),
    Ratios = [{Base, maps:find(Label, Done), big_states(Base, Done)}
              || #{model := Label} <- Rows, {match, [Base]} <- [small_base(Label)]],
    io:format("~ngranularity => small against big, both reduced (the issue's target: at most 1.5x):~n"),
    Known = [begin
                 R = Small / max(Big, 1),
                 io:format("  ~-34s ~10b / ~10b = ~6.2fx~n", [Base, Small, Big, R]),
                 R
             end || {Base, {ok, Small}, {ok, Big}} <- Ratios],
    Unknown = [Base || {Base, S, B} <- Ratios, S =:= error orelse B =:= error],
    Unknown =:= [] orelse io:format("  no verdict in one of the two rows: ~ts~n", [lists:join(", ", Unknown)]),
    Known =:= [] orelse io:format("  largest ratio ~.2fx~n", [lists:max(Known)]),
    ok.

small_base(Label) ->
    re:run(Label, "^(.*) small( sym)?$", [{capture, [1], list}, unicode]).

big_states(Base, Done) ->
    case [S || L <- [Base ++ " red sym", Base ++ " red", Base], {ok, S} <- [maps:find(L, Done)]] of
        [S | _] -> {ok, S};
        [] -> error
    end.

%% @doc The options that turn the reductions off, of those the checker has:
%% `reduction => false, symmetry => false' once both are there (they come
%% from two branches of issue 18; the bench runs before, between and after
%% their merges, and the counts with them off are the counts from before).
-spec off_options() -> map().
off_options() ->
    maps:filter(fun(K, _) -> known_option(K) end, #{reduction => false, symmetry => false}).

%% Whether the checker takes option K: a check of one state of a trivial
%% program with it, which refuses an unknown option before it runs.
known_option(K) ->
    try mcerlang:check(fun() -> ok end, #{K => false, max_states => 1, progress => false}) of
        _ -> true
    catch error:{mcerlang, {unknown_option, K}} -> false
    end.

%% @doc Runs the bench, prints the table and writes the JSON results.
-spec main() -> ok.
main() ->
    T0 = erlang:monotonic_time(millisecond),
    io:format("mcerlang bench: OTP ~s, ~b schedulers~n~n",
              [erlang:system_info(otp_release), erlang:system_info(schedulers_online)]),
    header(),
    Rows = [begin Row = run_model(M), print_row(Row), Row end || M <- models()],
    io:format("~nreductions (issue 18): on (`red', with symmetry where marked `sym'), "
              "off (`off') and granularity => small (`small', reductions on); "
              "guard ~b s~n~n", [?REDUCTION_MAX_TIME div 1000]),
    header(?REDUCTION_MODEL_WIDTH),
    ReductionRows = [begin
                         Row = run_model(M, ?REDUCTION_MAX_TIME),
                         print_row(Row, ?REDUCTION_MODEL_WIDTH),
                         Row
                     end
                     || M <- reduction_models()],
    print_small_ratios(Rows ++ ReductionRows),
    ok = mce_bench_workers:main(),
    Translation = translation_bench(),
    RealCode = [real_code_bench(M) || M <- [lists, gen_server]],
    Total = (erlang:monotonic_time(millisecond) - T0) / 1000,
    io:format("~ntotal wall time: ~.1f s~n", [Total]),
    Path = filename:absname(?RESULTS),
    case write_json(Path, Rows ++ ReductionRows ++ [Translation | RealCode], Total) of
        ok -> io:format("results written to ~s~n", [Path]);
        {error, Why} -> io:format("could not write ~s: ~p~n", [Path, Why])
    end,
    ok.

%% @doc Prints every model's verdict, state and transition counts, one line
%% each, leaving out the three largest (over a minute each): the quick check
%% that a change to the C runtime or the search left the state space exactly
%% as it was (`make bench-counts`; diff the output before and after).  These
%% lines are counted with the reductions off (`off_options/0'), so that they
%% stay comparable with the counts from before the reductions; the lines of
%% `reduction_counts/0' follow them.
-spec counts() -> ok.
counts() ->
    Large = ["client_server(6,3)", "client_server(6,3) hc", "client_server(5,4)"],
    Off = off_options(),
    lists:foreach(
      fun({Label, Entry, Opts}) ->
              Result = mcerlang:check(Entry, maps:merge(Opts, Off#{max_time => 600000, progress => false})),
              io:format("~-32s ~p~n", [Label, count_line(Result)])
      end, [M || {Label, _, _} = M <- models(), not lists:member(Label, Large)]),
    reduction_counts().

%% @doc The counts with the reductions on: the models of `counts/0' with
%% their own options (`red'), then the reduction table's `red' and `small'
%% rows (its `off' rows are the lines of `counts/0' or explode), each under
%% the reduction table's guard: a line `inconclusive' means the reduction
%% missed its target by far.
-spec reduction_counts() -> ok.
reduction_counts() ->
    Large = ["client_server(6,3)", "client_server(6,3) hc", "client_server(5,4)"],
    Red = [{Label ++ " red", Entry, Opts} || {Label, Entry, Opts} <- models(),
                                              not lists:member(Label, Large)],
    lists:foreach(
      fun({Label, Entry, Opts}) ->
              Result = mcerlang:check(Entry, Opts#{max_time => ?REDUCTION_MAX_TIME, progress => false}),
              io:format("~-32s ~p~n", [Label, count_line(Result)])
      end, Red ++ [M || {Label, _, _} = M <- reduction_models(), not lists:suffix(" off", Label)]).

count_line({ok, Stats}) ->
    {ok, maps:get(states, Stats), maps:get(transitions, Stats)};
count_line({error, #{stats := Stats, violation := Violation}}) ->
    {violation, violation_kind(Violation), maps:get(states, Stats), maps:get(transitions, Stats)};
count_line({inconclusive, Why, Stats}) ->
    {inconclusive, Why, maps:get(states, Stats), maps:get(transitions, Stats)}.

violation_kind(Violation) when is_tuple(Violation) -> element(1, Violation);
violation_kind(Violation) -> Violation.

%% @doc Runs every model and returns the rows, without printing.
-spec run() -> [row()].
run() ->
    [run_model(M) || M <- models()].

%%--------------------------------------------------------------------

-spec run_model({string(), mcerlang:entry(), map()}) -> row().
run_model(Model) ->
    run_model(Model, ?MAX_TIME).

-spec run_model({string(), mcerlang:entry(), map()}, pos_integer()) -> row().
run_model({Label, Entry, Opts}, MaxTime) ->
    translate_first(Entry),
    {Cpu0, _} = erlang:statistics(runtime),
    Result = try mcerlang:check(Entry, Opts#{max_time => MaxTime, progress => false})
             catch Class:Reason -> {raised, Class, Reason}
             end,
    {Cpu1, _} = erlang:statistics(runtime),
    VmMem = erlang:memory(total),
    %% A result of an unexpected shape becomes an error row too.
    Row = try classify(Label, Result, VmMem)
          catch C:R -> error_row(Label, {unexpected_result, C, R}, VmMem)
          end,
    Row#{cpu_s => (Cpu1 - Cpu0) / 1000}.

%% The entry module's translation (and its closure's), so that a row's CPU
%% seconds are the check's.
translate_first({M, _, _}) ->
    try mce_translate:ensure(M)
    catch error:{mcerlang, _} -> ok     % the check raises it again, in its row
    end;
translate_first(_) ->
    ok.

classify(Label, {ok, Stats}, VmMem) ->
    row(Label, "ok", "", Stats, VmMem);
classify(Label, {error, #{stats := Stats} = Cex}, VmMem) ->
    row(Label, "violation", short(maps:get(violation, Cex, unknown)), Stats, VmMem);
classify(Label, {inconclusive, Why, Stats}, VmMem) ->
    row(Label, "inconclusive", short(inconclusive_reason(Why)), Stats, VmMem);
classify(Label, {raised, C, R}, VmMem) ->
    error_row(Label, {C, R}, VmMem).

error_row(Label, Error, VmMem) ->
    #{model => Label, verdict => "error", note => short(Error), vm_memory => VmMem}.

inconclusive_reason({deadlock_not_checked, _Cex}) -> deadlock_not_checked;
inconclusive_reason(Why) -> Why.

row(Label, Verdict, Note1, Stats, VmMem) ->
    Note0 = reduction_note(Stats) ++ Note1,
    {States, Trans, Note} =
        case Stats of
            #{product_states := PS, product_transitions := PT, states := Program} ->
                {PS, PT, lists:flatten(io_lib:format("product; ~b program states ~s",
                                                     [Program, Note0]))};
            _ -> {maps:get(states, Stats, 0), maps:get(transitions, Stats, 0), Note0}
        end,
    Ms = maps:get(time_ms, Stats, 0),
    Mem = maps:get(memory_used, Stats, maps:get(memory, Stats, 0)),
    StepCache = case Stats of
                    #{step_cache_hits := H, step_cache_misses := Mi} ->
                        #{step_cache_hits => H, step_cache_misses => Mi,
                          step_cache_hit_rate => H / max(H + Mi, 1)};
                    _ -> #{}
                end,
    StepCache#{model => Label, verdict => Verdict, note => Note,
      states => States, transitions => Trans,
      time_s => Ms / 1000,
      states_per_s => States * 1000 div max(Ms, 1),
      transitions_per_s => Trans * 1000 div max(Ms, 1),
      bytes_per_state => Mem div max(States, 1),
      vm_memory => VmMem}.

%% The reductions' own stats (issue 18), those the check gave, first in the
%% note: whether each reduction was used and what it saved.
reduction_note(Stats) ->
    Keys = [reduction, reduced_states, symmetry, symmetric_states, symmetry_groups],
    lists:flatten([io_lib:format("~s=~0tp; ", [K, maps:get(K, Stats)])
                   || K <- Keys, maps:is_key(K, Stats)]).

short(Term) ->
    S = lists:flatten(io_lib:format("~0tP", [Term, 12])),
    case length(S) > 200 of
        true -> lists:sublist(S, 200) ++ "...";
        false -> S
    end.

%%-------------------------------------------------------------------- table

%% The model column's width is an argument (`~-*s'): 22 in the first table,
%% 34 in the reduction table, whose labels are longer.
-define(FMT, "~-*s ~-12s ~10s ~11s ~9s ~8s ~6s ~10s ~12s ~9s ~12s  ~ts~n").

header() ->
    header(?MODEL_WIDTH).

header(Width) ->
    io:format(?FMT, [Width, "model", "verdict", "states", "transitions", "time(s)", "cpu(s)", "hit%",
                     "states/s", "trans/s", "B/state", "VM mem(B)", "note"]),
    io:format("~s~n", [lists:duplicate(116 + Width, $-)]).

print_row(Row) ->
    print_row(Row, ?MODEL_WIDTH).

print_row(Row, Width) ->
    Cell = fun(K) -> cell(maps:get(K, Row, undefined)) end,
    HitRate = case Row of
                  #{step_cache_hit_rate := R} -> float_to_list(100 * R, [{decimals, 1}]);
                  _ -> "-"
              end,
    io:format(?FMT, [Width, maps:get(model, Row), maps:get(verdict, Row),
                     Cell(states), Cell(transitions), Cell(time_s), Cell(cpu_s), HitRate,
                     Cell(states_per_s), Cell(transitions_per_s),
                     Cell(bytes_per_state), Cell(vm_memory),
                     maps:get(note, Row, "")]).

cell(undefined) -> "-";
cell(F) when is_float(F) -> float_to_list(F, [{decimals, 3}]);
cell(I) when is_integer(I) -> integer_to_list(I).

%%-------------------------------------------------------------- translation

-define(GEN_MODULE, mce_bench_generated).
-define(GEN_GROUPS, 140).

%% Writes, compiles and loads the generated module, then times its
%% translation (cache cleared first) and one check of it.
-spec translation_bench() -> row().
translation_bench() ->
    Dir = filename:join(["/tmp", "mce_bench_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Src = filename:join(Dir, atom_to_list(?GEN_MODULE) ++ ".erl"),
    Text = generated_module(),
    ok = file:write_file(Src, Text),
    Lines = length(string:split(Text, "\n", all)),
    {ok, ?GEN_MODULE} = compile:file(Src, [debug_info, {outdir, Dir}]),
    code:add_patha(Dir),
    code:purge(?GEN_MODULE),
    {module, ?GEN_MODULE} = code:load_abs(filename:join(Dir, atom_to_list(?GEN_MODULE))),
    persistent_term:erase({mce_translate, ?GEN_MODULE}),
    {PassUs, Translated} = timer:tc(fun() -> mce_translate:debug_translate(?GEN_MODULE) end),
    {CompileUs, _} = timer:tc(fun() -> compile:forms(Translated, mce_translate:compile_options()) end),
    {OrigUs, _} = timer:tc(fun() -> compile:file(Src, [binary, debug_info]) end),
    persistent_term:erase({mce_translate, ?GEN_MODULE}),
    {TransUs, _} = timer:tc(fun() -> without_disk_cache(fun() -> mce_translate:ensure(?GEN_MODULE) end) end),
    {CheckUs, Result} = timer:tc(fun() -> mcerlang:check({?GEN_MODULE, start, []}) end),
    Verdict = element(1, Result),
    TransMs = TransUs / 1000,
    CheckMs = CheckUs / 1000,
    io:format("~ntranslator: ~b-line module translated and loaded in ~.1f ms (~.1f ms per 1,000 lines), "
              "checked in ~.1f ms (~p); together ~.1f ms~n"
              "  of which: translator passes ~.1f ms (~.1f ms per 1,000 lines), compiling the "
              "translation ~.1f ms; for comparison erlc's compile of the original ~.1f ms~n",
              [Lines, TransMs, TransMs * 1000 / Lines, CheckMs, Verdict, TransMs + CheckMs,
               PassUs / 1000, PassUs / Lines, CompileUs / 1000, OrigUs / 1000]),
    #{model => lists:flatten(io_lib:format("translate+check ~b-line module", [Lines])),
      verdict => atom_to_list(Verdict),
      time_s => (TransUs + CheckUs) / 1000000,
      note => lists:flatten(io_lib:format("translation ~.1f ms per 1000 lines; passes ~.1f ms, "
                                          "compile ~.1f ms",
                                          [TransMs * 1000 / Lines, PassUs / 1000,
                                           CompileUs / 1000]))}.

%% Translation of real code: a copy of an installed OTP module's source,
%% renamed so that it is a user module (translated whole, as user code is).
%% Timed after a warm-up translation, so the compiler is loaded.
-spec real_code_bench(module()) -> row().
real_code_bench(Orig) ->
    Src0 = proplists:get_value(source, Orig:module_info(compile)),
    Lib = code:lib_dir(element(1, lists:keyfind(application_of(Orig), 1,
                                                 application:loaded_applications()))),
    Src = case filelib:is_regular(Src0) of
              true -> Src0;
              false -> filename:join([Lib, "src", atom_to_list(Orig) ++ ".erl"])
          end,
    M = list_to_atom("bench_user_" ++ atom_to_list(Orig)),
    Dir = filename:join(["/tmp", "mce_bench_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    {ok, Text} = file:read_file(Src),
    Renamed = re:replace(Text, "^-module\\(" ++ atom_to_list(Orig) ++ "\\)\\.",
                         "-module(" ++ atom_to_list(M) ++ ").", [multiline]),
    Copy = filename:join(Dir, atom_to_list(M) ++ ".erl"),
    ok = file:write_file(Copy, Renamed),
    Lines = length(binary:split(Text, <<"\n">>, [global])),
    Includes = [{i, filename:join(code:lib_dir(App), "include")} || App <- [stdlib, kernel]],
    {ok, M} = compile:file(Copy, [debug_info, {outdir, Dir} | Includes]),
    code:add_patha(Dir),
    code:purge(M),
    {module, M} = code:load_abs(filename:join(Dir, atom_to_list(M))),
    without_disk_cache(fun() -> mce_translate:ensure(M) end),
    persistent_term:erase({mce_translate, M}),
    {Us, _} = timer:tc(fun() -> without_disk_cache(fun() -> mce_translate:ensure(M) end) end),
    Ms = Us / 1000,
    io:format("translator: ~s (~b lines of real code) translated, compiled and loaded in ~.1f ms "
              "(~.1f ms per 1,000 lines)~n", [Src, Lines, Ms, Ms * 1000 / Lines]),
    #{model => lists:flatten(io_lib:format("translate ~s.erl (~b lines)", [Orig, Lines])),
      verdict => "ok", time_s => Ms / 1000,
      note => lists:flatten(io_lib:format("~.1f ms per 1000 lines", [Ms * 1000 / Lines]))}.

%% The translator's own work: without the disk cache (mce_translate_cache),
%% which would load the translation a previous bench stored.
without_disk_cache(Fun) ->
    mce_translate_cache:with(false, Fun).

application_of(M) ->
    {ok, App} = application:get_application(M),
    App.

generated_module() ->
    Groups = [group(I) || I <- lists:seq(1, ?GEN_GROUPS)],
    lists:flatten(
      ["-module(", atom_to_list(?GEN_MODULE), ").\n",
       "-compile([export_all, nowarn_export_all]).\n\n",
       "start() ->\n",
       "    Self = self(),\n",
       "    spawn(fun() -> Self ! {m, 1, 10}, Self ! {w, 7} end),\n",
       "    _ = f_1({b, 0}),\n",
       "    {_, _, _, W} = f_2(0),\n",
       "    W.\n\n" | Groups]).

group(I) ->
    S = integer_to_list(I),
    ["f_", S, "(X) ->\n",
     "    Y = case X of\n",
     "            {a, V} -> V + ", S, ";\n",
     "            _ -> receive {m, ", S, ", Z} -> Z after 0 -> ", S, " end\n",
     "        end,\n",
     "    L = [E * 2 || E <- lists:seq(1, Y rem 5 + 1)],\n",
     "    R = try g_", S, "(Y, L) catch error:_ -> 0 end,\n",
     "    Sum = lists:foldl(fun(Q, Acc) -> Q + Acc + R end, 0, L),\n",
     "    {Y, R, Sum, maybe_wait_", S, "(X)}.\n\n",
     "g_", S, "(A, B) when is_integer(A) -> A + length(B);\n",
     "g_", S, "(_, _) -> erlang:error(badarg).\n\n",
     "maybe_wait_", S, "(0) -> h_", S, "(receive {w, V} -> V end);\n",
     "maybe_wait_", S, "(_) -> none.\n\n",
     "h_", S, "(V) -> [V | [x || _ <- lists:seq(1, 2)]].\n\n"].

%%-------------------------------------------------------------------- JSON

-define(JSON_KEYS, [model, verdict, states, transitions, time_s, cpu_s, states_per_s,
                    transitions_per_s, bytes_per_state, vm_memory, step_cache_hits,
                    step_cache_misses, step_cache_hit_rate, note]).

write_json(Path, Rows, Total) ->
    Json = ["{\n",
            "  \"otp_release\": ", json(erlang:system_info(otp_release)), ",\n",
            "  \"schedulers\": ", json(erlang:system_info(schedulers_online)), ",\n",
            "  \"generated\": ", json(calendar:system_time_to_rfc3339(
                                          erlang:system_time(second))), ",\n",
            "  \"total_wall_s\": ", json(Total), ",\n",
            "  \"rows\": [\n",
            lists:join(",\n", [["    ", json_row(R)] || R <- Rows]),
            "\n  ]\n}\n"],
    case filelib:ensure_dir(Path) of
        ok -> file:write_file(Path, Json);
        Error -> Error
    end.

json_row(Row) ->
    ["{", lists:join(", ", [[json(atom_to_list(K)), ": ", json(maps:get(K, Row, null))]
                            || K <- ?JSON_KEYS]), "}"].

json(null) -> "null";
json(I) when is_integer(I) -> integer_to_list(I);
json(F) when is_float(F) -> float_to_list(F, [{decimals, 3}]);
json(S) when is_list(S) -> [$", [escape(C) || C <- S], $"].

escape($") -> "\\\"";
escape($\\) -> "\\\\";
escape($\n) -> "\\n";
escape($\r) -> "\\r";
escape($\t) -> "\\t";
escape(C) when C < 16#20 -> io_lib:format("\\u~4.16.0b", [C]);
escape(C) when C < 16#80 -> C;
escape(C) -> binary_to_list(unicode:characters_to_binary([C])).
