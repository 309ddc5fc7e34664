%% @doc The translator's pass for automatic symmetry reduction: every place
%% where checked code can observe the numbers of pids is pointed at the
%% runtime guard (mce_rt_order): forms in, forms out.
%%
%% A renaming of pids is an automorphism of a program that only tests pids
%% for equality; symmetry reduction (c_src/symmetry.c) relies on it.  What
%% can see pid numbers is rewritten so that it reports itself, at run time,
%% when its operands hold pids:
%%
%%   order operators   `A < B', `>', `=<', `>=' in bodies, unless an
%%                     operand cannot hold a pid (a literal, arithmetic,
%%                     a size): mce_rt_order:compare/3;
%%   calls             erlang:max/min/phash/phash2/term_to_binary/
%%                     pid_to_list/..., lists:sort/usort/keysort/merge/...,
%%                     ordsets, orddict, gb_sets, gb_trees, sofs, sets,
%%                     dict, io_lib:format/... (mce_rt_order:observes/3):
%%                     mce_rt_order:call/3; local calls of the auto-imported
%%                     BIFs too;
%%   fun references    `fun lists:sort/1', `fun erlang:'<'/2': a fun that
%%                     calls mce_rt_order:call/3;
%%   guards            an order comparison in a guard between two operands
%%                     that may both hold pids cannot call anything: the
%%                     clause group it belongs to is preceded by
%%                     mce_rt_order:opaque/0 when it is a statement of a
%%                     body (`case', `if', `receive'), and otherwise (a
%%                     function's or a fun's heads, `try ... of', an
%%                     expression) every clause body of the group and its
%%                     failure start with it (see below).
%%
%% Computed calls (`M:F(...)' with M or F a variable, apply/3) and funs
%% made at run time are checked by mce_rt:apply/3 and
%% mce_sandbox:make_fun/3.  erlang:processes/0 (a list in pid order) is
%% redirected by mce_translate:classify_call/3.
%%
%% Invariant: the output means what the input means on the VM (each
%% replacement returns what it replaces); the only new behaviour is the
%% report.  mce_io is left alone: its text goes to the output, never into
%% a state.
-module(mce_translate_order).

-export([forms/2]).

-import(mce_translate_syntax, [is_literal/1]).

%% The process dictionary key of the pass's counter of fresh variables.
-define(COUNTER, '$mce_translate_order').

%% @doc The rewrites of module M's forms.
-spec forms(module(), [erl_parse:abstract_form()]) -> [erl_parse:abstract_form()].
forms(mce_io, Forms) ->
    Forms;
forms(_M, Forms) ->
    Defs = sets:from_list([{F, A} || {function, _, F, A, _} <- Forms]),
    put(?COUNTER, 0),
    try
        lists:append([function(F, Defs) || F <- Forms])
    after
        erase(?COUNTER)
    end.

%% A function.  When a guard of its clauses may compare pids, the clause
%% is preceded by an observing clause: the same patterns (each aliased to
%% a fresh variable), a guard true when the comparison's operands may both
%% hold pids (neither is a number nor an atom: guards can test no more),
%% and a body that reports, then runs the function's clauses as written,
%% in a copy `'$mce_ord_F'' (mce_exec names its frames F).
function({function, L, N, A, Cs}, Defs) ->
    Cs1 = [clause(C, Defs) || C <- Cs],
    case lists:any(fun risky_clause/1, Cs) of
        false ->
            [{function, L, N, A, Cs1}];
        true ->
            Copy = list_to_atom("$mce_ord_" ++ atom_to_list(N)),
            Redo = fun(L1, Vars) -> [{call, L1, {atom, L1, Copy}, Vars}] end,
            [{function, L, N, A, observing(Cs, Cs1, Redo)}, {function, L, Copy, A, Cs1}]
    end;
function(F, _Defs) ->
    [F].

%% Clauses Cs (rewritten: Cs1) with an observing clause before each risky
%% one; Redo(L, Vars) is the body that runs the group again on the values
%% the patterns matched (Vars).
observing(Cs, Cs1, Redo) ->
    lists:append(
      [case risky_clause(C) of
           false -> [C1];
           true ->
               {clause, L, Ps, _, _} = C,
               Vars = [fresh(L) || _ <- Ps],
               Aliased = [{match, L, P, V} || {P, V} <- lists:zip(Ps, Vars)],
               [{clause, L, Aliased, [[may_observe(C)]], [opaque(L) | Redo(L, Vars)]}, C1]
       end || {C, C1} <- lists:zip(Cs, Cs1)]).

fresh(L) ->
    N = get(?COUNTER),
    put(?COUNTER, N + 1),
    {var, L, list_to_atom("MceOrd" ++ integer_to_list(N))}.

%% The clauses of a fun: no copy to run again, so each clause body starts
%% with the report and a last clause reports the failure before raising
%% function_clause, as the VM would.
fun_clauses(L, Cs, Defs) ->
    Cs1 = [clause(C, Defs) || C <- Cs],
    case lists:any(fun risky_clause/1, Cs) of
        false -> Cs1;
        true ->
            [{clause, _, Ps, _, _} | _] = Cs,
            Vars = [fresh(L) || _ <- Ps],
            Fail = {clause, L, Vars, [],
                    [opaque(L),
                     {call, L, {remote, L, {atom, L, erlang}, {atom, L, error}},
                      [{atom, L, function_clause}, list_expr(Vars, L)]}]},
            [report_first(C) || C <- Cs1] ++ [Fail]
    end.

report_first({clause, L, Ps, Gs, B}) ->
    {clause, L, Ps, Gs, [opaque(L) | B]}.

clause({clause, L, Ps, Gs, B}, Defs) ->
    {clause, L, Ps, Gs, body(B, Defs)}.

%% A body: each statement rewritten; a `receive' whose guards may compare
%% pids preceded by the report (the messages it will test are not there
%% yet, so nothing can be tested on the values).
body(Es, Defs) ->
    lists:append([statement(E, Defs) || E <- Es]).

statement(E, Defs) ->
    case group_of(E) of
        {ok, Cs} ->
            case lists:any(fun risky_clause/1, Cs) of
                %% Reported before the group runs: its clauses need not.
                true -> [opaque(element(2, E)), put_covered(E, Defs)];
                false -> [expr(E, Defs)]
            end;
        none -> [expr(E, Defs)]
    end.

put_covered({match, L, P, E}, Defs) ->
    {match, L, P, put_covered(E, Defs)};
put_covered({'receive', L, Cs}, Defs) ->
    {'receive', L, [clause(C, Defs) || C <- Cs]};
put_covered({'receive', L, Cs, T, After}, Defs) ->
    {'receive', L, [clause(C, Defs) || C <- Cs], expr(T, Defs), body(After, Defs)}.

group_of({match, _, _, E}) -> group_of(E);
group_of({'receive', _, Cs}) -> {ok, Cs};
group_of({'receive', _, Cs, _, _}) -> {ok, Cs};
group_of(_) -> none.

%% An expression.  A `case' or `if' whose guards may compare pids gets
%% observing clauses (see observing/3), running the group again on the
%% matched value.  Other groups (`try ... of', `catch', `maybe ... else',
%% a receive that is no statement) get the report in every clause body and
%% a last clause that reports their failure and raises what the VM raises:
%% a guard that fails on pids and lets a later clause run is reported by
%% that clause's body.
expr({op, L, Op, A, B}, Defs) when Op =:= '<'; Op =:= '>'; Op =:= '=<'; Op =:= '>=' ->
    A1 = expr(A, Defs),
    B1 = expr(B, Defs),
    case maybe_pid(A, []) andalso maybe_pid(B, []) of
        true -> rt(L, compare, [{atom, L, Op}, A1, B1]);
        false -> {op, L, Op, A1, B1}
    end;
expr({call, L, {atom, FL, F}, As}, Defs) ->
    As1 = [expr(A, Defs) || A <- As],
    case not sets:is_element({F, length(As)}, Defs) andalso
         erl_internal:bif(F, length(As)) andalso
         mce_rt_order:observes(erlang, F, length(As)) of
        Kind when Kind =:= order; Kind =:= hash; Kind =:= always ->
            observed(L, erlang, F, As1);
        _ -> {call, L, {atom, FL, F}, As1}
    end;
expr({call, L, {remote, RL, {atom, ML, maps}, {atom, FL, F}}, As}, Defs)
  when F =:= fold; F =:= foreach; F =:= map; F =:= filter; F =:= filtermap; F =:= merge_with;
       F =:= intersect_with ->
    %% A higher-order function of maps, which runs translated (its fun may
    %% block): the call stays, the maps it iterates pass through
    %% mce_rt_order:map_keys/1 first.
    As1 = [expr(A, Defs) || A <- As],
    Iterated = mce_rt_order:iterates_map(F, length(As)),
    As2 = [case lists:member(I, Iterated) of
               true -> rt(L, map_keys, [A]);
               false -> A
           end || {I, A} <- lists:zip(lists:seq(1, length(As1)), As1)],
    {call, L, {remote, RL, {atom, ML, maps}, {atom, FL, F}}, As2};
expr({call, L, {remote, RL, {atom, ML, M}, {atom, FL, F}}, As}, Defs) ->
    As1 = [expr(A, Defs) || A <- As],
    case mce_rt_order:observes(M, F, length(As)) of
        none -> {call, L, {remote, RL, {atom, ML, M}, {atom, FL, F}}, As1};
        _ -> observed(L, M, F, As1)
    end;
expr({'fun', L, {function, {atom, ML, maps}, {atom, FL, F}, {integer, _, A}}}, Defs)
  when (F =:= fold andalso A =:= 3); F =:= foreach andalso A =:= 2; F =:= map andalso A =:= 2;
       F =:= filter andalso A =:= 2; F =:= filtermap andalso A =:= 2;
       F =:= merge_with andalso A =:= 3; F =:= intersect_with andalso A =:= 3 ->
    %% `fun maps:fold/3': a fun that makes the call above, so the maps it
    %% iterates pass through mce_rt_order:map_keys/1 however it is called.
    Vars = [{var, L, list_to_atom("MceOrdF" ++ integer_to_list(I))} || I <- lists:seq(1, A)],
    Call = expr({call, L, {remote, L, {atom, ML, maps}, {atom, FL, F}}, Vars}, Defs),
    {'fun', L, {clauses, [{clause, L, Vars, [], [Call]}]}};
expr({'fun', L, {function, {atom, _, M}, {atom, _, F}, {integer, _, A}}} = Fun, _Defs) ->
    case mce_rt_order:observes(M, F, A) of
        none -> Fun;
        _ ->
            Vars = [{var, L, list_to_atom("MceOrdF" ++ integer_to_list(I))} || I <- lists:seq(1, A)],
            {'fun', L, {clauses, [{clause, L, Vars, [], [observed(L, M, F, Vars)]}]}}
    end;
expr({'fun', L, {clauses, Cs}}, Defs) ->
    {'fun', L, {clauses, fun_clauses(L, Cs, Defs)}};
expr({named_fun, L, Name, Cs}, Defs) ->
    {named_fun, L, Name, fun_clauses(L, Cs, Defs)};
expr({'case', L, E, Cs}, Defs) ->
    %% The observing clause runs the case again on the value it matched.
    Cs1 = [clause(C, Defs) || C <- Cs],
    {'case', L, expr(E, Defs),
     observing(Cs, Cs1, fun(L1, [V]) -> [{'case', L1, V, Cs1}] end)};
expr({'if', L, Cs}, Defs) ->
    Cs1 = [clause(C, Defs) || C <- Cs],
    {'if', L, observing(Cs, Cs1, fun(L1, []) -> [{'if', L1, Cs1}] end)};
expr({'receive', L, Cs}, Defs) ->
    {'receive', L, group(Cs, Defs, none)};
expr({'receive', L, Cs, T, After}, Defs) ->
    {'receive', L, group(Cs, Defs, none), expr(T, Defs), body(After, Defs)};
expr({'try', L, Es, OfCs, CatchCs, After}, Defs) ->
    {'try', L, body(Es, Defs), group(OfCs, Defs, {try_clause, L}),
     group(CatchCs, Defs, {catch_clause, L}), body(After, Defs)};
expr({'catch', L, E}, Defs) ->
    {'catch', L, expr(E, Defs)};
expr({block, L, Es}, Defs) ->
    {block, L, body(Es, Defs)};
expr({'maybe', L, Es}, Defs) ->
    {'maybe', L, body(Es, Defs)};
expr({'maybe', L, Es, {'else', EL, Cs}}, Defs) ->
    {'maybe', L, body(Es, Defs), {'else', EL, group(Cs, Defs, {else_clause, L})}};
expr({match, L, P, E}, Defs) ->
    {match, L, P, expr(E, Defs)};
expr({maybe_match, L, P, E}, Defs) ->
    {maybe_match, L, P, expr(E, Defs)};
expr({Comp, L, Template, Quals}, Defs) when Comp =:= lc; Comp =:= bc; Comp =:= mc ->
    {Comp, L, expr(Template, Defs), [qualifier(Q, Defs) || Q <- Quals]};
expr(T, Defs) when is_tuple(T) ->
    list_to_tuple([expr(X, Defs) || X <- tuple_to_list(T)]);
expr(Xs, Defs) when is_list(Xs) ->
    [expr(X, Defs) || X <- Xs];
expr(X, _Defs) ->
    X.

qualifier({G, L, P, E}, Defs) when G =:= generate; G =:= b_generate; G =:= m_generate ->
    {G, L, P, expr(E, Defs)};
qualifier(Filter, Defs) ->
    expr(Filter, Defs).

%% Clauses of a group inside an expression (see expr/2), and the error
%% the VM raises when none matches (`none': a receive waits, a catch
%% clause lets the exception through).
group(Cs, Defs, Fail) ->
    Cs1 = [clause(C, Defs) || C <- Cs],
    case lists:any(fun risky_clause/1, Cs) of
        true -> [report_first(C) || C <- Cs1] ++ fail_clause(Fail);
        false -> Cs1
    end.

