%% @doc The abstract mode's bench (issue 21, `make bench-abstraction'): the
%% seed papers' cases checked on the real values and under an abstraction,
%% interleaved over rounds (the machines are shared and noisy), medians.
%% Per row: the verdict, states and transitions, wall ms and the VM's CPU
%% seconds during the check.  The concrete rows of the unbounded programs
%% end at their state limit: what the abstraction turns into a proof.
-module(mce_bench_abstraction).

-export([main/0, main/1]).

-define(ROUNDS, 3).

-spec main() -> ok.
main() ->
    main(?ROUNDS).

-spec main(pos_integer()) -> ok.
main(Rounds) ->
    Db = #{ltl => "forall P, Q: P != Q -> [] (alloc(P) -> (!value(Q) U (value(P) || allocated)))",
           predicates => #{alloc => fun(P) -> {prop, {allocate, P}} end,
                           value => fun(P) -> {prop, {value, P}} end,
                           allocated => {prop, allocated}}},
    Neg = #{ltl => "[] !negative",
            predicates => #{negative => {prop, {count, mcerlang:abstract(neg)}}}},
    Models = [{"counter concrete", {abs_counter, start, []}, #{max_states => 100000}},
              {"counter even_odd", {abs_counter, start, []}, #{abstraction => even_odd}},
              {"counter sign", {abs_counter, start, []}, #{abstraction => sign}},
              {"counter sign [] !negative", {abs_counter, start, []}, Neg#{abstraction => sign}},
              {"database concrete (AC-22)", {abs_database, start, []}, Db},
              {"database depth 2 (AC-22)", {abs_database, start, []}, Db#{abstraction => [{depth, 2}]}},
              {"queue concrete", {abs_queue, start, []}, #{max_states => 20000}},
              {"queue chain 1 (AC-25)", {abs_queue, start, []}, #{abstraction => {chain, 1}}},
              {"queue chain 3 (AC-25)", {abs_queue, start, []}, #{abstraction => {chain, 3}}},
              {"stack concrete", {abs_stack, start, []}, #{max_states => 20000}},
              {"stack sign (folded)", {abs_stack, start, []}, #{abstraction => sign}}],
    io:format("~nabstraction (issue 21): ~b rounds interleaved, medians~n", [Rounds]),
    [mce_translate:ensure(M) || {_, {M, _, _}, _} <- Models],
    Runs = [{Label, run(Entry, Opts)} || _ <- lists:seq(1, Rounds), {Label, Entry, Opts} <- Models],
    io:format("~-30s ~-14s ~9s ~10s ~9s ~8s~n", ["model", "verdict", "states", "trans", "wall ms", "cpu s"]),
    lists:foreach(fun({Label, _, _}) ->
                          print(Label, mce_bench_workers:median_row([R || {L, R} <- Runs, L =:= Label]))
                  end, Models),
    ok.

run(Entry, Opts) ->
    {Result, Wall, Cpu} = mce_bench_workers:timed_check(Entry, Opts#{max_time => 120000, progress => false,
                                                                     memory => 2000000000}),
    {Verdict, Stats} = case Result of
                           {ok, St} -> {ok, St};
                           {error, #{stats := St}} -> {error, St};
                           {inconclusive, {possibly_spurious, _}, St} -> {possibly_spurious, St};
                           {inconclusive, Why, St} -> {Why, St}
                       end,
    #{verdict => Verdict, states => maps:get(states, Stats),
      transitions => maps:get(transitions, Stats), wall_us => Wall, cpu_s => Cpu}.

print(Label, #{verdict := V, states := S, transitions := T, wall_us := Us, cpu_s := Cpu}) ->
    io:format("~-30s ~-14s ~9b ~10b ~9b ~8.2f~n",
              [Label, io_lib:format("~p", [V]), S, T, Us div 1000, Cpu]).
