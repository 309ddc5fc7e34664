%% The lossy visited tables (issue 6, item 1): `table => hash_compact'
%% (64-bit fingerprints, Wolper-Leroy / Holzmann hash compaction) and
%% `table => {bitstate, Bits}' (Holzmann's supertrace).
%%
%% On every example model: hash compaction finds exactly the exact table's
%% states, transitions and verdict (no fingerprint collides in spaces this
%% small, and the DFS order is the same, so counterexamples have the same
%% length); bitstate may only lose states, so it never reports a violation
%% the exact table does not and never counts more states.  Safety monitors
%% and invariants (the observe mode) work with both.
-module(mce_table_tests).
-include_lib("eunit/include/eunit.hrl").

-define(BITSTATE, {bitstate, 1 bsl 22}).

warm_up_test_() ->
    {timeout, 120,
     fun() -> [mce_translate:ensure(M) || M <- [pingpong, dining, racy_child, client_server,
                                                 counter_server, locker, door, sup_worker,
                                                 world_hello, tprog_props, tprog_props_skip]] end}.

%% {Label, Entry, Options}: every program of examples/ (demo.erl only
%% runs the first three), small instances.
models() ->
    Locker = #{timeouts => when_idle, property => abnormal_exit},
    [{"pingpong(3)", {pingpong, start, [3]}, #{}},
     {"dining(3)", {dining, start, [3]}, #{}},
     {"racy_child", {racy_child, start, []}, #{}},
     {"client_server(4,2)", {client_server, start, [4, 2]}, #{}},
     {"client_server(3,2) kill", {client_server, start, [3, 2]}, #{faults => #{kill => 1}}},
     {"counter_server(3,2)", {counter_server, start, [3, 2]}, #{timeouts => when_idle}},
     {"counter_server racy(2,1)", {counter_server, start_racy, [2, 1]}, #{timeouts => when_idle}},
     {"locker(aEaEaS,1)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]}, Locker},
     {"locker_buggy(aEx4aS,1)", {locker, start_buggy,
                                 [[{a, exclusive}, {a, exclusive}, {a, exclusive}, {a, exclusive},
                                   {a, shared}], 1]}, Locker},
     {"door(3)", {door, start, [3]}, #{treat_as_normal => [normal, pushed_locked_door]}},
     {"sup_worker(3,3)", {sup_worker, start, [3, 3]}, #{timeouts => when_idle}},
     {"sup_worker(3,2)", {sup_worker, start, [3, 2]}, #{timeouts => when_idle}},
     {"world_hello one node", {world_hello, worldhello, ['n1@sim', 'n1@sim', 'n1@sim']},
      #{nodes => ['n1@sim']}},
     {"world_hello three nodes", {world_hello, worldhello, ['n1@sim', 'n2@sim', 'n3@sim']},
      #{nodes => ['n1@sim', 'n2@sim', 'n3@sim']}},
     {"world_hello crash", {world_hello, worldhello, ['n1@sim', 'n2@sim', 'n1@sim']},
      #{nodes => ['n1@sim', 'n2@sim'], faults => #{crash_node => 1}}},
     %% The observe mode: monitors and invariants judge each successor.
     {"monitor mutex ok", {tprog_props, mutex, [true]}, #{monitor => {tprog_props, 10}}},
     {"monitor mutex violated", {tprog_props, mutex, [false]}, #{monitor => {tprog_props, 10}}},
     {"monitor skip", {tprog_props, counter_race, []}, #{monitor => {tprog_props_skip, []}}},
     {"invariant violated", {tprog_props, counter_race, []},
      #{invariant => fun(#{processes := Ps}) ->
                             lists:all(fun(V) -> V =:= 2 end,
                                       [V || #{props := Props} <- Ps, {final, V} <- Props])
                     end}}].

tables_agree_test_() ->
    [{Label, {timeout, 60, fun() -> agree(Entry, Opts) end}} || {Label, Entry, Opts} <- models()].

agree(Entry, Opts) ->
    Exact = mcerlang:check(Entry, Opts),
    Compact = mcerlang:check(Entry, Opts#{table => hash_compact}),
    Bits = mcerlang:check(Entry, Opts#{table => ?BITSTATE}),
    #{states := S, transitions := T} = ExactStats = stats(Exact),
    ?assertEqual(exact, maps:get(table, ExactStats)),
    ?assertNot(maps:is_key(omission_probability, ExactStats)),
    %% Hash compaction: the same search.
    CompactStats = stats(Compact),
    ?assertMatch(#{states := S, transitions := T, table := hash_compact}, CompactStats),
    ?assertEqual(verdict(Exact), verdict(Compact)),
    ?assertEqual(trace_length(Exact), trace_length(Compact)),
    lossy_stats(CompactStats),
    %% Bitstate: a subset of it.
    BitsStats = stats(Bits),
    ?assertMatch(#{table := bitstate, table_bytes := TB} when TB >= (1 bsl 22) div 8, BitsStats),
    ?assert(maps:get(states, BitsStats) =< S),
    case verdict(Bits) of
        {violation, _} -> ?assertMatch({violation, _}, verdict(Exact));
        _ -> ok
    end,
    lossy_stats(BitsStats).

lossy_stats(#{omission_probability := P, table_bytes := B}) ->
    ?assert(is_float(P) andalso P >= 0.0 andalso P =< 1.0),
    ?assert(B > 0).

stats({ok, Stats}) -> Stats;
stats({error, #{stats := Stats}}) -> Stats;
stats({inconclusive, _, Stats}) -> Stats.

verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) -> {violation, V};
verdict({inconclusive, Why, _}) -> {inconclusive, Why}.

trace_length({error, #{trace := Trace}}) -> length(Trace);
trace_length(_) -> none.

%% A buggy example: the same counterexample, step for step.
counterexample_test_() ->
    {timeout, 60,
     fun() ->
             Entry = {locker, start_buggy, [[{a, exclusive}, {a, exclusive}, {a, exclusive},
                                             {a, exclusive}, {a, shared}], 1]},
             Opts = #{timeouts => when_idle, property => abnormal_exit},
             {error, Exact} = mcerlang:check(Entry, Opts),
             {error, Compact} = mcerlang:check(Entry, Opts#{table => hash_compact}),
             ?assertMatch(#{violation := {abnormal_exit, _, {mutex_violation, a, _, _}}}, Compact),
             ?assertEqual(length(maps:get(trace, Exact)), length(maps:get(trace, Compact))),
             ?assertEqual(maps:get(trace, Exact), maps:get(trace, Compact)),
             ?assertEqual(maps:get(final_state, Exact), maps:get(final_state, Compact))
     end}.

%% The honest saving: with hash compaction a state costs its fingerprint
%% slot and its new sub-parts, not an interned root vector.
memory_per_state_test_() ->
    {timeout, 120,
     fun() ->
             %% The plain space (50,992 states): the reductions leave far fewer.
             Entry = {client_server, start, [5, 2]},
             Plain = #{symmetry => false, reduction => false},
             {ok, Exact} = mcerlang:check(Entry, Plain),
             {ok, Compact} = mcerlang:check(Entry, Plain#{table => hash_compact}),
             #{states := S, bytes_per_state := ExactBps} = Exact,
             %% 50,992 states without the reduction, 47,537 with it
             %% (the server's replies are safe steps).
             ?assert(S >= 45000),
             ?assertMatch(#{states := S, bytes_per_state := _}, Compact),
             #{bytes_per_state := CompactBps, table_bytes := TableBytes,
               omission_probability := P} = Compact,
             ?debugFmt("client_server(5,2), ~b states: ~b bytes/state exact, ~b hash_compact "
                       "(fingerprint table ~b bytes, omission probability ~.3g)",
                       [S, ExactBps, CompactBps, TableBytes, P]),
             ?assert(CompactBps < ExactBps),
             ?assert(maps:get(memory_used, Compact) < maps:get(memory_used, Exact)),
             %% 64-bit fingerprints, load at most 1/2.
             ?assert(TableBytes >= 2 * 8 * S),
             ?assert(P > 0.0 andalso P < 1.0e-9)
     end}.

%% The memory cap counts the visited table: a 128 MiB bit array is over a
%% 64 MiB cap at the first look.
memory_cap_counts_table_test() ->
    ?assertMatch({inconclusive, {memory, _}, #{table := bitstate}},
                 mcerlang:check({client_server, start, [4, 2]},
                                #{table => {bitstate, 1 bsl 30}, memory => 64 bsl 20})).

%% A tiny bit array loses states (it saturates) but reports only what it
%% explored; the estimate says the result is not to be trusted.
saturated_bitstate_test() ->
    %% The plain space: symmetry reduction (the default) leaves too few
    %% states to lose.
    Plain = #{symmetry => false},
    {ok, #{states := S}} = mcerlang:check({client_server, start, [4, 2]}, Plain),
    {ok, #{states := Few, omission_probability := P}} =
        mcerlang:check({client_server, start, [4, 2]}, Plain#{table => {bitstate, 1}}),
    ?assert(Few < S),
    ?assert(P > 0.99).

%% omission_probability saturates at 1.0 as soon as a few states may be
%% lost, so a run that lost a few states and one that lost most looked the
%% same; the coverage estimate tells them apart.  It counts only the new
%% states the search met (not those a lost state would have led to), so it
%% bounds the true coverage from above.
coverage_estimate_test_() ->
    {timeout, 60,
     fun() ->
             %% The plain space (the reductions leave too few states to
             %% lose, and partial-order reduction's stack proviso explores
             %% differently with a lossy table).
             E = {client_server, start, [4, 2]},
             Plain = #{symmetry => false, reduction => false},
             {ok, #{states := All}} = mcerlang:check(E, Plain),
             {ok, #{states := FewLost, omission_probability := P1, coverage_estimate := C1,
                    states_lost_estimate := L1}} =
                 mcerlang:check(E, Plain#{table => {bitstate, 1 bsl 16}}),
             {ok, #{states := MostLost, omission_probability := P2, coverage_estimate := C2,
                    states_lost_estimate := L2}} =
                 mcerlang:check(E, Plain#{table => {bitstate, 1024}}),
             ?assert(P1 > 0.99 andalso P2 > 0.99),
             ?assert(C1 > 0.99 andalso C2 < 0.8),
             ?assert(L1 > 0.0 andalso L2 > 10 * L1),
             ?assert(C1 >= FewLost / All andalso C2 >= MostLost / All),
             {ok, Exact} = mcerlang:check(E),
             ?assertNot(maps:is_key(coverage_estimate, Exact))
     end}.

options_test() ->
    E = {pingpong, start, [1]},
    ?assertMatch({ok, #{table := exact}}, mcerlang:check(E, #{table => exact})),
    ?assertMatch({ok, #{table := bitstate}}, mcerlang:check(E, [{table, {bitstate, 1000}}])),
    ?assertMatch({ok, #{table := hash_compact}},
                 mcerlang:check(E, #{table => hash_compact, shortest => false})),
    [?assertError({mcerlang, {bad_option_value, table, V}}, mcerlang:check(E, #{table => V}))
     || V <- [foo, bitstate, {bitstate, 0}, {bitstate, -1}, {bitstate, 1 bsl 41},
              {bitstate, x}, {hash_compact, 64}]],
    ?assertError({mcerlang, {incompatible_options, table, shortest}},
                 mcerlang:check(E, #{table => hash_compact, shortest => true})),
    ?assertError({mcerlang, {incompatible_options, table, shortest}},
                 mcerlang:check(E, #{table => {bitstate, 1 bsl 20}, shortest => true})),
    ?assertError({mcerlang, {incompatible_options, table, ltl}},
                 mcerlang:check(E, #{table => hash_compact, ltl => "[] a",
                                     predicates => #{a => {prop, a}}})),
    ?assertError({mcerlang, {incompatible_options, table, ltl}},
                 mcerlang:check(E, #{table => {bitstate, 1 bsl 20}, ltl => "[] a",
                                     predicates => #{a => {prop, a}}})).

%% The NIF refuses what the search cannot do with a lossy table.
nif_options_test() ->
    Base = #{nodes => [nonode@nohost], creation => 1},
    [?assertError(badarg, mce_nif:new(maps:merge(Base, C)))
     || C <- [#{table_mode => 3}, #{table_mode => -1}, #{table_mode => 1, breadth_first => 1},
              #{table_mode => 2, expand_only => 1}, #{table_mode => 2, bitstate_bits => 1 bsl 41}]],
    S = mce_nif:new(Base#{table_mode => 2, bitstate_bits => 5000}),
    ?assertMatch(#{table := bitstate, table_bytes := B, omission_probability := +0.0}
                   when B >= 8192 div 8, mce_nif:stats(S)),
    ?assertMatch({run, 1, start, {m, f, []}, [], false}, mce_nif:start(S, {m, f, []}, 1)),
    ?assertEqual(done, mce_nif:ran(S, {exit, normal}, [], l, false)),
    ?assertMatch(#{states := 2, transitions := 1, table := bitstate}, mce_nif:stats(S)).
