%% @doc Closures compiled into user modules as entry points.
%%
%% `mcerlang:check(fun() -> my_server:start(N) end)' written in an EUnit
%% test: the fun is compiled code of the test module, and its environment
%% holds the values of the captured variables, but in the compiler's order
%% (by internal Kernel variable names) and without the variables the
%% compiler propagated as constants.  So the values are recovered with a
%% probe: a copy of the module, compiled with the module's own options, in
%% which this fun's body is replaced by the tuple of its free variables
%% sorted by name.  The compiler lays out the probe fun's environment exactly
%% as the original's (same enclosing code, same captured variables) and
%% inlines the same constants, so a probe fun built with the original's
%% environment values (through the external term format) returns every
%% captured variable's value, constants included.  The probe's environment
%% size is checked against the original's; any mismatch is a clear error.
%%
%% The translated module has `'$mce_closure'(FunName, {Vars...})' running
%% the body of each zero-arity fun of the module (see mce_translate), so the
%% entry becomes `{'mce$M', '$mce_closure', [FunName, Values]}'.  A closure
%% of any arity captured by an entry or in its arguments becomes the fun
%% `'$mce_fun'(FunName, {Vars...})' makes: the same fun expression in the
%% translated module (translated_fun/1).  The probe fun has no parameters
%% whatever the original's arity: it only returns the captured variables.
-module(mce_closure).

-export([entry/1, translated_fun/1, free_vars/2, zero_arity_funs/1, all_funs/1,
         numbered_funs/1, source/1]).

-define(PROBE_TAG, '$mce_probe').

%% @doc The initial call that runs compiled closure Fun under the checker.
%% A named or guarded one is the translated fun itself.
-spec entry(function()) -> {module(), atom(), [term()]} | function().
entry(Fun) ->
    {arity, 0} = erlang:fun_info(Fun, arity),
    case decode(Fun) of
        {TrM, Name, Values, {'fun', _, {clauses, [{clause, _, [], [], _}]}}} ->
            {TrM, '$mce_closure', [Name, Values]};
        {TrM, Name, Values, _} ->
            erlang:apply(TrM, '$mce_fun', [Name, Values])
    end.

%% @doc The translated counterpart of closure Fun of a user module, of any
%% arity: the same fun expression, evaluated by the translated module's
%% `'$mce_fun'(FunName, {Vars...})' with the captured values, so its
%% clauses, guards, errors and suspensions are those of any fun of
%% translated code.  A local `fun f/A' (OTP 25 names it f, with no
%% environment) is the translation's f/A.
-spec translated_fun(function()) -> function().
translated_fun(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, Name} = erlang:fun_info(Fun, name),
    {arity, A} = erlang:fun_info(Fun, arity),
    case atom_to_list(Name) of
        "-" ++ _ ->
            {TrM, CoreName, Values, _} = decode(Fun),
            erlang:apply(TrM, '$mce_fun', [CoreName, Values]);
        _ ->
            mce_translate:make_fun(M, Name, A)
    end.

