%% @doc A-normalisation of bodies for the translator.
%%
%% The translator can resume a process only at body level: a blocking call
%% (or receive) must stand as a whole body expression, `Pat = Call' or
%% `Call'.  This pass rewrites each expression of a body so that every
%% subexpression that may block is first bound to a fresh variable by a
%% body-level match placed before it:
%%
%%     foo(bar(), receive X -> X end) + 1
%% becomes
%%     MCE@T1 = bar(), MCE@T2 = receive X -> X end, foo(MCE@T1, MCE@T2) + 1
%%
%% Erlang evaluates subexpressions left to right (arguments, operands,
%% tuple and list elements, map keys before values, the module expression
%% before the arguments; checked on the VM), so every non-trivial
%% subexpression up to and including the last one that may block is
%% hoisted, in order, and the order of side effects is kept.  Short-circuit
%% operators become `case' (with the VM's `{badarg, V}' for a non-boolean
%% left operand), and `self()'/`node()' in guards are bound to variables
%% before the clauses that use them.  Expressions that need nothing are
%% returned unchanged.
-module(mce_anf).

-export([body/2]).

-type ctx() :: #{may_block := fun((term()) -> boolean()),
                 fresh := fun(() -> atom()),
                 env := [atom()],
                 bound := fun((term()) -> [atom()]),
                 lower_comprehension := fun((term(), [atom()]) -> term()),
                 lower_discarded := fun((term(), [atom()]) -> term())}.
-export_type([ctx/0]).

