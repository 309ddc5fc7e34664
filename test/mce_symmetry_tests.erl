%% Symmetry reduction (option `symmetry', c_src/symmetry.c,
%% src/mce_symmetry.erl): fewer states where processes are
%% interchangeable, the same verdicts, counterexamples that are real runs
%% (they replay), and nothing changed with the option off.
-module(mce_symmetry_tests).

-include_lib("eunit/include/eunit.hrl").

check(Entry, Opts) ->
    mcerlang:check(Entry, Opts#{progress => false}).

states({ok, St}) -> maps:get(states, St);
states({error, #{stats := St}}) -> maps:get(states, St).

verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) when is_tuple(V) -> element(1, V);
verdict({error, #{violation := V}}) -> V;
verdict({inconclusive, Why, _}) -> {inconclusive, Why}.

%% N identical clients of one server: the same verdict, far fewer states,
%% and within the issue's target for N = 5 (at most 10,000).
client_server_test_() ->
    {timeout, 300,
     fun() ->
             Off = [check({client_server, start, [N, 2]}, #{symmetry => false}) || N <- [2, 3, 4, 5]],
             On = [check({client_server, start, [N, 2]}, #{symmetry => true}) || N <- [2, 3, 4, 5]],
             ?assertEqual([ok, ok, ok, ok], [verdict(R) || R <- Off]),
             ?assertEqual([ok, ok, ok, ok], [verdict(R) || R <- On]),
             [?assert(states(B) < states(A)) || {A, B} <- lists:zip(Off, On)],
             ?assert(states(lists:last(On)) =< 10000),
             ?assert(states(lists:last(On)) * 10 < states(lists:last(Off))),
             {ok, St} = lists:last(On),
             ?assertMatch(#{symmetry := on, symmetry_groups := 5}, St),
             ?assert(maps:get(symmetric_states, St) > 0)
     end}.

%% The locker's identical clients under a simple_one_for_one supervisor,
%% which keeps them in a set (`#{Pid => []}'), and the locker keeps holders
%% and waiters in a map under the resource's name: the same verdict, a
%% third of the states for three clients, and the issue's locker target
%% (five exclusive clients, at most 20,000 states) in this shape.  The
%% set's pairs are equal but for their pids, so its order (the pids') used
%% to rank the clients, and the representative was no function of the
%% orbit: 2,303 states for three clients, 139,917 for five; the pids under
%% the resource's name were pinned as a role's, 72,925 for five.  The
%% planted bug (a shared grant beside an exclusive lock) is found and
%% replays.
locker_pool_test_() ->
    {timeout, 300,
     fun() ->
             Opts = #{timeouts => when_idle, property => abnormal_exit},
             Three = {locker, start_pool, [lists:duplicate(3, {a, exclusive}), 1]},
             Off = check(Three, Opts#{symmetry => false}),
             On = check(Three, Opts),
             ?assertEqual({ok, ok}, {verdict(Off), verdict(On)}),
             ?assertMatch({ok, #{symmetry := on}}, On),
             ?assert(states(On) * 2 < states(Off)),
             Five = check({locker, start_pool, [lists:duplicate(5, {a, exclusive}), 1]}, Opts),
             ?assertEqual(ok, verdict(Five)),
             ?assert(states(Five) =< 20000),
             Buggy = {locker, start_pool_buggy, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
             [begin
                  {error, Cex} = check(Buggy, Opts#{symmetry => Sym}),
                  ?assertMatch({abnormal_exit, _, {mutex_violation, a, _, _}}, maps:get(violation, Cex)),
                  ?assertMatch({Sym, {ok, _}}, {Sym, mcerlang:replay(Cex)})
              end || Sym <- [false, true]]
     end}.

%% Off, the counts are the baseline's (make bench-counts) and nothing is
%% renamed.  Partial-order reduction (`reduction', on by default) changes
%% the counts, so it is off here: these are the counts of the full state
%% space.  The default (`auto') is on for this program, which never
%% observes pid order, as `true' is.
off_is_unchanged_test() ->
    Full = #{reduction => false},
    {ok, Default} = check({client_server, start, [4, 2]}, Full),
    {ok, True} = check({client_server, start, [4, 2]}, Full#{symmetry => true}),
    {ok, Off} = check({client_server, start, [4, 2]}, Full#{symmetry => false}),
    ?assertMatch(#{states := 4619, transitions := 11315, symmetry := off,
                   symmetric_states := 0, symmetry_groups := 0}, Off),
    ?assertMatch(#{states := 263, symmetry := on, symmetry_groups := 4}, Default),
    ?assertEqual(maps:with([states, transitions], True), maps:with([states, transitions], Default)),
    {error, Dining} = check({dining, start, [3]}, Full#{property => deadlock, symmetry => false}),
    ?assertMatch(#{states := 226, transitions := 467}, maps:get(stats, Dining)).

%% Symmetry reduction never grows a state space: a renaming chosen by a
%% tie broken by pid is no function of the orbit, so two renamings of one
%% state could be stored apart, more states than without the reduction
%% (the spawn chain, whose waiting processes differ only in their child's
%% pid, took 1,677 states instead of 1,024 with one round of refinement).
%% With partial-order reduction on and off: the same verdict, never more
%% states, and the chain's exact count.
never_grows_test_() ->
    {timeout, 300,
     fun() ->
             Door = #{treat_as_normal => [normal, pushed_locked_door]},
             Entries = [{{spawn_chain, start, [8]}, #{}}, {{spawn_chain, start, [5]}, #{}},
                        {{door, start, [3]}, Door}],
             [begin
                  Off = check(Entry, Opts#{reduction => Red, symmetry => false}),
                  On = check(Entry, Opts#{reduction => Red, symmetry => true}),
                  ?assertEqual({Entry, Red, verdict(Off)}, {Entry, Red, verdict(On)}),
                  ?assertMatch({ok, #{symmetry := on}}, On),
                  %% With partial-order reduction the reduced graph depends
                  %% on where the stack proviso closes cycles, which the
                  %% representatives move: door(3) takes 12,794 states with
                  %% symmetry against 12,765 without (0.2%).
                  case Red of
                      false -> ?assert(states(On) =< states(Off));
                      true -> ?assert(states(On) * 100 =< states(Off) * 101)
                  end
              end || {Entry, Opts} <- Entries, Red <- [false, true]],
             ?assertMatch({ok, #{states := 1024}},
                          check({spawn_chain, start, [8]}, #{reduction => false, symmetry => true}))
     end}.

%% A planted bug among identical processes (a lost update between two
%% of them) is found, and its counterexample, mapped back to concrete
%% pids, replays; likewise breadth-first and with hash compaction.
planted_bug_replays_test_() ->
    {timeout, 120,
     fun() ->
             Entry = {tprog_sym, lost_update, [3]},
             {error, Plain} = check(Entry, #{}),
             ?assertMatch({{lost_update, _, 3}, _}, element(3, maps:get(violation, Plain))),
             [begin
                  {error, Cex} = check(Entry, Opts#{symmetry => true}),
                  ?assertMatch({abnormal_exit, _, {{lost_update, _, 3}, _}}, maps:get(violation, Cex)),
                  ?assertMatch(#{symmetry := on}, maps:get(stats, Cex)),
                  ?assertMatch({ok, _}, mcerlang:replay(Cex))
              end || Opts <- [#{}, #{shortest => true}, #{table => hash_compact}]],
             {ok, _} = check({tprog_sym, lost_update, [1]}, #{symmetry => true})
     end}.

%% Deadlocks among identical processes, with ghosts (dead processes whose
%% pids the state still holds), refs and monitors of identical processes:
%% the same verdicts, fewer or as many states, replays.
verdicts_and_replays_test_() ->
    {timeout, 300,
     fun() ->
             Nodes = ['a@h', 'b@h', 'c@h'],
             Entries = [{{tprog_sym, ghost_done, [4]}, #{}}, {{tprog_sym, ping_ring, [3]}, #{}},
                        {{tprog_sym, ref_workers, [3]}, #{}}, {{tprog_sym, lost_update, [2]}, #{}},
                        {{dining, start, [3]}, #{}}, {{pingpong, start, [4]}, #{}},
                        {{counter_server, start, [3, 2]}, #{}},
                        {{counter_server, start, [2, 2]}, #{timeouts => when_idle}},
                        {{sup_worker, start, [3, 2]}, #{}},
                        {{locker, start_buggy, [[{a, exclusive}, {b, exclusive}, {c, shared}], 1]}, #{}},
                        {{racy_child, start, []}, #{}},
                        {{client_server, start, [3, 1]}, #{delivery => ether}},
                        {{tprog_sym, lost_update, [2]}, #{delivery => ether}},
                        {{world_hello, worldhello, Nodes}, #{nodes => Nodes}}],
             [begin
                  Off = check(Entry, Opts),
                  On = check(Entry, Opts#{symmetry => true}),
                  ?assertEqual({Entry, verdict(Off)}, {Entry, verdict(On)}),
                  case {Off, On} of
                      {{ok, _}, {ok, _}} -> ?assert(states(On) =< states(Off));
                      _ -> ok
                  end,
                  case On of
                      {error, Cex} -> ?assertMatch({Entry, {ok, _}}, {Entry, mcerlang:replay(Cex)});
                      {ok, _} -> ok
                  end
              end || {Entry, Opts} <- Entries]
     end}.

%% Where the verdict could name pids the search does not rename, the
%% reduction is off and the stats say why.
off_where_unsound_test() ->
    Inv = fun(_View) -> true end,
    {ok, St} = check({client_server, start, [2, 1]}, #{symmetry => true, invariant => [Inv]}),
    ?assertMatch(#{symmetry := {off, invariant}, symmetric_states := 0}, St),
    {ok, Ltl} = check({tprog_ltl, spin_and_work, []},
                      #{symmetry => true, ltl => "<> done", predicates => #{done => {prop, done}}}),
    ?assertMatch(#{symmetry := {off, ltl}}, Ltl),
    ?assertError({mcerlang, {bad_option_value, symmetry, yes, _}},
                 check({client_server, start, [2, 1]}, #{symmetry => yes})).

%% The command line's --symmetry on|off.
cli_test() ->
    ?assertEqual(1, mce_cli:run(["check", "--symmetry", "on", "--quiet", "--no-progress",
                                 "tprog_sym:lost_update(2)"])),
    ?assertEqual(0, mce_cli:run(["check", "--symmetry", "off", "--quiet", "--no-progress",
                                 "client_server:start(2, 1)"])),
    ?assertEqual(2, mce_cli:run(["check", "--symmetry", "maybe", "client_server:start(2, 1)"])).

%% Regression (issue 18's randomised test, seeds 7, 27, 31 and 47): the
%% search on representatives took the victim's own run to its abnormal
%% exit, but in the concrete state before it the killer's `exit(V, kill)'
%% comes first, and a replay's expansion stops there (a process killed is
%% a violation).  The counterexample is cut at that kill, a shorter real
%% run: before, mce_symmetry:replayable/3 recognised only a step's own
%% exit as a violation, and the counterexample did not replay.  Without
%% symmetry the search reports the kill; with it, a violation of the same
%% victim whose counterexample replays, with reduction and symmetry off.
kill_signal_cut_replays_test_() ->
    {timeout, 120,
     fun() ->
             Entry = {tprog_sym_kill, kill_race, []},
             [begin
                  {error, Plain} = check(Entry, #{granularity => G}),
                  %% Big steps list the kill first; under small steps the
                  %% reduction tries the victim's untried start first.
                  ?assertMatch({abnormal_exit, _, Why} when Why =:= killed; Why =:= bad,
                               maps:get(violation, Plain)),
                  {error, Cex} = check(Entry, #{granularity => G, symmetry => true}),
                  ?assertMatch(#{symmetry := on}, maps:get(stats, Cex)),
                  {abnormal_exit, Victim, _} = maps:get(violation, Cex),
                  ?assertEqual(element(2, maps:get(violation, Plain)), Victim),
                  ?assertMatch({G, {ok, #{violation := {abnormal_exit, Victim, _}}}},
                               {G, mcerlang:replay(Cex, #{reduction => false, symmetry => false})}),
                  ?assertMatch({G, {ok, _}}, {G, mcerlang:replay(Cex)})
              end || G <- [big, small]]
     end}.

%% A mapped run that diverges at a spawn: the representative's child gets
%% the least number free in the representative, which the renaming maps
%% to a free number of the real state that is not its least free one, so
%% the real run's child has another number.  mce_symmetry:replayable/3
%% renames the rest of the run by the swap of the two and replays it (it
%% had stopped replaying when the translated module's location table
%% changed how states hash, which moved the representatives).
fresh_number_swap_replays_test_() ->
    {timeout, 120,
     fun() ->
             [begin
                  R = check({tprog_gl, inherit_spawns, []}, Opts#{granularity => G}),
                  ?assertMatch({error, #{violation := {abnormal_exit, _, {result, _}}}}, R),
                  {error, Cex} = R,
                  ?assertMatch({G, Opts, {ok, _}}, {G, Opts, mcerlang:replay(Cex)})
              end || G <- [big, small], Opts <- [#{}, #{reduction => false}]]
     end}.
