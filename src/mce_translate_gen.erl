%% @doc Code generation: one analysed module in, the forms of its
%% translation `'mce$M'' out, ready for the compiler.
%%
%% A body whose evaluation may suspend is cut where it may: a `receive'
%% becomes a lambda-lifted function `'$mce_rN'' (modes match, body,
%% timeout) and a call to `mce_rt:suspend/4'; a call that may block in a
%% non-tail position gets a frame `{'mce$M', '$mce_kN', FreeVars}' holding
%% the rest of the body, pushed only when the callee returns a suspension;
%% `try'/`catch' around such code becomes handler frames.  Calls are
%% rewritten as the classification says (mce_translate:classify_call/3):
%% to the translation, to the model, or to a stop.  Every body is
%% A-normalised first (mce_anf), so a blocking call stands whole at body
%% level.  Also generated: the closure entries `'$mce_closure'/2',
%% `'$mce_fun'/2' and the makers of funs (mce_closure), and `'$mce_info'/1',
%% which names generated functions and renamed funs as the original.
%%
%% Input: a module after mce_translate_expand, the blocking set of
%% mce_translate_blocking, and the modules translated with it.
%%
%% Invariant: on every path that does not suspend the translation computes
%% what the original computes, in the same order, at the cost of one
%% `case' per site; on every path that suspends, the continuation (receive
%% function plus frames, innermost first) holds every variable the rest of
%% the code uses, so resuming it computes the rest.  A construct it cannot
%% translate makes its function stop the check when called
%% (`unsupported_construct'), never a wrong translation.
%%
%% The per-module state (counter of generated names, generated functions,
%% info entries, fun names) is in the process dictionary under `mce_tr_*'
%% for the length of `translate_module/3', saved and restored around it
%% since translating a module can translate a library module.
-module(mce_translate_gen).

-export([translate_module/3]).

-include("mce_translate.hrl").

%% Imported so that the code moved here from mce_translate reads as it did.
-import(mce_translate, [translated_name/1, translatable/1, ensure_library/1, classify_call/3]).
-import(mce_translate_blocking, [hof_fun_args/1]).
-import(mce_translate_syntax, [fold_all/3, fold_no_funs/3, map_subexprs/2, is_literal/1,
                               pat_vars/1, vars_all/1, bound/1, body_bound/1]).

-define(SUSP, '$mce_suspend').

%% What the generator knows at a point of the module: the module and its
%% translation's name, the function it is in (or the compiler's name of
%% the fun, so locations and '$mce_info' name what the VM names), the
%% module's own functions, the blocking set and which modules are
%% translated.
-record(tr, {mod :: module(),
             newmod :: module(),
             fa = {undefined, 0} :: {atom(), arity()},
             defs :: sets:set({atom(), arity()}),
             blocking :: sets:set(mfa()),
             translated :: fun((module()) -> boolean())}).

%%====================================================================
%% Module translation
%%====================================================================

