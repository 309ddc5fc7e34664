%% Soundness sweep of partial-order reduction (c_src/por.h): every
%% zero-arity export of the test programs (test/tprog*.erl), under big and
%% small granularity, checked with `reduction => true' and `false' within a
%% state bound.  Where both give a verdict, they must be the same (ok, or
%% the same kind of violation), and a counterexample found with the
%% reduction must replay.  Not an EUnit module (it takes minutes): run it
%% with `mce_por_sweep:run()' from `rebar3 as test shell', or
%% erl -pa _build/test/lib/mcerlang/{ebin,test} -eval 'mce_por_sweep:main()'.
-module(mce_por_sweep).
-export([run/0, run/1, main/0, entries/0]).

-spec main() -> no_return().
main() ->
    Bad = run(),
    halt(case Bad of [] -> 0; _ -> 1 end).

%% Every zero-arity export of the compiled test programs.
-spec entries() -> [{module(), atom(), []}].
entries() ->
    Dir = filename:dirname(code:which(tprog)),
    Mods = [list_to_atom(filename:basename(F, ".beam"))
            || F <- filelib:wildcard(filename:join(Dir, "tprog*.beam"))],
    [{M, F, []} || M <- lists:sort(Mods), {F, 0} <- M:module_info(exports),
                   F =/= module_info].

-spec run() -> [term()].
run() ->
    run(#{max_states => 3000}).

%% Returns the disagreements (empty: the sweep passed) and prints a summary.
-spec run(map()) -> [term()].
run(Bound) ->
    Rs = [one(E, G, Bound) || E <- entries(), G <- [big, small]],
    Count = fun(K) -> length([R || R <- Rs, element(1, R) =:= K]) end,
    Bad = [R || R <- Rs, element(1, R) =:= bad],
    Reduced = lists:sum([element(4, R) || R <- Rs, element(1, R) =:= same]),
    io:format("por sweep: ~b agree, ~b skipped (inconclusive or raised), ~b disagree; "
              "~b reduced states in all; ~b counterexamples replayed~n",
              [Count(same), Count(skip), length(Bad), Reduced,
               length([R || {same, _, {error, _}, _, replayed} = R <- Rs])]),
    [io:format("  ~p~n", [B]) || B <- Bad],
    Bad.

one(Entry, G, Bound) ->
    Opts = Bound#{granularity => G, progress => false, max_reductions => 2000000,
                  max_time => 60000},
    On = check(Entry, Opts),
    Off = check(Entry, Opts#{reduction => false}),
    R = case {verdict(On), verdict(Off)} of
            {skip, _} -> {skip, {Entry, G}};
            {_, skip} -> {skip, {Entry, G}};
            {V, V} -> {same, {Entry, G}, V, reduced(On), replays(On)};
            {VOn, VOff} -> {bad, {Entry, G}, {on, VOn}, {off, VOff}}
        end,
    fix(R, Entry, G).

fix({same, _, _, _, {bad, Why}}, Entry, G) -> {bad, {Entry, G}, {replay, Why}};
fix(R, _, _) -> R.

check(Entry, Opts) ->
    try mcerlang:check(Entry, Opts)
    catch C:R -> {raised, C, R}
    end.

verdict({ok, _}) -> ok;
verdict({error, #{violation := V}}) when is_tuple(V) -> {error, element(1, V)};
verdict({error, #{violation := V}}) -> {error, V};
verdict(_) -> skip.

reduced({ok, S}) -> maps:get(reduced_states, S, 0);
reduced({error, #{stats := S}}) -> maps:get(reduced_states, S, 0);
reduced(_) -> 0.

replays({error, Cex}) ->
    case mcerlang:replay(Cex) of
        {ok, _} -> replayed;
        Other -> {bad, Other}
    end;
replays(_) -> none.
