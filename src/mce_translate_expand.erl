%% @doc The source rewrites before analysis: forms in, forms out.
%%
%% Each rewrite makes the module say, in plain Erlang, something the rest
%% of the translator would otherwise have to know about, so that the
%% blocking analysis (mce_translate_blocking) and the code generator
%% (mce_translate_gen) see one uniform language.  In order:
%%
%%   record creations   `#s{...}' written out field by field, defaults that
%%                      run code placed where the record is built;
%%   imports            local calls of imported functions made remote;
%%   guard context      `self()' and `node()' in a fun's guards read from
%%                      variables bound when the fun starts;
%%   stubs              calls the check stubs (option `stubs', see
%%                      mce_stubs) made calls of the stub's fun;
%%   sleeps             `timer:sleep/1' and `erlang:yield/0' as the
%%                      receives they are under the model, erpc's fun
%%                      forms as their `erlang:apply' forms;
%%   model calls        rpc, erpc, timer and io calls pointed at the
%%                      models written in Erlang (mce_rpc, mce_timer,
%%                      mce_io), translated like user code;
%%   caught stacks      `Class:Reason:Stack' bound to the cleaned stack;
%%   scheduling points  every side effect on other processes or shared
%%                      memory wrapped in `mce_rt:yield', which the
%%                      analysis then treats like a receive;
%%   pid order          what can observe the numbers of pids reports it
%%                      at run time (mce_translate_order, the guard of
%%                      symmetry reduction).
%%
%% Invariant: the output, run under the checker, means what the input
%% means on the VM; what changes is that the calls the checker models and
%% the places where a process may be interrupted become explicit.
%% Attributes are kept (records with their defaults), only function bodies
%% change.
-module(mce_translate_expand).

-export([forms/2]).

%% Imported so that the code moved here from mce_translate reads as it did.
-import(mce_translate, [model_call/3]).
-import(mce_translate_syntax, [postwalk/2, is_literal/1]).

%% @doc The rewrites of module M's forms, in the order above.
-spec forms(module(), [erl_parse:abstract_form()]) -> [erl_parse:abstract_form()].
forms(M, Forms0) ->
    mce_translate_order:forms(M, yield_points(M, clean_caught_stacks(model_calls(sleep_as_receive(
                                                    stub_calls(M, guard_context(resolve_imports(
                                                                     record_creations(Forms0))))))))).

%% `#s{...}' as the compiler expands it (erl_expand_records:record_inits/2):
%% every field in the record's definition order, a field not given taking
%% its default expression.  A default that calls code (`pid = start()',
%% spawning through a helper) is then translated where it runs, like any
%% other expression of the function that builds the record, and the fields
%% are evaluated in the VM's order (definition order, not written order).
%% Literal defaults are left to the compiler.
record_creations(Forms) ->
    Recs = maps:from_list([{Name, [field_default(F) || F <- Fields]}
                           || {attribute, _, record, {Name, Fields}} <- Forms]),
    case map_size(Recs) of
        0 -> Forms;
        _ ->
            [case F of
                 {function, L, N, A, Cs} -> {function, L, N, A, creations(Cs, Recs)};
                 _ -> F
             end || F <- Forms]
    end.

field_default({typed_record_field, F, _Type}) -> field_default(F);
field_default({record_field, _, {atom, _, Name}}) -> {Name, none};
field_default({record_field, _, {atom, _, Name}, D}) -> {Name, D}.

%% Rewrites the record creations of expressions, leaving patterns alone.
creations({clause, L, Ps, Gs, B}, Recs) ->
    {clause, L, Ps, Gs, creations(B, Recs)};
creations({match, L, P, E}, Recs) ->
    {match, L, P, creations(E, Recs)};
creations({G, L, P, E}, Recs) when G =:= generate; G =:= b_generate ->
    {G, L, P, creations(E, Recs)};
creations({record, L, Name, Inits}, Recs) when is_map_key(Name, Recs) ->
    Inits1 = creations(Inits, Recs),
    Given = [{F, I} || {record_field, _, {atom, _, F}, _} = I <- Inits1],
    Wildcard = [W || {record_field, _, {var, _, '_'}, W} <- Inits1],
    Fields = [case lists:keyfind(F, 1, Given) of
                  {F, I} -> [I];
                  false ->
                      case {Wildcard, D} of
                          %% `_ = V' stands for every field not given, and is
                          %% evaluated once for each (as on the VM).
                          {[W | _], _} -> [{record_field, L, {atom, L, F}, W}];
                          {[], none} -> [];
                          {[], _} ->
                              case is_literal(D) of
                                  true -> [];
                                  false -> [{record_field, L, {atom, L, F}, creations(D, Recs)}]
                              end
                      end
              end || {F, D} <- maps:get(Name, Recs)],
    {record, L, Name, lists:append(Fields)};
creations(T, Recs) when is_tuple(T) ->
    list_to_tuple(creations(tuple_to_list(T), Recs));
creations(Xs, Recs) when is_list(Xs) ->
    [creations(X, Recs) || X <- Xs];
creations(X, _Recs) ->
    X.

%% Local calls to imported functions become remote calls.
resolve_imports(Forms) ->
    Imports = maps:from_list([{{F, A}, M} || {attribute, _, import, {M, FAs}} <- Forms,
                                             {F, A} <- FAs]),
    case map_size(Imports) of
        0 -> Forms;
        _ ->
            Rewrite = fun({call, L, {atom, AL, F}, As} = C) ->
                              case Imports of
                                  #{{F, length(As)} := M} ->
                                      {call, L, {remote, AL, {atom, AL, M}, {atom, AL, F}}, As};
                                  #{} -> C
                              end;
                         (Other) -> Other
                      end,
            in_functions(Rewrite, Forms)
    end.

%% Guards run on the executor, where self() and node() are the checker's,
%% not the simulated process's.  The guards of functions' heads, case, if
%% and receive clauses are handled by the code generator and mce_anf; a
%% fun whose clauses' guards call them (pg's `fun(Pid) when is_pid(Pid),
%% node(Pid) =:= node() -> ...') becomes one clause that binds them first
%% and matches its arguments in a case, the guards reading the variables:
%%
%%   fun(A1, ..., An) -> G1 = self(), case {A1, ..., An} of {Ps} when Gs' -> ...;
%%                                                         _ -> error(function_clause) end
%%
%% (neither changes during a process's life, so reading them first is
%% what the guard would read).  Funs are rewritten innermost first, each
%% with variables of its own.
guard_context(Forms) ->
    case lists:any(fun({function, _, _, _, Cs}) -> context_guard(Cs); (_) -> false end, Forms) of
        false -> Forms;
        true ->
            put(mce_guard_context, 0),
            Funs = fun({'fun', L, {clauses, Cls}} = F) ->
                           case context_guard(Cls) of
                               true -> {'fun', L, {clauses, [context_clause(L, Cls)]}};
                               false -> F
                           end;
                      ({named_fun, L, Name, Cls} = F) ->
                           case context_guard(Cls) of
                               true -> {named_fun, L, Name, [context_clause(L, Cls)]};
                               false -> F
                           end;
                      (Other) -> Other
                   end,
            Out = [postwalk_function(Funs, F) || F <- Forms],
            erase(mce_guard_context),
            Out
    end.

postwalk_function(Rewrite, {function, L, N, A, Cs}) -> {function, L, N, A, postwalk(Rewrite, Cs)};
postwalk_function(_Rewrite, F) -> F.

%% Some clause of T (funs already rewritten) has self() or node() in a guard.
context_guard(T) ->
    mce_translate_syntax:fold_all(
      fun({clause, _, _, Gs, _}, Acc) -> Acc orelse context_calls(Gs) =/= [];
         (_, Acc) -> Acc
      end, false, T).

context_calls(Gs) ->
    mce_translate_syntax:fold_all(fun(E, Acc) ->
                                          case context_call(E) of
                                              {ok, F} -> [F | Acc];
                                              none -> Acc
                                          end
                                  end, [], Gs).

context_call({call, _, {atom, _, F}, []}) when F =:= self; F =:= node -> {ok, F};
context_call({call, _, {remote, _, {atom, _, erlang}, {atom, _, F}}, []}) when F =:= self; F =:= node ->
    {ok, F};
context_call(_) -> none.

context_clause(L, [{clause, _, Ps, _, _} | _] = Cls) ->
    N = get(mce_guard_context),
    put(mce_guard_context, N + 1),
    Var = fun(What) -> {var, L, list_to_atom("MCE@G" ++ What ++ integer_to_list(N))} end,
    Vars = #{self => Var("self"), node => Var("node")},
    Used = lists:usort(lists:append([context_calls(Gs) || {clause, _, _, Gs, _} <- all_clauses(Cls)])),
    Args = [Var("arg" ++ integer_to_list(I) ++ "_") || I <- lists:seq(1, length(Ps))],
    Binds = [{match, L, maps:get(F, Vars), {call, L, {atom, L, F}, []}} || F <- Used],
    Subst = fun(E) ->
                    case context_call(E) of
                        {ok, F} -> maps:get(F, Vars);
                        none -> E
                    end
            end,
    CaseCls = [{clause, CL, [{tuple, CL, CPs}], Gs, B} || {clause, CL, CPs, Gs, B} <- Cls]
        ++ [{clause, L, [{var, L, '_'}], [],
             [{call, L, {remote, L, {atom, L, erlang}, {atom, L, error}}, [{atom, L, function_clause}]}]}],
    Body = Binds ++ [{'case', L, {tuple, L, Args}, subst_guards(Subst, CaseCls)}],
    {clause, L, Args, [], Body}.

all_clauses(T) ->
    mce_translate_syntax:fold_all(fun({clause, _, _, _, _} = C, Acc) -> [C | Acc];
                                     (_, Acc) -> Acc
                                  end, [], T).

%% Subst applied inside every guard of T (clauses of case, if, receive,
%% try nested in it too).
subst_guards(Subst, {clause, L, Ps, Gs, B}) ->
    {clause, L, Ps, postwalk(Subst, Gs), subst_guards(Subst, B)};
subst_guards(Subst, T) when is_tuple(T) ->
    list_to_tuple(subst_guards(Subst, tuple_to_list(T)));
subst_guards(Subst, L) when is_list(L) ->
    [subst_guards(Subst, X) || X <- L];
subst_guards(_Subst, X) ->
    X.

%% A call of M:F/A that the check stubs becomes a call of the stub's fun,
%% `(mce_stubs:stub({M, F, A}))(Args)': a call of a computed fun, which
%% may block like any (mce_translate_blocking), so the stub may receive.
%% Local calls and `fun F/A' inside M are calls of M:F/A too, and a local
%% call of an auto-imported BIF one of erlang:F/A.  Runs before the other
%% rewrites: a stubbed timer:sleep/1 or rpc:call/4 is the stub's.
stub_calls(M, Forms) ->
    case mce_stubs:digest() of
        none -> Forms;
        _ ->
            Defs = sets:from_list([{F, A} || {function, _, F, A, _} <- Forms]),
            Stubbed = fun(Mod, F, A) -> mce_stubs:lookup(Mod, F, A) =/= none end,
            Local = fun(F, A) ->
                            case sets:is_element({F, A}, Defs) of
                                true -> M;
                                false ->
                                    case erl_internal:bif(F, A) of
                                        true -> erlang;
                                        false -> none
                                    end
                            end
                    end,
            Stub = fun(L, MFA) ->
                           {call, L, {remote, L, {atom, L, mce_stubs}, {atom, L, stub}},
                            [abstract(MFA, L)]}
                   end,
            Rewrite =
                fun({call, L, {remote, _, {atom, _, Mod}, {atom, _, F}}, As} = C) ->
                        case Stubbed(Mod, F, length(As)) of
                            true -> {call, L, Stub(L, {Mod, F, length(As)}), As};
                            false -> C
                        end;
                   ({call, L, {atom, _, F}, As} = C) ->
                        Mod = Local(F, length(As)),
                        case Mod =/= none andalso Stubbed(Mod, F, length(As)) of
                            true -> {call, L, Stub(L, {Mod, F, length(As)}), As};
                            false -> C
                        end;
                   ({'fun', L, {function, {atom, _, Mod}, {atom, _, F}, {integer, _, A}}} = Fun) ->
                        case Stubbed(Mod, F, A) of
                            true -> Stub(L, {Mod, F, A});
                            false -> Fun
                        end;
                   ({'fun', L, {function, F, A}} = Fun) when is_atom(F) ->
                        case sets:is_element({F, A}, Defs) andalso Stubbed(M, F, A) of
                            true -> Stub(L, {M, F, A});
                            false -> Fun
                        end;
                   (Other) -> Other
                end,
            in_functions(Rewrite, Forms)
    end.

%% timer:sleep(T) is `receive after T -> ok end': under the checker's
%% untimed semantics the process may wake up whenever.  erlang:yield() lets
%% the other processes run, so it is a scheduling point too (`after 0'):
%% a loop spinning on whereis/1 with yield() would otherwise never leave
%% its big step.
sleep_as_receive(Forms) ->
    Rewrite = fun({call, L, {remote, _, {atom, _, timer}, {atom, _, sleep}}, [T]}) ->
                      {'receive', L, [], T, [{atom, L, ok}]};
                 ({call, L, {remote, _, {atom, _, erlang}, {atom, _, yield}}, []}) ->
                      {'receive', L, [], {integer, L, 0}, [{atom, L, true}]};
                 %% erpc(3): call(Node, Fun[, Timeout]) and cast(Node, Fun) are
                 %% call/cast(Node, erlang, apply, [Fun, []][, Timeout]).
                 ({call, L, {remote, RL, {atom, _, erpc} = E, {atom, _, F} = FA}, [Node, Fun | Rest]})
                   when (F =:= call andalso length(Rest) =< 1); (F =:= cast andalso Rest =:= []) ->
                      {call, L, {remote, RL, E, FA},
                       [Node, {atom, L, erlang}, {atom, L, apply},
                        {cons, L, Fun, {cons, L, {nil, L}, {nil, L}}} | Rest]};
                 (Other) -> Other
              end,
    in_functions(Rewrite, Forms).

%% rpc and erpc calls run in mce_rpc, a model of them written in plain
%% Erlang and translated like user code (it spawns on the target node,
%% monitors and waits, as erpc does).
model_calls(Forms) ->
    Rewrite = fun({call, L, {remote, RL, {atom, ML, M}, {atom, FL, F}}, As} = C) ->
                      case model_call(M, F, length(As)) of
                          {MM, MF} -> {call, L, {remote, RL, {atom, ML, MM}, {atom, FL, MF}}, As};
                          none -> C
                      end;
                 (Other) -> Other
              end,
    in_functions(Rewrite, Forms).

%% A stack trace caught by `Class:Reason:Stack' names the original modules
%% and functions, as on the VM: the variable is bound to the cleaned stack
%% (try bodies that suspend get theirs cleaned by their handler frames).
clean_caught_stacks(Forms) ->
    Rewrite = fun({'try', L, Body, Of, Catches, After}) ->
                      {'try', L, Body, Of, [clean_catch(C) || C <- Catches], After};
                 (Other) -> Other
              end,
    in_functions(Rewrite, Forms).

clean_catch({clause, L, [{tuple, TL, [C, R, {var, VL, S}]}], G, B}) when S =/= '_' ->
    Raw = {var, VL, list_to_atom("MCE@Raw" ++ atom_to_list(S))},
    Clean = {match, VL, {var, VL, S},
             {call, VL, {remote, VL, {atom, VL, mce_rt}, {atom, VL, clean_stack}}, [Raw]}},
    {clause, L, [{tuple, TL, [C, R, Raw]}], G, [Clean | B]};
clean_catch(Clause) ->
    Clause.

%% Scheduling points for `granularity => small': every call with a side
%% effect on other processes or shared state becomes
%% `mce_rt:yield(Call)', which returns the call's value at once in the
%% default big-step mode and suspends the process after the effect in small
%% mode (a one-way choice, see mce_rt:yield/1).  The translation is the
%% same in both modes, so one cached translation serves both.
yield_points(M, Forms) ->
    Defs = sets:from_list([{F, A} || {function, _, F, A, _} <- Forms]),
    [case F of
         {function, L, N, A, Cs} ->
             {function, L, N, A, postwalk(yield_rewrite(Defs, {M, N, A}), Cs)};
         _ -> F
     end || F <- Forms].

yield_rewrite(Defs, Where) ->
    Yield = fun(L, Call) -> yield(L, Call, Where) end,
    fun({op, L, '!', _, _} = Send) -> Yield(L, Send);
       ({call, L, {atom, _, F}, As} = C) ->
            case not sets:is_element({F, length(As)}, Defs) andalso
                erl_internal:bif(F, length(As)) andalso
                side_effect(erlang, F, length(As)) of
                true -> Yield(L, C);
                false -> C
            end;
       ({call, L, {remote, _, {atom, _, M}, {atom, _, F}}, As} = C) ->
            case side_effect(M, F, length(As)) of
                true when M =:= ets; M =:= atomics; M =:= counters ->
                    shared_yield(L, C, Where);
                true -> Yield(L, C);
                false -> C
            end;
       (Other) -> Other
    end.

%% Shared memory (ETS, atomics, counters) is a scheduling point in big
%% steps too: another process may run between a process's read of a table
%% and its write (the lost update of `[{K, V}] = ets:lookup(T, K),
%% ets:insert(T, {K, V + 1})' on the VM), which no message orders.  The
%% point is before the access (mce_rt:yield/3), and only suspends when the
%% step already touched shared memory: the code before a step's first
%% access is invisible to others, so one point there would add states and
%% no behaviour.  Under small granularity the access is followed by its
%% yield as every side effect is.
shared_yield(L, Call, {M, F, A}) ->
    Where = abstract({M, F, A, line_number(L)}, L),
    Point = {call, L, {remote, L, {atom, L, mce_rt}, {atom, L, yield}},
             [{atom, L, ok}, Where, {atom, L, shared}]},
    yield(L, {block, L, [Point, Call]}, {M, F, A}).

%% The location lets a lost suspension be reported where it was made.
yield(L, Call, {M, F, A}) ->
    {call, L, {remote, L, {atom, L, mce_rt}, {atom, L, yield}},
     [Call, abstract({M, F, A, line_number(L)}, L)]}.

side_effect(erlang, F, A) ->
    lists:member({F, A}, [{send, 2}, {send, 3}, {spawn, 1}, {spawn, 2}, {spawn, 3}, {spawn, 4},
                          {spawn_link, 1}, {spawn_link, 2}, {spawn_link, 3}, {spawn_link, 4},
                          {spawn_monitor, 1}, {spawn_monitor, 2}, {spawn_monitor, 3},
                          {spawn_monitor, 4}, {spawn_opt, 2}, {spawn_opt, 4}, {link, 1},
                          {unlink, 1}, {exit, 2}, {register, 2}, {unregister, 1},
                          {monitor, 2}, {monitor, 3}, {demonitor, 1}, {demonitor, 2},
                          {process_flag, 2}, {monitor_node, 2}, {send_after, 3},
                          {send_after, 4}, {start_timer, 3}, {start_timer, 4},
                          {cancel_timer, 1}, {cancel_timer, 2},
                          %% Reads of state other processes change: a race
                          %% between a read and a later write shows up.
                          {whereis, 1}, {registered, 0}, {is_process_alive, 1},
                          {process_info, 2}, {read_timer, 1}, {read_timer, 2},
                          {processes, 0}]);
side_effect(net_kernel, monitor_nodes, _A) ->
    true;
side_effect(M, F, _A) when M =:= atomics; M =:= counters ->
    F =/= new;
side_effect(ets, F, _A) ->
    not lists:member(F, [match_spec_compile, match_spec_run, test_ms, fun2ms, is_compiled_ms]);
side_effect(_, _, _) ->
    false.

abstract(Term, Anno) ->
    erl_parse:abstract(Term, [{location, erl_anno:location(Anno)}]).

line_number(L) -> erl_anno:line(L).

%% Rewrite applied bottom-up to every node of every function's clauses;
%% the other forms stay as they are.
in_functions(Rewrite, Forms) ->
    [case F of
         {function, L, N, A, Cs} -> {function, L, N, A, postwalk(Rewrite, Cs)};
         _ -> F
     end || F <- Forms].
