%% @doc Dead payloads (mce_payload, c_src/dead_payload.c): the analysis,
%% the states it merges, and counterexamples through rewritten messages.
%% That verdicts are the same with and without (reductions on and off) is
%% mce_reduction_tests' business; tprog_dead's programs are among its.
-module(mce_payload_tests).

-include_lib("eunit/include/eunit.hrl").

-define(OPTS, #{timeouts => when_idle, symmetry => true, max_time => 120000}).

%% gen:do_call's receive, reached through gen_server:call/2, whose reply
%% is dropped by the caller's comprehension and used by the entry.
analysis_test() ->
    {ok, _} = mcerlang:translate(counter_server),
    Recv = {'mce$gen', '$mce_r12', [ref], infinity},
    Call = [{'$mce_handler', 'mce$gen_server', '$mce_c3', []},
            {'mce$gen_server', '$mce_k1', [req, srv]}],
    Dropped = Call ++ [{'mce$counter_server', '$mce_k14', [a, b, c, d]},
                       {'mce$counter_server', '$mce_k15', [self]}],
    Used = Call ++ [{'mce$counter_server', '$mce_k12', [s, t]}],
    %% {Mref, Reply} and {'DOWN', Mref, _, _, Reason} (Reason is exited with).
    ?assertEqual([['Reply'], []], mce_payload:dead_clauses(Recv, Dropped)),
    ?assertEqual([[], []], mce_payload:dead_clauses(Recv, Used)),
    ?assert(is_binary(mce_payload:descriptor(Recv, Dropped))),
    ?assertEqual(none, mce_payload:descriptor(Recv, Used)),
    %% Frames the analysis does not know: nothing is dead.
    ?assertEqual(none, mce_payload:descriptor(Recv, [{'mce$gen_server', '$mce_nope', []}])),
    ?assertEqual(none, mce_payload:descriptor(not_a_receive, [])).

%% Which client holds which counter value no longer splits states: the
%% growth in clients is that of the program with `ok' replies.
%% The states are counted as they were measured (round 8): every cut state
%% kept (`cut_states => store').
counter_series_test_() ->
    {timeout, 300,
     fun() ->
             Counts = [begin
                           {ok, On} = mcerlang:check({counter_server, start, [N, 2]},
                                                     ?OPTS#{cut_states => store}),
                           {ok, Off} = mcerlang:check({counter_server, start, [N, 2]},
                                                      ?OPTS#{reduction => false}),
                           ?assert(maps:get(dead_payloads, On) > 0),
                           ?assertEqual(0, maps:get(dead_payloads, Off)),
                           {maps:get(states, On), maps:get(states, Off)}
                       end || N <- [2, 3, 4]],
             ?assertEqual([{30, 50}, {58, 254}, {103, 1443}], Counts)
     end}.

%% `dead_payloads => false': the messages as they are, and the counts of
%% before (the reductions otherwise on).
option_test_() ->
    {timeout, 120,
     fun() ->
             {ok, Off} = mcerlang:check({counter_server, start, [3, 2]},
                                        ?OPTS#{dead_payloads => false, cut_states => store}),
             ?assertMatch(#{states := 185, dead_payloads := 0, reduction := on}, Off),
             ?assertError({mcerlang, {bad_option_value, dead_payloads, yes, _}},
                          mcerlang:check({counter_server, start, [3, 2]},
                                         #{dead_payloads => yes}))
     end}.

%% Replies that are used are never rewritten.
used_replies_test_() ->
    {timeout, 120,
     fun() ->
             {ok, Stats} = mcerlang:check({tprog_dead, used, [2, 2]}, ?OPTS),
             ?assertEqual(0, maps:get(dead_payloads, Stats))
     end}.

%% A message the receive does not take keeps its payload, which a later
%% receive looks at; the one it takes loses the dropped part.
selective_test() ->
    {ok, Stats} = mcerlang:check({tprog_dead, selective, [1]}, #{}),
    ?assertEqual(1, maps:get(dead_payloads, Stats)).

%% The counterexample of a search that rewrote messages shows the real
%% run's messages, and replays.
counterexample_test_() ->
    {timeout, 120,
     fun() ->
             {error, Cex} = mcerlang:check({tprog_dead, lost_total, [2, 2]},
                                           ?OPTS#{symmetry => false}),
             ?assertMatch({abnormal_exit, _, {{badmatch, 4}, _}}, maps:get(violation, Cex)),
             ?assertNot(mce_session:has_dead(maps:with([trace, final_state, ether], Cex))),
             ?assert(lists:any(fun(#{action := {'receive', {_, V}}}) -> is_integer(V);
                                  (_) -> false
                               end, maps:get(trace, Cex))),
             ?assertMatch({ok, _}, mcerlang:replay(Cex))
     end}.