fail_clause(none) ->
    [];
fail_clause({catch_clause, L}) ->
    %% No catch clause took the exception: it goes on, as on the VM.
    [C, R, S] = [fresh(L) || _ <- [class, reason, stack]],
    [{clause, L, [{tuple, L, [C, R, S]}], [],
      [opaque(L), {call, L, {remote, L, {atom, L, erlang}, {atom, L, raise}}, [C, R, S]}]}];
fail_clause({Why, L}) ->
    V = {var, L, 'MceOrdNoMatch'},
    [{clause, L, [V], [], [opaque(L), error_call(L, {tuple, L, [{atom, L, Why}, V]})]}].

error_call(L, Reason) ->
    {call, L, {remote, L, {atom, L, erlang}, {atom, L, error}}, [Reason]}.

observed(L, M, F, As) ->
    rt(L, call, [{atom, L, M}, {atom, L, F}, list_expr(As, L)]).

opaque(L) ->
    rt(L, opaque, []).

rt(L, F, As) ->
    {call, L, {remote, L, {atom, L, mce_rt_order}, {atom, L, F}}, As}.

list_expr(Es, L) ->
    lists:foldr(fun(E, T) -> {cons, L, E, T} end, {nil, L}, Es).

%%--------------------------------------------------------------------
%% Guards
%%--------------------------------------------------------------------

