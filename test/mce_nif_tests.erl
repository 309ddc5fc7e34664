%% The NIF boundary: every call checks its arguments and answers badarg or
%% an error tuple, never crashes the VM, whatever it is given.
-module(mce_nif_tests).
-include_lib("eunit/include/eunit.hrl").

config() ->
    #{node => mce_pid:node_name(), creation => mce_pid:creation(),
      max_states => 0, max_depth => 0}.

new_checks_config_test() ->
    ?assertError(badarg, mce_nif:new(not_a_map)),
    ?assertError(badarg, mce_nif:new(#{})),
    ?assertError(badarg, mce_nif:new(#{node => "string", creation => 1})),
    ?assertError(badarg, mce_nif:new(#{node => n, creation => -1})),
    ?assertError(badarg, mce_nif:new(#{node => n, creation => 1 bsl 40})),
    ?assertError(badarg, mce_nif:new((config())#{max_states => foo})),
    ?assert(is_reference(mce_nif:new(config()))).

calls_check_the_resource_test() ->
    NotASearch = make_ref(),
    ?assertError(badarg, mce_nif:start(NotASearch, {m, f, []}, 1)),
    ?assertError(badarg, mce_nif:match(NotASearch, true)),
    ?assertError(badarg, mce_nif:ran(NotASearch, {exit, normal}, [], label, false)),
    ?assertError(badarg, mce_nif:fresh_pid(NotASearch, 0)),
    ?assertError(badarg, mce_nif:node_status(NotASearch, 0, 0)),
    ?assertError(badarg, mce_nif:ether(NotASearch)),
    ?assertError(badarg, mce_nif:new(#{nodes => [], creation => 1})),
    ?assertError(badarg, mce_nif:new(#{nodes => [a, "b"], creation => 1})),
    ?assertError(badarg, mce_nif:new(#{nodes => [a], creation => 1, max_kills => -1})),
    ?assertError(badarg, mce_nif:stats(NotASearch)),
    ?assertError(badarg, mce_nif:trace(NotASearch)),
    ?assertError(badarg, mce_nif:top_state(NotASearch)).

protocol_errors_are_tuples_test() ->
    S = mce_nif:new(config()),
    %% Answers before the search started, or to questions not asked.
    ?assertMatch({error, {_, _}, _}, mce_nif:match(S, true)),
    ?assertMatch({error, {_, _}, _}, mce_nif:ran(S, {exit, normal}, [], l, false)),
    ?assertMatch({error, {_, _}, _}, mce_nif:fresh_pid(S, 0)),
    ?assertMatch({run, 1, start, {m, f, []}, [], false}, mce_nif:start(S, {m, f, []}, 1)),
    ?assertMatch({error, {_, _}, _}, mce_nif:start(S, {m, f, []}, 1)),
    ?assertMatch({error, {_, _}, _}, mce_nif:match(S, false)),
    %% maybe is the abstract mode's answer (mce_abs_eval); anything else
    %% is refused.
    ?assertMatch({error, {_, _}, _}, mce_nif:match(S, maybe)),
    ?assertError(badarg, mce_nif:match(S, perhaps)),
    %% Malformed outcomes and effects.
    ?assertError(badarg, mce_nif:ran(S, {wait, maybe, c, []}, [], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {wait, true, c, not_a_list}, [], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{link, -1}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{register, 2, "name"}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{trap_exit, maybe}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit}, [], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, not_a_list, l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{send, -1, m}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{spawn, 2, c, maybe}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [{bogus, 2, c}], l, false)),
    ?assertError(badarg, mce_nif:ran(S, {exit, normal}, [], l, yes)),
    %% The search survived all of that and still answers correctly.
    ?assertEqual(done, mce_nif:ran(S, {exit, normal}, [], l, false)),
    ?assertMatch(#{states := 2, transitions := 1}, mce_nif:stats(S)).

terms_with_ports_are_refused_test() ->
    S = mce_nif:new(config()),
    {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
    Port = hd(erlang:ports()),
    ?assertMatch({error, {_, _}, _},
                 mce_nif:ran(S, {exit, normal}, [{send, 1, Port}], l, false)).

fresh_pids_are_least_unused_test() ->
    S = mce_nif:new(config()),
    {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
    ?assertEqual(2, mce_nif:fresh_pid(S, 0)),
    ?assertEqual(3, mce_nif:fresh_pid(S, 0)).

%% A pid still referenced by a message is not reused, even when its
%% process is gone.
referenced_pids_are_not_reused_test() ->
    S = mce_nif:new(config()),
    {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
    Two = mce_nif:fresh_pid(S, 0),
    Effects = [{spawn, Two, {m, g, []}, false},
               {send, 1, {hello, mce_pid:term(7)}}],
    %% Expanding the successor: pid 1 has mail, so first a match question.
    ?assertMatch({match, {recv, []}, {hello, _}},
                 mce_nif:ran(S, {wait, false, {recv, []}, []}, Effects, l, false)),
    Req = mce_nif:match(S, true),
    ?assertMatch({run, 1, {'receive', {hello, _}}, _, [], false}, Req),
    ?assertEqual(3, mce_nif:fresh_pid(S, 0)),
    ?assertEqual(4, mce_nif:fresh_pid(S, 0)),
    ?assertEqual(5, mce_nif:fresh_pid(S, 0)),
    ?assertEqual(6, mce_nif:fresh_pid(S, 0)),
    ?assertEqual(8, mce_nif:fresh_pid(S, 0)).

garbage_collected_search_is_freed_test() ->
    %% Many searches dropped mid-way: the destructor frees them (ASan and
    %% valgrind runs of this suite check that nothing leaks or crashes).
    [begin
         S = mce_nif:new(config()),
         {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, lists:seq(1, 100)}, 1),
         ok
     end || _ <- lists:seq(1, 200)],
    erlang:garbage_collect(),
    ok.

%% Expand-only searches (LTL) and the stepwise Büchi search: out-of-turn
%% calls and bad ids are errors, never crashes.
%% The LTL search's reads: continuations by part id, labels undecoded.
ltl_letter_calls_are_checked_test() ->
    ?assertError(badarg, mce_nif:top_conts(make_ref())),
    ?assertError(badarg, mce_nif:part_term(make_ref(), 1)),
    ?assertError(badarg, mce_nif:label_binaries(make_ref())),
    S = mce_nif:new((config())#{expand_only => 1}),
    ?assertEqual([], mce_nif:top_conts(S)),
    ?assertError(badarg, mce_nif:part_term(S, -1)),
    ?assertMatch({error, {_, _}, _}, mce_nif:part_term(S, 1 bsl 31)),
    ok = mce_nif:label_binaries(S),
    {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
    {expanded, Root, [{_Succ, 1, Label, false}], false} =
        mce_nif:ran(S, {exit, normal}, [], #{pid => 1}, false),
    ?assert(is_map(binary_to_term(Label))),
    ok = mce_nif:focus(S, Root),
    [C] = mce_nif:top_conts(S),
    [{1, init, Cont, [], [], undefined}] = mce_nif:top_state(S),
    ?assertEqual(Cont, mce_nif:part_term(S, C)).

expand_and_buchi_calls_are_checked_test() ->
    Plain = mce_nif:new(config()),
    ?assertMatch({error, {_, _}, _}, mce_nif:expand(Plain, 1)),
    ?assertError(badarg, mce_nif:focus(Plain, 1)),
    ?assertError(badarg, mce_nif:expand(make_ref(), 1)),
    ?assertError(badarg, mce_nif:expand(Plain, -1)),
    S = mce_nif:new((config())#{expand_only => 1}),
    ?assertError(badarg, mce_nif:new((config())#{expand_only => 3})),
    {run, 1, start, _, [], false} = mce_nif:start(S, {m, f, []}, 1),
    %% a run is outstanding: no expansion or focus now
    ?assertMatch({error, {_, _}, _}, mce_nif:expand(S, 1)),
    ?assertError(badarg, mce_nif:focus(S, 1)),
    {expanded, Root, [{Succ, 1, _Label, false}], false} =
        mce_nif:ran(S, {exit, normal}, [], #{pid => 1}, false),
    ok = mce_nif:focus(S, Succ),
    ?assertEqual([], mce_nif:top_state(S)),
    ok = mce_nif:focus(S, Root),
    ?assertMatch([{1, init, _, [], [], undefined}], mce_nif:top_state(S)),
    %% every process ended: nothing moves, not a deadlock
    ?assertMatch({expanded, Succ, [], false}, mce_nif:expand(S, Succ)),
    %% ids of parts that are not states, and unknown ids
    ?assertMatch({error, {_, _}, _}, mce_nif:expand(S, 1 bsl 31)),
    ?assertMatch({error, {_, _}, _}, mce_nif:expand(S, 1)),
    ?assertError(badarg, mce_nif:buchi_new(#{algorithm => dfs})),
    ?assertError(badarg, mce_nif:buchi_new(#{algorithm => scc, fairness => strong})),
    ?assertMatch({error, _}, mce_nif:buchi_new(#{algorithm => ndfs, fairness => weak})),
    B = mce_nif:buchi_new(#{algorithm => scc, fairness => weak}),
    ?assertMatch({error, _}, mce_nif:buchi_answer(B, true, [], [])),
    ?assertEqual({need, 7}, mce_nif:buchi_start(B, 7)),
    ?assertError(badarg, mce_nif:buchi_answer(B, maybe, [], [])),
    ?assertError(badarg, mce_nif:buchi_answer(B, true, [-1], [])),
    ?assertError(badarg, mce_nif:buchi_answer(B, true, [], [{7}])),
    ?assertError(badarg, mce_nif:buchi_start(make_ref(), 1)),
    %% a self-loop of agent 0, which is enabled: accepting and fair
    %% (the lasso is built by asking for the cycle's states again)
    ?assertEqual(found, answer_until_done(B, mce_nif:buchi_answer(B, true, [0], [{7, 0}]))),
    ?assertEqual({[], [{7, 0}]}, mce_nif:buchi_lasso(B)),
    ?assertMatch(#{states := 1}, mce_nif:buchi_stats(B)).

answer_until_done(B, {need, 7}) -> answer_until_done(B, mce_nif:buchi_answer(B, true, [0], [{7, 0}]));
answer_until_done(_B, Other) -> Other.
