%% @doc The blocking analysis: which functions may reach a receive.
%%
%% A function may block if its body holds a receive or a scheduling point
%% (`mce_rt:yield' from the source rewrites, `mcerlang:choice/1' and
%% `prop/1', `erlang:hibernate/3'), calls a fun it cannot see (a fun
%% variable, `apply', a computed `M:F'), or calls statically a function
%% that may block: a fixpoint over the modules translated together, seeded
%% with what the cache knows of the user modules translated before.  Code
%% written inside funs counts for the function that runs it where it runs
%% there (`runs_with/1'): a fun called where it is written, the funs given
%% to a library higher-order function.  (Which functions of a library
%% module call a fun they are given is found apart, by
%% mce_translate:library_hofs/1: the classification of calls needs it.)
%%
%% Input: modules after mce_translate_expand.  Output: a set of `{M, F, A}'
%% that the code generator (mce_translate_gen) consults at every call.
%%
%% Invariant: the set over-approximates the calls that can suspend a
%% process through code the analysis sees; what it cannot see gets a frame
%% where one can be placed, and the executor stops the check on a lost
%% suspension.  Library modules never enter through the cache, so the
%% translation of a module does not depend on what earlier checks
%% translated.
-module(mce_translate_blocking).

-export([analyse/2, blocking_fixpoint/1, referenced_modules/1, hof_fun_args/1]).

-include("mce_translate.hrl").

%% Imported so that the code moved here from mce_translate reads as it did.
-import(mce_translate, [classify_call/3, cached/1, library_modules/0]).
-import(mce_translate_syntax, [fold_all/3, fold_no_funs/3, is_literal/1]).

%% @doc Module M's functions, what each calls and which block by
%% themselves, from forms already rewritten (mce_translate_expand).
-spec analyse(module(), [erl_parse:abstract_form()]) -> #mod{}.
analyse(M, Forms) ->
    Defs = sets:from_list([{F, A} || {function, _, F, A, _} <- Forms]),
    Runs = [{{F, A}, runs_with(Cs)} || {function, _, F, A, Cs} <- Forms],
    Calls = maps:from_list([{FA, callees(Cs, Defs)} || {FA, Cs} <- Runs]),
    %% A function that calls a fun it was given (or apply) may block when
    %% that fun does: its callers need frames too (supervisor's
    %% children_map(Terminate, Children) with a Terminate that waits).
    Receives = sets:from_list([FA || {FA, Cs} <- Runs,
                                     has_receive(Cs) orelse calls_unknown_fun(Cs)]),
    #mod{name = M, forms = Forms, defs = Defs, calls = Calls,
         receives = Receives, md5 = <<>>}.

%% Every call in a function body except those inside funs (a fun's calls
%% happen when the fun is called, not when its creator runs).
callees(T, Defs) ->
    fold_no_funs(
      fun({call, _, {atom, _, F}, As}, Acc) ->
              A = length(As),
              case sets:is_element({F, A}, Defs) of
                  true -> [{local, F, A} | Acc];
                  false -> Acc
              end;
         ({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, As}, Acc) ->
              [{remote, M, F, length(As)} | Acc];
         (_, Acc) -> Acc
      end, [], T).

calls_unknown_fun(T) ->
    fold_no_funs(fun({call, _, {var, _, _}, _}, _) -> true;
                    ({call, _, {atom, _, apply}, _}, _) -> true;
                    ({call, _, {remote, _, {atom, _, erlang}, {atom, _, apply}}, _}, _) -> true;
                    ({call, _, {remote, _, {var, _, _}, _}, _}, _) -> true;
                    ({call, _, {remote, _, _, {var, _, _}}, _}, _) -> true;
                    ({call, _, {atom, _, _}, _}, Acc) -> Acc;
                    ({call, _, {remote, _, _, _}, _}, Acc) -> Acc;
                    ({call, _, {'fun', _, {clauses, _}}, _}, Acc) -> Acc;
                    ({call, _, {named_fun, _, _, _}, _}, Acc) -> Acc;
                    %% A fun computed by an expression: (element(1, T))().
                    ({call, _, _, _}, _) -> true;
                    (_, Acc) -> Acc
                 end, false, T).

%% A function's clauses and the code written inside funs that runs when
%% the function runs: a fun called where it is written (`(fun() -> ...
%% end)()', which ?assertEqual expands to) and the funs given to a library
%% higher-order function (lists:foreach(fun(P) -> P ! stop end, Ps)).  A
%% value passed to one that may be a fun stands as a call of an unknown
%% fun.  Without this a helper whose only scheduling point is inside such a
%% fun would not count as blocking, and its callers would lose the
%% suspension.
runs_with(Cs) ->
    [Cs | called_funs(Cs)].

called_funs(T) ->
    fold_no_funs(fun(E, Acc) -> called_in(E) ++ Acc end, [], T).

called_in({call, _, {'fun', _, {clauses, Cls}}, _}) ->
    runs_with(Cls);
called_in({call, _, {named_fun, _, _, Cls}, _}) ->
    runs_with(Cls);
called_in({call, L, {remote, _, {atom, _, M}, {atom, _, F}}, As}) ->
    case classify_call(M, F, length(As)) of
        library_hof -> lists:append([passed_fun(A, L) || A <- hof_fun_args(As)]);
        _ -> []
    end;
called_in(_) ->
    [].

passed_fun({'fun', _, {clauses, Cls}}, _L) ->
    runs_with(Cls);
passed_fun({named_fun, _, _, Cls}, _L) ->
    runs_with(Cls);
passed_fun({'fun', L, {function, F, A}}, _L) when is_atom(F) ->
    [{call, L, {atom, L, F}, lists:duplicate(A, {nil, L})}];
passed_fun({'fun', L, {function, {atom, _, _} = M, {atom, _, _} = F, {integer, _, A}}}, _L) ->
    [{call, L, {remote, L, M, F}, lists:duplicate(A, {nil, L})}];
passed_fun(_, L) ->
    [{call, L, {var, L, 'MCE@UnknownFun'}, []}].

%% @doc The arguments of a library higher-order call that may be the funs it
%% calls: the fun expressions written there or, when there are none, every
%% argument that is not a literal.  (OTP's higher-order functions take one
%% fun; the runtime check of lost suspensions covers the rest.)
-spec hof_fun_args([erl_parse:abstract_expr()]) -> [erl_parse:abstract_expr()].
hof_fun_args(As) ->
    case [A || A <- As, is_fun_expr(A)] of
        [] -> [A || A <- As, not is_literal(A)];
        Funs -> Funs
    end.

is_fun_expr({'fun', _, _}) -> true;
is_fun_expr({named_fun, _, _, _}) -> true;
is_fun_expr(_) -> false.

has_receive(T) ->
    fold_no_funs(fun({'receive', _, _}, _) -> true;
                    ({'receive', _, _, _, _}, _) -> true;
                    ({call, _, {remote, _, {atom, _, mcerlang}, {atom, _, choice}}, [_]}, _) -> true;
                    ({call, _, {remote, _, {atom, _, mce_rt}, {atom, _, yield}}, [_ | _]}, _) -> true;
                    ({call, _, {remote, _, {atom, _, mcerlang}, {atom, _, prop}}, [_]}, _) -> true;
                    ({call, _, {remote, _, {atom, _, erlang}, {atom, _, hibernate}}, [_, _, _]}, _) -> true;
                    (_, Acc) -> Acc
                 end, false, T).

%% @doc Modules named literally in calls, spawns and fun references, funs
%% included: the closure of what the program can reach without `apply'.
-spec referenced_modules(#mod{}) -> [module()].
referenced_modules(#mod{forms = Forms}) ->
    Found = fold_all(
              fun({remote, _, {atom, _, M}, {atom, _, _}}, Acc) -> [M | Acc];
                 ({'fun', _, {function, {atom, _, M}, _, _}}, Acc) -> [M | Acc];
                 ({call, _, {atom, _, S}, [{atom, _, M}, _, _]}, Acc)
                   when S =:= spawn; S =:= spawn_link; S =:= apply -> [M | Acc];
                 ({call, _, {remote, _, {atom, _, erlang}, {atom, _, S}}, [{atom, _, M}, _, _]}, Acc)
                   when S =:= spawn; S =:= spawn_link; S =:= apply -> [M | Acc];
                 (_, Acc) -> Acc
              end, [], [F || {function, _, _, _, _} = F <- Forms]),
    lists:usort(Found).

%% @doc The set of {M, F, A} that may reach a receive, over the modules being
%% translated plus the cached ones they call.
-spec blocking_fixpoint(#{module() => #mod{}}) -> sets:set(mfa()).
blocking_fixpoint(Mods) ->
    Initial = maps:fold(
                fun(M, #mod{receives = R}, Acc) ->
                        sets:union(Acc, sets:from_list([{M, F, A} || {F, A} <- sets:to_list(R)]))
                end, sets:new(), Mods),
    Cached = fun(M) ->
                     case cached(M) of
                         {ok, B} -> B;
                         stale -> sets:new()
                     end
             end,
    %% Every module referenced, not only those called outside funs: a call
    %% inside a fun (try gen_server:call(...) catch ... end in a closure)
    %% needs to know whether the callee blocks as much as any other, and a
    %% module translated by an earlier check is not in Mods.
    External = maps:fold(
                 fun(_, #mod{calls = Calls} = Mod, Acc) ->
                         Ms = [RM || Cs <- maps:values(Calls), {remote, RM, _, _} <- Cs]
                             ++ referenced_modules(Mod),
                         %% Library modules are left out: whether a call of
                         %% one of their higher-order functions blocks depends
                         %% on the funs passed (runs_with/1, and
                         %% routes_to_library/2 in mce_translate_gen), not on
                         %% whether an earlier check translated them.
                         lists:foldl(fun(RM, A) -> sets:union(A, Cached(RM)) end, Acc,
                                     [RM || RM <- lists:usort(Ms), not is_map_key(RM, Mods),
                                            not lists:member(RM, library_modules())])
                 end, sets:new(), Mods),
    fixpoint(Mods, sets:union(Initial, External)).

fixpoint(Mods, Blocking) ->
    Next = maps:fold(
             fun(M, #mod{calls = Calls}, Acc) ->
                     maps:fold(
                       fun({F, A}, Cs, Acc1) ->
                               Blocks = lists:any(
                                          fun({local, G, GA}) -> sets:is_element({M, G, GA}, Acc1);
                                             ({remote, RM, G, GA}) -> sets:is_element({RM, G, GA}, Acc1)
                                          end, Cs),
                               case Blocks of
                                   true -> sets:add_element({M, F, A}, Acc1);
                                   false -> Acc1
                               end
                       end, Acc, Calls)
             end, Blocking, Mods),
    case sets:size(Next) =:= sets:size(Blocking) of
        true -> Next;
        false -> fixpoint(Mods, Next)
    end.