%% Whether a clause's guard may compare two terms that both hold pids:
%% an order comparison (or max/min) whose operands may both hold one.
risky_clause({clause, _, _, Gs, _}) ->
    lists:any(fun(Conj) -> risky_conj(Conj) end, Gs).

risky_conj(Conj) ->
    comparisons(Conj) =/= [].

%% The guard of a risky clause's observing clause: one of its order
%% comparisons may compare two terms that hold pids.
may_observe({clause, L, _, Gs, _}) ->
    Tests = lists:append([comparisons(Conj) || Conj <- Gs]),
    lists:foldl(fun(T, Acc) -> {op, L, 'orelse', Acc, T} end, hd(Tests), tl(Tests)).

comparisons(Conj) ->
    Plain = plain_vars(Conj),
    mce_translate_syntax:fold_all(
      fun(E, Acc) ->
              case operands(E) of
                  {ok, A, B} ->
                      case maybe_pid(A, Plain) andalso maybe_pid(B, Plain) of
                          true -> [both_may_hold(A, B) | Acc];
                          false -> Acc
                      end;
                  none -> Acc
              end
      end, [], Conj).

operands({op, _, Op, A, B}) when Op =:= '<'; Op =:= '>'; Op =:= '=<'; Op =:= '>=' -> {ok, A, B};
operands({call, _, {atom, _, F}, [A, B]}) when F =:= max; F =:= min -> {ok, A, B};
operands({call, _, {remote, _, {atom, _, erlang}, {atom, _, F}}, [A, B]}) when F =:= max; F =:= min ->
    {ok, A, B};
