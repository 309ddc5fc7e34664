%% @doc The Büchi emptiness checks in C (c_src/buchi.c, through
%% mce_nif:buchi_check/2) against a brute-force checker written here,
%% independently, from the definitions:
%%
%% * an accepting cycle exists iff some accepting state reachable from the
%%   initial state reaches itself in one or more steps;
%% * a weakly fair one exists iff some reachable SCC with a cycle holds an
%%   accepting state and every agent enabled in all of its states labels a
%%   transition between two of its states.
%%
%% SCCs are found by mutual reachability (no Tarjan here).  Every lasso the
%% C side returns is checked: real transitions from the initial state, an
%% accepting cycle, and under weak fairness a fair one.
-module(mce_buchi_tests).

-include_lib("eunit/include/eunit.hrl").

-define(MODES, [{ndfs, none}, {scc, none}, {scc, weak}]).

%% ------------------------------------------------------------------
%% Oracle

%% States reachable from S in one or more steps.
reach(States, S) ->
    reach(States, [T || {T, _} <- succs(States, S)], #{}).

reach(_States, [], Seen) ->
    Seen;
reach(States, [T | Rest], Seen) when is_map_key(T, Seen) ->
    reach(States, Rest, Seen);
reach(States, [T | Rest], Seen) ->
    reach(States, [U || {U, _} <- succs(States, T)] ++ Rest, Seen#{T => true}).

succs(States, S) ->
    {_, _, Succs} = maps:get(S, States),
    Succs.

oracle(#{init := Init, states := States}, Fairness) ->
    Reach = maps:from_list([{S, reach(States, S)} || S <- maps:keys(States)]),
    Reachable = [Init | maps:keys(maps:get(Init, Reach))],
    OnCycle = [S || S <- lists:usort(Reachable), is_map_key(S, maps:get(S, Reach))],
    case Fairness of
        none ->
            lists:any(fun(S) -> element(1, maps:get(S, States)) end, OnCycle);
        weak ->
            lists:any(fun(S) -> fair_scc(States, Reach, S) end, OnCycle)
    end.

fair_scc(States, Reach, S) ->
    Scc = [S | [T || T <- maps:keys(maps:get(S, Reach)), T =/= S,
                     is_map_key(S, maps:get(T, Reach))]],
    Accepting = lists:any(fun(T) -> element(1, maps:get(T, States)) end, Scc),
    Always = lists:foldl(fun(T, Acc) ->
                                 {_, En, _} = maps:get(T, States),
                                 [A || A <- Acc, lists:member(A, En)]
                         end, element(2, maps:get(S, States)), Scc),
    Moves = [A || T <- Scc, {U, A} <- succs(States, T), lists:member(U, Scc)],
    Accepting andalso lists:all(fun(A) -> lists:member(A, Moves) end, Always).

%% ------------------------------------------------------------------
%% Lasso validation

%% true, or the reason the lasso is not a valid (fair) accepting lasso.
valid_lasso(#{init := Init, states := States}, Stem, Cycle, Fairness) ->
    Steps = Stem ++ Cycle,
    case Cycle of
        [] -> empty_cycle;
        [{Head, _} | _] ->
            case walk(States, Init, Steps) of
                {ok, Head} ->
                    Keys = [K || {K, _} <- Cycle],
                    Accepting = lists:any(fun(K) -> element(1, maps:get(K, States)) end, Keys),
                    Taken = [element(2, lists:nth(I + 1, succs(States, K))) || {K, I} <- Cycle],
                    Always = lists:foldl(fun(K, Acc) ->
                                                 {_, En, _} = maps:get(K, States),
                                                 [A || A <- Acc, lists:member(A, En)]
                                         end, element(2, maps:get(Head, States)), Keys),
                    Unfair = [A || A <- Always, not lists:member(A, Taken)],
                    if not Accepting -> not_accepting;
                       Fairness =:= weak, Unfair =/= [] -> {unfair, Unfair};
                       true -> true
                    end;
                Other ->
                    Other
            end
    end.

%% Follows the steps from Expect; {ok, Key} reached after the last one.
walk(_States, Expect, []) ->
    {ok, Expect};
walk(States, Expect, [{Expect, I} | Rest]) ->
    case maps:find(Expect, States) of
        {ok, {_, _, Succs}} when is_integer(I), I >= 0, I < length(Succs) ->
            {Next, _} = lists:nth(I + 1, Succs),
            walk(States, Next, Rest);
        _ -> {bad_edge, Expect, I}
    end;
walk(_States, Expect, [Step | _]) ->
    {not_a_path, Expect, Step}.

%% Runs every mode on G and checks them against the oracle.  Returns
%% [{Mode, found | empty}].
check_all(G) ->
    Expect = #{none => oracle(G, none), weak => oracle(G, weak)},
    [begin
         R = mce_nif:buchi_check(G, #{algorithm => Alg, fairness => Fair}),
         case {R, maps:get(Fair, Expect)} of
             {empty, false} -> {{Alg, Fair}, empty};
             {{lasso, Stem, Cycle}, true} ->
                 ?assertEqual({G, Alg, Fair, true},
                              {G, Alg, Fair, valid_lasso(G, Stem, Cycle, Fair)}),
                 {{Alg, Fair}, found};
             _ -> ?assertEqual({G, Alg, Fair, maps:get(Fair, Expect)}, {G, Alg, Fair, R})
         end
     end || {Alg, Fair} <- ?MODES].

%% ------------------------------------------------------------------
%% Hand-made graphs

graph(Init, States) ->
    #{init => Init, states => maps:from_list(States)}.

simple_cycle_test() ->
    G = graph(0, [{0, {false, [], [{1, 0}]}},
                  {1, {true, [], [{2, 0}]}},
                  {2, {false, [], [{0, 0}]}}]),
    ?assertEqual([found, found, found], [R || {_, R} <- check_all(G)]).

no_accepting_cycle_test() ->
    %% a non-accepting cycle, an accepting state off it, and an accepting
    %% state with no self-loop
    G = graph(0, [{0, {true, [], [{1, none}]}},
                  {1, {false, [], [{2, none}, {3, none}]}},
                  {2, {false, [], [{1, none}]}},
                  {3, {true, [], []}}]),
    ?assertEqual([empty, empty, empty], [R || {_, R} <- check_all(G)]).

self_loop_test() ->
    G = graph(10, [{10, {false, [], [{20, none}]}},
                   {20, {true, [], [{20, none}]}}]),
    ?assertEqual({lasso, [{10, 0}], [{20, 0}]},
                 mce_nif:buchi_check(G, #{algorithm => ndfs})),
    ?assertEqual({lasso, [{10, 0}], [{20, 0}]},
                 mce_nif:buchi_check(G, #{algorithm => scc, fairness => weak})).

unfair_test() ->
    %% b (1) is enabled in 0 and 1 and only ever leaves the cycle
    G = graph(0, [{0, {true, [0, 1], [{1, 0}, {2, 1}]}},
                  {1, {false, [1, 0], [{0, 0}, {2, 1}]}},
                  {2, {false, [], [{2, none}]}}]),
    ?assertEqual([found, found, empty], [R || {_, R} <- check_all(G)]),
    %% disabled in 1: fair
    G2 = graph(0, [{0, {true, [0, 1], [{1, 0}, {2, 1}]}},
                   {1, {false, [0], [{0, 0}]}},
                   {2, {false, [], [{2, none}]}}]),
    ?assertEqual([found, found, found], [R || {_, R} <- check_all(G2)]).

nested_scc_test() ->
    %% the inner cycle 0 <-> 1 is unfair to b (1); the whole SCC, through
    %% 1 -b-> 2 -c-> 0, is fair
    G = graph(0, [{0, {true, [0, 1], [{1, 0}]}},
                  {1, {false, [0, 1], [{0, 0}, {2, 1}]}},
                  {2, {false, [0, 1, 2], [{0, 2}]}}]),
    ?assertEqual([found, found, found], [R || {_, R} <- check_all(G)]),
    {lasso, _, Cycle} = mce_nif:buchi_check(G, #{algorithm => scc, fairness => weak}),
    ?assert(lists:member({1, 1}, Cycle)).

limits_and_errors_test() ->
    Chain = graph(0, [{I, {false, [], [{I + 1, none}]}} || I <- lists:seq(0, 9)]
                  ++ [{10, {true, [], [{10, none}]}}]),
    ?assertEqual(incomplete, mce_nif:buchi_check(Chain, #{algorithm => scc, max_states => 5})),
    ?assertEqual(incomplete, mce_nif:buchi_check(Chain, #{algorithm => ndfs, max_states => 5})),
    ?assertMatch({lasso, _, _}, mce_nif:buchi_check(Chain, #{algorithm => ndfs, max_states => 11})),
    %% max_depth: state 10 stands 11 frames deep
    [?assertEqual(empty, mce_nif:buchi_check(Chain, #{algorithm => A, max_depth => 10}))
     || A <- [scc, ndfs]],
    [?assertMatch({lasso, _, _}, mce_nif:buchi_check(Chain, #{algorithm => A, max_depth => 11}))
     || A <- [scc, ndfs]],
    %% a target missing from the graph
    Dangling = graph(0, [{0, {false, [], [{7, none}]}}]),
    ?assertEqual({error, {unknown_state, 7}},
                 mce_nif:buchi_check(Dangling, #{algorithm => scc})),
    ?assertMatch({error, [_ | _]},
                 mce_nif:buchi_check(Chain, #{algorithm => ndfs, fairness => weak})),
    %% large keys and agents
    Big = 1 bsl 64 - 1,
    BigG = graph(Big, [{Big, {true, [16#fffffffe], [{Big, 16#fffffffe}]}}]),
    ?assertEqual({lasso, [], [{Big, 0}]},
                 mce_nif:buchi_check(BigG, #{algorithm => scc, fairness => weak})).

badarg_test() ->
    G = graph(0, [{0, {true, [], [{0, none}]}}]),
    Opts = #{algorithm => scc},
    Bad = fun(Graph, O) -> ?assertError(badarg, mce_nif:buchi_check(Graph, O)) end,
    Bad(not_a_map, Opts),
    Bad(G, not_a_map),
    Bad(G, #{}),
    Bad(G, #{algorithm => dfs}),
    Bad(G, #{algorithm => scc, fairness => strong}),
    Bad(G, #{algorithm => scc, max_states => -1}),
    Bad(G, #{algorithm => scc, max_depth => -1}),
    Bad(#{states => #{}}, Opts),
    Bad(#{init => -1, states => #{}}, Opts),
    Bad(#{init => 0, states => []}, Opts),
    Bad(#{init => 1 bsl 64, states => #{}}, Opts),
    Bad(graph(0, [{0, not_a_tuple}]), Opts),
    Bad(graph(0, [{0, {maybe, [], []}}]), Opts),
    Bad(graph(0, [{0, {true, [none], []}}]), Opts),
    Bad(graph(0, [{0, {true, [16#ffffffff], []}}]), Opts),
    Bad(graph(0, [{0, {true, [0 | 1], []}}]), Opts),
    Bad(graph(0, [{0, {true, [], [{0, -1}]}}]), Opts),
    Bad(graph(0, [{0, {true, [], [{0}]}}]), Opts),
    Bad(graph(0, [{0, {true, [], [{x, none}]}}]), Opts),
    Bad(graph(0, [{0, {true, [], not_a_list}}]), Opts),
    %% unsorted, duplicated enabled lists are fine; both agents must move
    ?assertEqual({lasso, [], [{0, 0}, {0, 1}]},
                 mce_nif:buchi_check(graph(0, [{0, {true, [3, 1, 3], [{0, 1}, {0, 3}]}}]),
                                     #{algorithm => scc, fairness => weak})).

%% ------------------------------------------------------------------
%% Random graphs

random_graph() ->
    N = rand:uniform(12),
    NAgents = rand:uniform(4),
    Keys = case rand:uniform(2) of
               1 -> lists:seq(0, N - 1);
               2 -> lists:usort([rand:uniform(1 bsl 64) - 1 || _ <- lists:seq(1, N)])
           end,
    KeyT = list_to_tuple(Keys),
    Pick = fun() -> element(rand:uniform(tuple_size(KeyT)), KeyT) end,
    States = [{K, random_state(NAgents, Pick)} || K <- Keys],
    #{init => Pick(), states => maps:from_list(States)}.

random_state(NAgents, Pick) ->
    Accepting = rand:uniform(4) =:= 1,
    Enabled = [A || A <- lists:seq(0, NAgents - 1), rand:uniform(3) =/= 1],
    Succs = [{Pick(), random_agent(Enabled, NAgents)} || _ <- lists:seq(1, rand:uniform(4) - 1)],
    {Accepting, Enabled, Succs}.

random_agent(Enabled, NAgents) ->
    R = rand:uniform(10),
    if R =< 7, Enabled =/= [] -> lists:nth(rand:uniform(length(Enabled)), Enabled);
       R =< 9 -> rand:uniform(NAgents) - 1;
       true -> none
    end.

random_graphs_test_() ->
    {timeout, 60,
     fun() ->
             rand:seed(exsss, {20261122, 6, 5}),
             Results = [check_all(random_graph()) || _ <- lists:seq(1, 5000)],
             Count = fun(Mode) -> length([x || Rs <- Results, {M, found} <- Rs, M =:= Mode]) end,
             Found = [{Mode, Count(Mode)} || Mode <- ?MODES],
             ?debugFmt("5000 random graphs; lassos found: ~p", [Found]),
             %% the sample must exercise both outcomes and fairness
             [{_, Ndfs}, {_, Scc}, {_, Weak}] = Found,
             ?assertEqual(Ndfs, Scc),
             ?assert(Weak > 500 andalso Scc - Weak > 200 andalso Scc < 4000)
     end}.
