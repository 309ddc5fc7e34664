%%% @doc Clause selection, pattern matching and guards over abstract
%%% values, three-valued (the abstract interpreter's, mce_abs_eval; paper
%%% 003_7dd3bcd1accd73d3.txt, section 3: the abstract semantics of
%%% matching in `case', `receive' and function heads).
%%%
%%% A match gives the environments of the ways it may succeed and whether
%%% it may fail; a clause list gives every clause that may be taken (with
%%% its environment) and `no_match' if possibly none is.  Invariants: a
%%% clause that surely matches with a guard that surely holds ends the
%%% list; a guard's literals stay exact; an exception in a guard is false.
%%% The domains are the check's, and the helpers (dom/0, alpha/1, line/1,
%%% unsupported/3) the interpreter's: mce_abs_eval.
-module(mce_abs_match).

-export([select/3, select_worlds/2, if_outcomes/3, match/3, guard/2,
         bool_outcomes/1, boolean_op/2, bool_values/1]).

-import(mce_abs_eval, [dom/0, alpha/1, any/0, line/1, unsupported/3]).

-spec select([tuple()], term(), map()) -> [{clause, list(), map()} | no_match].
-spec select_worlds([{tuple(), map()}], term()) -> [{clause, list(), map()} | no_match].
-spec if_outcomes([tuple()], map(), term()) -> [{clause, list(), map()} | no_match].
-spec match(tuple(), term(), map()) -> {[map()], boolean()}.
-spec guard(list(), map()) -> boolean() | maybe.
-spec bool_outcomes(boolean() | maybe) -> [{value, boolean()}].
-spec boolean_op(atom(), [term()]) -> [{value, boolean()} | {error, badarg}].
-spec bool_values(term()) -> [boolean() | not_boolean].
-spec combinations([[T]]) -> [[T]].

%% A three-valued boolean as outcomes.
bool_outcomes(true) -> [{value, true}];
bool_outcomes(false) -> [{value, false}];
bool_outcomes(maybe) -> [{value, false}, {value, true}].

%% not/and/or/xor over three-valued booleans: each argument is true, false,
%% or (abstract) either; anything else is badarg.
boolean_op(Op, Vs) ->
    Choices = [bool_values(V) || V <- Vs],
    lists:usort([boolean_result(Op, Bs) || Bs <- combinations(Choices)]).

bool_values(V) ->
    Ts = [B || B <- [true, false], mce_abs_domain:match_literal(dom(), V, B) =/= false],
    case mce_abs_domain:type_test(dom(), is_boolean, V) of
        true -> Ts;
        _ -> [not_boolean | Ts]
    end.

boolean_result(Op, Bs) ->
    case lists:member(not_boolean, Bs) of
        true -> {error, badarg};
        false ->
            {value, case {Op, Bs} of
                        {'not', [A]} -> not A;
                        {'and', [A, B]} -> A and B;
                        {'or', [A, B]} -> A or B;
                        {'xor', [A, B]} -> A xor B
                    end}
    end.

combinations([]) -> [[]];
combinations([Xs | Rest]) -> [[X | T] || X <- Xs, T <- combinations(Rest)].


%% The possible outcomes of matching V against the clauses in order:
%% `{clause, Body, Env}' for each clause that may be taken, and `no_match'
%% if possibly none is.  A clause that surely matches (and whose guard
%% surely holds) ends the list.
select(Clauses, V, Env) ->
    select_worlds([{C, Env} || C <- Clauses], V).

%% The value is first split into the shapes its abstraction allows (a
%% summary list is [] or a cell, paper 001's concretisation), one level
%% into a tuple (a function's arguments): clauses that cover every shape
%% between them then leave no spurious "no clause matches".
select_worlds(Pairs, V) ->
    lists:usort(lists:append([select_each(Pairs, W, []) || W <- worlds(V)])).

worlds({'$mce_abs', {list, _, _}} = V) ->
    shapes(V);
worlds(T) when is_tuple(T), tuple_size(T) =/= 2; is_tuple(T), element(1, T) =/= '$mce_abs' ->
    [list_to_tuple(Es) || Es <- combinations([shapes(E) || E <- tuple_to_list(T)])];
worlds(V) ->
    [V].

shapes({'$mce_abs', {list, _, _}} = V) ->
    [[] || mce_abs_domain:as_nil(dom(), V) =/= false] ++
        [[H | T] || {_, H, T} <- mce_abs_domain:as_cons(dom(), V)];
shapes(V) ->
    [V].

%% Each clause with the environment it is matched in.
select_each([], _V, Acc) ->
    lists:reverse([no_match | Acc]);
select_each([{{clause, _, [P], G, Body}, Env} | Rest], V, Acc) ->
    {Envs, MayFail} = match(P, V, Env),
    Guarded = [{guard(G, Env1), Env1} || Env1 <- Envs],
    Taken = [{clause, Body, Env1} || {R, Env1} <- Guarded, R =/= false],
    Sure = not MayFail andalso Guarded =/= [] andalso
        lists:all(fun({R, _}) -> R =:= true end, Guarded),
    case Sure of
        true -> lists:reverse(Acc, Taken);
        false -> select_each(Rest, V, lists:reverse(Taken, Acc))
    end.

if_outcomes(Clauses, Env, _L) ->
    select([{clause, L, [{var, L, '_'}], G, B} || {clause, L, [], G, B} <- Clauses], ok, Env).

%% match(Pattern, Value, Env) -> {[Env'], MayFail}: the environments of the
%% ways the match may succeed, and whether it may fail.
match(P, V, Env) ->
    Ways = match_ways(P, V, Env),
    {lists:usort([E || {_, E} <- Ways, E =/= fail]),
     Ways =:= [] orelse lists:any(fun({C, E}) -> C =:= maybe orelse E =:= fail end, Ways)}.

%% [{certain | maybe, Env | fail}]: one entry per world the domain splits V
%% into.
match_ways({var, _, '_'}, _V, Env) -> [{certain, Env}];
match_ways({var, _, X}, V, Env) ->
    case Env of
        #{X := Bound} ->
            case mce_abs_domain:compare(dom(), '=:=', Bound, V) of
                true -> [{certain, Env}];
                false -> [{certain, fail}];
                maybe -> [{maybe, Env}]
            end;
        #{} -> [{certain, Env#{X => V}}]
    end;
match_ways({Lit, _, C}, V, Env) when Lit =:= atom; Lit =:= integer; Lit =:= char; Lit =:= float ->
    literal(mce_abs_domain:match_literal(dom(), V, C), Env);
match_ways({nil, _}, V, Env) ->
    literal(mce_abs_domain:as_nil(dom(), V), Env);
match_ways({string, L, S}, V, Env) ->
    match_ways(string_pattern(S, L), V, Env);
match_ways({op, _, '-', {Lit, _, C}}, V, Env) when Lit =:= integer; Lit =:= float ->
    literal(mce_abs_domain:match_literal(dom(), V, -C), Env);
match_ways({match, _, P1, P2}, V, Env) ->
    [{both(C1, C2), E2} || {C1, E1} <- match_ways(P1, V, Env),
                           {C2, E2} <- continue_ways(P2, V, E1)];
match_ways({tuple, _, Ps}, V, Env) ->
    case mce_abs_domain:as_tuple(dom(), V, length(Ps)) of
        [] -> [{certain, fail}];
        Alts -> [W || {C, Es} <- Alts, W <- seq_ways(Ps, Es, C, Env)]
    end;
match_ways({cons, _, H, T}, V, Env) ->
    case mce_abs_domain:as_cons(dom(), V) of
        [] -> [{certain, fail}];
        Alts -> [W || {C, Hv, Tv} <- Alts, W <- seq_ways([H, T], [Hv, Tv], C, Env)]
    end;
match_ways({map, _, Fields}, V, Env) when is_map(V) ->
    map_ways(Fields, V, certain, Env);
match_ways({map, _, Fields}, {'$mce_abs', any}, Env) ->
    %% Any term may be a map with these keys, whose values are any terms.
    [{maybe, E} || {_, E} <- map_ways(Fields, any_map(Fields, Env), maybe, Env)];
match_ways({map, _, _}, _V, _Env) ->
    [{certain, fail}];
match_ways(P, _V, _Env) ->
    unsupported({pattern, element(1, P)}, none, line(P)).

%% A map pattern's fields (`K := P'): the keys are guard expressions,
%% evaluated concretely; a key the map lacks fails the match.
map_ways([], _Map, C, Env) -> [{C, Env}];
map_ways(_, _Map, C, fail) -> [{C, fail}];
map_ways([{map_field_exact, L, KeyE, P} | Rest], Map, C, Env) ->
    case guard_values(KeyE, Env) of
        [{value, Key}] ->
            mce_abs_domain:is_concrete(Key) orelse unsupported(map_pattern_abstract_key, none, line(KeyE)),
            case maps:find(Key, Map) of
                {ok, X} -> [W || {C1, E1} <- match_ways(P, X, Env),
                                 W <- map_ways(Rest, Map, both(C, C1), E1)];
                error -> [{certain, fail}]
            end;
        _ ->
            unsupported(map_pattern_key, none, L)
    end.

any_map(Fields, Env) ->
    maps:from_list([{Key, any()} || {map_field_exact, _, KeyE, _} <- Fields,
                                   [{value, Key}] <- [guard_values(KeyE, Env)]]).

literal(true, Env) -> [{certain, Env}];
literal(false, _Env) -> [{certain, fail}];
literal(maybe, Env) -> [{maybe, Env}].

continue_ways(_P, _V, fail) -> [{certain, fail}];
continue_ways(P, V, Env) -> match_ways(P, V, Env).

seq_ways([], [], C, Env) -> [{C, Env}];
seq_ways(_, _, C, fail) -> [{C, fail}];
seq_ways([P | Ps], [V | Vs], C, Env) ->
    [W || {C1, E1} <- match_ways(P, V, Env), W <- seq_ways(Ps, Vs, both(C, C1), E1)].

both(certain, certain) -> certain;
both(_, _) -> maybe.

string_pattern([], L) -> {nil, L};
string_pattern([C | Cs], L) -> {cons, L, {integer, L, C}, string_pattern(Cs, L)}.

%% Guards: a sequence of alternatives, each a conjunction of tests.
guard([], _Env) -> true;
guard(Alts, Env) -> tv_or([tv_and([guard_test(T, Env) || T <- Tests]) || Tests <- Alts]).

tv_and(Vs) -> tv(false, Vs).

tv_or(Vs) -> tv(true, Vs).

%% A conjunction (Dominant = false) or disjunction (true) of three-valued
%% answers.
tv(Dominant, Vs) ->
    case lists:member(Dominant, Vs) of
        true -> Dominant;
        false ->
            case lists:member(maybe, Vs) of
                true -> maybe;
                false -> not Dominant
            end
    end.

%% A guard test is true, false or maybe; an exception in a guard is false.
guard_test(T, Env) ->
    %% The possible values are alternatives, not a disjunction: true only
    %% if every one is.
    Results = [case V of
                   {value, true} -> true;
                   {value, Other} ->
                       case mce_abs_domain:match_literal(dom(), Other, true) of
                           false -> false;
                           _ -> maybe
                       end;
                   {error, _} -> false
               end || V <- guard_values(T, Env)],
    case lists:usort(Results) of
        [true] -> true;
        [false] -> false;
        [] -> false;
        _ -> maybe
    end.

%% The possible values of a guard expression.
guard_values({var, _, X}, Env) -> [{value, maps:get(X, Env)}];
guard_values({Lit, _, C}, _Env) when Lit =:= atom -> [{value, C}];
%% A guard's literals stay exact: a guard only tests (`is_function(F, 1)',
%% `N > 2'), nothing it computes flows into the program's data, and an
%% exact operand is the most precise test.
guard_values({Lit, _, C}, _Env) when Lit =:= integer; Lit =:= char; Lit =:= float ->
    [{value, C}];
guard_values({nil, _}, _Env) -> [{value, []}];
guard_values({string, _, S}, _Env) -> [{value, alpha(S)}];
guard_values({tuple, _, Es}, Env) ->
    [{value, alpha(list_to_tuple(Vs))} || Vs <- guard_args(Es, Env)];
guard_values({cons, _, H, T}, Env) ->
    [{value, alpha([Hv | Tv])} || [Hv, Tv] <- guard_args([H, T], Env)];
guard_values({op, _, 'andalso', A, B}, Env) ->
    guard_values({op, 0, 'and', A, B}, Env);
guard_values({op, _, 'orelse', A, B}, Env) ->
    guard_values({op, 0, 'or', A, B}, Env);
guard_values({op, _, Op, A, B}, Env) ->
    guard_op(Op, [A, B], Env);
guard_values({op, _, Op, A}, Env) ->
    guard_op(Op, [A], Env);
guard_values({call, _, {remote, _, {atom, _, erlang}, {atom, _, F}}, As}, Env) ->
    guard_call(F, As, Env);
guard_values({call, _, {atom, _, F}, As}, Env) ->
    guard_call(F, As, Env);
guard_values(E, _Env) ->
    unsupported({guard, element(1, E)}, none, line(E)).

guard_args(Es, Env) ->
    Choices = [[V || {value, V} <- guard_values(E, Env)] || E <- Es],
    combinations(Choices).

guard_op(Op, As, Env) ->
    lists:usort(lists:append([guard_op_values(Op, Vs) || Vs <- guard_args(As, Env)])) ++
        [{error, badarg} || lists:any(fun(A) -> [E || {error, _} = E <- guard_values(A, Env)] =/= [] end, As)].

guard_op_values(Op, [A, B]) when Op =:= '=='; Op =:= '/='; Op =:= '=:='; Op =:= '=/=';
                                 Op =:= '<'; Op =:= '>'; Op =:= '=<'; Op =:= '>=' ->
    bool_outcomes(mce_abs_domain:compare(dom(), Op, A, B));
guard_op_values(Op, Vs) when Op =:= 'not'; Op =:= 'and'; Op =:= 'or'; Op =:= 'xor' ->
    boolean_op(Op, Vs);
guard_op_values(Op, Vs) ->
    mce_abs_domain:arith(dom(), Op, [alpha(V) || V <- Vs]).

guard_call(F, As, Env) ->
    lists:append([guard_bif(F, Vs) || Vs <- guard_args(As, Env)]) ++
        [{error, badarg} || lists:any(fun(A) -> [E || {error, _} = E <- guard_values(A, Env)] =/= [] end, As)].

guard_bif(F, [V]) when F =:= is_integer; F =:= is_float; F =:= is_number; F =:= is_atom;
                       F =:= is_boolean; F =:= is_list; F =:= is_tuple; F =:= is_pid;
                       F =:= is_reference; F =:= is_port; F =:= is_binary; F =:= is_bitstring;
                       F =:= is_function; F =:= is_map ->
    bool_outcomes(mce_abs_domain:type_test(dom(), F, V));
guard_bif(is_function, [V, A]) when is_integer(A) ->
    bool_outcomes(mce_abs_domain:type_test(dom(), {is_function, A}, V));
guard_bif(F, Vs) ->
    case erl_internal:guard_bif(F, length(Vs)) of
        false -> [{error, badarg}];
        true ->
            case mce_abs_domain:is_concrete(Vs) of
                true ->
                    try [{value, alpha(erlang:apply(erlang, F, Vs))}]
                    catch error:R -> [{error, R}]
                    end;
                false ->
                    case mce_abs_domain:bif(dom(), {erlang, F, length(Vs)}, Vs) of
                        unknown -> [{value, any()}, {error, badarg}];
                        Os -> Os
                    end
            end
    end.