%% @doc Normalises the expressions of one body (not the bodies nested in
%% clauses: the translator calls this again for each of those).
-spec body([erl_parse:abstract_expr()], ctx()) -> [erl_parse:abstract_expr()].
body(Es, Ctx) ->
    %% The variables bound so far are threaded through the body: a lowered
    %% comprehension takes those it uses as arguments.
    Last = length(Es),
    {Out, _, _} = lists:foldl(
                    fun(E, {Acc, Env, I}) ->
                            Done = case I < Last of
                                       true -> discarded(E, Ctx#{env := Env});
                                       false -> stmt(E, Ctx#{env := Env})
                                   end,
                            {[Done | Acc], ordsets:union(Env, (maps:get(bound, Ctx))(E)), I + 1}
                    end, {[], maps:get(env, Ctx), 1}, Es),
    lists:append(lists:reverse(Out)).

%% A body expression before the last, not a match: its value is dropped.
%% A list comprehension there that must be lowered is lowered into loops
%% that keep no results (lower_discarded), as the compiler does for a
%% comprehension whose value is unused: the results of a side-effect loop
%% (`[gen_server:call(S, incr) || _ <- L], done') would otherwise wait in
%% the continuation of every step the loop blocks in, and states that
%% differ only in those unreadable values would be told apart.
discarded({lc, _, _, _} = C, Ctx) ->
    case needs(C, Ctx) of
        true -> stmt((maps:get(lower_discarded, Ctx))(C, maps:get(env, Ctx)), Ctx);
        false -> stmt(C, Ctx)
    end;
discarded(E, Ctx) ->
    stmt(E, Ctx).

%% A body-level expression: it may block at its top, not inside.
stmt({match, L, P, R}, Ctx) ->
    {Pre, R1} = site(R, Ctx),
    Pre ++ [{match, L, P, R1}];
stmt(E, Ctx) ->
    {Pre, E1} = site(E, Ctx),
    Pre ++ [E1].

%% E stays where it is (a site or a tail); only its parts are hoisted.
site(E, Ctx) ->
    case needs(E, Ctx) orelse guard_bifs(E) of
        false -> {[], E};
        true -> site1(E, Ctx)
    end.

site1({call, L, {remote, RL, M, F}, As}, Ctx) ->
    {Pre, [M1, F1 | As1]} = call_values([M, F | As], Ctx),
    {Pre, {call, L, {remote, RL, M1, F1}, As1}};
site1({call, L, F, As}, Ctx) ->
    {Pre, [F1 | As1]} = call_values([F | As], Ctx),
    {Pre, {call, L, F1, As1}};
site1({'case', L, H, Cls}, Ctx) ->
    {Pre, H1} = value(H, Ctx),
    {Pre2, Cls1} = guard_clauses(Cls, Ctx),
    {Pre ++ Pre2, {'case', L, H1, Cls1}};
site1({'if', L, Cls}, Ctx) ->
    {Pre, Cls1} = guard_clauses(Cls, Ctx),
    {Pre, {'if', L, Cls1}};
site1({'receive', L, Cls}, Ctx) ->
    {Pre, Cls1} = guard_clauses(Cls, Ctx),
    {Pre, {'receive', L, Cls1}};
site1({'receive', L, Cls, T, A}, Ctx) ->
    {Pre, Cls1} = guard_clauses(Cls, Ctx),
    {Pre2, T1} = value(T, Ctx),
    {Pre ++ Pre2, {'receive', L, Cls1, T1, A}};
site1({block, _, _} = B, _Ctx) ->
    {[], B};
site1({'try', _, _, _, _, _} = T, _Ctx) ->
    {[], T};
site1({'catch', _, _} = C, _Ctx) ->
    {[], C};
site1({op, L, Op, A, B}, Ctx) when Op =:= 'andalso'; Op =:= 'orelse' ->
    case needs(B, Ctx) of
        true -> site1(short_circuit(L, Op, A, B, Ctx), Ctx);
        false -> value_parts({op, L, Op, A, B}, Ctx)
    end;
site1({Comp, _, _, _} = C, Ctx) when Comp =:= lc; Comp =:= bc ->
    site1((maps:get(lower_comprehension, Ctx))(C, maps:get(env, Ctx)), Ctx);
site1(E, Ctx) ->
    value_parts(E, Ctx).

%% {Pre, V}: V is free of blocking code.
value(E, Ctx) ->
    case needs(E, Ctx) of
        false -> {[], E};
        true ->
            case is_site_form(E) of
                true ->
                    {Pre, E1} = site1(E, Ctx),
                    L = element(2, E),
                    T = {var, L, (maps:get(fresh, Ctx))()},
                    {Pre ++ [{match, L, T, E1}], T};
                false ->
                    value1(E, Ctx)
            end
    end.

value1({match, L, P, R}, Ctx) ->
    {Pre, R1} = value(R, Ctx),
    {Pre, {match, L, P, R1}};
value1({op, L, Op, A, B} = E, Ctx) when Op =:= 'andalso'; Op =:= 'orelse' ->
    case needs(B, Ctx) of
        true -> value(short_circuit(L, Op, A, B, Ctx), Ctx);
        false -> value_parts(E, Ctx)
    end;
value1({Comp, _, _, _} = C, Ctx) when Comp =:= lc; Comp =:= bc ->
    value((maps:get(lower_comprehension, Ctx))(C, maps:get(env, Ctx)), Ctx);
value1(E, Ctx) ->
    value_parts(E, Ctx).

%% Rebuilds E with its direct subexpressions made blocking-free, hoisting
%% them in evaluation order.
value_parts(E, Ctx) ->
    Subs = mce_translate_syntax:subexprs(E),
    {Pre, Subs1} = values(Subs, Ctx),
    put(mce_anf_subs, Subs1),
    E1 = mce_translate_syntax:map_subexprs(fun(_) -> next_sub() end, E),
    erase(mce_anf_subs),
    {Pre, E1}.

next_sub() ->
    [S | Rest] = get(mce_anf_subs),
    put(mce_anf_subs, Rest),
    S.

%% The parts of a call that may block.  Variables bound in its arguments
%% (`Pid ! {req, Ref = make_ref()}', `notify(P, R = {abort, X})') are bound
%% after the call on the VM, but a call that suspends is resumed in a frame
%% that only receives its value: the arguments up to the last one that
%% binds are hoisted too, so the matches happen in body-level order before
%% the call, as the VM evaluates them (left to right, a failed match raising
%% `{badmatch, V}' before the call is made).
call_values(Es, Ctx) ->
    Bound = maps:get(bound, Ctx),
    values(Es, Ctx, fun(E) -> needs(E, Ctx) orelse Bound(E) =/= [] end).

%% Makes a list of expressions blocking-free, evaluated left to right:
%% everything up to the last one that may block is hoisted (unless it is a
%% variable or a literal, which cannot have effects).
values(Es, Ctx) ->
    values(Es, Ctx, fun(E) -> needs(E, Ctx) end).

values(Es, Ctx, Hoist) ->
    Last = last_index(Hoist, Es),
    {Pre, Rev, _} =
        lists:foldl(
          fun(E, {Pre0, Acc, I}) when I =< Last ->
                  case trivial(E) of
                      true -> {Pre0, [E | Acc], I + 1};
                      false ->
                          {Pre1, V} = hoist(E, Ctx),
                          {Pre0 ++ Pre1, [V | Acc], I + 1}
                  end;
             (E, {Pre0, Acc, I}) ->
                  {Pre0, [E | Acc], I + 1}
          end, {[], [], 1}, Es),
    {Pre, lists:reverse(Rev)}.

%% Binds E (made blocking-free at the top) to a fresh variable.
hoist(E, Ctx) ->
    {Pre, V} = value(E, Ctx),
    case trivial(V) of
        true -> {Pre, V};
        false ->
            L = element(2, E),
            T = {var, L, (maps:get(fresh, Ctx))()},
            {Pre ++ bind(T, V), T}
    end.

%% `T = P = E' is written `T = E, P = T': OTP 25's compiler turns the chain
%% into an alias pattern and drops the test of a variable of P that is
%% already bound (`T1 = X = id(1), T2 = X = id(2)' binds T2 = 2 instead of
%% raising {badmatch, 2}), which unrolled matches do not.  The value is the
%% same, so is a failing match's {badmatch, V}.
bind(T, {match, L, P, R}) ->
    bind(T, R) ++ [{match, L, P, T}];
bind(T, V) ->
    [{match, element(2, V), T, V}].

last_index(Pred, Es) ->
    {_, Last} = lists:foldl(fun(E, {I, Found}) ->
                                    case Pred(E) of
                                        true -> {I + 1, I};
                                        false -> {I + 1, Found}
                                    end
                            end, {1, 0}, Es),
    Last.

trivial({var, _, _}) -> true;
trivial({atom, _, _}) -> true;
trivial({integer, _, _}) -> true;
trivial({float, _, _}) -> true;
trivial({char, _, _}) -> true;
trivial({string, _, _}) -> true;
trivial({nil, _}) -> true;
trivial({'fun', _, _}) -> true;
trivial({named_fun, _, _, _}) -> true;
trivial(_) -> false.

is_site_form({call, _, _, _}) -> true;
is_site_form({'case', _, _, _}) -> true;
is_site_form({'if', _, _}) -> true;
is_site_form({'receive', _, _}) -> true;
is_site_form({'receive', _, _, _, _}) -> true;
is_site_form({block, _, _}) -> true;
is_site_form({'try', _, _, _, _, _}) -> true;
is_site_form({'catch', _, _}) -> true;
is_site_form(_) -> false.

needs(E, Ctx) ->
    (maps:get(may_block, Ctx))(E).

%% `A andalso B' as the VM evaluates it: B only when A is true, and a
%% non-boolean A is a badarg error.
short_circuit(L, Op, A, B, Ctx) ->
    V = {var, L, (maps:get(fresh, Ctx))()},
    {Continue, Stop} = case Op of
                           'andalso' -> {true, false};
                           'orelse' -> {false, true}
                       end,
    {'case', L, A,
     [{clause, L, [{atom, L, Continue}], [], [B]},
      {clause, L, [{atom, L, Stop}], [], [{atom, L, Stop}]},
      {clause, L, [V], [],
       [{call, L, {remote, L, {atom, L, erlang}, {atom, L, error}},
         [{tuple, L, [{atom, L, badarg}, V]}]}]}]}.

%%--------------------------------------------------------------------
%% self() and node() in guards
%%--------------------------------------------------------------------

%% Guards cannot call the runtime, so self() and node() in the guards of a
%% case, if or receive are computed before it (they cannot change while
%% the clauses are tried) and the guards refer to the variables.
guard_clauses(Cls, Ctx) ->
    case guard_bifs(Cls) of
        false -> {[], Cls};
        true ->
            Fresh = maps:get(fresh, Ctx),
            Names = #{self => Fresh(), node => Fresh()},
            Used = lists:usort(guard_bif_uses(Cls)),
            Pre = [{match, 0, {var, 0, maps:get(B, Names)},
                    {call, 0, {atom, 0, B}, []}} || B <- Used],
            {Pre, [replace_guard_bifs(C, Names) || C <- Cls]}
    end.

guard_bifs(E) when is_tuple(E), element(1, E) =:= 'case'; is_tuple(E), element(1, E) =:= 'if';
                   is_tuple(E), element(1, E) =:= 'receive' ->
    guard_bifs(clauses_of(E));
guard_bifs(Cls) when is_list(Cls) ->
    guard_bif_uses(Cls) =/= [];
guard_bifs(_) ->
    false.

clauses_of({'case', _, _, Cls}) -> Cls;
clauses_of({'if', _, Cls}) -> Cls;
clauses_of({'receive', _, Cls}) -> Cls;
clauses_of({'receive', _, Cls, _, _}) -> Cls.

guard_bif_uses(Cls) ->
    [B || {clause, _, _, Gs, _} <- Cls, B <- guard_calls(Gs)].

guard_calls(Gs) ->
    mce_translate_syntax:fold_all(
      fun({call, _, {atom, _, B}, []}, Acc) when B =:= self; B =:= node -> [B | Acc];
         ({call, _, {remote, _, {atom, _, erlang}, {atom, _, B}}, []}, Acc)
           when B =:= self; B =:= node -> [B | Acc];
         (_, Acc) -> Acc
      end, [], Gs).

replace_guard_bifs({clause, L, Ps, Gs, B}, Names) ->
    Replace = fun({call, CL, {atom, _, Bif}, []}) when Bif =:= self; Bif =:= node ->
                      {var, CL, maps:get(Bif, Names)};
                 ({call, CL, {remote, _, {atom, _, erlang}, {atom, _, Bif}}, []})
                   when Bif =:= self; Bif =:= node ->
                      {var, CL, maps:get(Bif, Names)};
                 (Other) -> Other
              end,
    {clause, L, Ps, mce_translate_syntax:postwalk(Replace, Gs), B}.