operands(_) -> none.

%% Neither A nor B is a number or an atom (the cheap test of
%% mce_rt_order:compare/3, the most a guard can tell).
both_may_hold(A, B) ->
    L = element(2, A),
    Not = fun(X) ->
                  {op, L, 'not', {op, L, 'orelse', {call, L, {atom, L, is_number}, [X]},
                                  {call, L, {atom, L, is_atom}, [X]}}}
          end,
    {op, L, 'andalso', Not(A), Not(B)}.

plain_vars(Conj) ->
    [V || {call, _, {atom, _, T}, [{var, _, V}]} <- Conj, plain_test(T)]
        ++ [V || {call, _, {remote, _, {atom, _, erlang}, {atom, _, T}}, [{var, _, V}]} <- Conj,
                 plain_test(T)].

plain_test(T) ->
    lists:member(T, [is_integer, is_float, is_number, is_atom, is_boolean, is_binary,
                     is_bitstring]).

%% Whether the value of expression E may hold a pid or a ref (Plain: the
%% variables known not to).
maybe_pid({var, _, V}, Plain) ->
    not lists:member(V, Plain);
maybe_pid({op, _, Op, _, _}, _Plain) ->
    not lists:member(Op, ['+', '-', '*', '/', 'div', 'rem', 'band', 'bor', 'bxor', 'bsl', 'bsr',
                          'and', 'or', 'xor', 'andalso', 'orelse', '==', '/=', '=:=', '=/=',
                          '<', '>', '=<', '>=']);
maybe_pid({op, _, Op, _}, _Plain) ->
    not lists:member(Op, ['-', '+', 'bnot', 'not']);
maybe_pid({call, _, {atom, _, F}, _}, _Plain) ->
    not plain_bif(F);
maybe_pid({call, _, {remote, _, {atom, _, erlang}, {atom, _, F}}, _}, _Plain) ->
    not plain_bif(F);
maybe_pid({string, _, _}, _Plain) ->
    false;
maybe_pid(E, _Plain) ->
    not is_literal(E).

%% Guard BIFs whose value is a number, an atom or a binary.
plain_bif(F) ->
    lists:member(F, [length, size, tuple_size, map_size, byte_size, bit_size, abs, trunc, round,
                     float, ceil, floor, node, binary_part, is_atom, is_integer, is_pid,
                     is_reference, is_tuple, is_list, is_map, is_map_key, is_function, is_number,
                     is_float, is_binary, is_boolean]).
