%%% @doc The abstract interpreter: runs checked code over abstract values
%%% (`abstraction => Spec', issue 21).
%%%
%%% In the concrete mode the real BEAM runs the translated program.  Under
%%% an over-approximating abstraction it cannot: `N + 1' where `N' stands
%%% for "every even number" has no BEAM meaning, and a match that may or may
%%% not succeed must be explored both ways.  So here the program's own
%%% abstract forms (the module's debug_info or source, records expanded) are
%%% evaluated by an explicit-continuation machine, Huch's abstract
%%% operational semantics (papers 000_252f033da8c97ae1.txt and
%%% 003_7dd3bcd1accd73d3.txt, section 3): every primitive goes through the
%%% domains of `mce_abs_domain', and where the abstraction cannot decide (a
%%% match, a guard, a comparison, an arithmetic error) the process stops in a
%%% choice with one alternative per possible outcome, which the C search
%%% explores like `mcerlang:choice/1'.
%%%
%%% The machine plugs into the runtime like translated code: a receive is a
%%% suspension `{mce_abs_eval, '$recv', [Machine], Timeout}' whose match
%%% question answers `true', `false' or `maybe' (the C search then takes the
%%% message and also looks past it); effects (send, spawn, links, the
%%% dictionary, probes, props) go through the same `mce_rt*' functions the
%%% translator redirects calls to, classified by
%%% `mce_translate:classify_call/3', so the sandbox's rule holds unchanged:
%%% only pure functions run for real, and only on concrete arguments.
%%%
%%% A machine is `{abs_m, Control, Env, Mod, Stack}':
%%%   Control  `{eval, Expr}' | `{value, V}' | `{raise, Class, Reason}' |
%%%            `{call, M, F, Args}' | `{apply, Fun, Args}' |
%%%            `{recv, Clauses, After}' (only in a suspension)
%%%   Env      the variables bound so far in the running function (a map);
%%%            it flows through a body and is restored by `call_return'
%%%   Stack    frames, innermost first (see `ret/5').
%%% Invariants: a machine stored in a state has its environments cut to the
%%% variables its remaining code mentions (`prune/1'), so two states that
%%% differ only in dead variables are one state; a tail call pushes no frame,
%%% so a server loop runs in constant stack; a stored stack deeper than
%%% ?FOLD_AFTER calls whose call segments repeat is folded (`fold_stack/1':
%%% `{fold, Segments}', paper 000's finite control for non-tail recursion):
%%% returning into it continues any of its segments, with or without more
%%% of them below, an over-approximation with finitely many stacks when the
%%% domains are finite.
-module(mce_abs_eval).

-export([start/1, resume/1, '$recv'/3, '$continue'/2, '$mce_info'/1, entry/3]).
%% For reports (mce_exec, mce_abstract).
-export([location/1, origin/1]).
%% For mce_abs_judge (user funs over abstract views).
-export([fun_machine/4, call_machine/3]).
%% The interpreter's helpers, for mce_abs_match.
-export([dom/0, alpha/1, any/0, line/1, unsupported/3]).

%% closure/2's funs never return on purpose (host_called/1), and
%% unsupported/3 stops the check.
-dialyzer({nowarn_function, [closure/2]}).

-define(DOM_KEY, '$mce_abs_dom').
-define(IS_LEAF(T), (tuple_size(T) =:= 2 andalso element(1, T) =:= '$mce_abs')).
%% A stored stack deeper than this many calls folds its repeated calls
%% (fold_stack/1) ...
-define(FOLD_AFTER, 4).
%% ... and folds whole past this many, even without a repeat (a recursion
%% whose frames all differ, over an infinite domain).
-define(MAX_SEGMENTS, 64).
%% A call with more frames than this under it ends the step first, so a
%% recursion that never reaches a receive is stored and folded too.
-define(YIELD_FRAMES, 400).
%% At most this many folds in a stack (bound_folds/1).
-define(MAX_FOLDS, 2).

-type machine() :: {abs_m, term(), map(), module(), [term()]}.

%%% ---------------------------------------------------------------------
%%% Entry points (called by the executor, mce_exec)
%%% ---------------------------------------------------------------------

%% @doc The initial call of the entry process under abstraction: the
%% arguments abstracted, the function interpreted.
-spec entry(module(), atom(), [term()]) -> {module(), atom(), [machine()]}.
entry(M, F, Args) ->
    {?MODULE, start, [{abs_m, {call, M, F, Args}, #{}, M, []}]}.

%% @doc A process's first step.
-spec start(machine()) -> term().
start({abs_m, {call, M, F, Args}, Env, Mod, K}) ->
    run({abs_m, {call, M, F, [alpha(A) || A <- Args]}, Env, Mod, K});
start(Machine) ->
    run(Machine).

%% @doc An alternative of an abstract branch (a choice the machine made).
-spec resume(machine()) -> term().
resume(Machine) ->
    run(Machine).

%% @doc A runtime call that suspended (a prop, a yield, ...) returns here.
-spec '$continue'(term(), machine()) -> term().
'$continue'(Value, {abs_m, _, Env, Mod, K}) ->
    ret(Value, Env, Mod, K).

%% @doc The machine's receive: the match question, the body, the timeout.
-spec '$recv'(match | body | timeout, term(), machine()) -> term().
'$recv'(match, Msg, {abs_m, {recv, Clauses, _After}, Env, _Mod, _K}) ->
    Outcomes = mce_abs_match:select(Clauses, Msg, Env),
    case {lists:member(no_match, Outcomes), [O || {clause, _, _} = O <- Outcomes]} of
        {_, []} -> false;
        {false, _} -> true;
        {true, _} -> maybe
    end;
'$recv'(body, Msg, {abs_m, {recv, Clauses, _After}, Env, Mod, K}) ->
    Alts = [{abs_m, {eval_body, Body}, Env1, Mod, K}
            || {clause, Body, Env1} <- mce_abs_match:select(Clauses, Msg, Env)],
    branch(Alts);
'$recv'(timeout, none, {abs_m, {recv, _Clauses, After}, Env, Mod, K}) ->
    run({abs_m, {eval_body, After}, Env, Mod, K}).

%% @doc Source locations of the machine's suspensions: none to give (the
%% machine is one module for every program).
-spec '$mce_info'(term()) -> undefined.
'$mce_info'(_) ->
    undefined.

%% @doc A machine that applies a fun of the program's code (its clauses
%% and captured variables) to Args, or calls M:F(Args): a user fun judged
%% by mce_abs_judge.
-spec fun_machine(module(), tuple(), map(), [term()]) -> machine().
fun_machine(M, FunExpr, Env, Args) ->
    Data = case FunExpr of
               {'fun', _, {clauses, Cs}} -> {M, [], Cs, Env};
               {named_fun, _, Name, Cs} -> {M, Name, Cs, Env}
           end,
    {abs_m, {apply, closure(Data, clauses_arity(element(3, Data))), Args}, #{}, M, []}.

-spec call_machine(module(), atom(), [term()]) -> machine().
call_machine(M, F, Args) ->
    {abs_m, {call, M, F, Args}, #{}, M, []}.

%% @doc Where a machine waits in a receive: the program's module, function,
%% arity, file and line, as translated code's `'$mce_info''.
-spec location(machine()) -> {module(), atom(), arity(), string(), non_neg_integer()} | undefined.
location({abs_m, {recv, [{clause, Anno, _, _, _} | _], _}, _Env, Mod, _K}) when is_atom(Mod) ->
    Line = erl_anno:line(Anno),
    Functions = [{F, A, Cs} || {{F, A}, Cs} <- maps:to_list(code_of(Mod)), is_list(Cs)],
    Starts = lists:sort([{erl_anno:line(element(2, hd(Cs))), F, A} || {F, A, Cs} <- Functions]),
    case [{F, A} || {Start, F, A} <- Starts, Start =< Line] of
        [] -> undefined;
        Before ->
            {F, A} = lists:last(Before),
            {Mod, F, A, source_file(Mod), Line}
    end;
location(_) ->
    undefined.

source_file(Mod) ->
    case proplists:get_value(source, Mod:module_info(compile)) of
        undefined -> "";
        Source -> filename:basename(Source)
    end.

%% @doc What a process's machine was started with, for reports: the call
%% `{M, F, Args}' or the fun it runs.
-spec origin(machine()) -> {module(), atom(), [term()]} | function() | machine().
origin({abs_m, {call, M, F, Args}, _, _, []}) -> {M, F, Args};
origin({abs_m, {apply, Fun, []}, _, _, []}) -> Fun;
origin(Machine) -> Machine.

%%% ---------------------------------------------------------------------
%%% The machine
%%% ---------------------------------------------------------------------

run({abs_m, {eval, E}, Env, Mod, K}) -> eval(E, Env, Mod, K);
run({abs_m, {eval_body, Body}, Env, Mod, K}) -> body(Body, Env, Mod, K);
run({abs_m, {value, V}, Env, Mod, K}) -> ret(V, Env, Mod, K);
run({abs_m, {raise, C, R}, Env, Mod, K}) -> raise(C, R, Env, Mod, K);
run({abs_m, {call, M, F, Args}, Env, Mod, K}) -> call(M, F, Args, 0, Env, Mod, K);
run({abs_m, {apply, Fun, Args}, Env, Mod, K}) -> apply_fun(Fun, Args, 0, Env, Mod, K);
run({abs_m, {enter, Cs, As, Env0, CalleeMod, Fail}, Env, Mod, K}) ->
    enter_now(Cs, As, Env0, CalleeMod, Fail, Env, Mod, K).

body([E], Env, Mod, K) -> eval(E, Env, Mod, K);
body([E | Rest], Env, Mod, K) -> eval(E, Env, Mod, [{body, Rest} | K]).

%% Several possible continuations: one goes on at once; more stop the step
%% in a choice, one alternative each.
branch([]) -> erlang:error({mcerlang, {abstraction_internal, no_outcome}});
branch([M]) -> run(M);
branch(Ms) ->
    {'$mce_suspend', {'$mce_choice', [{?MODULE, resume, [prune(M)]} || M <- Ms]}, []}.

%% The machines for a list of outcomes of a primitive.
outcomes(Os, Env, Mod, K) ->
    branch([case O of
                {value, V} -> {abs_m, {value, V}, Env, Mod, K};
                {error, R} -> {abs_m, {raise, error, R}, Env, Mod, K}
            end || O <- lists:usort(Os)]).

eval({var, L, X}, Env, Mod, K) ->
    case Env of
        #{X := V} -> ret(V, Env, Mod, K);
        #{} -> erlang:error({mcerlang, {abstraction_internal, {unbound, X}, Mod, L}})
    end;
%% A number literal is exact until it meets an arithmetic operator, which
%% abstracts its operands first (Huch's semantics: `84 div 2' is `even div
%% even', any integer), or goes into a constructed term (alpha/1): so a
%% comparison (`length(M) =< 1') or a BIF's position (`element(2, T)')
%% keeps its exact literal, and literals are finitely many.
eval({integer, _, I}, Env, Mod, K) -> ret(I, Env, Mod, K);
eval({char, _, C}, Env, Mod, K) -> ret(C, Env, Mod, K);
eval({float, _, F}, Env, Mod, K) -> ret(F, Env, Mod, K);
eval({atom, _, A}, Env, Mod, K) -> ret(A, Env, Mod, K);
eval({nil, _}, Env, Mod, K) -> ret([], Env, Mod, K);
%% A string literal stays text (a format, a name): its characters are
%% exact values, which every domain may keep.
eval({string, _, S}, Env, Mod, K) -> ret(S, Env, Mod, K);
eval({map, L, Assocs}, Env, Mod, K) ->
    args(lists:append([[Key, V] || {_, _, Key, V} <- Assocs]),
         {map, L, none, [element(1, A) || A <- Assocs]}, Env, Mod, K);
eval({map, L, Base, Assocs}, Env, Mod, K) ->
    args([Base | lists:append([[Key, V] || {_, _, Key, V} <- Assocs])],
         {map, L, base, [element(1, A) || A <- Assocs]}, Env, Mod, K);
eval({tuple, _, Es}, Env, Mod, K) -> args(Es, tuple, Env, Mod, K);
eval({cons, _, H, T}, Env, Mod, K) -> args([H, T], cons, Env, Mod, K);
eval({op, _, 'andalso', A, B}, Env, Mod, K) -> eval(A, Env, Mod, [{'andalso', B} | K]);
eval({op, _, 'orelse', A, B}, Env, Mod, K) -> eval(A, Env, Mod, [{'orelse', B} | K]);
eval({op, L, '!', To, Msg}, Env, Mod, K) ->
    args([To, Msg], {remote, erlang, send, L}, Env, Mod, K);
eval({op, L, Op, A, B}, Env, Mod, K) -> args([A, B], {op, Op, L}, Env, Mod, K);
eval({op, L, Op, A}, Env, Mod, K) -> args([A], {op, Op, L}, Env, Mod, K);
eval({match, _, P, E}, Env, Mod, K) -> eval(E, Env, Mod, [{match, P} | K]);
eval({block, _, Body}, Env, Mod, K) -> body(Body, Env, Mod, K);
eval({'case', _, E, Clauses}, Env, Mod, K) -> eval(E, Env, Mod, [{case_of, Clauses} | K]);
eval({'if', L, Clauses}, Env, Mod, K) ->
    Alts = mce_abs_match:if_outcomes(Clauses, Env, L),
    branch([case A of
                {clause, Body, Env1} -> {abs_m, {eval_body, Body}, Env1, Mod, K};
                no_match -> {abs_m, {raise, error, if_clause}, Env, Mod, K}
            end || A <- Alts]);
eval({'receive', L, Clauses}, Env, Mod, K) ->
    suspend_receive(Clauses, none, infinity, Env, Mod, K, L);
eval({'receive', _, Clauses, T, After}, Env, Mod, K) ->
    eval(T, Env, Mod, [{recv_after, Clauses, After} | K]);
eval({call, L, {remote, _, {atom, _, M}, {atom, _, F}}, As}, Env, Mod, K) ->
    args(As, {remote, M, F, L}, Env, Mod, K);
eval({call, L, {remote, _, ME, FE}, As}, Env, Mod, K) ->
    args([ME, FE | As], {dyn_remote, L}, Env, Mod, K);
eval({call, L, {atom, _, F}, As}, Env, Mod, K) ->
    args(As, {local, F, L}, Env, Mod, K);
eval({call, L, FunE, As}, Env, Mod, K) ->
    args([FunE | As], {apply, L}, Env, Mod, K);
eval({'fun', _, {clauses, Cs}}, Env, Mod, K) ->
    ret(closure({Mod, [], Cs, cut_env(Env, used_vars(Cs))}, clauses_arity(Cs)), Env, Mod, K);
eval({named_fun, _, Name, Cs}, Env, Mod, K) ->
    ret(closure({Mod, Name, Cs, cut_env(Env, used_vars(Cs))}, clauses_arity(Cs)), Env, Mod, K);
eval({'fun', _, {function, F, A}}, Env, Mod, K) ->
    ret(closure({fref, Mod, F, A}, A), Env, Mod, K);
eval({'fun', _, {function, {atom, _, M}, {atom, _, F}, {integer, _, A}}}, Env, Mod, K) ->
    ret(erlang:make_fun(M, F, A), Env, Mod, K);
eval({'try', _, Body, Of, Catches, After}, Env, Mod, K) ->
    K1 = case After of
             [] -> K;
             _ -> [{'after', After, Env} | K]
         end,
    body(Body, Env, Mod, [{'try', Of, Catches, Env} | K1]);
eval({'catch', _, E}, Env, Mod, K) ->
    eval(E, Env, Mod, [{'catch', Env} | K]);
eval({lc, L, E, Qualifiers}, Env, Mod, K) ->
    eval(comprehension(E, Qualifiers, L), Env, Mod, K);
eval(E, _Env, Mod, _K) ->
    unsupported(element(1, E), Mod, line(E)).

%% A list comprehension as the recursion it stands for: a generator is a
%% named fun over the list (its pattern's variables are new, as in a
%% fun's head), a filter a case.
comprehension(E, [], L) ->
    {cons, L, E, {nil, L}};
comprehension(E, [{generate, _, P, ListE} | Qs], L) ->
    Self = {var, L, '$mce_lc'},
    Tail = {var, L, '$mce_lc_tail'},
    {call, L,
     {named_fun, L, '$mce_lc',
      [{clause, L, [{nil, L}], [], [{nil, L}]},
       {clause, L, [{cons, L, P, Tail}], [],
        [{op, L, '++', comprehension(E, Qs, L), {call, L, Self, [Tail]}}]},
       {clause, L, [{cons, L, {var, L, '_'}, Tail}], [], [{call, L, Self, [Tail]}]}]},
     [ListE]};
comprehension(_E, [{b_generate, L0, _, _} | _], _L) ->
    erlang:error({mcerlang, {abstraction_unsupported, binary_generator, L0}});
comprehension(E, [Filter | Qs], L) ->
    {'case', L, Filter,
     [{clause, L, [{atom, L, true}], [], [comprehension(E, Qs, L)]},
      {clause, L, [{atom, L, false}], [], [{nil, L}]}]}.

%% Evaluates expressions left to right, then does What with their values.
args([], What, Env, Mod, K) -> apply_what(What, [], Env, Mod, K);
args([E | Es], What, Env, Mod, K) -> eval(E, Env, Mod, [{args, What, [], Es} | K]).

apply_what(tuple, Vs, Env, Mod, K) -> ret(alpha(list_to_tuple(Vs)), Env, Mod, K);
apply_what({map, L, Base, Ops}, Vs0, Env, Mod, K) ->
    %% Maps with concrete keys: built, or updated (`:=' needs the key).
    {Map0, Vs} = case Base of
                     none -> {#{}, Vs0};
                     base -> {hd(Vs0), tl(Vs0)}
                 end,
    Pairs = pairs(Vs),
    case is_map(Map0) andalso mce_abs_domain:is_concrete([Key || {Key, _} <- Pairs]) of
        false when is_map(Map0) -> unsupported(map_with_abstract_key, Mod, L);
        false -> outcomes([{error, {badmap, Map0}}] ++
                              [{value, any()} || not mce_abs_domain:is_concrete(Map0)], Env, Mod, K);
        true ->
            try lists:foldl(fun({{Key, V}, map_field_exact}, M) -> maps:update(Key, V, M);
                               ({{Key, V}, map_field_assoc}, M) -> M#{Key => V}
                            end, Map0, lists:zip(Pairs, Ops)) of
                Map -> ret(alpha(Map), Env, Mod, K)
            catch error:{badkey, _} = R -> raise(error, R, Env, Mod, K)
            end
    end;
apply_what(cons, [H, T], Env, Mod, K) -> ret(alpha([H | T]), Env, Mod, K);
apply_what({op, Op, _L}, Vs, Env, Mod, K) -> operator(Op, Vs, Env, Mod, K);
apply_what({remote, M, F, L}, Vs, Env, Mod, K) -> call(M, F, Vs, L, Env, Mod, K);
apply_what({local, F, L}, Vs, Env, Mod, K) ->
    case local_target(Mod, F, length(Vs)) of
        local -> call(Mod, F, Vs, L, Env, Mod, K);
        {remote, M} -> call(M, F, Vs, L, Env, Mod, K)
    end;
apply_what({dyn_remote, L}, [M, F | Vs], Env, Mod, K) when is_atom(M), is_atom(F) ->
    call(M, F, Vs, L, Env, Mod, K);
apply_what({dyn_remote, L}, [M, F | _], Env, Mod, K) ->
    mce_abs_domain:is_concrete({M, F}) orelse unsupported(call_of_abstract_function, Mod, L),
    raise(error, badarg, Env, Mod, K);
apply_what({apply, L}, [Fun | Vs], Env, Mod, K) -> apply_fun(Fun, Vs, L, Env, Mod, K).

%% Arithmetic, comparisons, boolean operators, `++' and `--'.
operator(Op, Vs, Env, Mod, K) when Op =:= '=='; Op =:= '/='; Op =:= '=:='; Op =:= '=/=';
                                   Op =:= '<'; Op =:= '>'; Op =:= '=<'; Op =:= '>=' ->
    [A, B] = Vs,
    outcomes(mce_abs_match:bool_outcomes(mce_abs_domain:compare(dom(), Op, A, B)), Env, Mod, K);
operator(Op, Vs, Env, Mod, K) when Op =:= 'not'; Op =:= 'and'; Op =:= 'or'; Op =:= 'xor' ->
    outcomes(mce_abs_match:boolean_op(Op, Vs), Env, Mod, K);
operator(Op, Vs, Env, Mod, K) when Op =:= '++'; Op =:= '--' ->
    call(erlang, Op, Vs, 0, Env, Mod, K);
operator(Op, Vs, Env, Mod, K) ->
    outcomes(mce_abs_domain:arith(dom(), Op, [alpha(V) || V <- Vs]), Env, Mod, K).

pairs([Key, V | Rest]) -> [{Key, V} | pairs(Rest)];
pairs([]) -> [].

%%% ---------------------------------------------------------------------
%%% Returning a value to the innermost frame
%%% ---------------------------------------------------------------------

ret(V, _Env, _Mod, []) ->
    V;
ret(V, Env, Mod, [{body, Rest} | K]) ->
    _ = V,
    body(Rest, Env, Mod, K);
ret(V, Env, Mod, [{args, What, Done, []} | K]) ->
    apply_what(What, lists:reverse(Done, [V]), Env, Mod, K);
ret(V, Env, Mod, [{args, What, Done, [E | Es]} | K]) ->
    eval(E, Env, Mod, [{args, What, [V | Done], Es} | K]);
ret(V, Env, Mod, [{match, P} | K]) ->
    {Envs, MayFail} = mce_abs_match:match(P, V, Env),
    branch([{abs_m, {value, V}, Env1, Mod, K} || Env1 <- Envs] ++
               [{abs_m, {raise, error, {badmatch, V}}, Env, Mod, K} || MayFail]);
ret(V, Env, Mod, [{case_of, Clauses} | K]) ->
    branch([case O of
                {clause, Body, Env1} -> {abs_m, {eval_body, Body}, Env1, Mod, K};
                no_match -> {abs_m, {raise, error, {case_clause, V}}, Env, Mod, K}
            end || O <- mce_abs_match:select(Clauses, V, Env)]);
ret(V, Env, Mod, [{'andalso', B} | K]) ->
    branch(shortcut(V, false, B, Env, Mod, K));
ret(V, Env, Mod, [{'orelse', B} | K]) ->
    branch(shortcut(V, true, B, Env, Mod, K));
ret(V, _Env, _Mod, [{call_return, Env, Mod} | K]) ->
    ret(V, Env, Mod, K);
ret(V, _Env, _Mod, [{fold, Segments} | Under] = K) ->
    %% The folded stack: the value returns into any of its segments, which
    %% may or may not have more of them below.
    branch([{abs_m, {value, V}, #{}, none, Seg ++ Below}
            || Seg <- Segments, Below <- [K, Under]]);
ret(V, _Env, Mod, [{'try', [], _Catches, TryEnv} | K]) ->
    ret(V, TryEnv, Mod, K);
ret(V, _Env, Mod, [{'try', Of, _Catches, TryEnv} | K]) ->
    branch([case O of
                {clause, Body, Env1} -> {abs_m, {eval_body, Body}, Env1, Mod, K};
                no_match -> {abs_m, {raise, error, {try_clause, V}}, TryEnv, Mod, K}
            end || O <- mce_abs_match:select(Of, V, TryEnv)]);
ret(V, _Env, Mod, [{'catch', CatchEnv} | K]) ->
    ret(V, CatchEnv, Mod, K);
ret(V, _Env, Mod, [{'after', After, AfterEnv} | K]) ->
    body(After, AfterEnv, Mod, [{after_done, {value, V}} | K]);
ret(_, Env, Mod, [{after_done, {value, V}} | K]) ->
    ret(V, Env, Mod, K);
ret(_, Env, Mod, [{after_done, {raise, C, R}} | K]) ->
    raise(C, R, Env, Mod, K);
ret(V, Env, Mod, [{recv_after, Clauses, After} | K]) ->
    suspend_receive(Clauses, After, V, Env, Mod, K, 0).

%% `andalso' (Stop = false) and `orelse' (Stop = true).
shortcut(V, Stop, B, Env, Mod, K) ->
    [case Bool of
         Stop -> {abs_m, {value, Stop}, Env, Mod, K};
         not_boolean -> {abs_m, {raise, error, {badarg, V}}, Env, Mod, K};
         _ -> {abs_m, {eval, B}, Env, Mod, K}
     end || Bool <- mce_abs_match:bool_values(V)].

%% An exception unwinds to the innermost try or catch.
raise(C, R, _Env, _Mod, []) ->
    erlang:raise(C, R, []);
raise(C, R, _Env, Mod, [{'try', _Of, [], TryEnv} | K]) ->
    raise(C, R, TryEnv, Mod, K);
raise(C, R, _Env, Mod, [{'try', _Of, Catches, TryEnv} | K]) ->
    Exc = {C, R, []},
    branch([case O of
                {clause, Body, Env1} -> {abs_m, {eval_body, Body}, Env1, Mod, K};
                no_match -> {abs_m, {raise, C, R}, TryEnv, Mod, K}
            end || O <- mce_abs_match:select([catch_clause(Cl) || Cl <- Catches], Exc, TryEnv)]);
raise(C, R, _Env, Mod, [{'catch', CatchEnv} | K]) ->
    V = case C of
            throw -> R;
            exit -> {'EXIT', R};
            error -> {'EXIT', {R, []}}
        end,
    ret(V, CatchEnv, Mod, K);
raise(C, R, _Env, Mod, [{'after', After, AfterEnv} | K]) ->
    body(After, AfterEnv, Mod, [{after_done, {raise, C, R}} | K]);
raise(C, R, _Env, _Mod, [{call_return, Env, Mod} | K]) ->
    raise(C, R, Env, Mod, K);
raise(C, R, _Env, _Mod, [{fold, Segments} | Under] = K) ->
    branch([{abs_m, {raise, C, R}, #{}, none, Seg ++ Below}
            || Seg <- Segments, Below <- [K, Under]]);
raise(C, R, Env, Mod, [_ | K]) ->
    raise(C, R, Env, Mod, K).

%% A catch clause `Class:Reason:Stack' as a clause over {Class, Reason, Stack}.
catch_clause({clause, L, [{tuple, _, [Class, Reason, Stack]}], G, B}) ->
    {clause, L, [{tuple, L, [Class, Reason, Stack]}], G, B};
catch_clause({clause, L, [P], G, B}) ->
    {clause, L, [{tuple, L, [{atom, L, throw}, P, {var, L, '_'}]}], G, B}.

%%% ---------------------------------------------------------------------
%%% Calls
%%% ---------------------------------------------------------------------

call(mcerlang, choice, [Alts], L, Env, Mod, K) ->
    case is_list(Alts) andalso Alts =/= [] of
        true ->
            branch([choice_alternative(A, Env, Mod, K, L) || A <- Alts]);
        false ->
            raise(error, badarg, Env, Mod, K)
    end;
call(erlang, F, As, L, Env, Mod, K)
  when F =:= spawn; F =:= spawn_link; F =:= spawn_monitor ->
    spawn_call(F, As, L, Env, Mod, K);
call(erlang, spawn_opt, As, L, Env, Mod, K) when length(As) =:= 2; length(As) =:= 4 ->
    {Spawned, [Opts]} = lists:split(length(As) - 1, As),
    mce_abs_domain:is_concrete(Opts) orelse
        unsupported({abstract_argument, {erlang, spawn_opt, length(As)}, As}, Mod, L),
    spawn_call({spawn_opt, Opts}, Spawned, L, Env, Mod, K);
%% apply/2,3 run the program's code here, whatever it is: never for real.
call(erlang, apply, [Fun, As], L, Env, Mod, K) ->
    known_arguments(erlang, apply, As, Mod, L),
    apply_fun(Fun, As, L, Env, Mod, K);
call(erlang, apply, [M, F, As], L, Env, Mod, K) ->
    %% Which function, and how many arguments (the list's end), must be
    %% known; the arguments themselves may be abstract.
    known_arguments(erlang, apply, [M, F, lists:last(cells(As))], Mod, L),
    case is_atom(M) andalso is_atom(F) andalso lists:last(cells(As)) =:= [] of
        true -> call(M, F, As, L, Env, Mod, K);
        false -> raise(error, badarg, Env, Mod, K)
    end;
call(M, F, As, L, Env, Mod, K) ->
    case mce_translate:classify_call(M, F, length(As)) of
        translate -> interpret(M, F, As, L, Env, Mod, K);
        library_hof -> interpret(M, F, As, L, Env, Mod, K);
        pure -> pure_call(M, F, As, Env, Mod, K);
        {redirect, RM, RF} -> runtime_call(RM, RF, As, Env, Mod, K);
        {model, MM, MF} -> interpret(MM, MF, As, L, Env, Mod, K);
        {unsupported, Why} ->
            mce_rt:unsupported({M, F, length(As)}, {Mod, L}, Why)
    end.

choice_alternative(Fun, Env, Mod, K, _L) ->
    {abs_m, {apply, Fun, []}, Env, Mod, K}.

%% A pure function: run for real on concrete arguments; on abstract ones,
%% the domain's abstract version, else every result and badarg.
pure_call(M, F, As, Env, Mod, K) ->
    %% The model's own functions (output recording, ...) take any term: an
    %% abstract value is one.
    Structural = structural(M, F, As),
    case Structural orelse mce_abs_domain:is_concrete(As) orelse lists:member(M, mce_rt:modules()) of
        true ->
            try erlang:apply(M, F, As) of
                %% A part of a value, or a length, is as exact as the value;
                %% a value built is abstracted (alpha/1) like any other.
                V -> case Structural andalso projection(M, F) of
                         true -> ret(V, Env, Mod, K);
                         false -> ret(alpha(V), Env, Mod, K)
                     end
            catch
                Class:Reason -> raise(Class, Reason, Env, Mod, K)
            end;
        false ->
            case mce_abs_domain:bif(dom(), {M, F, length(As)}, As) of
                unknown -> outcomes([{value, any()}, {error, badarg}], Env, Mod, K);
                Os -> outcomes(Os, Env, Mod, K)
            end
    end.

%% Calls that only walk a term's structure (a tuple's element, a map's
%% value under a concrete key, a list's cells) and never look at the
%% abstract values inside: exact when run for real on the concrete shape.
structural(erlang, element, [N, T]) -> is_integer(N) andalso shaped_tuple(T);
structural(erlang, tuple_size, [T]) -> shaped_tuple(T);
structural(erlang, F, [[_ | _]]) when F =:= hd; F =:= tl -> true;
structural(erlang, length, [L]) -> spine(L);
structural(erlang, F, [K, M]) when F =:= map_get; F =:= is_map_key ->
    mce_abs_domain:is_concrete(K) andalso is_map(M);
structural(maps, F, [K, M]) when F =:= get; F =:= find; F =:= is_key; F =:= remove ->
    mce_abs_domain:is_concrete(K) andalso is_map(M);
structural(maps, get, [K, M, _Default]) -> mce_abs_domain:is_concrete(K) andalso is_map(M);
structural(maps, put, [K, _V, M]) -> mce_abs_domain:is_concrete(K) andalso is_map(M);
structural(maps, F, [M]) when F =:= keys; F =:= values; F =:= to_list; F =:= size -> is_map(M);
structural(lists, F, [L]) when F =:= reverse; F =:= last -> spine(L);
structural(lists, nth, [N, L]) -> is_integer(N) andalso spine(L);
structural(lists, append, [A, B]) -> spine(A) andalso spine(B);
structural(erlang, '++', [A, _]) -> spine(A);
structural(_, _, _) -> false.

shaped_tuple(T) -> is_tuple(T) andalso not ?IS_LEAF(T).

%% The structural calls that return a part of their argument (or a size).
projection(erlang, F) -> lists:member(F, [element, tuple_size, hd, tl, length, map_get, is_map_key]);
projection(maps, F) -> lists:member(F, [get, find, is_key, keys, values, size]);
projection(lists, F) -> lists:member(F, [nth, last]);
projection(_, _) -> false.

%% A proper list whose cells are all there (its length is known).
spine(L) -> is_list(L) andalso lists:last(cells(L)) =:= [].

%% A call the translator redirects to the model (send, the dictionary,
%% links, probes, props, io, ...): the same function, here.  One that
%% suspends (a prop, a yield) suspends the machine with it.
runtime_call(mce_rt_time, RF, [Time | Rest], Env, Mod, K)
  when (RF =:= send_after orelse RF =:= start_timer), not is_integer(Time) ->
    %% A timer whose time the abstraction lost: any finite time behaves
    %% alike unless timeouts are ordered (as an abstract `after', suspend/7).
    case abstract_timeout(Time) of
        bad -> runtime_call(mce_rt_time, RF, [Time | Rest], Env, Mod, K, checked);
        T -> runtime_call(mce_rt_time, RF, [T | Rest], Env, Mod, K)
    end;
runtime_call(RM, RF, As, Env, Mod, K) ->
    runtime_call(RM, RF, As, Env, Mod, K, checked).

runtime_call(RM, RF, As, Env, Mod, K, checked) ->
    %% Whom a call acts on (a send's destination, the pid of a link or an
    %% exit signal, a name: targets/3) must be known: the model cannot act
    %% on "some pid", and acting on a term that only looks like a name
    %% would be wrong.
    (lists:any(fun(I) -> not mce_abs_domain:is_concrete(lists:nth(I, As)) end,
               targets(RM, RF, As)) orelse abstract_ets_keys(RM, RF, As)) andalso
        unsupported({abstract_argument, {RM, RF, length(As)}, As}, Mod, 0),
    try erlang:apply(RM, RF, As) of
        {'$mce_suspend', Recv, Frames} ->
            Me = prune({abs_m, {value, undefined}, Env, Mod, K}),
            {'$mce_suspend', Recv, [{?MODULE, '$continue', [Me]} | Frames]};
        V ->
            ret(alpha(V), Env, Mod, K)
    catch
        error:{mcerlang, _} = Fatal:Stack -> erlang:raise(error, Fatal, Stack);
        Class:Reason ->
            %% On concrete arguments the model's exception is the program's.
            %% On abstract ones it may be the abstraction's only (a pid cut
            %% out of a message is not a pid): raising it would drop the
            %% concrete runs in which the call succeeds, and a proof would
            %% be unsound, so the check stops instead.
            case mce_abs_domain:is_concrete(As) orelse targets_decide(RM) of
                true -> raise(Class, Reason, Env, Mod, K);
                false -> unsupported({abstract_argument, {RM, RF, length(As)}, As}, Mod, 0)
            end
    end.

%% spawn/1,3, spawn_link/1,3, spawn_monitor/1,3 of interpreted code.
spawn_call(F, As, L, Env, Mod, K) ->
    %% What to spawn must be known (a function, or a module, a name and an
    %% argument list, whose elements may be abstract).
    Unknown = lists:any(fun is_abstract_leaf/1, As) orelse
        (length(As) =:= 3 andalso is_abstract_leaf(lists:last(cells(lists:last(As))))),
    Unknown andalso unsupported({abstract_argument, {erlang, F, length(As)}, As}, Mod, L),
    Init = case As of
               [Fun] when is_function(Fun, 0) -> {ok, {abs_m, {apply, Fun, []}, #{}, Mod, []}};
               [M, Fn, Args] when is_atom(M), is_atom(Fn), is_list(Args) ->
                   {ok, {abs_m, {call, M, Fn, Args}, #{}, M, []}};
               [Node, _ | _] when is_atom(Node), length(As) =:= 2; length(As) =:= 4 ->
                   unsupported(spawn_on_node, Mod, L);
               _ -> badarg
           end,
    case Init of
        badarg -> raise(error, badarg, Env, Mod, K);
        {ok, Machine} ->
            Call = {?MODULE, start, [prune(Machine)]},
            V = case F of
                    {spawn_opt, Opts} ->
                        mce_rt_spawn:spawn_init_opt(Call, Opts, As ++ [Opts]);
                    spawn_monitor ->
                        Pid = mce_rt_spawn:spawn_init(Call, false),
                        {Pid, mce_rt_signals:monitor_spawned(Pid)};
                    _ ->
                        mce_rt_spawn:spawn_init(Call, F =:= spawn_link)
                end,
            ret(V, Env, Mod, K)
    end.

%% The arguments that say what a call does (whom, which code, which key)
%% must be concrete; the check stops otherwise (see runtime_call/6).
known_arguments(M, F, As, Mod, L) ->
    lists:any(fun is_abstract_leaf/1, As) andalso
        unsupported({abstract_argument, {M, F, length(As)}, As}, Mod, L).

%% The arguments of a modelled call that say whom or what it acts on: a
%% pid or a name, a dictionary or ETS key (the model compares keys as
%% terms, and an abstract key may stand for a key it does not equal),
%% a match pattern.
targets(RM, RF, As) ->
    [I || I <- target_positions(RM, RF, As), I =< length(As)].

target_positions(mce_rt, F, _) when F =:= send; F =:= send_nosuspend -> [1];
target_positions(mce_rt, F, [_ | _]) when F =:= put; F =:= get; F =:= erase -> [1];
target_positions(mce_rt_signals, F, _) when F =:= link; F =:= unlink; F =:= exit -> [1];
target_positions(mce_rt_signals, monitor, _) -> [2];
target_positions(mce_rt_signals, F, [_ | _]) when F =:= demonitor; F =:= unalias -> [1];
target_positions(mce_rt_procs, register, _) -> [1, 2];
target_positions(mce_rt_procs, F, [_ | _]) when F =:= unregister; F =:= whereis;
                                                F =:= is_process_alive; F =:= process_info -> [1];
target_positions(mce_rt_io, group_leader, [_, _]) -> [1, 2];
target_positions(mce_rt_node, monitor_node, _) -> [1];
target_positions(mce_rt_time, F, [_, _, _ | _]) when F =:= send_after; F =:= start_timer -> [2];
target_positions(mce_ets, F, [_]) when F =:= new -> [];
target_positions(mce_ets, F, [_, _ | _]) when F =:= insert; F =:= insert_new; F =:= delete_object ->
    %% the objects' keys: every object's first element, or the whole of
    %% an object whose table keeps its key elsewhere (objects/1)
    [1];
target_positions(mce_ets, _, [_]) -> [1];
target_positions(mce_ets, _, [_, _ | _]) -> [1, 2];
target_positions(_, _, _) -> [].

%% The models whose exceptions depend on their targets only (checked
%% concrete above), not on the data they carry.
targets_decide(RM) ->
    lists:member(RM, [mce_rt, mce_rt_signals, mce_rt_procs, mce_ets]).

%% The keys of the objects an ETS insert writes.
abstract_ets_keys(mce_ets, F, [T, Objects]) when F =:= insert; F =:= insert_new;
                                                F =:= delete_object ->
    KeyPos = try mce_ets:info(T, keypos) of
                 P when is_integer(P) -> P;
                 _ -> 1
             catch _:_ -> 1
             end,
    lists:any(fun(O) when is_tuple(O), tuple_size(O) >= KeyPos, not ?IS_LEAF(O) ->
                      not mce_abs_domain:is_concrete(element(KeyPos, O));
                 (O) -> not mce_abs_domain:is_concrete(O)
              end, case Objects of
                       [_ | _] -> cells(Objects);
                       _ -> [Objects]
                   end);
abstract_ets_keys(_, _, _) ->
    false.

is_abstract_leaf({'$mce_abs', _}) -> true;
is_abstract_leaf(_) -> false.

%% The cells of a (possibly improper) list and what ends it.
cells([H | T]) -> [H | cells(T)];
cells(End) -> [End].

apply_fun(Fun, As, L, Env, Mod, K) when is_function(Fun) ->
    case {erlang:fun_info(Fun, module), erlang:fun_info(Fun, type)} of
        {{module, ?MODULE}, {type, local}} ->
            case is_function(Fun, length(As)) of
                true -> apply_closure(closure_data(Fun), Fun, As, L, Env, Mod, K);
                false -> raise(error, {badarity, {Fun, As}}, Env, Mod, K)
            end;
        {{module, M}, {type, external}} when is_function(Fun, length(As)) ->
            {name, F} = erlang:fun_info(Fun, name),
            call(M, F, As, L, Env, Mod, K);
        {_, {type, external}} ->
            raise(error, {badarity, {Fun, As}}, Env, Mod, K);
        _ ->
            unsupported(host_fun, Mod, L)
    end;
apply_fun(Fun, _As, L, Env, Mod, K) ->
    case mce_abs_domain:is_concrete(Fun) of
        true -> raise(error, {badfun, Fun}, Env, Mod, K);
        false -> unsupported(call_of_abstract_fun, Mod, L)
    end.

apply_closure({fref, M, F, _A}, _Fun, As, L, Env, Mod, K) ->
    call(M, F, As, L, Env, Mod, K);
apply_closure({FMod, Name, Cs, FEnv}, Fun, As, _L, Env, Mod, K) ->
    Env0 = case Name of
               [] -> FEnv;
               _ -> FEnv#{Name => Fun}
           end,
    enter(Cs, As, Env0, FMod, function_clause, Env, Mod, K).

%% An interpreted fun is a real fun of this module holding its code and
%% environment: atomic for the domains (a depth cut never opens it),
%% hashed by the store like any fun, and `is_function/2' sees its arity.
%% The BEAM never runs one for the program (apply_fun/6 takes the data
%% out); if host code calls it, that is an error, not a silent run.
closure(Data, 0) -> fun() -> host_called(Data) end;
closure(Data, 1) -> fun(_) -> host_called(Data) end;
closure(Data, 2) -> fun(_, _) -> host_called(Data) end;
closure(Data, 3) -> fun(_, _, _) -> host_called(Data) end;
closure(Data, 4) -> fun(_, _, _, _) -> host_called(Data) end;
closure(Data, 5) -> fun(_, _, _, _, _) -> host_called(Data) end;
closure(Data, 6) -> fun(_, _, _, _, _, _) -> host_called(Data) end;
closure(Data, A) ->
    erlang:error({mcerlang, {abstraction_unsupported, {fun_arity, A}, closure_origin(Data)}}).

closure_data(Fun) ->
    {env, [Data]} = erlang:fun_info(Fun, env),
    Data.

closure_origin({fref, M, F, A}) -> {M, F, A};
closure_origin({M, _, Cs, _}) -> {M, line(hd(Cs))}.

clauses_arity([{clause, _, Ps, _, _} | _]) -> length(Ps).

-spec host_called(term()) -> no_return().
host_called(Data) ->
    erlang:error({mcerlang, {abstraction_unsupported, host_called_interpreted_fun,
                             closure_origin(Data)}}).

%% A call of a function of the program (or of a library higher-order
%% function): its clauses are selected over the arguments, in a new
%% environment; the caller's is restored on return.
interpret(M, F, As, _L, Env, Mod, K) ->
    case clauses(M, F, length(As)) of
        {ok, Cs} -> enter(Cs, As, #{}, M, function_clause, Env, Mod, K);
        undef -> raise(error, undef, Env, Mod, K)
    end.

%% The variables of a fun's head are new in each clause: they shadow the
%% ones the fun captured (a function's own environment starts empty).
enter(Cs, As, Env0, CalleeMod, Fail, Env, Mod, K) when length(K) > ?YIELD_FRAMES ->
    %% A recursion this deep within one step: the step ends here (a one-way
    %% choice) so that the stack is stored, and folded (paper 000, Example
    %% 5.1: `f(X) -> f(f(X))' has a finite abstract model, not an endless
    %% step).
    {'$mce_suspend', {'$mce_choice', [{?MODULE, resume, [prune({abs_m, {enter, Cs, As, Env0, CalleeMod, Fail},
                                                                 Env, Mod, K})]}]}, []};
enter(Cs, As, Env0, CalleeMod, Fail, Env, Mod, K) ->
    enter_now(Cs, As, Env0, CalleeMod, Fail, Env, Mod, K).

enter_now(Cs, As, Env0, CalleeMod, Fail, Env, Mod, K) ->
    K1 = push_return(Env, Mod, K),
    Alts = mce_abs_match:select_worlds([{{clause, L, [{tuple, L, Ps}], G, B},
                           maps:without(sets:to_list(used_vars(Ps)), Env0)}
                          || {clause, L, Ps, G, B} <- Cs],
                         list_to_tuple(As)),
    branch([case O of
                {clause, Body, Env1} -> {abs_m, {eval_body, Body}, Env1, CalleeMod, K1};
                no_match -> {abs_m, {raise, error, Fail}, Env, Mod, K}
            end || O <- Alts]).

%% The caller's frame, unless the call is a tail call (the next frame
%% already restores an environment).
push_return(_Env, _Mod, [{call_return, _, _} | _] = K) -> K;
push_return(_Env, _Mod, [{fold, _} | _] = K) -> K;
push_return(_Env, _Mod, []) -> [];
push_return(Env, Mod, K) ->
    [{call_return, cut_env(Env, segment_vars(K)), Mod} | K].

%% Folding non-tail recursion (paper 000): only a stack that is stored in
%% a state needs it (a recursion within one step ends, or the runaway
%% watchdog stops it), and only a deep one: a shallow recursion keeps its
%% exact stack.  Past ?FOLD_AFTER calls, the calls down to the deepest
%% copy of a repeated segment fold into a set; what is under them stays.
%% A stack whose segments never repeat folds whole past ?MAX_SEGMENTS.
fold_stack(K) ->
    {Top, Calls} = lists:splitwith(fun(F) -> element(1, F) =/= call_return andalso
                                                 element(1, F) =/= fold end, K),
    {Segments, Under} = segments(Calls),
    Folded = case Under of
                 [{fold, Set} | Below] when Segments =/= [] ->
                     case lists:any(fun(S) -> lists:member(S, Set) end, Segments) of
                         true -> [{fold, lists:usort(Segments ++ Set)} | Below];
                         false -> fold_segments(Segments, Under)
                     end;
                 _ ->
                     fold_segments(Segments, Under)
             end,
    Top ++ bound_folds(merge_adjacent(Folded)).

fold_segments(Segments, Under) when length(Segments) =< ?FOLD_AFTER ->
    lists:append(Segments) ++ Under;
fold_segments(Segments, Under) ->
    case deepest_repeat(Segments) of
        0 when length(Segments) > ?MAX_SEGMENTS ->
            [{fold, lists:usort(Segments)} | Under];
        0 ->
            lists:append(Segments) ++ Under;
        Depth ->
            {Recurring, Rest} = lists:split(Depth, Segments),
            [{fold, lists:usort(Recurring)} | lists:append(Rest) ++ Under]
    end.

%% Two folds one on the other are one: any sequence of the first's
%% segments then of the second's is a sequence of their union's.
merge_adjacent([{fold, A}, {fold, B} | Rest]) -> [{fold, lists:usort(A ++ B)} | Rest];
merge_adjacent(K) -> K.

%% More than ?MAX_FOLDS folds with segments between them: all of it folds
%% into one, above the process's first segment, so the stacks stay finite.
bound_folds(K) ->
    Items = stack_items(K),
    case length([F || [{fold, _}] = F <- Items]) > ?MAX_FOLDS of
        false -> K;
        true ->
            {Above, Bottom} = case lists:reverse(Items) of
                                  [[{fold, _}] | _] -> {Items, []};
                                  [Last | RevRest] -> {lists:reverse(RevRest), Last}
                              end,
            Set = lists:usort(lists:append([case I of
                                                [{fold, S}] -> S;
                                                Seg -> [Seg]
                                            end || I <- Above])),
            [{fold, Set} | Bottom]
    end.

%% The stack as a list of call segments and fold frames ([{fold, _}]).
stack_items([]) -> [];
stack_items([{fold, _} = F | K]) -> [[F] | stack_items(K)];
stack_items(K) ->
    {Segments, Under} = segments(K),
    Segments ++ stack_items(Under).

%% How many segments, from the top, reach the deepest segment equal to one
%% above it (0: none repeats).
deepest_repeat(Segments) ->
    deepest_repeat(Segments, 1, [], 0).

deepest_repeat([], _I, _Seen, Deepest) -> Deepest;
deepest_repeat([S | Rest], I, Seen, Deepest) ->
    case lists:member(S, Seen) of
        true -> deepest_repeat(Rest, I + 1, Seen, I);
        false -> deepest_repeat(Rest, I + 1, [S | Seen], Deepest)
    end.

%% The stack as call segments: each a `call_return' frame and the caller's
%% frames under it, down to the next one, and what is under the topmost
%% fold (the fold frame included).
segments(K) ->
    segments(K, [], []).

segments([], Cur, Acc) -> {lists:reverse(close(Cur, Acc)), []};
segments([{fold, _} | _] = Under, Cur, Acc) -> {lists:reverse(close(Cur, Acc)), Under};
segments([{call_return, _, _} = F | K], Cur, Acc) -> segments(K, [F], close(Cur, Acc));
segments([F | K], Cur, Acc) -> segments(K, [F | Cur], Acc).

close([], Acc) -> Acc;
close(Cur, Acc) -> [lists:reverse(Cur) | Acc].

%%% ---------------------------------------------------------------------
%%% Receive
%%% ---------------------------------------------------------------------

suspend_receive(Clauses, After, Timeout0, Env, Mod, K, L) ->
    Timeout = case Timeout0 of
                  infinity -> infinity;
                  T when is_integer(T), T >= 0 -> T;
                  T when is_integer(T) -> bad;
                  T -> abstract_timeout(T)
              end,
    case Timeout of
        bad -> raise(error, timeout_value, Env, Mod, K);
        _ ->
            Machine = prune({abs_m, {recv, Clauses, case After of
                                                          none -> [{atom, L, ok}];
                                                          _ -> After
                                                      end}, Env, Mod, K}),
            mce_rt:suspend(?MODULE, '$recv', [Machine], Timeout)
    end.

%% A timeout the abstraction cannot name: untimed, any finite one behaves
%% alike (it fires whenever nothing else matches).
abstract_timeout(T) ->
    case mce_abs_domain:type_test(dom(), is_integer, T) of
        false -> bad;
        _ -> 1
    end.

%%% ---------------------------------------------------------------------
%%% The program's code, environments, helpers
%%% ---------------------------------------------------------------------

%% The clauses of M:F/A, from the module's abstract forms with records
%% expanded; cached per module version.
clauses(M, F, A) ->
    Code = code_of(M),
    case Code of
        #{{F, A} := Cs} -> {ok, Cs};
        #{} -> undef
    end.

code_of(M) ->
    MD5 = try M:module_info(md5) catch error:undef -> undefined end,
    Key = {?MODULE, M, MD5},
    case persistent_term:get(Key, undefined) of
        undefined ->
            Forms = erl_expand_records:module(mce_translate:original_forms(M), []),
            Code = maps:from_list([{{F, A}, Cs} || {function, _, F, A, Cs} <- Forms]),
            Imports = maps:from_list([{{F, A}, IM} || {attribute, _, import, {IM, FAs}} <- Forms,
                                                      {F, A} <- FAs]),
            Entry = Code#{'$imports' => Imports},
            persistent_term:put(Key, Entry),
            Entry;
        Entry ->
            Entry
    end.

%% A local call `f(...)': the module's own function, an import, or an
%% auto-imported BIF.
local_target(Mod, F, A) ->
    Code = code_of(Mod),
    case Code of
        #{{F, A} := _} -> local;
        #{'$imports' := #{{F, A} := M}} -> {remote, M};
        #{} -> {remote, erlang}
    end.

%% @doc The check's domains (set by mce_search:setup_process/1).
-spec dom() -> term().
dom() ->
    get(?DOM_KEY).

-spec alpha(term()) -> term().
alpha(V) ->
    mce_abs_domain:alpha(dom(), V).

-spec any() -> {'$mce_abs', any}.
any() ->
    {'$mce_abs', any}.

-spec line(term()) -> non_neg_integer().
line(E) when is_tuple(E), tuple_size(E) >= 2 ->
    erl_anno:line(element(2, E));
line(_) -> 0.

-spec unsupported(term(), module() | none, non_neg_integer()) -> no_return().
unsupported(What, Mod, L) ->
    mce_rt:fatal({mcerlang, {abstraction_unsupported, What, {Mod, L}}}).

%% Environments cut to what the remaining code reads: the variables the
%% control and the frames up to the first `call_return' mention keep the
%% running environment; each `call_return' keeps what its caller's frames
%% mention.
prune({abs_m, Ctl, Env, Mod, K}) ->
    {abs_m, Ctl, cut_env(Env, sets:union(used_vars(Ctl), segment_vars(K))), Mod,
     fold_stack(prune_stack(K))}.

prune_stack([]) -> [];
prune_stack([{call_return, Env, Mod} | K]) ->
    [{call_return, cut_env(Env, segment_vars(K)), Mod} | prune_stack(K)];
prune_stack([F | K]) -> [F | prune_stack(K)].

segment_vars(K) ->
    segment_vars(K, sets:new([{version, 2}])).

segment_vars([], Acc) -> Acc;
segment_vars([{call_return, _, _} | _], Acc) -> Acc;
segment_vars([{fold, _} | _], Acc) -> Acc;
segment_vars([F | K], Acc) -> segment_vars(K, sets:union(used_vars(strip_envs(F)), Acc)).

%% The saved environments inside frames are not code.
strip_envs({'try', Of, Catches, _}) -> {Of, Catches};
strip_envs({'catch', _}) -> none;
strip_envs({'after', After, _}) -> After;
strip_envs({args, What, _Done, Es}) -> {What, Es};
strip_envs({after_done, _}) -> none;
strip_envs(F) -> F.

cut_env(Env, Used) ->
    maps:filter(fun(X, _) -> sets:is_element(X, Used) end, Env).

%% Every variable name the code mentions (bound or read).
used_vars(Term) ->
    used_vars(Term, sets:new([{version, 2}])).

used_vars({var, _, X}, Acc) when is_atom(X) -> sets:add_element(X, Acc);
used_vars(T, Acc) when is_tuple(T) -> used_vars(tuple_to_list(T), Acc);
used_vars([H | T], Acc) -> used_vars(T, used_vars(H, Acc));
used_vars(_, Acc) -> Acc.
