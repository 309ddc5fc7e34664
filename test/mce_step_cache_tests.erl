%% The step cache (c_src/step_cache.c) must be invisible but for time: every
%% check gives the same verdict, state and transition counts and the same
%% counterexample (the whole map) with the cache on and off.  The programs:
%% every zero-arity export of the test programs (test/tprog*.erl) as an
%% entry, the examples and the smaller bench models, and checks with the
%% options that take other paths through the search: LTL (expand-only),
%% safety monitors and invariants, timeouts => when_idle, granularity =>
%% small, several nodes with faults, the ether, breadth-first, lossy
%% tables, and the sessions (replay, simulate).
-module(mce_step_cache_tests).

-include_lib("eunit/include/eunit.hrl").

-export([same/2, sweep/0]).

%% The comparable part of a check's outcome: everything but times, the
%% cache's own stats, memory and the options given.
-spec same(mcerlang:entry(), map()) -> {term(), term()}.
same(Entry, Opts) ->
    {outcome(Entry, Opts#{step_cache => true}), outcome(Entry, Opts#{step_cache => false})}.

outcome(Entry, Opts) ->
    try mcerlang:check(Entry, Opts#{progress => false}) of
        {ok, Stats} -> {ok, stats(Stats)};
        {inconclusive, Why, Stats} -> {inconclusive, Why, stats(Stats)};
        {error, Cex} -> {error, cex(Cex)}
    catch
        error:{mcerlang, _} = E -> {raised, E}
    end.

stats(St) ->
    maps:with([states, transitions, max_depth, truncated, stack_depth, parts], St).

cex(Cex) ->
    maps:map(fun(stats, St) -> stats(St);
                (_, V) -> V
             end, maps:without([options], Cex)).

check_same(Entry, Opts) ->
    {On, Off} = same(Entry, Opts),
    ?assertEqual({Entry, Opts, Off}, {Entry, Opts, On}).

%% Every zero-arity export of the test programs, with a state bound.
-spec sweep() -> [{mcerlang:entry(), {term(), term()}}].
sweep() ->
    [{E, R} || E <- program_entries(), {On, Off} = R <- [same(E, sweep_options())], On =/= Off].

sweep_options() ->
    #{max_states => 3000, max_reductions => 2000000}.

program_entries() ->
    Dir = filename:dirname(code:which(tprog)),
    Mods = lists:sort([list_to_atom(filename:basename(F, ".beam"))
                       || F <- filelib:wildcard(filename:join(Dir, "tprog*.beam"))]),
    [{M, F, []} || M <- Mods, {F, 0} <- M:module_info(exports), F =/= module_info].

%% Under AddressSanitizer (`make test-asan', MCERLANG_NIF=asan) every
%% third entry: the whole sweep took 257 s of the sanitized run, a fifth
%% of CI, and the plain run still checks every entry.
programs_test_() ->
    {timeout, 900,
     fun() ->
             [check_same(E, sweep_options()) || E <- sanitized_sample(program_entries())]
     end}.

sanitized_sample(Entries) ->
    case os:getenv("MCERLANG_NIF") of
        "asan" -> [E || {I, E} <- lists:enumerate(Entries), I rem 3 =:= 0];
        _ -> Entries
    end.

-define(LOCKER(Clients, Rounds), {locker, start, [Clients, Rounds]}).

models_test_() ->
    When = #{timeouts => when_idle},
    Abn = #{timeouts => when_idle, property => abnormal_exit},
    Models =
        [{{client_server, start, [4, 2]}, #{}},
         {{client_server, start, [4, 3]}, #{}},
         {{client_server, start, [4, 2]}, #{table => hash_compact}},
         {{client_server, start, [3, 2]}, #{shortest => true}},
         {{counter_server, start, [3, 2]}, When},
         {?LOCKER([{a, exclusive}, {a, shared}], 1), Abn},
         {?LOCKER([{a, exclusive}, {a, exclusive}, {a, shared}], 1), Abn},
         {?LOCKER([{a, exclusive}, {a, exclusive}, {a, shared}], forever), Abn},
         {{locker, start_buggy, [[{a, exclusive}, {a, exclusive}, {a, exclusive},
                                  {a, exclusive}, {a, shared}], 1]}, Abn},
         {{door, start, [2]}, #{treat_as_normal => [normal, pushed_locked_door]}},
         {{door, start, [2]}, #{}},
         {{sup_worker, start, [4, 4]}, When},
         {{sup_worker, start, [3, 3]}, #{}},
         {{pingpong, start, [10]}, #{property => deadlock}},
         {{dining, start, [3]}, #{property => deadlock}},
         {{dining, start, [3]}, #{property => deadlock, shortest => true}},
         {{racy_child, start, []}, #{}},
         {{world_hello, start, []}, #{}},
         {{client_server, start, [3, 2]}, #{granularity => small}},
         {{counter_server, start, [2, 2]}, #{granularity => small, timeouts => when_idle}},
         {{client_server, start, [3, 2]}, #{delivery => ether}},
         {{tprog, ets_counter_race, []}, #{granularity => small}},
         {{tprog, timeout_race, []}, When},
         {{tprog_door, start, []}, When},
         {{tprog_props, counter_race, []}, #{invariant => fun counter_shape/1}},
         {{tprog, producer_consumer, []}, #{mailbox_bound => 3}},
         {{tprog_dist, killable, []}, #{faults => #{kill => 1}}}],
    {timeout, 900, fun() -> [check_same(E, O) || {E, O} <- Models] end}.

counter_shape(#{processes := Ps}) -> length(Ps) < 10.

dist_test_() ->
    N2 = 'n2@sim',
    Nodes = #{nodes => ['n1@sim', N2, 'n3@sim']},
    Faults = Nodes#{faults => #{crash_node => 1, disconnect => 1}},
    {timeout, 600,
     fun() ->
             [begin
                  {On, _} = same({tprog_dist, F, [N2]}, O),
                  ?assertNotMatch({raised, _}, On),
                  check_same({tprog_dist, F, [N2]}, O)
              end
              || F <- [crash_watch, nodedown_watch, reconnects, disconnect_lost, spawn_on_down],
                 O <- [Nodes, Faults, Faults#{ordering => node_pair}, Nodes#{delivery => ether}]]
     end}.

ltl_test_() ->
    Locker = #{ltl => "forall C: [](requested(C) -> <> holding(C))",
               predicates => #{requested => fun(C) -> {probe, request, {C, '_', '_'}} end,
                               holding => fun(C) -> {prop, {holding, C, '_', '_'}} end}},
    {timeout, 600,
     fun() ->
             check_same(?LOCKER([{a, exclusive}, {a, exclusive}, {a, shared}], forever),
                        Locker#{timeouts => when_idle}),
             check_same(?LOCKER([{a, exclusive}, {a, shared}], forever),
                        Locker#{fairness => none}),
             %% A violated formula: the lasso must be the same.
             check_same(?LOCKER([{a, exclusive}, {a, exclusive}], forever),
                        Locker#{fairness => none, timeouts => when_idle})
     end}.

%% Sessions run the same C search in expand-only mode: replay follows a
%% counterexample found with the cache off, and simulate draws the same
%% runs with a seed.
sessions_test() ->
    Entry = {dining, start, [3]},
    {error, Cex} = mcerlang:check(Entry, #{property => deadlock, step_cache => false,
                                           progress => false}),
    On = mcerlang:replay(Cex#{options => #{property => deadlock, step_cache => true}}),
    Off = mcerlang:replay(Cex#{options => #{property => deadlock, step_cache => false}}),
    ?assertEqual(strip_sim(Off), strip_sim(On)),
    Sim = fun(C) -> mcerlang:simulate({client_server, start, [3, 2]},
                                      #{seed => 7, runs => 20, step_cache => C}) end,
    ?assertEqual(strip_sim(Sim(false)), strip_sim(Sim(true))).

strip_sim({error, Cex}) -> {error, maps:without([options, stats], Cex)};
strip_sim({ok, #{trace := _} = Cex}) -> {ok, maps:without([options, stats], Cex)};
strip_sim({ok, St}) when is_map(St) ->
    {ok, maps:without([time_ms, memory, memory_used, bytes_per_state, states_per_second,
                       step_cache_hits, step_cache_misses, step_cache_entries,
                       step_cache_bytes], St)};
strip_sim(Other) -> Other.

%% The cache does its work: most steps of a gen_server model are hits
%% (in the plain space: symmetry reduction, the default, leaves 254 states).
hits_test() ->
    %% Unreduced: the reductions (dead payloads above all) leave too few
    %% states for the repetition the cache is for.
    {ok, St} = mcerlang:check({counter_server, start, [3, 2]},
                              #{timeouts => when_idle, progress => false, symmetry => false,
                                reduction => false}),
    #{step_cache_hits := Hits, step_cache_misses := Misses, transitions := T} = St,
    ?assert(Hits + Misses =< T),
    ?assert(Hits > 10 * Misses),
    {ok, Off} = mcerlang:check({counter_server, start, [3, 2]},
                               #{timeouts => when_idle, progress => false, step_cache => false}),
    ?assertMatch(#{step_cache_hits := 0, step_cache_misses := 0, step_cache_entries := 0}, Off).

%% The NIF keeps the terms it decoded for a search (c_src/nif_term_cache.c)
%% and empties them whole when they pass 4 MB: a continuation that grows at
%% every step fills it several times, and every step must still see its own
%% (the real VM's result: the sum of the list the loop built).
decoded_terms_cache_refills_test_() ->
    {timeout, 60,
     fun() ->
             N = 2000,
             Expected = {sum, lists:sum([I * 1000 || I <- lists:seq(1, N)]), N},
             [?assertMatch({error, #{violation := {abnormal_exit, _, Expected}}},
                           mcerlang:check({tprog, growing_continuation, [N]},
                                          #{progress => false, step_cache => Cache}))
              || Cache <- [false, true]]
     end}.

option_test() ->
    ?assertError({mcerlang, {bad_option_value, step_cache, yes}},
                 mcerlang:check({tprog, hello, []}, #{step_cache => yes})).