%% @doc The forms of the translation of module Mod.
-spec translate_module(#mod{}, sets:set(mfa()), #{module() => #mod{}}) ->
          [erl_parse:abstract_form()].
translate_module(#mod{name = M, forms = Forms, defs = Defs}, Blocking, Mods) ->
    NewM = translated_name(M),
    Translated = fun(X) -> is_map_key(X, Mods) orelse translatable(X) end,
    St = #tr{mod = M, newmod = NewM, defs = Defs, blocking = Blocking,
             translated = Translated},
    %% Translating a module can trigger the translation of a library module
    %% (mce_translate:ensure_library/1): the per-module state is saved and
    %% restored.
    Keys = [mce_tr_counter, mce_tr_newmod, mce_tr_extra_blocking, mce_tr_generated, mce_tr_info,
            mce_tr_fun_names, mce_tr_all_fun_names],
    Saved = [{K, get(K)} || K <- Keys],
    try translate_module(M, NewM, Forms, St)
    after
        [case V of
             undefined -> erase(K);
             _ -> put(K, V)
         end || {K, V} <- Saved]
    end.

translate_module(M, NewM, Forms, St) ->
    put(mce_tr_counter, 0),
    put(mce_tr_newmod, NewM),
    put(mce_tr_extra_blocking, []),
    put(mce_tr_generated, []),
    put(mce_tr_info, []),
    put(mce_tr_all_fun_names,
        lists:foldl(fun({function, _, F, A, Cs}, Acc) -> maps:merge(Acc, fun_names(F, A, Cs));
                       (_, Acc) -> Acc
                    end, #{}, Forms)),
    %% The file's name without its directory, as OTP's own modules record
    %% theirs: the translated module (its MD5, which every fun term of it
    %% carries into the states) must not depend on where the checkout is,
    %% or hash orders, and so the reduced state counts, would.
    Source = case [F || {attribute, _, file, {F, _}} <- Forms] of
                 [F | _] -> filename:basename(F);
                 [] -> atom_to_list(M) ++ ".erl"
             end,
    Body = lists:flatmap(fun(F) -> translate_form(F, St) end, Forms) ++ closure_entries(M, Forms, St),
    Generated = lists:reverse(get(mce_tr_generated)),
    Info = info_function(M, Source, lists:reverse(get(mce_tr_info)) ++
                             fun_renames(Body ++ Generated, get(mce_tr_all_fun_names))),
    {Attrs, Funs} = lists:splitwith(fun(F) -> element(1, F) =/= function end, Body),
    Attrs ++ [{attribute, 0, compile, [export_all, nowarn_export_all]}] ++
        Funs ++ Generated ++ [Info, {eof, 0}].

translate_form({attribute, L, module, _}, #tr{newmod = NewM}) ->
    [{attribute, L, module, NewM}];
%% A record's default values are evaluated wherever the record is built
%% (`#s{}'): `owner = self()' must call the model's self(), as any code of
%% the module does.
translate_form({attribute, L, record, {Name, Fields}}, St) ->
    put(mce_tr_fun_names, #{}),
    [{attribute, L, record, {Name, [record_default(F, St#tr{fa = {Name, 0}}) || F <- Fields]}}];
translate_form({attribute, _, Drop, _}, _St)
  when Drop =:= export; Drop =:= spec; Drop =:= callback; Drop =:= behaviour;
       Drop =:= behavior; Drop =:= on_load; Drop =:= compile; Drop =:= import;
       Drop =:= dialyzer; Drop =:= optional_callbacks; Drop =:= nifs;
       Drop =:= deprecated; Drop =:= removed; Drop =:= deprecated_type;
       Drop =:= removed_type ->
    [];
translate_form({function, L, F, A, Clauses0}, St0) ->
    St = St0#tr{fa = {F, A}},
    put(mce_tr_fun_names, fun_names(F, A, Clauses0)),
    Clauses = hoist_head_guard_bifs(L, A, Clauses0),
    %% A function the translator cannot handle fails when it is called, with
    %% the construct and its location, so the rest of the module stays usable.
    try
        refuse_maybe(Clauses, St),
        [{function, L, F, A, [tr_clause(C, [], St) || C <- Clauses]}]
    catch
        error:{mcerlang, {unsupported_construct, _, _}} = Error ->
            Args = [{var, L, '_'} || _ <- lists:seq(1, A)],
            Raise = rt_call(L, fatal, [abstract(Error, L)]),
            [{function, L, F, A, [{clause, L, Args, [], [Raise]}]}]
    end;
translate_form({eof, _}, _St) ->
    [];
translate_form(Other, _St) ->
    [Other].

record_default({record_field, L, Field, Default}, St) ->
    case may_block(Default, St) of
        %% Every creation of the record in the module gives this field
        %% explicitly (mce_translate_expand:record_creations/1), where it
        %% may block.
        true -> {record_field, L, Field};
        false -> {record_field, L, Field, tr_expr(Default, [], St)}
    end;
record_default({typed_record_field, Field, Type}, St) ->
    {typed_record_field, record_default(Field, St), Type};
record_default(Field, _St) ->
    Field.

%% `maybe' (experimental in OTP 25, behind -feature(maybe_expr, enable))
%% is not translated: refused where it appears rather than run untranslated.
refuse_maybe(Tree, St) ->
    fold_tree(fun({'maybe', L, _}) -> unsupported(L, St, maybe_expression);
                 ({'maybe', L, _, _}) -> unsupported(L, St, maybe_expression);
                 ({maybe_match, L, _, _}) -> unsupported(L, St, maybe_expression);
                 (_) -> ok
              end, Tree).

fold_tree(F, T) when is_tuple(T) ->
    F(T),
    fold_tree(F, tuple_to_list(T));
fold_tree(F, [H | T]) ->
    fold_tree(F, H),
    fold_tree(F, T);
fold_tree(_F, _) ->
    ok.

%% self() or node() in a function clause's guard: the clauses become a
%% case over the arguments, after binding the BIF's value, and a call that
%% matches no clause still raises function_clause.
hoist_head_guard_bifs(L, A, Clauses) ->
    Uses = fold_all(fun({call, _, {atom, _, B}, []}, Acc) when B =:= self; B =:= node -> [B | Acc];
                       (_, Acc) -> Acc
                    end, [], [Gs || {clause, _, _, Gs, _} <- Clauses]),
    case Uses of
        [] -> Clauses;
        _ ->
            Args = [{var, L, gen_var("A", I)} || I <- lists:seq(1, A)],
            Cases = [{clause, CL, [{tuple, CL, Ps}], Gs, B} || {clause, CL, Ps, Gs, B} <- Clauses]
                ++ [{clause, L, [{var, L, '_'}], [],
                     [{call, L, {remote, L, {atom, L, erlang}, {atom, L, error}},
                       [{atom, L, function_clause}, list_expr(Args, L)]}]}],
            [{clause, L, Args, [], [{'case', L, {tuple, L, Args}, Cases}]}]
    end.

%% '$mce_closure'(FunName, {Vars...}) runs the body of a zero-arity fun of
%% the module with its captured variables: how a closure compiled into the
%% module becomes an entry point (see mce_closure).  '$mce_fun'(FunName,
%% {Vars...}) makes the translated fun of an unnamed fun of any arity with
%% its captured variables: how a closure captured by an entry, or passed in
%% its arguments, runs translated (mce_closure:translated_fun/1).
closure_entries(M, Forms, St) ->
    Functions = [F || {function, _, _, _, _} = F <- Forms],
    put(mce_tr_fun_names, get(mce_tr_all_fun_names)),
    Entries = [closure_clause(Name, Vars, Body, L, St)
               || {Name, Vars, Body, L} <- mce_closure:zero_arity_funs(Functions)],
    Funs = mce_closure:all_funs(Functions),
    Originals = case Funs of
                    [] -> [];
                    _ -> original_functions(M)
                end,
    Makers = [fun_maker(Originals, Fun, St) || Fun <- Funs],
    Dispatch = [{clause, L, [{atom, L, Name}, {var, L, 'Vars'}], [],
                 [{call, L, {atom, L, maker_name(Name)}, [{var, L, 'Vars'}]}]}
                || {Name, _, _, L} <- Funs],
    [{function, 0, '$mce_closure', 2, Entries} || Entries =/= []]
        ++ [{function, 0, '$mce_fun', 2, Dispatch} || Dispatch =/= []]
        ++ Makers.

%% One function per fun: a fun whose clauses can fail raises
%% function_clause from a stub the compiler names '-F/A-inlined-N-', F/A
%% the function the fun is written in and N counting such stubs in it.
%% Alone in its maker (no nested funs), the fun's stub is the maker's
%% first ('-inlined-0-', '-inlined-1-' after a named fun's own name); it is
%% named after the original's when the enclosing function has one stub of
%% that arity (the original module's functions tell), else it keeps the
%% maker's name.
fun_maker(Originals, {Name, Vars, FunExpr, L}, St) ->
    Maker = maker_name(Name),
    {clause, CL, [_, VarsTuple], Gs, Body} =
        closure_clause(Name, Vars, [FunExpr], L, St),
    [{clause, _, Ps, _, _} | _] = Cls = fun_expr_clauses(FunExpr),
    Arity = length(Ps),
    {match, [Prefix]} = re:run(atom_to_list(Name), "^(-.*/[0-9]+-)fun-[0-9]+-$",
                               [{capture, all_but_first, list}, unicode]),
    Stubs = [F || {F, A} <- Originals, A =:= Arity,
                  lists:prefix(Prefix ++ "inlined-", atom_to_list(F))],
    Nested = mce_closure:numbered_funs(Cls),
    %% A named fun draws a v3_kernel name before its stub.
    Count = case FunExpr of
                {named_fun, _, Var, _} ->
                    named_fun_renames(Maker, Var, Arity, Prefix, Originals, length(Nested), L),
                    2;
                _ -> 1
            end,
    case {Stubs, Nested} of
        {[Stub], []} ->
            put(mce_tr_info,
                [{{'fun', list_to_atom(lists:flatten(io_lib:format("-~ts/1-inlined-~b-",
                                                                   [Maker, K])))},
                  Stub, 0, line_number(L)} || K <- lists:seq(0, Count - 1)]
                ++ get(mce_tr_info));
        _ -> ok
    end,
    {function, 0, Maker, 1, [{clause, CL, [VarsTuple], Gs, Body}]}.

%% The original's local functions, from its beam file (loading the module
%% would run its on_load).
original_functions(M) ->
    case beam_lib:chunks(code:which(M), [labeled_locals, labeled_exports]) of
        {ok, {M, [{labeled_locals, Ls}, {labeled_exports, Es}]}} ->
            [{F, A} || {F, A, _} <- Ls ++ Es];
        _ -> []
    end.

fun_expr_clauses({'fun', _, {clauses, Cls}}) -> Cls;
fun_expr_clauses({named_fun, _, _, Cls}) -> Cls.

%% v3_kernel names a named fun '-F/A-Var/Arity-K-', K counting the names
%% it makes in F/A (named funs, function_clause stubs): in the maker, K is
%% below twice the number of funs it holds.  Mapped to the original's name
%% when F/A has one such function.
named_fun_renames(Maker, Var, Arity, Prefix, Originals, Nested, L) ->
    Own = lists:flatten(io_lib:format("~ts~ts/~b-", [Prefix, Var, Arity])),
    case [F || {F, _} <- Originals, lists:prefix(Own, atom_to_list(F))] of
        [Orig] ->
            Entries = [{{'fun', list_to_atom(lists:flatten(
                                      io_lib:format("-~ts/1-~ts/~b-~b-", [Maker, Var, Arity, K])))},
                        Orig, 0, line_number(L)}
                       || K <- lists:seq(0, 2 * Nested + 1)],
            put(mce_tr_info, Entries ++ get(mce_tr_info));
        _ -> ok
    end.

maker_name(Name) ->
    list_to_atom("$mce_fun$" ++ atom_to_list(Name)).

closure_clause(Name, Vars, Body, L, St) ->
    try
        tr_clause({clause, L, [{atom, L, Name}, {tuple, L, [{var, L, V} || V <- Vars]}],
                   [], Body}, [], St#tr{fa = {Name, 0}})
    catch
        error:{mcerlang, {unsupported_construct, _, _}} = Error ->
            {clause, L, [{atom, L, Name}, {var, L, '_'}], [],
             [rt_call(L, fatal, [abstract(Error, L)])]}
    end.

%% The compiler's names for the funs of function F/A: '-F/A-fun-N-', N
%% as the compiler numbers them (mce_closure:numbered_funs/1).  Code lifted
%% out of a fun body carries the fun's name and arity, so stack traces
%% name the fun as the VM does.
fun_names(F, A, Clauses) ->
    maps:map(fun(_Anno, N) ->
                     list_to_atom(lists:flatten(io_lib:format("-~ts/~b-fun-~b-", [F, A, N])))
             end, number_funs(Clauses)).

%% Source location => number.
number_funs(Clauses) ->
    maps:from_list([{element(2, Fun), N} || {N, Fun} <- mce_closure:numbered_funs(Clauses)]).

in_fun(L, Cls, St) ->
    [{clause, _, Ps, _, _} | _] = Cls,
    case maps:find(L, get(mce_tr_fun_names)) of
        {ok, Name} -> St#tr{fa = {Name, length(Ps)}};
        error -> St
    end.

%% Funs of the translated module whose compiled name differs from the
%% original's (the compiler numbers the funs of each function in
%% post-order; translation moves funs into generated functions): keyed
%% {fun, CompiledName}, found by the source location each fun keeps.
fun_renames(Functions, Originals) ->
    [{{'fun', Compiled}, Orig, 0, line_number(Anno)}
     || {function, _, Fn, Ar, Cls} <- Functions,
        {Anno, Index} <- maps:to_list(number_funs(Cls)),
        Orig <- [maps:get(Anno, Originals, undefined)],
        Orig =/= undefined,
        Compiled <- [list_to_atom(lists:flatten(io_lib:format("-~ts/~b-fun-~b-", [Fn, Ar, Index])))],
        Compiled =/= Orig].

info_function(M, Source, Entries) ->
    Clauses = [{clause, 0, [abstract(Name, erl_anno:new(0))], [],
                [abstract({M, F, A, Source, Line}, erl_anno:new(0))]}
               || {Name, F, A, Line} <- Entries]
        ++ [{clause, 0, [{var, 0, '_'}], [], [{atom, 0, undefined}]}],
    {function, 0, '$mce_info', 1, Clauses}.

%%--------------------------------------------------------------------
%% Bodies, sites and tails
%%--------------------------------------------------------------------

tr_clause({clause, L, Ps, Gs, Body}, Env, St) ->
    check_guards(Gs, St),
    {clause, L, Ps, Gs, tr_body(Body, union(Env, pat_vars(Ps)), St)}.

tr_body(Es, Env, St) ->
    tr_normal_body(mce_anf:body(Es, anf_ctx(Env, St)), Env, St).

%% `P = Call()' last in a body, where the call may block: the match
%% comes after the call resumes, so it becomes `V = Call(), P = V' (the
%% body's value is still the call's, matched against P).
tr_normal_body([{match, L, _P, _R} = E], Env, St) ->
    case site(E, St) of
        false ->
            [tr_tail(E, Env, St)];
        {Pat, Rhs} ->
            V = {var, L, gen_var("Last", counter())},
            tr_normal_body([{match, L, V, Rhs}, {match, L, Pat, V}], Env, St)
    end;
tr_normal_body([E], Env, St) ->
    [tr_tail(E, Env, St)];
tr_normal_body([E | Rest], Env, St) ->
    case site(E, St) of
        false -> [tr_expr(E, Env, St) | tr_normal_body(Rest, union(Env, bound(E)), St)];
        {Pat, Rhs} -> [make_site(Pat, Rhs, Rest, Env, St)]
    end.

anf_ctx(Env, St) ->
    #{may_block => fun(E) -> may_block(E, St) end,
      fresh => fun() -> gen_var("T", counter()) end,
      env => Env,
      bound => fun mce_translate_syntax:bound/1,
      lower_comprehension => fun(C, EnvNow) -> lower_comprehension(C, EnvNow, St) end,
      lower_discarded => fun(C, EnvNow) -> lower_discarded(C, EnvNow, St) end}.

%% A list comprehension whose template or qualifiers may block becomes
%% calls of generated recursive functions, one per generator, which the
%% translator then handles like any function.  The variables of the
%% enclosing scope it uses are passed as extra arguments.
lower_comprehension({lc, L, E, Quals} = C, Env, St) ->
    Outer = intersection(Env, vars_all(C)),
    lc_expr(L, E, Quals, Outer, St);
lower_comprehension({bc, L, _, _}, _Env, St) ->
    unsupported(L, St, blocking_code_in_binary_comprehension).

%% The same for a comprehension whose value is dropped (mce_anf): each
%% generator's function runs the template for its effects and calls itself
%% in tail position, so no result waits while a later element blocks.  Its
%% own value is [] (nobody reads it).
lower_discarded({lc, L, E, Quals} = C, Env, St) ->
    Outer = intersection(Env, vars_all(C)),
    lc_loop(discard, L, E, Quals, Outer, St).

lc_expr(L, E, Quals, Vars, St) ->
    lc_loop(collect, L, E, Quals, Vars, St).

lc_loop(collect, L, E, [], _Vars, _St) ->
    {cons, L, E, {nil, L}};
lc_loop(discard, _L, E, [], _Vars, _St) ->
    E;
lc_loop(Mode, L, E, [{generate, GL, P, ListExpr} | Rest], Vars, St) ->
    N = counter(),
    Name = gen_name("lc", N),
    Args = [{var, GL, V} || V <- Vars],
    T = {var, GL, gen_var("Tl", N)},
    Other = {var, GL, gen_var("G", N)},
    Recur = {call, GL, {atom, GL, Name}, [T | Args]},
    Inner = lc_loop(Mode, L, E, Rest, union(Vars, pat_vars(P)), St),
    Each = case Mode of
               collect -> [{op, GL, '++', Inner, Recur}];
               discard -> [Inner, Recur]
           end,
    Clauses = [{clause, GL, [{cons, GL, P, T} | Args], [], Each},
               {clause, GL, [{cons, GL, {var, GL, '_'}, T} | Args], [], [Recur]},
               {clause, GL, [{nil, GL} | Args], [], [{nil, GL}]},
               {clause, GL, [Other | Args], [],
                [{call, GL, {remote, GL, {atom, GL, erlang}, {atom, GL, error}},
                  [{tuple, GL, [{atom, GL, bad_generator}, Other]}]}]}],
    Arity = 1 + length(Args),
    put(mce_tr_extra_blocking, [{Name, Arity} | get(mce_tr_extra_blocking)]),
    {F, A} = St#tr.fa,
    record_info(Name, F, A, GL),
    St1 = St#tr{defs = sets:add_element({Name, Arity}, St#tr.defs)},
    generate({function, GL, Name, Arity,
              [tr_clause(Cl, [], St1) || Cl <- Clauses]}),
    {call, GL, {atom, GL, Name}, [ListExpr | Args]};
lc_loop(_Mode, L, _E, [{b_generate, GL, _, _} | _], _Vars, St) ->
    unsupported(GL, St#tr{}, {blocking_code_in_comprehension_with_binary_generator, L});
lc_loop(Mode, L, E, [Filter | Rest], Vars, St) ->
    FL = element(2, Filter),
    Then = lc_loop(Mode, L, E, Rest, Vars, St),
    case erl_lint:is_guard_test(Filter) of
        true ->
            {'case', FL, {atom, FL, true},
             [{clause, FL, [{var, FL, '_'}], [[Filter]], [Then]},
              {clause, FL, [{var, FL, '_'}], [], [{nil, FL}]}]};
        false ->
            V = {var, FL, gen_var("Fv", counter())},
            {'case', FL, Filter,
             [{clause, FL, [{atom, FL, true}], [], [Then]},
              {clause, FL, [{atom, FL, false}], [], [{nil, FL}]},
              {clause, FL, [V], [],
               [{call, FL, {remote, FL, {atom, FL, erlang}, {atom, FL, error}},
                 [{tuple, FL, [{atom, FL, bad_filter}, V]}]}]}]}
    end.

%% A body expression whose evaluation may suspend, as `Pat = Rhs'.
site({match, L, P, {match, _, P2, R}}, St) ->
    site({match, L, {match, L, P, P2}, R}, St);
site({match, _, P, R}, St) ->
    case blocking_top(R, St) of
        true -> {P, R};
        false -> false
    end;
site(E, St) ->
    case blocking_top(E, St) of
        true -> {{var, line(E), '_'}, E};
        false -> false
    end.

blocking_top({'receive', _, _}, _St) -> true;
blocking_top({'receive', _, _, _, _}, _St) -> true;
blocking_top({call, _, _, _} = C, St) -> may_block_call(C, St);
blocking_top({'case', _, _, Cls}, St) -> may_block(clause_bodies(Cls), St);
blocking_top({'if', _, Cls}, St) -> may_block(clause_bodies(Cls), St);
blocking_top({block, _, Es}, St) -> may_block(Es, St);
blocking_top({'try', _, _, _, _, _} = T, St) -> may_block(T, St);
blocking_top({'catch', _, _} = C, St) -> may_block(C, St);
blocking_top(_, _St) -> false.

make_site(Pat, Rhs, Rest, Env, #tr{newmod = NewM} = St) ->
    L = line(Rhs),
    UsedLater = vars_all([Pat | Rest]),
    Exports = case element(1, Rhs) of
                  call ->
                      case intersection(bound(Rhs), UsedLater) of
                          [] -> [];
                          [V | _] -> unsupported(L, St, {variable_bound_in_blocking_call, V})
                      end;
                  _ -> intersection(bound(Rhs), UsedLater)
              end,
    FreeVars = intersection(Env, UsedLater),
    N = counter(),
    K = gen_name("k", N),
    VVar = {var, L, gen_var("V", N)},
    FVs = [{var, L, V} || V <- FreeVars],
    Head = case Exports of
               [] -> VVar;
               _ -> {tuple, L, [VVar, {tuple, L, [{var, L, X} || X <- Exports]}]}
           end,
    FrameBody = case Pat of
                    {var, _, '_'} -> Rest;
                    _ -> [{match, L, Pat, strip_head(Head, VVar)} | Rest]
                end,
    FrameEnv = union(FreeVars, Exports),
    {F, A} = St#tr.fa,
    record_info(K, F, A, L),
    generate({function, L, K, 1 + length(FVs),
              [{clause, L, [Head | FVs], [],
                tr_body(FrameBody, union(FrameEnv, pat_vars([Head])), St)}]}),
    Rhs1 = case Exports of
               [] -> Rhs;
               _ -> wrap_exports(Rhs, Exports)
           end,
    R = {var, L, gen_var("R", N)},
    Fs = {var, L, gen_var("Fs", N)},
    Frame = {tuple, L, [{atom, L, NewM}, {atom, L, K}, list_expr(FVs, L)]},
    Resumed = {var, L, gen_var("X", N)},
    {'case', L, tr_tail(Rhs1, Env, St),
     [{clause, L, [{tuple, L, [{atom, L, ?SUSP}, R, Fs]}], [],
       [{tuple, L, [{atom, L, ?SUSP}, R, {cons, L, Frame, Fs}]}]},
      {clause, L, [Resumed], [], [{call, L, {atom, L, K}, [Resumed | FVs]}]}]}.

%% With exports the frame receives {Value, {Exported...}}; the pattern is
%% matched against Value alone.
strip_head({tuple, _, [V, _]}, V) -> V;
strip_head(V, V) -> V.

%% Makes every branch of a compound expression return {Value, {Vars...}} so
%% the variables it binds survive a suspension inside it.
wrap_exports({'case', L, H, Cls}, Xs) -> {'case', L, H, [wrap_clause(C, Xs) || C <- Cls]};
wrap_exports({'if', L, Cls}, Xs) -> {'if', L, [wrap_clause(C, Xs) || C <- Cls]};
wrap_exports({'receive', L, Cls}, Xs) -> {'receive', L, [wrap_clause(C, Xs) || C <- Cls]};
wrap_exports({'receive', L, Cls, T, A}, Xs) ->
    {'receive', L, [wrap_clause(C, Xs) || C <- Cls], T, wrap_body(A, Xs)};
wrap_exports({block, L, Es}, Xs) -> {block, L, wrap_body(Es, Xs)}.

wrap_clause({clause, L, Ps, Gs, B}, Xs) -> {clause, L, Ps, Gs, wrap_body(B, Xs)}.

wrap_body(Es, Xs) ->
    {Init, [Last]} = lists:split(length(Es) - 1, Es),
    L = line(Last),
    V = {var, L, gen_var("W", counter())},
    Init ++ [{match, L, V, Last},
             {tuple, L, [V, {tuple, L, [{var, L, X} || X <- Xs]}]}].

tr_tail({'receive', L, Cls}, Env, St) ->
    tr_receive(L, Cls, {atom, L, infinity}, [], Env, St);
tr_tail({'receive', L, Cls, T, After}, Env, St) ->
    tr_receive(L, Cls, T, After, Env, St);
tr_tail({'case', L, H, Cls}, Env, St) ->
    Env1 = union(Env, bound(H)),
    {'case', L, tr_expr(H, Env, St), [tr_clause(C, Env1, St) || C <- Cls]};
tr_tail({'if', L, Cls}, Env, St) ->
    {'if', L, [tr_clause(C, Env, St) || C <- Cls]};
tr_tail({block, L, Es}, Env, St) ->
    {block, L, tr_body(Es, Env, St)};
tr_tail({call, _, _, _} = C, Env, St) ->
    tr_call(C, Env, St);
tr_tail({'try', L, Body, OfCls, CatchCls, After} = T, Env, St) ->
    case may_block(T, St) of
        true -> tr_try(L, Body, OfCls, CatchCls, After, Env, St);
        false -> tr_expr(T, Env, St)
    end;
tr_tail({'catch', L, E} = C, Env, St) ->
    case may_block(C, St) of
        true -> tr_catch(L, E, Env, St);
        false -> tr_expr(C, Env, St)
    end;
tr_tail(E, Env, St) ->
    tr_expr(E, Env, St).

tr_receive(L, Cls, T, After, Env, #tr{newmod = NewM} = St) ->
    FreeVars = intersection(Env, vars_all({Cls, T, After})),
    Name = gen_name("r", counter()),
    {F, A} = St#tr.fa,
    record_info(Name, F, A, L),
    %% A receive without clauses: no message can match it, so its `after
    %% 0' is a poll no send disables (mce_exec:timeout_kind/2, partial-order
    %% reduction's rule 1).  Said in '$mce_info'({poll, Name}), not in the
    %% name: a continuation's terms stay what they were.
    Cls =:= [] andalso record_info({poll, Name}, F, A, L),
    FVs = [{var, L, V} || V <- FreeVars],
    Msg = {var, L, 'MCE@Msg'},
    MatchCls = [{clause, CL, Ps, Gs, [{atom, CL, true}]} || {clause, CL, Ps, Gs, _} <- Cls]
        ++ [{clause, L, [{var, L, '_'}], [], [{atom, L, false}]}],
    BodyCls = [tr_clause(C, FreeVars, St) || C <- Cls],
    lists:foreach(fun({clause, _, _, Gs, _}) -> check_guards(Gs, St) end, Cls),
    Clauses =
        [{clause, L, [{atom, L, match}, Msg | FVs], [], [{'case', L, Msg, MatchCls}]}] ++
        [{clause, L, [{atom, L, body}, Msg | FVs], [], [{'case', L, Msg, BodyCls}]} || Cls =/= []] ++
        [{clause, L, [{atom, L, timeout}, {var, L, '_'} | FVs], [], tr_body(After, FreeVars, St)}
         || After =/= []],
    generate({function, L, Name, 2 + length(FVs), Clauses}),
    rt_call(L, suspend, [{atom, L, NewM}, {atom, L, Name}, list_expr(FVs, L),
                         tr_expr(T, Env, St)]).

%%--------------------------------------------------------------------
%% try and catch around code that may suspend
%%--------------------------------------------------------------------

%% The body runs under a handler: if it suspends, the handler becomes a
%% frame `{'$mce_handler', Mod, H, FreeVars}' that the executor calls with
%% `{ok, Value}' or `{exception, Class, Reason, Stack}' when the body
%% finally ends; if it ends now, the handler is called at once.  The `of'
%% and `catch' clauses are one handler, `after' is a second one around it,
%% so `after' runs exactly once on every path out of the `try', and
%% exceptions in the `of' and `catch' clauses are not caught by the same
%% `try', as in Erlang.
tr_try(L, Body, OfCls, CatchCls, After, Env, St) ->
    Inner = case {OfCls, CatchCls} of
                {[], []} -> tr_body(Body, Env, St);
                _ -> [protect(L, tr_body(Body, Env, St),
                              try_handler(L, OfCls, CatchCls, Env, St))]
            end,
    case After of
        [] -> {block, L, Inner};
        _ -> protect(L, Inner, after_handler(L, After, Env, St))
    end.

%% `catch E': throw gives the value, error {'EXIT', {Reason, Stack}},
%% exit {'EXIT', Reason}.
tr_catch(L, E, Env, St) ->
    N = counter(),
    [V, C, R, S] = [{var, L, gen_var(X, N)} || X <- ["Cv", "Cc", "Cr", "Cs"]],
    Exit = fun(T) -> {tuple, L, [{atom, L, 'EXIT'}, T]} end,
    Clauses = [{clause, L, [{tuple, L, [{atom, L, ok}, V]}], [], [V]},
               {clause, L, [{tuple, L, [{atom, L, exception}, {atom, L, throw}, R, S]}], [], [R]},
               {clause, L, [{tuple, L, [{atom, L, exception}, {atom, L, error}, R, S]}], [],
                [Exit({tuple, L, [R, S]})]},
               {clause, L, [{tuple, L, [{atom, L, exception}, C, R, S]}], [], [Exit(R)]}],
    protect(L, tr_body([E], Env, St), handler(L, "c", Clauses, [], Env, St)).

try_handler(L, OfCls, CatchCls, Env, St) ->
    N = counter(),
    [V, C, R, S] = [{var, L, gen_var(X, N)} || X <- ["Hv", "Hc", "Hr", "Hs"]],
    OnValue = case OfCls of
                  [] -> V;
                  _ -> {'case', L, V, OfCls}
              end,
    Reraise = {clause, L, [{var, L, '_'}], [],
               [{call, L, {remote, L, {atom, L, erlang}, {atom, L, raise}}, [C, R, S]}]},
    OnException = {'case', L, {tuple, L, [C, R, S]}, CatchCls ++ [Reraise]},
    handler(L, "h",
            [{clause, L, [{tuple, L, [{atom, L, ok}, V]}], [], [OnValue]},
             {clause, L, [{tuple, L, [{atom, L, exception}, C, R, S]}], [], [OnException]}],
            [OfCls, CatchCls], Env, St).

after_handler(L, After, Env, St) ->
    N = counter(),
    [V, C, R, S] = [{var, L, gen_var(X, N)} || X <- ["Av", "Ac", "Ar", "As"]],
    Raise = {call, L, {remote, L, {atom, L, erlang}, {atom, L, raise}}, [C, R, S]},
    handler(L, "a",
            [{clause, L, [{tuple, L, [{atom, L, ok}, V]}], [], After ++ [V]},
             {clause, L, [{tuple, L, [{atom, L, exception}, C, R, S]}], [], After ++ [Raise]}],
            [After], Env, St).

%% Generates handler function '$mce_<Kind>N'(Outcome, FreeVars...) with
%% the given clauses over Outcome; returns {Name, FreeVarExprs}.
handler(L, Kind, Clauses, UsedIn, Env, St) ->
    FreeVars = intersection(Env, vars_all(UsedIn)),
    FVs = [{var, L, V} || V <- FreeVars],
    Name = gen_name(Kind, counter()),
    {F, A} = St#tr.fa,
    record_info(Name, F, A, L),
    generate({function, L, Name, 1 + length(FVs),
              [{clause, CL, [P | FVs], Gs, B} ||
                  {clause, CL, [P], Gs, B} <- [tr_clause(C, FreeVars, St) || C <- Clauses]]}),
    {Name, FVs}.

%% Runs translated body Es under handler {H, FVs}.
protect(L, Es, {H, FVs}) ->
    N = counter(),
    [V, C, R, S, C2, R2, S2, Rc, Fs] =
        [{var, L, gen_var(X, N)} || X <- ["Pv", "Pc", "Pr", "Ps", "Qc", "Qr", "Qs", "Pq", "Pf"]],
    Frame = {tuple, L, [{atom, L, '$mce_handler'}, {atom, L, get(mce_tr_newmod)}, {atom, L, H},
                        list_expr(FVs, L)]},
    Call = fun(Arg) -> {call, L, {atom, L, H}, [Arg | FVs]} end,
    Attempt = {'try', L, [{tuple, L, [{atom, L, '$mce_ok'}, {block, L, Es}]}], [],
               [{clause, L, [{tuple, L, [C, R, S]}], [],
                 [{tuple, L, [{atom, L, '$mce_exc'}, C, R, rt_call(L, clean_stack, [S])]}]}],
               []},
    {'case', L, Attempt,
     [{clause, L, [{tuple, L, [{atom, L, '$mce_ok'}, {tuple, L, [{atom, L, ?SUSP}, Rc, Fs]}]}], [],
       [{tuple, L, [{atom, L, ?SUSP}, Rc, {cons, L, Frame, Fs}]}]},
      {clause, L, [{tuple, L, [{atom, L, '$mce_ok'}, V]}], [],
       [Call({tuple, L, [{atom, L, ok}, V]})]},
      {clause, L, [{tuple, L, [{atom, L, '$mce_exc'}, C2, R2, S2]}], [],
       [Call({tuple, L, [{atom, L, exception}, C2, R2, S2]})]}]}.

%%--------------------------------------------------------------------
%% Expressions that must not suspend
%%--------------------------------------------------------------------

tr_expr({'receive', L, _}, _Env, St) ->
    unsupported(L, St, receive_inside_expression);
tr_expr({'receive', L, _, _, _}, _Env, St) ->
    unsupported(L, St, receive_inside_expression);
tr_expr({call, L, _, _} = C, Env, St) ->
    case must_block_call(C, St) of
        true -> unsupported(L, St, {blocking_call_inside_expression, call_name(C)});
        false -> tr_call(C, Env, St)
    end;
tr_expr({op, L, '!', To, Msg}, Env, St) ->
    rt_call(L, send, [tr_expr(To, Env, St), tr_expr(Msg, Env, St)]);
tr_expr({'fun', L, {clauses, Cls}}, Env, St) ->
    FunSt = in_fun(L, Cls, St),
    {'fun', L, {clauses, [tr_clause(C, Env, FunSt) || C <- Cls]}};
tr_expr({named_fun, L, Name, Cls}, Env, St) ->
    FunSt = in_fun(L, Cls, St),
    {named_fun, L, Name, [tr_clause(C, union(Env, [Name]), FunSt) || C <- Cls]};
tr_expr({'fun', L, {function, {atom, _, M}, {atom, FL, F}, {integer, _, A}}} = Fun, _Env, St) ->
    %% `fun M:F/A' is classified like a call M:F/A: pointed at the
    %% translation or the model, refused where it is made if it would
    %% reach the host (the sandbox rule, see mce_sandbox).
    case classify(M, F, A, St) of
        translate -> {'fun', L, {function, {atom, L, translated_name(M)}, {atom, FL, F}, {integer, L, A}}};
        pure -> Fun;
        library_hof -> Fun;
        {redirect, RM, RF} -> {'fun', L, {function, {atom, L, RM}, {atom, L, RF}, {integer, L, A}}};
        {model, MM, MF} ->
            {'fun', L, {function, {atom, L, translated_name(MM)}, {atom, L, MF}, {integer, L, A}}};
        {unsupported, Why} ->
            rt_call(L, unsupported, [abstract({M, F, A}, L), location(L, St), {atom, L, Why}])
    end;
tr_expr({'fun', L, {function, M, F, A}}, Env, St) when is_tuple(M) ->
    rt_remote(L, mce_sandbox, make_fun, [tr_expr(X, Env, St) || X <- [M, F, A]]);
tr_expr({'case', L, _, _} = E, Env, St) ->
    no_blocking(E, L, St),
    tr_tail(E, Env, St);
tr_expr({'if', L, _} = E, Env, St) ->
    no_blocking(E, L, St),
    tr_tail(E, Env, St);
tr_expr({block, L, _} = E, Env, St) ->
    no_blocking(E, L, St),
    tr_tail(E, Env, St);
tr_expr({'try', L, Es, OfCls, CatchCls, After} = E, Env, St) ->
    no_blocking(E, L, St),
    Env1 = union(Env, body_bound(Es)),
    {'try', L, tr_body(Es, Env, St), [tr_clause(C, Env1, St) || C <- OfCls],
     [tr_clause(C, Env, St) || C <- CatchCls], tr_body_or_empty(After, Env, St)};
tr_expr({'catch', L, X} = E, Env, St) ->
    no_blocking(E, L, St),
    {'catch', L, tr_expr(X, Env, St)};
tr_expr({Comp, L, Template, Quals} = E, Env, St) when Comp =:= lc; Comp =:= bc; Comp =:= mc ->
    no_blocking(E, L, St),
    {Quals1, Env1} = tr_quals(Quals, Env, St, []),
    {Comp, L, tr_expr(Template, Env1, St), Quals1};
tr_expr(E, Env, St) ->
    map_subexprs(fun(X) -> tr_expr(X, Env, St) end, E).

tr_body_or_empty([], _Env, _St) -> [];
tr_body_or_empty(Es, Env, St) -> tr_body(Es, Env, St).

tr_quals([], Env, _St, Acc) ->
    {lists:reverse(Acc), Env};
tr_quals([{G, L, P, E} | Rest], Env, St, Acc) when G =:= generate; G =:= b_generate ->
    tr_quals(Rest, union(Env, pat_vars(P)), St, [{G, L, P, tr_expr(E, Env, St)} | Acc]);
tr_quals([Filter | Rest], Env, St, Acc) ->
    tr_quals(Rest, Env, St, [tr_expr(Filter, Env, St) | Acc]).

no_blocking(E, L, St) ->
    case has_block(E, St) of
        true -> unsupported(L, St, blocking_code_inside_expression);
        false -> ok
    end.

tr_call({call, L, {atom, _, F} = Fun, As}, Env, St) ->
    Args = [tr_expr(A, Env, St) || A <- As],
    case is_local(F, length(As), St) of
        true -> {call, L, Fun, Args};
        false -> tr_remote_call(L, erlang, F, Args, St)
    end;
tr_call({call, L, {remote, _, {atom, _, M}, {atom, _, F}}, As} = C, Env, St) ->
    Args = [tr_expr(A, Env, St) || A <- As],
    case routes_to_library(C, St) of
        true ->
            {call, L, {remote, L, {atom, L, ensure_library(M)}, {atom, L, F}}, Args};
        false ->
            tr_remote_call(L, M, F, Args, St)
    end;
tr_call({call, L, {remote, _, M, F}, As}, Env, St) ->
    rt_call(L, apply, [tr_expr(M, Env, St), tr_expr(F, Env, St),
                       list_expr([tr_expr(A, Env, St) || A <- As], L)]);
tr_call({call, L, {'fun', _, {clauses, _}} = F, As}, Env, St) ->
    {call, L, tr_expr(F, Env, St), [tr_expr(A, Env, St) || A <- As]};
tr_call({call, L, F, As}, Env, St) ->
    %% A fun value may be anything at run time (fun erlang:halt/0, a fun
    %% decoded by binary_to_term): the sandbox checks it when it is called.
    Checked = rt_remote(L, mce_sandbox, checked_fun, [tr_expr(F, Env, St), location(L, St)]),
    {call, L, Checked, [tr_expr(A, Env, St) || A <- As]}.

location(L, #tr{mod = M, fa = {FunName, FunArity}}) ->
    abstract({M, FunName, FunArity, line_number(L)}, L).

tr_remote_call(L, M, F, Args, St) ->
    Arity = length(Args),
    case classify(M, F, Arity, St) of
        {redirect, mce_rt, choice} when Arity =:= 1 ->
            %% The location names a choice whose suspension is lost.
            {FunName, FunArity} = St#tr.fa,
            rt_call(L, choice, Args ++ [abstract({St#tr.mod, FunName, FunArity, line_number(L)}, L)]);
        {redirect, RM, RF} -> rt_remote(L, RM, RF, Args);
        {unsupported, Why} ->
            {FunName, FunArity} = St#tr.fa,
            Loc = abstract({St#tr.mod, FunName, FunArity, line_number(L)}, L),
            %% The arguments are evaluated first, as the VM does before the
            %% call: their effects happen and the variables they bind stay
            %% bound for the code after (group_leader(S = self(), P)).
            Stop = rt_call(L, unsupported, [abstract({M, F, Arity}, L), Loc, {atom, L, Why}]),
            case [A || A <- Args, not is_literal(A)] of
                [] -> Stop;
                Evaluated -> {block, L, Evaluated ++ [Stop]}
            end;
        Direct when Direct =:= pure; Direct =:= library_hof ->
            {call, L, {remote, L, {atom, L, M}, {atom, L, F}}, Args};
        translate -> {call, L, {remote, L, {atom, L, translated_name(M)}, {atom, L, F}}, Args};
        {model, MM, MF} -> {call, L, {remote, L, {atom, L, translated_name(MM)}, {atom, L, MF}}, Args}
    end.

%% A library higher-order function is called in its translation when one of
%% the arguments may be a fun that blocks: a fun whose body may block, or a
%% value the translator cannot see (a variable, a call's result).
routes_to_library({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, As}, St) ->
    classify_call(M, F, length(As)) =:= library_hof andalso
        lists:any(fun(A) -> may_be_blocking_fun(A, St) end, hof_fun_args(As)).

may_be_blocking_fun({'fun', _, {clauses, Cls}}, St) -> may_block(clause_bodies(Cls), St);
may_be_blocking_fun({named_fun, _, _, Cls}, St) -> may_block(clause_bodies(Cls), St);
may_be_blocking_fun({'fun', _, {function, F, A}}, St) when is_atom(F) ->
    must_block_call({call, 0, {atom, 0, F}, lists:duplicate(A, {nil, 0})}, St);
may_be_blocking_fun({'fun', _, {function, {atom, _, M}, {atom, _, F}, {integer, _, A}}}, St) ->
    sets:is_element({M, F, A}, St#tr.blocking);
may_be_blocking_fun(E, _St) ->
    not is_literal(E).

classify(M, F, A, St) ->
    case classify_call(M, F, A) of
        {unsupported, unsupported_call} = Refused ->
            %% A module generated for a shell entry is translated although
            %% it has no file.
            case (St#tr.translated)(M) of
                true -> translate;
                false -> Refused
            end;
        pure ->
            case (St#tr.translated)(M) of
                true -> translate;
                false -> pure
            end;
        Other -> Other
    end.

%%--------------------------------------------------------------------
%% Blocking predicates
%%--------------------------------------------------------------------

%% Defined in the module, or generated by the translator for it.
is_local(F, A, St) ->
    sets:is_element({F, A}, St#tr.defs) orelse lists:member({F, A}, get(mce_tr_extra_blocking)).

%% Certainly reaches a receive (by the static analysis).
must_block_call({call, _, {atom, _, F}, As}, #tr{mod = M, defs = Defs, blocking = B}) ->
    A = length(As),
    (sets:is_element({F, A}, Defs) andalso sets:is_element({M, F, A}, B))
        orelse lists:member({F, A}, get(mce_tr_extra_blocking));
must_block_call({call, _, {remote, _, {atom, _, mcerlang}, {atom, _, choice}}, [_]}, _St) ->
    true;
must_block_call({call, _, {remote, _, {atom, _, mce_rt}, {atom, _, yield}}, [_ | _]}, _St) ->
    true;
must_block_call({call, _, {remote, _, {atom, _, erlang}, {atom, _, hibernate}}, [_, _, _]}, _St) ->
    true;
must_block_call({call, _, {remote, _, {atom, _, mcerlang}, {atom, _, prop}}, [_]}, _St) ->
    true;
must_block_call({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, As}, #tr{blocking = B}) ->
    sets:is_element({M, F, length(As)}, B);
must_block_call(_, _St) ->
    false.

%% May reach a receive: also calls the analysis cannot see through (funs,
%% apply, computed modules).  These get a continuation frame where they
%% stand in a body; elsewhere the executor checks at run time that no
%% suspension was lost.
may_block_call({call, _, {atom, _, F}, As} = C, St) ->
    must_block_call(C, St) orelse
        (not is_local(F, length(As), St) andalso F =:= apply);
may_block_call({call, _, {remote, _, {atom, _, erlang}, {atom, _, apply}}, _}, _St) -> true;
may_block_call({call, _, {remote, _, {atom, _, _}, {atom, _, _}}, _} = C, St) ->
    must_block_call(C, St) orelse routes_to_library(C, St);
may_block_call({call, _, _, _}, _St) ->
    true.

has_block(T, St) ->
    contains_blocking(T, fun(C) -> must_block_call(C, St) end).

may_block(T, St) ->
    contains_blocking(T, fun(C) -> may_block_call(C, St) end).

%% A receive, or a call that BlockingCall accepts, outside any fun body.
contains_blocking(T, BlockingCall) ->
    fold_no_funs(fun({'receive', _, _}, _) -> true;
                    ({'receive', _, _, _, _}, _) -> true;
                    ({call, _, _, _} = C, Acc) -> Acc orelse BlockingCall(C);
                    (_, Acc) -> Acc
                 end, false, T).

clause_bodies(Cls) ->
    [B || {clause, _, _, _, B} <- Cls].

%% Guards run inside the receive's match function on the executor, where
%% self() and node() are not the simulated process's.
check_guards(Gs, St) ->
    fold_all(fun({call, L, {atom, _, F}, []}, _Acc) when F =:= self; F =:= node ->
                     unsupported(L, St, {process_bif_in_guard, F});
                (_, Acc) -> Acc
             end, ok, Gs).

%%--------------------------------------------------------------------
%% Helpers
%%--------------------------------------------------------------------

union(A, B) -> ordsets:union(A, B).
intersection(A, B) -> ordsets:intersection(A, B).

counter() ->
    N = get(mce_tr_counter),
    put(mce_tr_counter, N + 1),
    N.

gen_name(Kind, N) ->
    list_to_atom("$mce_" ++ Kind ++ integer_to_list(N)).

gen_var(Kind, N) ->
    list_to_atom("MCE@" ++ Kind ++ integer_to_list(N)).

generate(Form) ->
    put(mce_tr_generated, [Form | get(mce_tr_generated)]).

record_info(Name, F, A, L) ->
    put(mce_tr_info, [{Name, F, A, line_number(L)} | get(mce_tr_info)]).

rt_call(L, F, Args) ->
    rt_remote(L, mce_rt, F, Args).

rt_remote(L, M, F, Args) ->
    {call, L, {remote, L, {atom, L, M}, {atom, L, F}}, Args}.

list_expr(Es, L) ->
    lists:foldr(fun(E, Acc) -> {cons, L, E, Acc} end, {nil, L}, Es).

line(E) -> element(2, E).

abstract(Term, Anno) ->
    erl_parse:abstract(Term, [{location, erl_anno:location(Anno)}]).

line_number(L) -> erl_anno:line(L).

call_name({call, _, {atom, _, F}, As}) -> {F, length(As)};
call_name({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, As}) -> {M, F, length(As)};
call_name(_) -> dynamic.

unsupported(L, #tr{mod = M, fa = {F, A}}, What) ->
    erlang:error({mcerlang, {unsupported_construct, What, {M, F, A, line_number(L)}}}).
