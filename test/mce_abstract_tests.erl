%% @doc The abstract mode (`abstraction => Spec', issue 21): proofs for
%% programs with unbounded data, three-valued verdicts, and the seed
%% papers' acceptance cases AC-22..AC-26 (ACCEPTANCE.md section 4.3-4.4;
%% AC-24, the decision procedure, is mce_abs_domain_tests).  Every
%% expected verdict was established on the real values first: the
%% concrete check of the same program is run beside the abstract one.
-module(mce_abstract_tests).
-include_lib("eunit/include/eunit.hrl").

-behaviour(mcerlang_monitor).
-export([init/1, state_change/3]).

-define(Q(Opts), maps:merge(#{progress => false, max_states => 300000,
                              memory => 1000000000}, Opts)).

verdict({ok, _}) -> ok;
verdict({error, _}) -> error;
verdict({inconclusive, {possibly_spurious, _}, _}) -> possibly_spurious;
verdict({inconclusive, _, _}) -> inconclusive.

check(Entry, Opts) ->
    mcerlang:check(Entry, ?Q(Opts)).

%%--------------------------------------------------------------------
%% The unbounded counter (issue 21, "Done when")
%%--------------------------------------------------------------------

counter_test_() ->
    Entry = {abs_counter, start, []},
    MailboxAtMostOne = fun(#{processes := Ps}) ->
                               lists:all(fun(#{mailbox := M}) -> length(M) =< 1 end, Ps)
                       end,
    %% `[] !negative': a state where the server stands at no prop refutes
    %% every prop, so only its count can make the formula fail.
    Nonneg = #{ltl => "[] !negative",
               predicates => #{negative => {prop, {count, mcerlang:abstract(neg)}}}},
    [{"concretely the counter never ends: a limit is all a check reaches",
      ?_assertMatch({inconclusive, max_states, _}, check(Entry, #{max_states => 3000}))},
     {"even_odd and sign prove the server never crashes nor deadlocks (in milliseconds: make bench-abstraction)",
      [?_test(begin
                  {ok, St} = check(Entry, #{abstraction => A}),
                  ?assert(maps:get(states, St) < 100),
                  ?assertEqual(A, maps:get(abstraction, St)),
                  ?assertEqual({off, abstraction}, maps:get(reduction, St)),
                  ?assertEqual({off, abstraction}, maps:get(symmetry, St))
              end) || A <- [even_odd, sign, [sign, {depth, 2}]]]},
     {"an invariant that holds on every concretisation is proved",
      ?_assertMatch({ok, _}, check(Entry, #{abstraction => sign, invariant => MailboxAtMostOne}))},
     {"the count is never negative: proved under sign",
      ?_assertMatch({ok, _}, check(Entry, Nonneg#{abstraction => sign}))},
     {"... and only possibly violated under even_odd (which forgets signs), not a false error",
      {timeout, 60,
       ?_assertEqual(possibly_spurious,
                     verdict(check(Entry, Nonneg#{abstraction => even_odd, max_states => 20000})))}},
     {"the same formula holds concretely as far as a bounded check goes",
      ?_assertMatch({inconclusive, max_states, _}, check(Entry, Nonneg#{max_states => 2000}))}].

buggy_counter_test_() ->
    {timeout, 60,
     fun() ->
             {error, Cex} = check({abs_counter, start_buggy, []}, #{abstraction => even_odd}),
             %% A real counterexample: it replays on the real values.
             ?assertMatch({abnormal_exit, _, {{overflow, _}, _}}, maps:get(violation, Cex)),
             ?assertMatch({ok, _}, mcerlang:replay(Cex)),
             Abstract = maps:get(abstract_counterexample, Cex),
             ?assertMatch({abnormal_exit, _, {{overflow, _}, _}}, maps:get(violation, Abstract)),
             ?assertMatch(#{abstraction := even_odd}, maps:get(options, Abstract))
     end}.

%%--------------------------------------------------------------------
%% AC-23: prop/div (paper 003 section 6)
%%--------------------------------------------------------------------

prop_div_test_() ->
    Preds = #{even => {prop, mcerlang:abstract(even)}, p42 => {prop, 42}},
    Run = fun(F, Formula, Abs) ->
                  verdict(check({abs_props, F, []},
                                #{ltl => Formula, predicates => Preds, abstraction => Abs}))
          end,
    Concrete = [{p42, "<> p42", ok}, {p84, "<> p42", ok}, {p21, "<> p42", error},
                {p42, "<> even", ok}, {p84, "<> even", ok}, {p21, "<> even", error},
                {p42, "[] !even", error}, {p84, "[] !even", error}, {p21, "[] !even", ok}],
    Abstract = [{p42, "<> even", ok},
                %% 84 div 2 is even div even: any integer.  Not proved;
                %% concretely it holds, so the abstract counterexample is
                %% possibly spurious.
                {p84, "<> even", possibly_spurious},
                {p21, "<> even", error},
                %% The key soundness case: never proved for 84 div 2.
                {p84, "[] !even", error},
                {p42, "[] !even", error},
                {p21, "[] !even", possibly_spurious}],
    [{lists:flatten(io_lib:format("concrete ~s: ~s", [F, Formula])),
      ?_assertEqual(Expected, Run(F, Formula, none))} || {F, Formula, Expected} <- Concrete] ++
        [{lists:flatten(io_lib:format("even_odd ~s: ~s", [F, Formula])),
          ?_assertEqual(Expected, Run(F, Formula, even_odd))} || {F, Formula, Expected} <- Abstract].

%%--------------------------------------------------------------------
%% AC-22 (and AC-17, AC-18): Huch's database
%%--------------------------------------------------------------------

database_opts() ->
    #{ltl => "forall P, Q: P != Q -> [] (alloc(P) -> (!value(Q) U (value(P) || allocated)))",
      predicates => #{alloc => fun(P) -> {prop, {allocate, P}} end,
                      value => fun(P) -> {prop, {value, P}} end,
                      allocated => {prop, allocated}},
      max_states => 5000000}.

database_test_() ->
    Opts = database_opts(),
    [{"AC-22: mutual exclusion holds concretely",
      {timeout, 120, ?_assertMatch({ok, _}, check({abs_database, start, []}, Opts))}},
     {"AC-22: and is proved under the depth-2 abstraction",
      {timeout, 120, ?_assertMatch({ok, _}, check({abs_database, start, []},
                                                  Opts#{abstraction => [{depth, 2}]}))}},
     {"AC-18: the mutant violates it, under the abstraction too (a real counterexample)",
      {timeout, 120,
       fun() ->
               ?assertMatch({error, _}, check({abs_database, start_mutant, []}, Opts)),
               {error, Cex} = check({abs_database, start_mutant, []},
                                    Opts#{abstraction => [{depth, 2}]}),
               ?assertMatch({ok, _}, mcerlang:replay(Cex))
       end}}].

%%--------------------------------------------------------------------
%% AC-25: the producer/consumer with the chain summary (paper 001)
%%--------------------------------------------------------------------

queue_test_() ->
    Entry = {abs_queue, start, []},
    %% A monitor (this module, below) sees every state's view: it collects
    %% the queue's shapes.
    Shapes = fun(M) ->
                     Tab = ets:new(shapes, [public, set]),
                     {ok, _} = check(Entry, #{abstraction => {chain, M}, monitor => {?MODULE, Tab}}),
                     N = ets:info(Tab, size),
                     ets:delete(Tab),
                     N
             end,
    %% Written for the real values; judged on the abstract ones by its own
    %% code (the summary's cells are walked three-valued).
    WellFormed = fun(#{processes := Ps}) ->
                         lists:all(fun(Q) -> is_list(Q) andalso lists:all(fun(C) -> C =:= cell end, Q) end,
                                   [Q || #{props := Props} <- Ps, {queue, Q} <- Props])
                 end,
    [{"concretely the queue grows without bound",
      ?_assertMatch({inconclusive, max_states, _}, check(Entry, #{max_states => 5000}))},
     {"M + 5 queue shapes: 6, 7, 8 for M = 1, 2, 3",
      ?_assertEqual([6, 7, 8], [Shapes(M) || M <- [1, 2, 3]])},
     {"no deadlock and no crash",
      ?_assertMatch({ok, _}, check(Entry, #{abstraction => {chain, 1}}))},
     {"[]<> new under weak fairness",
      ?_assertMatch({ok, _}, check(Entry, #{abstraction => {chain, 1}, ltl => "[]<> new",
                                            predicates => #{new => {prop, new}}}))},
     {"the queue is always a proper list of cells (paper property 3)",
      ?_assertMatch({ok, _}, check(Entry, #{abstraction => {chain, 2}, invariant => WellFormed}))}].

%% The shape-collecting monitor of queue_test_/0.
-spec init(ets:tid()) -> {ok, ets:tid()}.
init(Tab) -> {ok, Tab}.

-spec state_change(mcerlang:view(), ets:tid(), term()) -> {ok, ets:tid()}.
state_change(#{processes := Ps}, Tab, _Step) ->
    [ets:insert(Tab, {Q, seen}) || #{props := Props} <- Ps, {queue, Q} <- Props],
    {ok, Tab}.


%%--------------------------------------------------------------------
%% AC-26: the false negative (paper 001, "Limitations")
%%--------------------------------------------------------------------

false_negative_test_() ->
    Empty = #{ltl => "<> empty", predicates => #{empty => {prop, empty}}},
    [{"concretely the list becomes empty",
      ?_assertMatch({ok, _}, check({abs_list, start, [5]}, Empty))},
     {"under a chain summary the abstract run that keeps the summary is reported, possibly spurious",
      fun() ->
              {inconclusive, {possibly_spurious, Cex}, Stats} =
                  check({abs_list, start, [5]}, Empty#{abstraction => {chain, 1}}),
              ?assertEqual(no_violation, maps:get(concrete_replay, Stats)),
              ?assertMatch({ltl, _}, maps:get(violation, Cex)),
              ?assertMatch([_ | _], maps:get(cycle, Cex)),
              %% The report says what it is.
              Text = lists:flatten(io_lib:format("~s", [mcerlang:format(Cex)])),
              ?assertNotEqual(nomatch, string:find(Text, "<> empty"))
      end},
     {"a list the summary keeps whole (at most M + 3 cells) is proved",
      ?_assertMatch({ok, _}, check({abs_list, start, [4]}, Empty#{abstraction => {chain, 1}}))}].

%%--------------------------------------------------------------------
%% Non-tail recursion around a receive (paper 000)
%%--------------------------------------------------------------------

stack_test_() ->
    [{"concretely the stack grows without bound",
      ?_assertMatch({inconclusive, _, _}, check({abs_stack, start, []}, #{max_states => 3000}))},
     {"folded under sign: the stack process never crashes nor deadlocks",
      ?_assertMatch({ok, _}, check({abs_stack, start, []}, #{abstraction => sign}))},
     {"AC-21, Huch's Example 5.1 (f(X) -> f(f(X))): concretely a runaway step, abstractly finite control",
      fun() ->
              ?assertError({mcerlang, {runaway_step, _, _, _}},
                           check({abs_recursion, main, []}, #{max_reductions => 2000000})),
              ?assertMatch({ok, _}, check({abs_recursion, main, []}, #{abstraction => even_odd}))
      end},
     {"a recursion whose frames all differ folds too",
      ?_assertMatch({ok, _}, check({tprog_abs, deep_recursion, []}, #{abstraction => even_odd}))}].

%%--------------------------------------------------------------------
%% The interpreter: three-valued matching, Erlang's constructs
%%--------------------------------------------------------------------

interpreter_test_() ->
    [{"a message that may match is taken and also left: here the crash is real",
      fun() ->
              ?assertMatch({error, _}, check({tprog_abs, maybe_receive, [0]}, #{})),
              {error, Cex} = check({tprog_abs, maybe_receive, [0]}, #{abstraction => even_odd}),
              ?assertMatch({abnormal_exit, _, {zero, _}}, maps:get(violation, Cex))
      end},
     {"... and here it is not: 8 is even, so it may be 0 under even_odd, but it is not",
      fun() ->
              ?assertMatch({ok, _}, check({tprog_abs, maybe_receive, [8]}, #{})),
              {inconclusive, {possibly_spurious, Cex}, Stats} =
                  check({tprog_abs, maybe_receive, [8]}, #{abstraction => even_odd}),
              ?assertMatch({abnormal_exit, _, {zero, _}}, maps:get(violation, Cex)),
              ?assertEqual(no_violation, maps:get(concrete_replay, Stats))
      end},
     {"sign knows 8 is not 0 (pos), odd knows 7 is not: nothing to report",
      [?_assertMatch({ok, _}, check({tprog_abs, maybe_receive, [8]}, #{abstraction => sign})),
       ?_assertMatch({ok, _}, check({tprog_abs, maybe_receive, [7]}, #{abstraction => even_odd}))]},
     {"an undecided guard runs both bodies; the error branch does not replay",
      ?_assertEqual(possibly_spurious,
                    verdict(check({tprog_abs, guard_branch, []}, #{abstraction => even_odd})))},
     {"the guard is decided where the domain knows (3 > 2 under sign: pos > pos is not known, ...)",
      ?_assertMatch({ok, _}, check({tprog_abs, guard_branch, []}, #{abstraction => [{depth, 2}]}))},
     {"try/catch and catch, funs, named funs, comprehensions, spawn of a fun, pids in deep terms",
      [?_assertMatch({ok, _}, check({tprog_abs, F, []}, #{abstraction => [{depth, 4}]}))
       || F <- [try_catch, fun_and_lc, depth_pid, spawn_fun]]},
     {"under even_odd their integers are abstract: the matches on them may fail, possibly spuriously",
      [?_assertEqual({F, possibly_spurious},
                     {F, verdict(check({tprog_abs, F, []}, #{abstraction => even_odd}))})
       || F <- [try_catch, fun_and_lc, spawn_fun]]},
     {"a receive whose only message may match: the state may be a deadlock",
      fun() ->
              {inconclusive, {possibly_spurious, Cex}, _} =
                  check({tprog_abs, spawn_fun, []}, #{abstraction => even_odd}),
              ?assertEqual(deadlock, maps:get(violation, Cex))
      end},
     {"records, maps, ETS, io and the dictionary through the interpreter",
      ?_assertMatch({ok, _}, check({tprog_abs, library, []}, #{abstraction => [{depth, 5}]}))},
     {"a pid cut out of a message is lost: a send to it cannot be modelled, and the check says so "
      "(a badarg there would drop the concrete runs, and prove too much)",
      ?_assertError({mcerlang, {abstraction_unsupported, {abstract_argument, {mce_rt, send, 2}, _}, _}},
                    check({tprog_abs, depth_pid, []}, #{abstraction => [{depth, 2}]}))}].

%%--------------------------------------------------------------------
%% Around the check: replay, simulate, the parallel search
%%--------------------------------------------------------------------

around_test_() ->
    [{"an abstract counterexample replays (in the abstract system)",
      fun() ->
              {inconclusive, {possibly_spurious, Cex}, _} =
                  check({tprog_abs, maybe_receive, [8]}, #{abstraction => even_odd}),
              ?assertMatch({ok, _}, mcerlang:replay(Cex)),
              {inconclusive, {possibly_spurious, Lasso}, _} =
                  check({abs_list, start, [5]}, #{abstraction => {chain, 1}, ltl => "<> empty",
                                                  predicates => #{empty => {prop, empty}}}),
              ?assertMatch({ok, _}, mcerlang:replay(Lasso))
      end},
     {"simulate under abstraction confirms what it finds on the real values",
      fun() ->
              ?assertMatch({error, _},
                           mcerlang:simulate({abs_counter, start_buggy, []},
                                             #{abstraction => even_odd, runs => 50, seed => 1,
                                               progress => false})),
              ?assertMatch({inconclusive, {possibly_spurious, _}, _},
                           mcerlang:simulate({tprog_abs, maybe_receive, [8]},
                                             #{abstraction => even_odd, runs => 50, seed => 1,
                                               progress => false}))
      end},
     {"max_time covers the abstract search and the concrete one together",
      fun() ->
              T0 = erlang:monotonic_time(millisecond),
              %% The concrete search of the false negative never ends (the
              %% counter of abs_counter grows), so only max_time ends it.
              R = check({abs_counter, start, []},
                        #{abstraction => even_odd, max_time => 1500, max_states => infinity,
                          ltl => "[] !negative",
                          predicates => #{negative => {prop, {count, mcerlang:abstract(neg)}}}}),
              ?assertMatch({inconclusive, {possibly_spurious, _}, #{concrete_replay := {inconclusive, max_time}}}, R),
              ?assert(erlang:monotonic_time(millisecond) - T0 < 6000)
      end},
     {"two workers: the same verdicts",
      [?_assertMatch({ok, _}, check({abs_queue, start, []}, #{abstraction => {chain, 1}, workers => 2})),
       ?_assertEqual(possibly_spurious,
                     verdict(check({tprog_abs, maybe_receive, [8]}, #{abstraction => even_odd,
                                                                      workers => 2})))]}].

%%--------------------------------------------------------------------
%% Bad input
%%--------------------------------------------------------------------

errors_test_() ->
    [?_assertError({mcerlang, {bad_option_value, abstraction, parity, _}},
                   mcerlang:check({abs_counter, start, []}, #{abstraction => parity})),
     ?_assertError({mcerlang, {bad_option_value, abstraction, [even_odd, sign], _}},
                   mcerlang:check({abs_counter, start, []}, #{abstraction => [even_odd, sign]})),
     ?_assertError({mcerlang, {bad_option_value, abstraction, {depth, 0}, _}},
                   mcerlang:check({abs_counter, start, []}, #{abstraction => {depth, 0}})),
     ?_assertError({mcerlang, {bad_entry, _, _}},
                   mcerlang:check(fun() -> ok end, #{abstraction => even_odd})),
     ?_assertError({mcerlang, {undefined_function, {abs_counter, nope, 0}}},
                   mcerlang:check({abs_counter, nope, []}, #{abstraction => even_odd})),
     {"a construct the interpreter does not model is named, with its module and line",
      ?_assertError({mcerlang, {abstraction_unsupported, bin, {tprog_abs, _}}},
                    check({tprog_abs, unsupported_binary, []}, #{abstraction => even_odd}))},
     ?_assertError({mcerlang, {bad_abstract_value, huge, _}}, mcerlang:abstract(huge)),
     {"a step predicate matching abstract data two-valued could prove too much: refused",
      ?_assertError({mcerlang, {bad_predicate, got, {received, _, {value, '_'}}, _}},
                    check({abs_counter, start, []},
                          #{abstraction => sign, ltl => "[]<> got",
                            predicates => #{got => {received, '_', {value, '_'}}}}))},
     {"... with '_' for the data it is a fact, and checked",
      ?_assertMatch({ok, _}, check({abs_counter, start, []},
                                   #{abstraction => sign, ltl => "[]<> got",
                                     predicates => #{got => {received, '_', '_'}}}))},
     {"a fun prop pattern has no abstract meaning",
      ?_assertError({mcerlang, {bad_predicate, _, _, _}},
                    check({abs_props, p42, []},
                          #{abstraction => even_odd, ltl => "<> p",
                            predicates => #{p => {prop, fun(X) -> X > 1 end}}}))}].
