%% Automatic symmetry reduction (`symmetry => auto', the default): on for
%% programs that never observe pid order, off (and run again without it)
%% for those that do, with the reason in the stats.  The programs that
%% elect a leader by pid order (test/tprog_autosym.erl) have a violation
%% that only a search aware of pid order finds: `symmetry => true' (the
%% user's assertion that the program never orders pids, here false) misses
%% it, which is what the guard (src/mce_rt_order.erl) is for.
-module(mce_autosym_tests).
-include_lib("eunit/include/eunit.hrl").

check(Entry, Opts) ->
    mcerlang:check(Entry, Opts#{progress => false}).

stats({ok, St}) -> St;
stats({error, #{stats := St}}) -> St.

states(R) -> maps:get(states, stats(R)).

verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) when is_tuple(V) -> element(1, V);
verdict({error, #{violation := V}}) -> V.

%% Each way of observing pid order: the same verdict with the default as
%% with symmetry off (a violation), symmetry off in the stats with the
%% reason, a counterexample that replays; symmetry asserted (`true') on
%% the same program finds nothing.
leaders_test_() ->
    [{atom_to_list(F),
      {timeout, 60,
       fun() ->
               Entry = {tprog_autosym, F, []},
               Off = check(Entry, #{symmetry => false}),
               Auto = check(Entry, #{}),
               Asserted = check(Entry, #{symmetry => true}),
               ?assertMatch({error, #{violation := {abnormal_exit, _, {first_was_not_leader, _}}}},
                            Off),
               ?assertEqual(verdict(Off), verdict(Auto)),
               ?assertEqual({off, pid_order}, maps:get(symmetry, stats(Auto))),
               {error, Cex} = Auto,
               ?assertMatch({ok, _}, mcerlang:replay(Cex)),
               ?assertMatch({ok, #{symmetry := on}}, Asserted),
               %% Without partial-order reduction too.
               ?assertEqual(verdict(Off),
                            verdict(check(Entry, #{reduction => false})))
       end}}
     || F <- [min_leader, sort_leader, text_leader, guard_leader, sort_fun_leader, apply_leader,
              case_leader, fun_guard_leader, set_leader, links_leader]].

%% A violation in the very step that compares the pids (the symmetric
%% search's first run fails there): the check runs again without symmetry
%% all the same, and the counterexample is a run of the plain search.
same_step_violation_test() ->
    Entry = {tprog_autosym, first_leader, []},
    Auto = check(Entry, #{}),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {first_was_leader, _}}}}, Auto),
    ?assertEqual({off, pid_order}, maps:get(symmetry, stats(Auto))),
    {error, Cex} = Auto,
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    ?assertEqual(verdict(check(Entry, #{symmetry => false})), verdict(Auto)),
    ?assertNot(maps:is_key(pid_order, stats(Auto))).

%% A receive whose guard compares pids cannot be checked on the values:
%% the symmetric search is void as soon as the receive is reached.
receive_guard_test() ->
    Auto = check({tprog_autosym, receive_guard, []}, #{}),
    ?assertEqual(verdict(check({tprog_autosym, receive_guard, []}, #{symmetry => false})),
                 verdict(Auto)),
    ?assertEqual({off, pid_order}, maps:get(symmetry, stats(Auto))).

%% Identical clients get fewer states by default, as with symmetry
%% asserted; client_server compares integers in a function's guard
%% (`when I > K'), which is checked on the values and does not turn
%% symmetry off.
identical_clients_test_() ->
    {timeout, 120,
     fun() ->
             [begin
                  Off = check(Entry, #{symmetry => false}),
                  Auto = check(Entry, #{}),
                  True = check(Entry, #{symmetry => true}),
                  ?assertEqual(ok, verdict(Off)),
                  ?assertEqual(ok, verdict(Auto)),
                  ?assertMatch(#{symmetry := on}, stats(Auto)),
                  ?assert(maps:get(symmetry_groups, stats(Auto)) >= 3),
                  ?assert(states(Auto) < states(Off)),
                  ?assertEqual(states(True), states(Auto))
              end || Entry <- [{tprog_autosym, clients, [3]}, {client_server, start, [4, 2]},
                               {tprog_autosym, same_workers, [4]}]]
     end}.

%% auto gives up at 5,000 states when few were renamed (the door's
%% processes are spawned alike but seldom interchangeable), and the check
%% runs again without symmetry: the same verdict and states as without it;
%% the identical clients keep it; true never gives up.  (Judged again at
%% 50,000 states met in a search that passes cut states, it stops there
%% and goes on: door(4), 309,673 states, too long a check for here.)
gives_up_test_() ->
    {timeout, 120,
     fun() ->
             Door = {door, start, [3]},
             Opts = #{treat_as_normal => [normal, pushed_locked_door]},
             Off = check(Door, Opts#{symmetry => false}),
             Auto = check(Door, Opts),
             True = check(Door, Opts#{symmetry => true}),
             ?assertEqual(verdict(Off), verdict(Auto)),
             %% At 5,000 states met: kept, or passed through (cut_states).
             #{symmetry := {off, few_renamed}, symmetry_stopped := Stopped} = stats(Auto),
             ?assert(Stopped > 0 andalso Stopped =< 5000),
             ?assertMatch(#{symmetry := {off, few_renamed}, symmetry_stopped := 5000},
                          stats(check(Door, Opts#{cut_states => store}))),
             ?assertEqual(states(Off), states(Auto)),
             %% Small steps: going on had kept 54,072 states.
             ?assertEqual(states(check(Door, Opts#{symmetry => false, granularity => small})),
                          states(check(Door, Opts#{granularity => small}))),
             ?assertMatch(#{symmetry_stopped := 0}, stats(True)),
             ?assertMatch(#{symmetry_stopped := 0}, stats(check({client_server, start, [5, 2]}, #{}))),
             ?assertMatch(#{symmetry_stopped := 0}, stats(Off))
     end}.

%% Where symmetry cannot be used the default says why; off says off.
reasons_test() ->
    Inv = fun(_View) -> true end,
    ?assertMatch({ok, #{symmetry := {off, invariant}}},
                 check({client_server, start, [2, 1]}, #{invariant => [Inv]})),
    ?assertMatch({ok, #{symmetry := {off, mailbox_bound}}},
                 check({client_server, start, [2, 1]}, #{mailbox_bound => 10})),
    ?assertMatch({ok, #{symmetry := {off, ltl}}},
                 check({tprog_ltl, spin_and_work, []},
                       #{ltl => "<> done", predicates => #{done => {prop, done}}})),
    ?assertMatch({ok, #{symmetry := off}}, check({client_server, start, [2, 1]}, #{symmetry => false})),
    %% An exit reason that names a pid is judged by it: no renaming.
    ?assertMatch({ok, #{symmetry := {off, treat_as_normal}}},
                 check({client_server, start, [2, 1]},
                       #{treat_as_normal => [normal, {gone, mce_pid:term(2)}]})),
    ?assertError({mcerlang, {bad_option_value, symmetry, sometimes, _}},
                 check({client_server, start, [2, 1]}, #{symmetry => sometimes})).

%% The same code run on the real VM gives what the checker reports as
%% reachable: each election ends with `ok' or the error, depending on
%% which hello the scheduler delivers first.
real_vm_test() ->
    [begin
         {Pid, Ref} = spawn_monitor(tprog_autosym, F, []),
         receive
             {'DOWN', Ref, process, Pid, R} ->
                 ?assert(R =:= normal orelse element(1, R) =:= first_was_not_leader)
         after 10000 -> error(timeout)
         end
     end || F <- [min_leader, sort_leader, text_leader, guard_leader, sort_fun_leader,
                  apply_leader, case_leader, fun_guard_leader, set_leader, links_leader]].

%% bin/mcerlang --symmetry auto|on|off.
cli_test_() ->
    {timeout, 120,
     fun() ->
             Args = ["test/tprog_autosym.erl", "tprog_autosym:min_leader()"],
             {1, Auto} = mce_cli_tests:run_cli(["check" | Args]),
             {1, Auto2} = mce_cli_tests:run_cli(["check", "--symmetry", "auto" | Args]),
             {0, On} = mce_cli_tests:run_cli(["check", "--symmetry", "on" | Args]),
             {1, _Off} = mce_cli_tests:run_cli(["check", "--symmetry", "off" | Args]),
             ?assertNotEqual(nomatch, string:find(Auto, "first_was_not_leader")),
             ?assertNotEqual(nomatch, string:find(Auto2, "first_was_not_leader")),
             ?assertNotEqual(nomatch, string:find(On, "holds")),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--symmetry", "maybe" | Args]),
             ?assertNotEqual(nomatch, string:find(Bad, "--symmetry maybe: expected auto, on or off"))
     end}.
