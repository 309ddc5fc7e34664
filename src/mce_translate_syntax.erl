%% @doc Walking Erlang abstract syntax, for every pass of the translator
%% (and mce_anf, mce_closure).
%%
%% Owns the generic traversals (postwalk, folds with or without fun bodies,
%% the subexpressions of an expression) and the scope rules the code
%% generator relies on (the variables a pattern binds, those an expression
%% leaves bound after it).  No pass's state lives here (subexprs/1
%% borrows one process dictionary key for the length of a call).
%%
%% Invariant: `map_subexprs/2' and `subexprs/1' see exactly the
%% subexpressions evaluated when the expression is, in the order they are
%% written: never patterns, never the bodies of funs (a fun's body runs
%% when the fun is called).  The folds see every node, patterns and guards
%% included: `fold_no_funs/3' skips the bodies of funs likewise,
%% `fold_all/3' enters them.
-module(mce_translate_syntax).

-export([postwalk/2, fold_all/3, fold_no_funs/3, subexprs/1, map_subexprs/2, is_literal/1]).
-export([pat_vars/1, vars_all/1, bound/1, body_bound/1]).

%% @doc Rewrites bottom-up: F sees every node after its children.
-spec postwalk(fun((term()) -> term()), term()) -> term().
postwalk(F, T) when is_tuple(T) ->
    F(list_to_tuple(postwalk(F, tuple_to_list(T))));
postwalk(F, L) when is_list(L) ->
    [postwalk(F, X) || X <- L];
postwalk(_F, X) ->
    X.

%% @doc Folds over every node outside the bodies of funs: what runs when
%% the enclosing code runs.
-spec fold_no_funs(fun((term(), Acc) -> Acc), Acc, term()) -> Acc.
fold_no_funs(F, Acc, T) ->
    fold(F, Acc, T, false).

%% @doc Folds over every node, fun bodies included.
-spec fold_all(fun((term(), Acc) -> Acc), Acc, term()) -> Acc.
fold_all(F, Acc, T) ->
    fold(F, Acc, T, true).

%% Folds F over every node of an abstract syntax (sub)tree, preorder;
%% EnterFuns = false skips the bodies of fun expressions.
fold(_F, Acc, {'fun', _, {clauses, _}}, false) -> Acc;
fold(_F, Acc, {named_fun, _, _, _}, false) -> Acc;
fold(F, Acc, T, EnterFuns) when is_tuple(T) ->
    fold(F, F(T, Acc), tuple_to_list(T), EnterFuns);
fold(F, Acc, [H | T], EnterFuns) ->
    fold(F, fold(F, Acc, H, EnterFuns), T, EnterFuns);
fold(_F, Acc, _, _EnterFuns) ->
    Acc.

%% @doc True for an expression that is a constant term.
-spec is_literal(term()) -> boolean().
is_literal(E) ->
    try erl_parse:normalise(E) of _ -> true
    catch _:_ -> false
    end.

%%--------------------------------------------------------------------
%% Variables
%%--------------------------------------------------------------------

%% @doc The variables a pattern binds (or uses), as an ordset.
-spec pat_vars(term()) -> [atom()].
pat_vars(P) ->
    lists:usort(fold_all(fun({var, _, '_'}, Acc) -> Acc;
                            ({var, _, V}, Acc) -> [V | Acc];
                            (_, Acc) -> Acc
                         end, [], P)).

%% @doc Every variable named in a tree.
-spec vars_all(term()) -> [atom()].
vars_all(T) ->
    pat_vars(T).

%% @doc Variables an expression binds that stay bound after it.
-spec bound(term()) -> [atom()].
bound({match, _, P, E}) -> union(pat_vars(P), bound(E));
bound({'case', _, H, Cls}) -> union(bound(H), clauses_bound(Cls));
bound({'if', _, Cls}) -> clauses_bound(Cls);
bound({'receive', _, Cls}) -> clauses_bound(Cls);
bound({'receive', _, [], T, A}) -> union(bound(T), body_bound(A));
bound({'receive', _, Cls, T, A}) ->
    union(bound(T), intersection(clauses_bound(Cls), body_bound(A)));
bound({block, _, Es}) -> body_bound(Es);
bound({'try', _, _, _, _, _}) -> [];
bound({'catch', _, _}) -> [];
bound({'fun', _, _}) -> [];
bound({named_fun, _, _, _}) -> [];
bound({Comp, _, _, _}) when Comp =:= lc; Comp =:= bc; Comp =:= mc -> [];
bound({op, _, Op, A, _}) when Op =:= 'andalso'; Op =:= 'orelse' -> bound(A);
bound(E) when is_tuple(E) ->
    lists:foldl(fun(X, Acc) -> union(Acc, bound(X)) end, [], subexprs(E));
bound(_) -> [].