%% @doc The code of closure Fun of a user module and the values of the
%% variables it captured (the abstract interpreter runs it: an invariant or
%% a predicate over an abstract view, mce_abs_judge:judge/3).
-spec source(function()) -> {ok, module(), erl_parse:abstract_expr(), #{atom() => term()}} | error.
source(Fun) ->
    try captured(Fun) of
        {ok, M, _CoreName, FunExpr, Vars, Values} ->
            {ok, M, FunExpr, maps:from_list(lists:zip(Vars, Values))};
        error ->
            error
    catch error:_ -> error
    end.

%% The translated module, the fun's name as v3_core gives it
%% ('-F/A-fun-N-', also for a named fun), the tuple of its captured
%% values, sorted by variable name, and its expression.
decode(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    TrM = mce_translate:ensure(M),
    case captured(Fun) of
        {ok, M, CoreName, FunExpr, _Vars, Values} ->
            %% Captured funs are called by checked code: the sandbox rule
            %% applies to them as to an entry's arguments.
            {TrM, CoreName, list_to_tuple(mce_sandbox:entry_args(Values)), FunExpr};
        error ->
            refuse(Fun, "its code was not found in the module's abstract code")
    end.

%% Closure Fun's module, v3_core name and expression in its module's
%% forms, and its captured variables with their values (sorted by name).
captured(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, Name} = erlang:fun_info(Fun, name),
    {env, Env} = erlang:fun_info(Fun, env),
    Forms = mce_translate:original_forms(M),
    case locate(Name, Forms) of
        {ok, FunExpr, Enclosing, CoreName} ->
            Vars = free_vars(FunExpr, Enclosing),
            {ok, M, CoreName, FunExpr, Vars, probe(M, CoreName, FunExpr, Vars, Env, Forms)};
        error ->
            error
    end.

%% Finds the fun expression that the compiler named Name: '-F/A-fun-N-',
%% the N-th fun of F/A in post-order, or, for a named fun, which v3_kernel
%% renames '-F/A-Name/Arity-K-' (K a counter of its own), the only fun of
%% F/A with that name and arity.
locate(Name, Forms) ->
    Unicode = [{capture, all_but_first, list}, unicode],
    case re:run(atom_to_list(Name), "^-(.*)/([0-9]+)-fun-([0-9]+)-$", Unicode) of
        {match, [F, A, N]} ->
            Index = list_to_integer(N),
            locate(list_to_atom(F), list_to_integer(A), Forms,
                   fun(I, _Fun) -> I =:= Index end);
        nomatch ->
            case re:run(atom_to_list(Name), "^-(.*)/([0-9]+)-([^/]+)/([0-9]+)-[0-9]+-$",
                        Unicode) of
                {match, [F, A, FunName, FunArity]} ->
                    Var = list_to_atom(FunName),
                    Ar = list_to_integer(FunArity),
                    locate(list_to_atom(F), list_to_integer(A), Forms,
                           fun(_I, {named_fun, _, V, [{clause, _, Ps, _, _} | _]}) ->
                                   V =:= Var andalso length(Ps) =:= Ar;
                              (_I, _Fun) -> false
                           end);
                nomatch -> error
            end
    end.

locate(Fn, Ar, Forms, Pred) ->
    case [Cs || {function, _, Fn1, Ar1, Cs} <- Forms, Fn1 =:= Fn, Ar1 =:= Ar] of
        [Clauses] ->
            case [{I, Fun} || {I, Fun} <- numbered_funs(Clauses), Pred(I, Fun)] of
                [{I, Fun}] -> {ok, Fun, Clauses, fun_name(Fn, Ar, I)};
                _ -> error
            end;
        _ -> error
    end.

%% @doc The zero-arity, single-clause, unguarded funs of a module's
%% functions, with their compiler names and free variables: the closures
%% that can be entries.
-spec zero_arity_funs([erl_parse:abstract_form()]) ->
          [{atom(), [atom()], [erl_parse:abstract_expr()], erl_anno:anno()}].
zero_arity_funs(Forms) ->
    [{fun_name(F, A, I), free_vars(Fun, Cs), Body, L}
     || {function, _, F, A, Cs} <- Forms,
        {I, Fun} <- numbered_funs(Cs),
        {'fun', L, {clauses, [{clause, _, [], [], Body}]}} <- [Fun]].

%% @doc The funs (any arity, any clauses, named or not) of a module's
%% functions, with their v3_core names ('-F/A-fun-N-') and free variables:
%% the closures that can be captured by an entry.
-spec all_funs([erl_parse:abstract_form()]) ->
          [{atom(), [atom()], erl_parse:abstract_expr(), erl_anno:anno()}].
all_funs(Forms) ->
    [{fun_name(F, A, I), free_vars(Fun, Cs), Fun, element(2, Fun)}
     || {function, _, F, A, Cs} <- Forms,
        {I, Fun} <- numbered_funs(Cs)].

%% @doc The funs of a function's clauses with the numbers the compiler gives
%% them ('-F/A-fun-N-').  OTP 25's v3_core draws one counter per function
%% for funs (numbered after their bodies), local fun references `fun f/A'
%% (numbered where they stand) and list and binary comprehensions (one
%% number per generator, drawn after the generators' sources and the
%% filters are translated and before the template is), and it translates
%% the elements of tuples and lists, the arguments of calls and the
%% operands of operators right to left (safe_list/2 folds from the right);
%% the rest (bodies, clauses, case heads before clauses, a receive's
%% timeout and after body before its clauses) in order.  Records are not
%% expanded here: funs written in record fields of the same expression may
%% be numbered differently.
-spec numbered_funs([erl_parse:abstract_clause()]) -> [{non_neg_integer(), erl_parse:abstract_expr()}].
numbered_funs(Clauses) ->
    {_, Funs} = number(Clauses, {0, []}),
    lists:reverse(Funs).

number({'fun', _, {clauses, Cls}} = F, Acc) ->
    {N, Funs} = number(Cls, Acc),
    {N + 1, [{N, F} | Funs]};
number({named_fun, _, _, Cls} = F, Acc) ->
    {N, Funs} = number(Cls, Acc),
    {N + 1, [{N, F} | Funs]};
number({'fun', _, {function, F, _A}}, {N, Funs}) when is_atom(F) ->
    {N + 1, Funs};
number({op, _, '++', {lc, _, _, _} = Lc, More}, Acc) ->
    number(Lc, number(More, Acc));
number({Comp, _, Template, Quals}, Acc) when Comp =:= lc; Comp =:= bc ->
    Sources = [case Q of
                   {G, _, _P, E} when G =:= generate; G =:= b_generate -> E;
                   Filter -> Filter
               end || Q <- Quals],
    {N, Funs} = number(Sources, Acc),
    Generators = length([G || {G, _, _, _} <- Quals, G =:= generate orelse G =:= b_generate]),
    number(Template, {N + Generators, Funs});
number({op, _, Op, A, B}, Acc) when Op =:= 'andalso'; Op =:= 'orelse' ->
    number(B, number(A, Acc));
number({op, _, _Op, A, B}, Acc) ->
    number(A, number(B, Acc));
number({tuple, _, Es}, Acc) ->
    number(lists:reverse(Es), Acc);
number({cons, _, H, T}, Acc) ->
    number(H, number(T, Acc));
number({call, _, {remote, _, M, F}, As}, Acc) ->
    number(lists:reverse([M, F | As]), Acc);
number({call, _, {atom, _, _}, As}, Acc) ->
    number(lists:reverse(As), Acc);
number({call, _, Fun, As}, Acc) ->
    number(lists:reverse(As), number(Fun, Acc));
number({'receive', _, Cls, Timeout, After}, Acc) ->
    number(Cls, number(After, number(Timeout, Acc)));
number(T, Acc) when is_tuple(T) ->
    number(tuple_to_list(T), Acc);
number([H | T], Acc) ->
    number(T, number(H, Acc));
number(_, Acc) ->
    Acc.

fun_name(F, A, I) ->
    list_to_atom(lists:flatten(io_lib:format("-~ts/~b-fun-~b-", [F, A, I]))).

%% @doc Variables of FunExpr that are bound outside it in the enclosing
%% function (sorted): the ones its environment can hold.
-spec free_vars(erl_parse:abstract_expr(), [erl_parse:abstract_clause()]) -> [atom()].
free_vars(FunExpr, EnclosingClauses) ->
    Inside = vars(FunExpr),
    {found, Outside} = scope_vars(FunExpr, EnclosingClauses),
    Own = lists:usort(lists:append([vars(Ps) || {clause, _, Ps, _, _} <- fun_clauses(FunExpr)])),
    ordsets:subtract(ordsets:intersection(Inside, Outside), Own).

%% Variables of the scopes that enclose Target: the function's own
%% variables and those of every fun on the way down to Target, but not
%% those local to other funs.
scope_vars(Target, Clauses) ->
    case path_vars(Target, Clauses) of
        {found, Vs} -> {found, lists:usort(Vs ++ vars_outside_funs(Clauses))};
        not_found -> not_found
    end.

path_vars(Target, Target) ->
    {found, []};
path_vars(Target, {'fun', _, {clauses, Cls}}) ->
    fun_path_vars(Target, Cls);
path_vars(Target, {named_fun, _, Name, _} = F) ->
    case fun_path_vars(Target, fun_clauses(F)) of
        {found, Vs} -> {found, [Name | Vs]};
        not_found -> not_found
    end;
path_vars(Target, T) when is_tuple(T) ->
    path_vars(Target, tuple_to_list(T));
path_vars(Target, [H | T]) ->
    case path_vars(Target, H) of
        {found, _} = Found -> Found;
        not_found -> path_vars(Target, T)
    end;
path_vars(_Target, _) ->
    not_found.

fun_path_vars(Target, Clauses) ->
    case path_vars(Target, Clauses) of
        {found, Vs} -> {found, Vs ++ vars_outside_funs(Clauses)};
        not_found -> not_found
    end.

vars_outside_funs({'fun', _, {clauses, _}}) -> [];
vars_outside_funs({named_fun, _, _, _}) -> [];
vars_outside_funs({var, _, '_'}) -> [];
vars_outside_funs({var, _, V}) -> [V];
vars_outside_funs(T) when is_tuple(T) -> vars_outside_funs(tuple_to_list(T));
vars_outside_funs(L) when is_list(L) -> lists:flatmap(fun vars_outside_funs/1, L);
vars_outside_funs(_) -> [].

fun_clauses({'fun', _, {clauses, Cls}}) -> Cls;
fun_clauses({named_fun, _, _, Cls}) -> Cls.

vars(T) ->
    lists:usort(mce_translate_syntax:fold_all(fun({var, _, '_'}, Acc) -> Acc;
                                           ({var, _, V}, Acc) -> [V | Acc];
                                           (_, Acc) -> Acc
                                        end, [], T)).

%% Only the fun expression itself (not an equal-looking one elsewhere) is
%% replaced: fun expressions carry their source location.
replace(Old, New, T) ->
    mce_translate_syntax:postwalk(fun(X) when X =:= Old -> New;
                              (X) -> X
                           end, T).

%% Compiles the probe copy of M and calls a probe fun with Env.
probe(M, Name, FunExpr, Vars, Env, Forms) ->
    L = element(2, FunExpr),
    Body = [{tuple, L, [{atom, L, ?PROBE_TAG} | [{var, L, V} || V <- Vars]]}],
    %% Without parameters, patterns or guards: the probe is called with no
    %% arguments, and the captured variables (those of guards included) are
    %% all in its body.
    ProbeFun = {'fun', L, {clauses, [{clause, L, [], [], Body}]}},
    ProbeM = list_to_atom("mce$probe$" ++ atom_to_list(M)),
    ProbeForms = [case F of
                      {attribute, AL, module, _} -> {attribute, AL, module, ProbeM};
                      {attribute, _, on_load, _} -> {attribute, 0, compile, []};
                      _ -> replace(FunExpr, ProbeFun, F)
                  end || F <- Forms],
    Options = [binary, return_errors, no_spawn_compiler_process
               | [O || O <- proplists:get_value(options, M:module_info(compile), []),
                       optimisation_option(O)]],
    case compile:forms(ProbeForms, Options) of
        {ok, ProbeM, Bin} ->
            _ = code:soft_purge(ProbeM),
            {module, ProbeM} = code:load_binary(ProbeM, "mce$probe", Bin),
            call_probe(ProbeM, Bin, probe_name(Name, FunExpr, Forms), Env, length(Vars));
        {error, Errors, _} ->
            erlang:error({mcerlang, {closure_entry, M, Name, "probe does not compile", Errors}})
    end.

%% Options that change the generated code (and so the closure layout).
optimisation_option(O) when is_atom(O) ->
    lists:member(O, [no_copt, no_bool_opt, no_share_opt, no_recv_opt, no_ssa_opt,
                     no_type_opt, inline, no_inline_list_funcs, inline_list_funcs]);
optimisation_option({inline, _}) -> true;
optimisation_option({inline_size, _}) -> true;
optimisation_option({inline_effort, _}) -> true;
optimisation_option(_) -> false.

%% The probe's name for the fun: funs nested in the original body are gone
%% from the probe, so its post-order number can be smaller.
probe_name(Name, FunExpr, _Forms) ->
    {Nested, _} = number(fun_clauses(FunExpr), {0, []}),
    {match, [Prefix, N]} = re:run(atom_to_list(Name), "^(.*-fun-)([0-9]+)-$",
                                  [{capture, all_but_first, list}, unicode]),
    list_to_atom(Prefix ++ integer_to_list(list_to_integer(N) - Nested) ++ "-").

call_probe(ProbeM, Bin, ProbeName, Env, NVars) ->
    {ok, {ProbeM, [{atoms, Atoms}]}} = beam_lib:chunks(Bin, [atoms]),
    %% A module whose funs were all optimised away has no fun table.
    Entries = case beam_lib:chunks(Bin, ["FunT"]) of
                  {ok, {ProbeM, [{"FunT", <<_Count:32, Es/binary>>}]}} -> Es;
                  _ -> <<>>
              end,
    Found = [{Index, NumFree, OldUniq}
             || <<FnAtom:32, _Arity:32, _Label:32, Index:32, NumFree:32, OldUniq:32>>
                    <= Entries,
                proplists:get_value(FnAtom, Atoms) =:= ProbeName],
    case Found of
        [{Index, NumFree, OldUniq}] when NumFree =:= length(Env) ->
            Uniq = ProbeM:module_info(md5),
            Probe = binary_to_term(fun_ext(ProbeM, Uniq, Index, OldUniq, Env)),
            case Probe() of
                Tuple when is_tuple(Tuple), element(1, Tuple) =:= ?PROBE_TAG,
                           tuple_size(Tuple) =:= NVars + 1 ->
                    tl(tuple_to_list(Tuple))
            end;
        [{_, NumFree, _}] ->
            erlang:error({mcerlang, {closure_entry, ProbeName,
                                     {environment_size, NumFree, length(Env)},
                                     "the closure's environment could not be matched"}});
        [] ->
            erlang:error({mcerlang, {closure_entry, ProbeName, "probe fun not found"}})
    end.

%% NEW_FUN_EXT (external term format) for a zero-arity fun of Module with
%% the given free variables.
fun_ext(Module, Uniq, Index, OldUniq, Env) ->
    Body = [<<0:8, Uniq/binary, Index:32, (length(Env)):32>>,
            ext(Module), ext(Index), ext(OldUniq), ext(self()) | [ext(V) || V <- Env]],
    Bin = iolist_to_binary(Body),
    <<131, 112, (byte_size(Bin) + 4):32, Bin/binary>>.

ext(Term) ->
    <<131, Rest/binary>> = term_to_binary(Term),
    Rest.

refuse(Fun, Why) ->
    erlang:error({mcerlang, {closure_entry, Fun, Why}}).
