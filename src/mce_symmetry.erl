%% @doc Symmetry reduction (option `symmetry'): where it is on, and how a
%% counterexample found on representatives becomes a real run.
%%
%% The C search (c_src/symmetry.c) replaces each successor by the
%% representative of its orbit under permutations of the pids of live
%% processes (Ip & Dill's scalarsets, "Better verification through
%% symmetry", 1996), and keeps with each state on its stack the renaming
%% sigma it applied.  A stored state s(i) is then sigma(i) applied to the
%% successor the program really makes from s(i-1), so the concrete run is
%% c(i) = rho(i)(s(i)) with rho(i) = rho(i-1) . sigma(i)^-1 and rho(0) the
%% identity (the initial state is never renamed): the step into s(i) names
%% the pids of s(i-1) and is mapped by rho(i-1); the last state, its ether
%% and the violation by the last rho (the search never renames a state it
%% stops at, so a violation the driver reports names the same pids as the
%% state before it).
%%
%% Pure: renamings in, terms out.
-module(mce_symmetry).

-export([active/2, nif_setting/2, void/2, status/2, concrete/2, replayable/3, names_pids/1]).

%% @doc Whether the C search of a check with these options canonicalises.
%% Off for what can name pids in a verdict the search does not see renamed
%% (monitors, invariants and the mailbox bound judge each successor before
%% it is stored; an LTL formula's predicates are judged on the program's
%% states), and for the expand-only searches of LTL checks and stepping
%% sessions (replay walks concrete states).
-spec active(map(), boolean()) -> boolean().
active(Opts, ExpandOnly) ->
    status(Opts, ExpandOnly) =:= on.

%% @doc The C search's `symmetry' setting: 0 off; 1 on with the guard of
%% pid order (`auto', the default: the search is void once the program
%% observes the order of pids, or iterates a map with pids among its keys,
%% mce_rt_order); 3 the same, the pids in map keys kept (after such an
%% iteration: `{auto, keys_pinned}'); 2 on without the guard (`true': the
%% user asserts that the program never observes pid order, map iteration
%% included).
-spec nif_setting(map(), boolean()) -> 0 | 1 | 2 | 3.
nif_setting(Opts, ExpandOnly) ->
    case active(Opts, ExpandOnly) of
        false -> 0;
        true when map_get(symmetry, Opts) =:= true -> 2;
        true when map_get(symmetry, Opts) =:= {auto, keys_pinned} -> 3;
        true -> 1
    end.

%% @doc The options of the check that runs again after a symmetric search
%% was void: without symmetry when the program observed the order of pids
%% (`Why': `pid_order'); with symmetry, the pids in map keys pinned, when
%% it iterated a map with pids among its keys (`key_order').
-spec void(map(), atom()) -> map().
void(Opts, key_order) ->
    Opts#{symmetry => {auto, keys_pinned}};
void(Opts, Why) ->
    Opts#{symmetry => {off, Why}}.

%% @doc The `symmetry' stat: `on', `off' (not asked for) or `{off, Why}'.
-spec status(map(), boolean()) -> on | off | {off, atom()}.
status(Opts, ExpandOnly) ->
    case maps:get(symmetry, Opts, auto) of
        false -> off;
        {off, Why} -> {off, Why};
        _TrueOrAuto ->
            Why = [W || {W, true} <- [{ltl, maps:get(ltl, Opts, none) =/= none},
                                      {monitor, maps:get(monitor, Opts, []) =/= []},
                                      {invariant, maps:get(invariant, Opts, []) =/= []},
                                      {mailbox_bound, maps:get(mailbox_bound, Opts, infinity) =/= infinity},
                                      %% An exit reason is judged by its pids,
                                      %% which a representative renames.
                                      {treat_as_normal, names_pids(maps:get(treat_as_normal, Opts, []))},
                                      {expand_only, ExpandOnly}]],
            case Why of
                [] -> on;
                [W | _] -> {off, W}
            end
    end.

%% @doc Whether a term holds a pid or a ref (a `treat_as_normal' entry
%% that judges exit reasons by them).
-spec names_pids(term()) -> boolean().
names_pids(T) when is_pid(T); is_reference(T) -> true;
names_pids([H | T]) -> names_pids(H) orelse names_pids(T);
names_pids(T) when is_tuple(T) -> names_pids(tuple_to_list(T));
names_pids(T) when is_map(T) -> names_pids(maps:to_list(T));
names_pids(_) -> false.

%% @doc The counterexample `Cex' (trace, final state, ether, violation, as
%% mce_search builds them from the stack) with the pids and refs of the
%% representatives mapped back to those of the real run, given the
%% renamings of the stack's states (mce_nif:renamings/1, the initial state
%% first).
-spec concrete(map(), [[{non_neg_integer(), non_neg_integer()}]]) -> map().
concrete(Cex, Renamings) ->
    case lists:all(fun(R) -> R =:= [] end, Renamings) of
        true -> Cex;
        false -> concrete_cex(Cex, Renamings)
    end.

%% @doc The counterexample, or a shorter one, that replay/1 walks.  The
%% mapped run is real, but the search took the transitions of a
%% representative in the order of its pids: where the run passes over a
%% transition that is itself a violation and comes first in the concrete
%% pid order, a replay's expansion (which stops at the first violating
%% successor, as a search does) never lists the step the run takes.  That
%% step is an abnormal exit of the process that takes it, or an exit signal
%% that kills another process (`exit(P, kill)'): the expansion judges both
%% (mce_session's stop_violation), and the first replay of the cut run
%% names the violation it found there.  The prefix up to there and that
%% violating step are then the counterexample, a shorter real run, rebuilt
%% by the replay itself; if that does not replay either, the mapped run is
%% kept as it is.
%%
%% A mapped run may also diverge at a spawn: least-fresh numbering gives
%% the child of a representative's step the least number free in the
%% representative, which the renaming maps to a number free in the real
%% state but not always its least free one, which the real run's child
%% gets (docs/ARCHITECTURE.md, "Symmetry reduction": the renaming that
%% relates the two successors swaps those two numbers).  The replay then
%% lists the step with the other child; the run from there on is renamed
%% by that swap (both numbers are free in the state before the step, so
%% the state is unchanged) and replayed again, once per such step.
-spec replayable(map(), term(), map()) -> map().
replayable(Cex, InitCall, Opts) ->
    replayable(Cex, InitCall, Opts, length(maps:get(trace, Cex))).

replayable(Cex, InitCall, Opts, Fuel) ->
    Replay = fun(C) -> mcerlang:isolated(fun() -> mce_session:replay(InitCall, Opts, C) end, Opts) end,
    case Replay(Cex) of
        {error, {diverged, N, Expected, [_ | _] = Succs}} when Fuel > 0 ->
            case fresh_swap(Expected, Succs) of
                {ok, Swap} ->
                    replayable(swapped_from(Cex, N, Swap), InitCall, Opts, Fuel - 1);
                none ->
                    cut_replayable(Cex, N, Succs, Replay)
            end;
        {error, {diverged, N, _Expected, [_ | _] = Succs}} ->
            cut_replayable(Cex, N, Succs, Replay);
        {ok, Rebuilt} ->
            %% Its steps are the real run's where the search's showed dead
            %% payloads (mce_session:rebuilt/4).
            case mce_session:has_dead(maps:with([trace, final_state, ether], Cex)) of
                true -> Rebuilt;
                false -> Cex
            end;
        _ ->
            Cex
    end.

%% The run cut at the step the replay listed last, where it diverged at
%% step N (see above): the expansion stopped at its last successor, the
%% only one that can be a violation.
cut_replayable(Cex, N, Succs, Replay) ->
    Cut = Cex#{trace => lists:sublist(maps:get(trace, Cex), N - 1) ++ [lists:last(Succs)],
               violation => unknown},
    case Replay(Cut) of
        {error, {not_reproduced, {other_violation, V}}} ->
            case Replay(Cut#{violation => V}) of
                {ok, Rebuilt} -> Rebuilt;
                _ -> Cex
            end;
        _ ->
            Cex
    end.

%% The swap of pid numbers that makes `Expected' one of the steps the
%% replay listed, if one does: the pids the two show in the same places,
%% where they differ, each pair a transposition.
fresh_swap(Expected, Succs) ->
    Swaps = [Swap || Step <- Succs, {ok, Swap} <- [pid_swap(Expected, Step)],
                     map_size(Swap) > 0,
                     mce_session:same_step(rename_step(Expected, Swap), Step)],
    case Swaps of
        [Swap | _] -> {ok, Swap};
        [] -> none
    end.

pid_swap(A, B) ->
    try pid_pairs(A, B, #{}) of
        Pairs -> {ok, Pairs}
    catch throw:not_a_swap -> error
    end.

pid_pairs(A, B, Acc) when is_pid(A), is_pid(B) ->
    case {mce_pid:number(A), mce_pid:number(B)} of
        {{ok, K}, {ok, K}} -> Acc;
        {{ok, K}, {ok, L}} ->
            case {maps:find(K, Acc), maps:find(L, Acc)} of
                {error, error} -> Acc#{K => L, L => K};
                {{ok, L}, {ok, K}} -> Acc;
                _ -> throw(not_a_swap)
            end;
        _ -> Acc
    end;
pid_pairs(A, B, Acc) when is_tuple(A), is_tuple(B), tuple_size(A) =:= tuple_size(B) ->
    pid_pairs(tuple_to_list(A), tuple_to_list(B), Acc);
pid_pairs([A | As], [B | Bs], Acc) ->
    pid_pairs(As, Bs, pid_pairs(A, B, Acc));
pid_pairs(A, B, Acc) when is_map(A), is_map(B), map_size(A) =:= map_size(B) ->
    pid_pairs(lists:sort(maps:to_list(A)), lists:sort(maps:to_list(B)), Acc);
pid_pairs(_, _, Acc) ->
    Acc.

%% The counterexample with its steps from the N-th on (and what it shows
%% of the last state) renamed by Swap.
swapped_from(#{trace := Trace} = Cex, N, Swap) ->
    {Before, After} = lists:split(N - 1, Trace),
    Cex#{trace => Before ++ [rename_step(Step, Swap) || Step <- After],
         final_state => lists:sort(fun(A, B) -> pid_key(A) =< pid_key(B) end,
                                   rename(maps:get(final_state, Cex), Swap)),
         ether => rename(maps:get(ether, Cex), Swap),
         violation => rename(maps:get(violation, Cex), Swap)}.

concrete_cex(#{trace := Trace} = Cex, [_Root | Sigmas]) ->
    %% Rhos: rho(0), rho(1), ...: the trace's step i+1 is mapped by rho(i).
    {Rhos, Last} = lists:mapfoldl(fun(Sigma, Rho) -> {Rho, compose(Rho, Sigma)} end,
                                  #{}, Sigmas),
    Steps = [rename_step(Step, Rho) || {Step, Rho} <- lists:zip(Trace, Rhos)],
    Final = lists:sort(fun(A, B) -> pid_key(A) =< pid_key(B) end,
                       rename(maps:get(final_state, Cex), Last)),
    Cex#{trace => Steps, final_state => Final,
         ether => rename(maps:get(ether, Cex), Last),
         violation => rename(maps:get(violation, Cex), Last)}.

%% A step as mce_search:step/1 shows it: pids and refs are terms, except
%% in the ETS effects, which carry the keys C reads (mce_ets).
rename_step(#{kind := run, effects := Effects} = Step, Rho) ->
    (rename(Step, Rho))#{effects => [rename_effect(E, Rho) || E <- Effects]};
rename_step(Step, Rho) ->
    rename(Step, Rho).

rename_effect({ets_put, Tid, Owner, Heir, Name, Data, HeirData}, Rho) ->
    {ets_put, ref_key(Tid, Rho), apply_key(Rho, Owner),
     case Heir of
         0 -> 0;
         _ -> apply_key(Rho, Heir)
     end, Name, mce_ets:sorted_data(rename(Data, Rho)), rename(HeirData, Rho)};
rename_effect({ets_delete, Tid}, Rho) ->
    {ets_delete, ref_key(Tid, Rho)};
rename_effect(Effect, Rho) ->
    rename(Effect, Rho).

pid_key(#{pid := Pid}) ->
    case mce_pid:number(Pid) of
        {ok, K} -> K;
        error -> Pid
    end.

%% rho . sigma^-1 as a map of the keys it moves.
compose(Rho, Sigma) ->
    Inverse = maps:from_list([{To, From} || {From, To} <- Sigma]),
    Keys = lists:usort(maps:keys(Inverse) ++ maps:keys(Rho)),
    maps:from_list([{K, V} || K <- Keys,
                              V <- [apply_key(Rho, apply_key(Inverse, K))],
                              V =/= K]).

apply_key(Map, K) ->
    maps:get(K, Map, K).

%% Every simulated pid and ref in a term renamed (refs by their creator's
%% pid, as c_src/symmetry.c renames them).
rename(Term, Rho) when map_size(Rho) =:= 0 ->
    Term;
rename(Pid, Rho) when is_pid(Pid) ->
    case mce_pid:number(Pid) of
        {ok, K} -> mce_pid:term(apply_key(Rho, K));
        error -> Pid
    end;
rename(Ref, Rho) when is_reference(Ref) ->
    case mce_ref:number(Ref) of
        {ok, K} -> mce_ref:term(ref_key(K, Rho));
        error ->
            case mce_ref:tid_number(Ref) of
                {ok, K} -> mce_ref:tid_term(ref_key(K, Rho));
                error -> Ref
            end
    end;
rename(T, Rho) when is_tuple(T) ->
    list_to_tuple(rename(tuple_to_list(T), Rho));
rename([H | T], Rho) ->
    [rename(H, Rho) | rename(T, Rho)];
rename(M, Rho) when is_map(M) ->
    maps:from_list([{rename(K, Rho), rename(V, Rho)} || {K, V} <- maps:to_list(M)]);
rename(F, Rho) when is_function(F) ->
    %% A closure's captured values (a spawned fun's pids) are part of it.
    case {erlang:fun_info(F, type), erlang:fun_info(F, env)} of
        {{type, local}, {env, [_ | _] = Env}} -> with_env(F, rename(Env, Rho));
        _ -> F
    end;
rename(Other, _Rho) ->
    Other.

%% Local fun F with the captured values Env (as many as it has): its
%% external format (NEW_FUN_EXT: size, arity, uniq, index, free count,
%% then module, old index, old uniq and creator as terms, then the free
%% values) with the free values replaced.  There is no other way to build
%% a closure with a given environment.
with_env(F, Env) ->
    <<131, 112, _Size:32, Head:21/binary, NumFree:32, Rest/binary>> = term_to_binary(F),
    NumFree = length(Env),
    Fixed = skip_terms(4, Rest, 0),
    <<FixedBin:Fixed/binary, _/binary>> = Rest,
    EnvBin = << <<(term_body(V))/binary>> || V <- Env >>,
    Body = <<Head/binary, NumFree:32, FixedBin/binary, EnvBin/binary>>,
    binary_to_term(<<131, 112, (4 + byte_size(Body)):32, Body/binary>>).

%% The bytes of the first N terms of Bin (each without the version byte).
skip_terms(0, _Bin, Used) ->
    Used;
skip_terms(N, Bin, Used) ->
    <<_:Used/binary, Rest/binary>> = Bin,
    {_, U} = binary_to_term(<<131, Rest/binary>>, [used]),
    skip_terms(N - 1, Bin, Used + U - 1).

term_body(T) ->
    <<131, B/binary>> = term_to_binary(T),
    B.

%% A ref's number is Creator << 10 | Counter within its node (mce_ref).
ref_key(K, Rho) ->
    Node = K bsr 24,
    Num = K band 16#ffffff,
    case Num bsr 10 of
        0 -> K;
        Creator ->
            To = apply_key(Rho, mce_pid:key(Node, Creator)) band 16#ffffff,
            mce_pid:key(Node, (To bsl 10) bor (Num band 16#3ff))
    end.