%% @doc The variables a body leaves bound.
-spec body_bound([term()]) -> [atom()].
body_bound(Es) ->
    lists:foldl(fun(E, Acc) -> union(Acc, bound(E)) end, [], Es).

clauses_bound([]) -> [];
clauses_bound(Cls) ->
    Sets = [union(pat_vars(Ps), body_bound(B)) || {clause, _, Ps, _, B} <- Cls],
    lists:foldl(fun intersection/2, hd(Sets), tl(Sets)).

%%--------------------------------------------------------------------
%% Generic traversal of expressions (patterns are left alone)
%%--------------------------------------------------------------------

%% @doc The subexpressions of E, in evaluation order.
-spec subexprs(term()) -> [term()].
subexprs(E) ->
    Collect = fun(X) -> put(mce_tr_sub, [X | get(mce_tr_sub)]), X end,
    put(mce_tr_sub, []),
    _ = map_subexprs(Collect, E),
    lists:reverse(erase(mce_tr_sub)).

%% @doc E with F applied to each of its subexpressions.
-spec map_subexprs(fun((term()) -> term()), term()) -> term().
map_subexprs(F, {match, L, P, E}) -> {match, L, P, F(E)};
map_subexprs(F, {tuple, L, Es}) -> {tuple, L, [F(E) || E <- Es]};
map_subexprs(F, {cons, L, H, T}) -> {cons, L, F(H), F(T)};
map_subexprs(F, {op, L, Op, A}) -> {op, L, Op, F(A)};
map_subexprs(F, {op, L, Op, A, B}) -> {op, L, Op, F(A), F(B)};
map_subexprs(F, {bin, L, Elems}) ->
    {bin, L, [{bin_element, BL, F(V), map_size_expr(F, S), T}
              || {bin_element, BL, V, S, T} <- Elems]};
map_subexprs(F, {record, L, Name, Fields}) -> {record, L, Name, map_fields(F, Fields)};
map_subexprs(F, {record, L, E, Name, Fields}) -> {record, L, F(E), Name, map_fields(F, Fields)};
map_subexprs(F, {record_field, L, E, Name, Field}) -> {record_field, L, F(E), Name, Field};
map_subexprs(F, {map, L, Assocs}) -> {map, L, map_assocs(F, Assocs)};
map_subexprs(F, {map, L, E, Assocs}) -> {map, L, F(E), map_assocs(F, Assocs)};
map_subexprs(F, {call, L, Fun, As}) -> {call, L, F(Fun), [F(A) || A <- As]};
map_subexprs(F, {remote, L, M, Fn}) -> {remote, L, F(M), F(Fn)};
map_subexprs(F, {'catch', L, E}) -> {'catch', L, F(E)};
map_subexprs(F, {block, L, Es}) -> {block, L, [F(E) || E <- Es]};
map_subexprs(F, {'case', L, H, Cls}) -> {'case', L, F(H), map_clauses(F, Cls)};
map_subexprs(F, {'if', L, Cls}) -> {'if', L, map_clauses(F, Cls)};
map_subexprs(F, {'receive', L, Cls}) -> {'receive', L, map_clauses(F, Cls)};
map_subexprs(F, {'receive', L, Cls, T, A}) ->
    {'receive', L, map_clauses(F, Cls), F(T), [F(E) || E <- A]};
map_subexprs(F, {'try', L, Es, Of, Catch, After}) ->
    {'try', L, [F(E) || E <- Es], map_clauses(F, Of), map_clauses(F, Catch), [F(E) || E <- After]};
map_subexprs(F, {Comp, L, T, Quals}) when Comp =:= lc; Comp =:= bc; Comp =:= mc ->
    {Comp, L, F(T), [case Q of
                         {G, QL, P, E} when G =:= generate; G =:= b_generate -> {G, QL, P, F(E)};
                         _ -> F(Q)
                     end || Q <- Quals]};
map_subexprs(_F, E) ->
    %% Literals, variables, funs (their bodies are translated by tr_expr) and
    %% record_index have no subexpressions to rewrite here.
    E.

map_size_expr(_F, default) -> default;
map_size_expr(F, S) -> F(S).

map_fields(F, Fields) ->
    [case Fd of
         {record_field, L, K, V} -> {record_field, L, K, F(V)};
         Other -> Other
     end || Fd <- Fields].

map_assocs(F, Assocs) ->
    [{Kind, L, F(K), F(V)} || {Kind, L, K, V} <- Assocs].

map_clauses(F, Cls) ->
    [{clause, L, Ps, Gs, [F(E) || E <- B]} || {clause, L, Ps, Gs, B} <- Cls].

%%--------------------------------------------------------------------
%% Helpers
%%--------------------------------------------------------------------

union(A, B) -> ordsets:union(A, B).
intersection(A, B) -> ordsets:intersection(A, B).
