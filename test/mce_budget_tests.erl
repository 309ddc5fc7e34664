%% Limits on the work of properties (issues 14 and 15): the initial state
%% is judged, user callbacks run under a budget and are interrupted by
%% max_time and stop/1, and the LTL search and translation honour the
%% check's limits.
-module(mce_budget_tests).
-include_lib("eunit/include/eunit.hrl").

loop_forever(X) -> loop_forever(X + 1).

ms_since(T0) -> erlang:monotonic_time(millisecond) - T0.

%%--------------------------------------------------------------------
%% The initial state
%%--------------------------------------------------------------------

%% An invariant false before any step (one process only, where the program
%% wants two): a violation with an empty trace, which replays.
invariant_false_initially_test() ->
    Two = fun(#{processes := Ps}) -> length(Ps) >= 2 end,
    {error, Cex} = mcerlang:check({tprog_props, counter_race, []}, #{invariant => Two}),
    ?assertMatch(#{violation := {invariant, _}, trace := [], final_state := [#{status := init}]},
                 Cex),
    ?assertMatch({ok, #{violation := {invariant, _}, trace := []}}, mcerlang:replay(Cex)).

%% A monitor sees the initial state with step none: the entry's process,
%% not started yet.
monitor_sees_initial_state_test() ->
    {error, Cex} = mcerlang:check({tprog_props, counter_race, []},
                                  #{monitor => {tprog_budget, initial}}),
    ?assertMatch(#{violation := {monitor, tprog_budget, {initial, [{init, _}]}}, trace := []},
                 Cex),
    ?assertMatch({ok, #{trace := []}}, mcerlang:replay(Cex)).

%%--------------------------------------------------------------------
%% User callbacks under a budget
%%--------------------------------------------------------------------

looping_invariant_test() ->
    Loop = fun(_) -> loop_forever(0) end,
    ?assertError({mcerlang, {property_timeout, {invariant, Loop}}},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{invariant => Loop, max_reductions => 2000000})).

blocking_monitor_test() ->
    ?assertError({mcerlang, {property_timeout, {monitor, tprog_budget}}},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{monitor => {tprog_budget, block}})).

looping_predicate_test() ->
    Preds = #{spin => fun(_) -> loop_forever(0) end},
    ?assertError({mcerlang, {property_timeout, {predicate, spin}}},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{ltl => "[] !spin", predicates => Preds,
                                  max_reductions => 2000000})).

%% max_time ends a callback that runs long (within its budget).
max_time_interrupts_callback_test() ->
    T0 = erlang:monotonic_time(millisecond),
    ?assertMatch({inconclusive, max_time, _},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{invariant => fun(_) -> loop_forever(0) end,
                                  max_reductions => 1 bsl 50, max_time => 500})),
    ?assert(ms_since(T0) < 3000).

%% stop/1 ends a callback that runs long.
stop_interrupts_callback_test() ->
    ?assertMatch({inconclusive, stopped, _},
                 stopped_after(300, {tprog_props, counter_race, []},
                               #{invariant => fun(_) -> loop_forever(0) end,
                                 max_reductions => 1 bsl 50})).

stopped_after(Ms, Entry, Opts) ->
    Self = self(),
    Checker = spawn(fun() -> Self ! {self(), mcerlang:check(Entry, Opts)} end),
    timer:sleep(Ms),
    T0 = erlang:monotonic_time(millisecond),
    mcerlang:stop(Checker),
    receive
        {Checker, Result} ->
            ?assert(ms_since(T0) < 2000),
            Result
    after 10000 ->
            exit(Checker, kill),
            error(not_stopped)
    end.

%%--------------------------------------------------------------------
%% The LTL search and translation under the check's limits
%%--------------------------------------------------------------------

big() -> {tprog_budget, many, [6, 12]}.

ltl_forall_max_time_test() ->
    T0 = erlang:monotonic_time(millisecond),
    ?assertMatch({inconclusive, max_time, _},
                 mcerlang:check(big(), #{ltl => "forall P: [] !a(P)",
                                         predicates => #{a => fun(_) -> {prop, a} end},
                                         max_time => 1000, progress => false})),
    ?assert(ms_since(T0) < 4000).

ltl_forall_stop_test() ->
    ?assertMatch({inconclusive, stopped, _},
                 stopped_after(500, big(), #{ltl => "forall P: [] !a(P)",
                                             predicates => #{a => fun(_) -> {prop, a} end}})).

ltl_forall_memory_test() ->
    ?assertMatch({inconclusive, {memory, _}, _},
                 mcerlang:check(big(), #{ltl => "forall P: [] !a(P)",
                                         predicates => #{a => fun(_) -> {prop, a} end},
                                         memory => 4000000, max_time => 20000})).

nested_until(N) ->
    lists:flatten(["p1" | [[" U (p", integer_to_list(I)] || I <- lists:seq(2, N)]]
                  ++ [")" || _ <- lists:seq(2, N)]).

%% 11 nested U: a tableau of 4095 nodes (its translation ran past 300 s).
ltl_translation_bounded_test() ->
    Preds = maps:from_list([{list_to_atom("p" ++ integer_to_list(I)), {prop, x}}
                            || I <- lists:seq(1, 11)]),
    T0 = erlang:monotonic_time(millisecond),
    Result = try mcerlang:check({tprog_props, counter_race, []},
                                #{ltl => nested_until(11), predicates => Preds, max_time => 3000})
             catch error:{mcerlang, {ltl_too_large, _, _}} = E -> E
             end,
    ?assert(ms_since(T0) < 5000),
    ?assert(case Result of
                {inconclusive, max_time, _} -> true;
                {mcerlang, {ltl_too_large, _, _}} -> true;
                _ -> false
            end).

%% Simulation judges the same properties: max_time ends a long callback.
simulate_max_time_interrupts_callback_test() ->
    T0 = erlang:monotonic_time(millisecond),
    ?assertMatch({inconclusive, max_time, _},
                 mcerlang:simulate({tprog_props, counter_race, []},
                                   #{invariant => fun(_) -> loop_forever(0) end,
                                     max_reductions => 1 bsl 50, max_time => 500})),
    ?assert(ms_since(T0) < 3000).

%% The tableau bound alone, without a time limit, gives a clear error.
ltl_too_large_test() ->
    Preds = maps:from_list([{list_to_atom("p" ++ integer_to_list(I)), {prop, x}}
                            || I <- lists:seq(1, 11)]),
    Formula = nested_until(11),
    ?assertError({mcerlang, {ltl_too_large, Formula, {max_tableau_steps, _}}},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{ltl => Formula, predicates => Preds})).

%% The debugger judges the initial state too: over a counterexample of the
%% initial state it says so at once.
debugger_initial_violation_test() ->
    Two = fun(#{processes := Ps}) -> length(Ps) >= 2 end,
    {error, Cex} = mcerlang:check({tprog_props, counter_race, []}, #{invariant => Two}),
    Output = scripted_debug(Cex),
    ?assertNotEqual(nomatch, string:find(Output, "does not hold"), Output).

scripted_debug(Cex) ->
    Self = self(),
    Io = spawn_link(fun() -> io_eof() end),
    spawn_link(fun() ->
                       group_leader(Io, self()),
                       mcerlang:debug(Cex),
                       Io ! {dump, Self}
               end),
    receive {output, Io, Text} -> lists:flatten(Text)
    after 20000 -> erlang:error(debug_timeout)
    end.

%% A group leader whose input is at its end, keeping what is written.
io_eof() -> io_eof([]).
io_eof(Acc) ->
    receive
        {io_request, From, Ref, {put_chars, unicode, Chars}} ->
            From ! {io_reply, Ref, ok},
            io_eof([Acc, Chars]);
        {io_request, From, Ref, {put_chars, unicode, M, F, A}} ->
            From ! {io_reply, Ref, ok},
            io_eof([Acc, apply(M, F, A)]);
        {io_request, From, Ref, _} ->
            From ! {io_reply, Ref, eof},
            io_eof(Acc);
        {dump, To} ->
            To ! {output, self(), unicode:characters_to_list(Acc)}
    end.

%% A translation within the bound but longer than max_time (seven nested
%% untils: 45,000 tableau steps, over 100 ms) is interrupted by it.
ltl_translation_max_time_test() ->
    Preds = maps:from_list([{list_to_atom("p" ++ integer_to_list(I)), {prop, x}}
                            || I <- lists:seq(1, 8)]),
    ?assertMatch({inconclusive, max_time, _},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{ltl => nested_until(8), predicates => Preds, max_time => 20})).
