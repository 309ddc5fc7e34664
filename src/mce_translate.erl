%% @doc Source-to-source translation of user modules into resumable code.
%%
%% Module `M' becomes `'mce$M'', loaded beside the original.  A `receive'
%% becomes a suspension carrying its continuation as data: the lambda-lifted
%% function `{'mce$M', '$mce_rN', FreeVars, Timeout}' that answers "does
%% this message match?" (mode `match'), runs the chosen clause (mode `body')
%% or the `after' branch (mode `timeout').  A call that may block, in a
%% non-tail position of a body, gets a frame `{'mce$M', '$mce_kN', FreeVars}'
%% holding the rest of the body: when the callee returns a suspension the
%% call site pushes its frame on the way out, so frames are only built when a
%% process actually blocks.  The runtime resumes by calling the receive
%% continuation and then the frames, innermost first (see mce_exec).
%%
%% Process BIFs are redirected to mce_rt; calls into other user modules are
%% renamed to their translations, which are produced for the whole closure of
%% modules reachable by static calls and cached per VM (persistent_term,
%% keyed by the original's MD5).  OTP modules are called directly: the real
%% BEAM evaluates all pure code.  Calls that would touch real processes, I/O
%% or global state are redirected to `mce_rt:unsupported/3', which stops the
%% check with the call and its source location.
-module(mce_translate).

-export([ensure/1, ensure_library/1, translated_name/1, translate/1, init_call/1,
         classify_call/3, translatable/1, make_fun/3, shell_fun/1]).
%% For measuring the translator's passes apart from the compiler.
-export([debug_forms/1, debug_translate/1, compile_options/0, original_forms/1]).
%% Tree helpers shared with mce_anf.
-export([subexprs/1, map_subexprs/2, fold_all/3, postwalk/2]).

-define(SUSP, '$mce_suspend').

%% Translated code runs under the model checker, where the SSA and boolean
%% optimisers' gains are small next to their cost (two thirds of the
%% compile time of a large module).
-define(COMPILE_OPTS, [binary, return_errors, no_spawn_compiler_process, no_ssa_opt,
                       no_bool_opt]).

-record(mod, {name :: module(),
              forms :: [erl_parse:abstract_form()],
              defs :: sets:set({atom(), arity()}),
              calls :: #{{atom(), arity()} => [callee()]},
              receives :: sets:set({atom(), arity()}),
              md5 :: binary()}).

-type callee() :: {local, atom(), arity()} | {remote, module(), atom(), arity()}.

%%====================================================================
%% API
%%====================================================================

-spec translated_name(module()) -> module().
translated_name(M) ->
    list_to_atom("mce$" ++ atom_to_list(M)).

%% @doc Makes sure the translation of `M' (and of every user module it
%% reaches) is loaded and current; returns its name.
-spec ensure(module()) -> module().
ensure(M) ->
    case cached(M) of
        {ok, _Blocking} -> translated_name(M);
        stale ->
            global:trans({?MODULE, node()},
                         fun() -> translate_closure([M]) end, [node()], infinity),
            translated_name(M)
    end.

%% @doc The translated module as Erlang source text, for debugging.
-spec translate(module()) -> {ok, string()}.
translate(M) ->
    ensure(M),
    {ok, Forms} = translated_forms(M),
    {ok, lists:flatten([[erl_pp:form(F), $\n] || F <- Forms])}.

%% @doc The initial call of a simulated process, in terms of translated code.
-spec init_call(function() | {module(), atom(), [term()]}) -> function() | {module(), atom(), [term()]}.
init_call({M, F, A}) ->
    case translatable(M) of
        true -> {ensure(M), F, A};
        false -> {M, F, A}
    end;
init_call(Fun) when is_function(Fun) ->
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {module, M} = erlang:fun_info(Fun, module),
            {name, F} = erlang:fun_info(Fun, name),
            {arity, A} = erlang:fun_info(Fun, arity),
            make_fun(M, F, A);
        {type, local} ->
            {module, M} = erlang:fun_info(Fun, module),
            case is_translation(M) of
                true -> Fun;
                false when M =:= erl_eval ->
                    shell_entry(Fun);
                false ->
                    {name, Name} = erlang:fun_info(Fun, name),
                    erlang:error({mcerlang, {untranslated_closure, {M, Name},
                                             "closures defined outside checked code cannot "
                                             "be run yet; pass {M, F, Args} or fun M:F/A"}})
            end
    end.

%% A fun typed in the shell (erl_eval) carries its clauses and bindings:
%% it becomes function entry/N of a small generated module, called with the
%% bindings' values, and is translated with everything it calls.
shell_entry(Fun) ->
    {env, Env} = erlang:fun_info(Fun, env),
    {arity, 0} = erlang:fun_info(Fun, arity),
    case [{Bs, Cls} || T <- Env, is_tuple(T), tuple_size(T) >= 3,
                       Bs <- [element(2, T)], is_list(Bs),
                       Cls <- [element(tuple_size(T), T)], is_list(Cls)] of
        [{Bindings, [{clause, L, [], Guards, Body}]}] ->
            Names = [N || {N, _} <- Bindings],
            Head = [{var, L, N} || N <- Names],
            Expr = case Guards of
                       [] -> Body;
                       _ -> [{'case', L, {atom, L, true},
                              [{clause, L, [{var, L, '_'}], Guards, Body}]}]
                   end,
            Hash = erlang:phash2({Names, Expr}),
            M = list_to_atom("mce_shell_entry_" ++ integer_to_list(Hash)),
            Forms = [{attribute, L, file, {"shell", 1}},
                     {attribute, L, module, M},
                     {attribute, L, export, [{entry, length(Names)}]},
                     {function, L, entry, length(Names), [{clause, L, Head, [], Expr}]},
                     {eof, L}],
            global:trans({?MODULE, node()},
                         fun() -> translate_closure_from(M, Forms) end, [node()], infinity),
            {translated_name(M), entry, [V || {_, V} <- Bindings]};
        _ ->
            erlang:error({mcerlang, {unsupported_entry, Fun,
                                     "a shell fun of one clause without arguments is expected"}})
    end.

%% @doc A fun typed in the shell, of any arity, found in an entry's
%% arguments: the same fun expression made by function entry/N of a
%% generated module (as shell_entry/1 does), translated with everything it
%% calls, so that it runs translated instead of in erl_eval.
-spec shell_fun(function()) -> function().
shell_fun(Fun) ->
    {env, Env} = erlang:fun_info(Fun, env),
    case [{Bs, Cls} || T <- Env, is_tuple(T), tuple_size(T) >= 3,
                       Bs <- [element(2, T)], is_list(Bs),
                       Cls <- [element(tuple_size(T), T)], is_list(Cls)] of
        [{Bindings, [{clause, L, _, _, _} | _] = Clauses}] ->
            Names = [N || {N, _} <- Bindings],
            Expr = [{'fun', L, {clauses, Clauses}}],
            Hash = erlang:phash2({Names, Expr}),
            M = list_to_atom("mce_shell_fun_" ++ integer_to_list(Hash)),
            Forms = [{attribute, L, file, {"shell", 1}},
                     {attribute, L, module, M},
                     {attribute, L, export, [{entry, length(Names)}]},
                     {function, L, entry, length(Names),
                      [{clause, L, [{var, L, N} || N <- Names], [], Expr}]},
                     {eof, L}],
            global:trans({?MODULE, node()},
                         fun() -> translate_closure_from(M, Forms) end, [node()], infinity),
            erlang:apply(translated_name(M), entry, [V || {_, V} <- Bindings]);
        _ ->
            {name, Name} = erlang:fun_info(Fun, name),
            erlang:error({mcerlang, {untranslated_closure, {erl_eval, Name},
                                     "a shell fun of clauses and bindings is expected"}})
    end.

%% Translates generated module M (given as forms) and the user modules it
%% reaches.
translate_closure_from(M, Forms) ->
    case erl_lint:module(Forms) of
        {ok, _} -> ok;
        {error, Errors, _} ->
            erlang:error({mcerlang, {unsupported_entry, M,
                                     "the shell fun calls functions that exist only in the shell",
                                     Errors}})
    end,
    Mod = (analyse_forms(M, Forms))#mod{md5 = erlang:md5(term_to_binary(Forms))},
    Refs = [R || R <- referenced_modules(Mod), translatable(R)],
    Mods = gather(Refs, #{M => Mod}),
    Blocking = blocking_fixpoint(Mods),
    maps:foreach(fun(_M, X) -> compile_and_load(X, Blocking, Mods) end, Mods),
    maps:foreach(
      fun(Name, #mod{md5 = MD5}) when Name =/= M ->
              Own = sets:filter(fun({BM, _, _}) -> BM =:= Name end, Blocking),
              persistent_term:put({?MODULE, Name}, #{md5 => MD5, blocking => Own});
         (_, _) -> ok
      end, Mods).

%% @doc `fun M:F/A' for a module known only at run time.
-spec make_fun(module(), atom(), arity()) -> function().
make_fun(M, F, A) ->
    case translatable(M) of
        true -> erlang:make_fun(ensure(M), F, A);
        false -> erlang:make_fun(M, F, A)
    end.

%% @doc How translated code must treat a call to `M:F/A'.
-spec classify_call(module(), atom(), arity()) ->
          {redirect, module(), atom()} | {model, module(), atom()} | {unsupported, atom()}
          | pure | translate | library_hof.
classify_call(erlang, F, A) -> classify_erlang(F, A);
classify_call(mcerlang, choice, 1) -> {redirect, mce_rt, choice};
classify_call(mcerlang, prop, 1) -> {redirect, mce_rt, prop};
classify_call(mcerlang, probe, 2) -> {redirect, mce_rt, probe};
classify_call(net_adm, ping, 1) -> {redirect, mce_rt_node, ping};
classify_call(timer, send_after, A) when A =:= 2; A =:= 3 -> {redirect, mce_rt_time, timer_send_after};
classify_call(timer, cancel, 1) -> {redirect, mce_rt_time, timer_cancel};
classify_call(binary, copy, 2) -> {redirect, mce_sandbox, binary_copy};
classify_call(persistent_term, F, A) ->
    _ = code:ensure_loaded(mce_pterm),
    case erlang:function_exported(mce_pterm, F, A) of
        true -> {redirect, mce_pterm, F};
        false -> {unsupported, unsupported_call}
    end;
classify_call(global, F, A) ->
    _ = code:ensure_loaded(mce_global),
    case erlang:function_exported(mce_global, F, A) of
        true -> {redirect, mce_global, F};
        false -> {unsupported, unsupported_call}
    end;
classify_call(application, F, A) ->
    _ = code:ensure_loaded(mce_app),
    case erlang:function_exported(mce_app, F, A) of
        true -> {redirect, mce_app, F};
        false -> {unsupported, unsupported_call}
    end;
classify_call(M, F, A) when M =:= logger; M =:= error_logger ->
    _ = code:ensure_loaded(mce_logger),
    case erlang:function_exported(mce_logger, F, A) of
        true -> {redirect, mce_logger, F};
        false -> {unsupported, unsupported_call}
    end;
classify_call(ets, F, A) ->
    case erlang:function_exported(mce_ets, F, A) orelse
        (code:ensure_loaded(mce_ets) =:= {module, mce_ets} andalso
         erlang:function_exported(mce_ets, F, A)) of
        true -> {redirect, mce_ets, F};
        false ->
            %% A function ets does not export raises undef, as on the VM.
            case lists:member({F, A}, [{match_spec_compile, 1}, {match_spec_run, 2},
                                       {test_ms, 2}, {fun2ms, 1}, {is_compiled_ms, 1}])
                orelse not erlang:function_exported(ets, F, A) of
                true -> pure;
                false -> {unsupported, unsupported_call}
            end
    end;
%% Clocks read the checker's one fixed instant (see mce_rt_time:timestamp/0).
classify_call(os, timestamp, 0) -> {redirect, mce_rt_time, timestamp};
classify_call(os, system_time, A) when A =:= 0; A =:= 1 -> {redirect, mce_rt_time, system_time};
classify_call(timer, F, _) when F =:= seconds; F =:= minutes; F =:= hours; F =:= hms;
                               F =:= now_diff ->
    pure;
%% Reads of the checker's environment that do not change within a check.
classify_call(os, F, A) when (F =:= getenv andalso A =< 2); (F =:= type andalso A =:= 0);
                             (F =:= version andalso A =:= 0) ->
    pure;
classify_call(code, F, 1) when F =:= ensure_loaded; F =:= is_loaded; F =:= which ->
    pure;
%% Where code is installed: read-only, the same all through a check.
classify_call(code, F, A) when (F =:= root_dir andalso A =:= 0); (F =:= lib_dir andalso A =< 2);
                               (F =:= priv_dir andalso A =:= 1);
                               (F =:= objfile_extension andalso A =:= 0) ->
    pure;
%% The node's environment: fixed values (mce_env); stopping the node.
classify_call(file, get_cwd, 0) -> {redirect, mce_env, get_cwd};
classify_call(init, F, A) when (F =:= get_argument andalso A =:= 1);
                               (F =:= get_arguments orelse F =:= get_plain_arguments orelse
                                F =:= get_status) andalso A =:= 0 ->
    {redirect, mce_env, F};
classify_call(init, stop, A) when A =:= 0; A =:= 1 -> {redirect, mce_rt_node, init_stop};
%% Shared mutable arrays: part of the checked state (mce_atomics).
classify_call(M, F, A) when M =:= atomics; M =:= counters ->
    Model = case M of
                atomics -> mce_atomics;
                counters -> mce_counters
            end,
    _ = code:ensure_loaded(Model),
    case erlang:function_exported(Model, F, A) of
        true -> {redirect, Model, F};
        false -> {unsupported, unsupported_call}
    end;
classify_call(M, F, A) ->
    case model_call(M, F, A) of
        {MM, MF} -> {model, MM, MF};
        none -> classify_other(M, F, A)
    end.

classify_other(M, F, A) ->
    case lists:member(M, process_modules()) of
        true -> {unsupported, unsupported_call};
        false ->
            case translatable(M) of
                true -> translate;
                false ->
                    case lists:member(M, library_modules()) andalso
                         sets:is_element({F, A}, library_hofs(M)) of
                        true -> library_hof;
                        false ->
                            %% The sandbox's allow list (mce_sandbox).  Of the
                            %% checker's own modules, only the runtime that
                            %% translated code is redirected to.
                            Allowed = case is_checker_module(M) of
                                          true -> is_runtime_module(M);
                                          false -> mce_sandbox:pure_call(M, F, A)
                                      end,
                            case Allowed of
                                true -> pure;
                                false -> {unsupported, unsupported_call}
                            end
                    end
            end
    end.

%% The checker's modules that translated code calls (the calls the
%% translator redirects, and the models' runtime): the model of the
%% program's world.  The others (the NIF, the executor, the search, the
%% translator, ...) are the checker's and refused to checked code.
is_runtime_module(M) ->
    lists:member(M, [mce_rt, mce_sandbox, mce_ets, mce_pterm, mce_global, mce_app, mce_logger,
                     mce_env, mce_atomics, mce_counters, mce_rt_signals, mce_rt_spawn,
                     mce_rt_procs, mce_rt_io, mce_rt_node, mce_rt_time])
        orelse is_translation(M).

%%====================================================================
%% Library higher-order functions
%%====================================================================

%% Library modules whose higher-order functions are translated, so that a
%% fun that blocks can be passed to them (lists:foreach(fun(X) -> receive
%% ... end end, L)).  Their other functions are always called directly.
library_modules() ->
    [lists, maps, proplists, dict, orddict, gb_trees, gb_sets, sets, ordsets, queue, array].

%% @doc The translation of library module M (its higher-order functions).
-spec ensure_library(module()) -> module().
ensure_library(M) ->
    case cached(M) of
        {ok, _} -> ok;
        stale ->
            global:trans({?MODULE, node()}, fun() -> translate_library(M) end, [node()], infinity)
    end,
    translated_name(M).

%% The functions of M that call a fun they were given, directly or through
%% other functions of M (or inside funs they pass on).
library_hofs(M) ->
    case persistent_term:get({?MODULE, hofs, M}, undefined) of
        undefined ->
            Forms = [F || {function, _, _, _, _} = F <- module_forms(M)],
            Seeds = [{F, A} || {function, _, F, A, Cs} <- Forms, calls_a_fun(Cs)],
            Calls = maps:from_list(
                      [{{F, A}, [{G, GA} || {local, G, GA} <- callees_all(Cs)]}
                       || {function, _, F, A, Cs} <- Forms]),
            Hofs = hof_fixpoint(Calls, sets:from_list(Seeds)),
            persistent_term:put({?MODULE, hofs, M}, Hofs),
            Hofs;
        Hofs -> Hofs
    end.

calls_a_fun(T) ->
    fold_all(fun({call, _, {var, _, _}, _}, _) -> true;
                ({call, _, {atom, _, apply}, _}, _) -> true;
                ({call, _, {remote, _, {atom, _, erlang}, {atom, _, apply}}, _}, _) -> true;
                (_, Acc) -> Acc
             end, false, T).

callees_all(T) ->
    fold_all(fun({call, _, {atom, _, F}, As}, Acc) -> [{local, F, length(As)} | Acc];
                (_, Acc) -> Acc
             end, [], T).

hof_fixpoint(Calls, Hofs) ->
    Next = maps:fold(fun(FA, Callees, Acc) ->
                             case lists:any(fun(C) -> sets:is_element(C, Acc) end, Callees) of
                                 true -> sets:add_element(FA, Acc);
                                 false -> Acc
                             end
                     end, Hofs, Calls),
    case sets:size(Next) =:= sets:size(Hofs) of
        true -> Hofs;
        false -> hof_fixpoint(Calls, Next)
    end.

%% Only the higher-order functions are translated; the module's other
%% functions are called in the original (some are BIFs whose Erlang body
%% is a stub).
translate_library(M) ->
    Hofs = library_hofs(M),
    Mod = analyse(M, module_forms(M)),
    %% The higher-order functions are translated; what they call locally
    %% runs as the original when the original exports it, else (a private
    %% helper, or a fun of one, like lists:concat/1's fun thing_to_list/1)
    %% it is kept in the translation too.
    Exported = sets:from_list(M:module_info(exports)),
    Keep = kept_library_functions(Mod, Hofs, Exported),
    IsKept = fun(F, A) -> sets:is_element({F, A}, Keep) end,
    ToOriginal = fun({call, L, {atom, AL, F}, As} = C) ->
                         case IsKept(F, length(As)) orelse
                              not sets:is_element({F, length(As)}, Mod#mod.defs) of
                             true -> C;
                             false -> {call, L, {remote, AL, {atom, AL, M}, {atom, AL, F}}, As}
                         end;
                    ({'fun', L, {function, F, A}} = Fun) when is_atom(F) ->
                         case IsKept(F, A) of
                             true -> Fun;
                             false -> {'fun', L, {function, {atom, L, M}, {atom, L, F}, {integer, L, A}}}
                         end;
                    (Other) -> Other
                 end,
    Forms = [case F of
                 {function, L, N, A, Cs} -> {function, L, N, A, postwalk(ToOriginal, Cs)};
                 _ -> F
             end || F <- Mod#mod.forms,
                    element(1, F) =/= function orelse IsKept(element(3, F), element(4, F))],
    Kept = Mod#mod{forms = Forms,
                   defs = sets:filter(fun({F, A}) -> IsKept(F, A) end, Mod#mod.defs)},
    Blocking = sets:from_list([{M, F, A} || {F, A} <- sets:to_list(Hofs)]),
    compile_and_load(Kept, Blocking, #{}),
    persistent_term:put({?MODULE, M}, #{md5 => Mod#mod.md5, blocking => Blocking}).

%% The higher-order functions and, transitively, the unexported local
%% functions they call or make funs of.
kept_library_functions(#mod{forms = Forms}, Hofs, Exported) ->
    Bodies = maps:from_list([{{N, A}, Cs} || {function, _, N, A, Cs} <- Forms]),
    kept_library_functions(sets:to_list(Hofs), Bodies, Exported, Hofs).

kept_library_functions([], _Bodies, _Exported, Keep) ->
    Keep;
kept_library_functions([FA | Todo], Bodies, Exported, Keep) ->
    Local = fold_all(fun({call, _, {atom, _, F}, As}, Acc) -> [{F, length(As)} | Acc];
                        ({'fun', _, {function, F, A}}, Acc) when is_atom(F) -> [{F, A} | Acc];
                        (_, Acc) -> Acc
                     end, [], maps:get(FA, Bodies, [])),
    New = [G || G <- lists:usort(Local), maps:is_key(G, Bodies),
                not sets:is_element(G, Exported), not sets:is_element(G, Keep)],
    kept_library_functions(New ++ Todo, Bodies, Exported,
                           lists:foldl(fun sets:add_element/2, Keep, New)).

%% @doc True for a user module that can and must be translated: loaded from
%% a file outside OTP, and not part of the checker.
-spec translatable(module()) -> boolean().
translatable(M) when M =:= mce_rpc; M =:= mce_timer; M =:= mce_io ->
    true;
translatable(M) when M =:= gen; M =:= gen_server; M =:= proc_lib; M =:= gen_statem;
                     M =:= gen_event; M =:= supervisor; M =:= sys; M =:= gen_fsm ->
    true;
%% Library modules that keep their data in ETS tables: translated, their
%% tables are the model's (part of the state), not real tables of the
%% checker's that would outlive the branch of the search that filled them.
translatable(M) when M =:= digraph; M =:= digraph_utils ->
    true;
translatable(M) when is_atom(M) ->
    case is_checker_module(M) of
        true -> false;
        false ->
            case code:which(M) of
                Path when is_list(Path) -> not lists:prefix(code:lib_dir(), Path);
                _ -> false
            end
    end;
translatable(_) ->
    false.

%%====================================================================
%% Call classification
%%====================================================================

classify_erlang(self, 0) -> {redirect, mce_rt, self};
classify_erlang(node, 0) -> {redirect, mce_rt, node};
classify_erlang(send, A) when A =:= 2; A =:= 3 -> {redirect, mce_rt, send};
classify_erlang(spawn_monitor, A) when A >= 1, A =< 4 -> {redirect, mce_rt_spawn, spawn_monitor};
classify_erlang(spawn, A) when A >= 1, A =< 4 -> {redirect, mce_rt_spawn, spawn};
classify_erlang(spawn_link, A) when A >= 1, A =< 4 -> {redirect, mce_rt_spawn, spawn_link};
classify_erlang(spawn_opt, A) when A =:= 2; A =:= 4 -> {redirect, mce_rt_spawn, spawn_opt};
classify_erlang(apply, A) when A =:= 2; A =:= 3 -> {redirect, mce_rt, apply};
classify_erlang(now, 0) -> {redirect, mce_rt_time, timestamp};
classify_erlang(send_nosuspend, A) when A =:= 2; A =:= 3 -> {redirect, mce_rt, send_nosuspend};
classify_erlang(statistics, 1) -> {redirect, mce_rt_time, statistics};
classify_erlang(yield, 0) -> {redirect, mce_rt, erlang_yield};
classify_erlang(system_info, 1) -> {redirect, mce_rt_procs, system_info};
%% The sandbox (mce_sandbox): funs made at run time are classified, and
%% atoms made by checked code counted against the check's budget.
classify_erlang(make_fun, 3) -> {redirect, mce_sandbox, make_fun};
classify_erlang(list_to_atom, 1) -> {redirect, mce_sandbox, list_to_atom};
classify_erlang(binary_to_atom, A) when A =:= 1; A =:= 2 -> {redirect, mce_sandbox, binary_to_atom};
classify_erlang(binary_to_term, A) when A =:= 1; A =:= 2 -> {redirect, mce_sandbox, binary_to_term};
classify_erlang(list_to_binary, 1) -> {redirect, mce_sandbox, list_to_binary};
classify_erlang(iolist_to_binary, 1) -> {redirect, mce_sandbox, iolist_to_binary};
classify_erlang(F, A) when is_atom(F) ->
    case [RM || {RM, FAs} <- rt_bifs(), lists:member({F, A}, FAs)] of
        [RM] -> {redirect, RM, F};
        [] -> classify_other_bif(F, A)
    end.

%% Process BIFs that the runtime implements under the same name and arity,
%% by the module of the mce_rt family that models them.
rt_bifs() ->
    [{mce_rt, [{put, 2}, {get, 0}, {get, 1}, {erase, 0}, {erase, 1}, {get_keys, 0}, {get_keys, 1},
               {hibernate, 3}]},
     {mce_rt_signals, [{link, 1}, {unlink, 1}, {exit, 2}, {process_flag, 2}, {make_ref, 0},
                       {monitor, 2}, {monitor, 3}, {demonitor, 1}, {demonitor, 2}, {alias, 0},
                       {alias, 1}, {unalias, 1}]},
     {mce_rt_procs, [{register, 2}, {unregister, 1}, {whereis, 1}, {registered, 0},
                     {is_process_alive, 1}, {process_info, 2}, {processes, 0}]},
     {mce_rt_node, [{nodes, 0}, {monitor_node, 2}, {halt, 0}, {halt, 1}, {halt, 2}]},
     {mce_rt_time, [{send_after, 3}, {send_after, 4}, {start_timer, 3}, {start_timer, 4},
                    {cancel_timer, 1}, {cancel_timer, 2}, {read_timer, 1}, {read_timer, 2},
                    {unique_integer, 0}, {unique_integer, 1}, {monotonic_time, 0},
                    {monotonic_time, 1}, {system_time, 0}, {system_time, 1}, {timestamp, 0}]},
     {mce_rt_io, [{group_leader, 0}, {group_leader, 2}]}].
classify_other_bif(F, A) ->
    case lists:member({F, A}, unsupported_bifs()) orelse
         lists:member(F, [spawn, spawn_link, spawn_monitor, spawn_opt, spawn_request,
                          spawn_request_abandon, open_port,
                          port_command, port_control, port_call, port_connect,
                          port_close, port_info, trace, trace_pattern, system_flag,
                          send, send_nosuspend, start_timer, send_after])
    of
        true -> {unsupported, unsupported_bif};
        false ->
            case mce_sandbox:refused_bif(F, A) of
                true -> {unsupported, unsupported_bif};
                false -> pure
            end
    end.

%% Process-related BIFs that are not modelled yet: running them for real
%% inside the executor would silently give a wrong model.
unsupported_bifs() ->
    [{process_flag, 3},
     {nodes, 1}, {process_info, 1},
     {monitor_node, 3},
     {disconnect_node, 1}, {suspend_process, 1}, {resume_process, 1},
     {garbage_collect, 1}, {garbage_collect, 2}, {check_process_code, 2},
     {purge_module, 1}, {load_module, 2}, {delete_module, 1}, {set_cookie, 2},
     {statistics, 1}, {now, 0}, {erase_persistent_term, 1}].

%% OTP modules whose functions talk to processes, I/O or global state.
process_modules() ->
    [supervisor_bridge, rpc, erpc, global, global_group, pg, pg2, application, net_adm,
     net_kernel, code, file, filelib, gen_tcp, gen_udp, gen_sctp, ssl, inet, socket,
     os, io, ets, dets, mnesia, logger, error_logger, timer, persistent_term,
     erl_ddll, init, heart, disk_log, slave, peer, httpc].

is_checker_module(M) ->
    lists:member(M, [mcerlang, mce_anf, mce_closure, mce_exec, mce_format, mce_nif, mce_pid,
                     mce_ref, mce_rt, mce_rt_signals, mce_rt_spawn, mce_rt_procs, mce_rt_io,
                     mce_rt_node, mce_rt_time, mce_search, mce_translate, mce_watchdog, mce_ets,
                     mce_logger, mce_app, mce_global, mce_session, mce_debug, mce_cli, mce_msc,
                     mce_ltl, mce_ltl_search, mcerlang_monitor, mce_pterm, mce_env,
                     mce_atomics, mce_counters, mce_sandbox, mce_etf])
        orelse is_translation(M).

is_translation(M) ->
    lists:prefix("mce$", atom_to_list(M)).

%%====================================================================
%% Cache
%%====================================================================

cached(M) ->
    case persistent_term:get({?MODULE, M}, undefined) of
        #{md5 := MD5, blocking := Blocking} ->
            case erlang:module_loaded(translated_name(M)) andalso
                 current_md5(M) =:= {ok, MD5} of
                true -> {ok, Blocking};
                false -> stale
            end;
        undefined ->
            stale
    end.

%% The loaded code's MD5 (the same value beam_lib:md5/1 computes from the
%% file): asked on every dynamic call into a translated module, so it must
%% not read the .beam file.
current_md5(M) ->
    case erlang:module_loaded(M) of
        true -> {ok, M:module_info(md5)};
        false -> file_md5(M)
    end.

file_md5(M) ->
    case code:which(M) of
        Path when is_list(Path) ->
            case beam_lib:md5(Path) of
                {ok, {_, MD5}} -> {ok, MD5};
                _ -> error
            end;
        _ -> error
    end.

%%====================================================================
%% Closure translation
%%====================================================================

translate_closure(Roots) ->
    Mods = gather(Roots, #{}),
    Blocking = blocking_fixpoint(Mods),
    maps:foreach(fun(_M, Mod) -> compile_and_load(Mod, Blocking, Mods) end, Mods),
    maps:foreach(
      fun(M, #mod{md5 = MD5}) ->
              Own = sets:filter(fun({BM, _, _}) -> BM =:= M end, Blocking),
              persistent_term:put({?MODULE, M}, #{md5 => MD5, blocking => Own})
      end, Mods).

gather([], Acc) ->
    Acc;
gather([M | Rest], Acc) when is_map_key(M, Acc) ->
    gather(Rest, Acc);
gather([M | Rest], Acc) ->
    case cached(M) of
        {ok, _} -> gather(Rest, Acc);
        stale ->
            Mod = analyse(M, module_forms(M)),
            Refs = [R || R <- referenced_modules(Mod), translatable(R)],
            gather(Refs ++ Rest, Acc#{M => Mod})
    end.

module_forms(M) ->
    Beam = code:which(M),
    FromDebugInfo =
        case beam_lib:chunks(Beam, [debug_info]) of
            {ok, {M, [{debug_info, {debug_info_v1, Backend, Data}}]}} ->
                case Backend:debug_info(erlang_v1, M, Data, []) of
                    {ok, Forms} -> {ok, Forms};
                    _ -> error
                end;
            _ -> error
        end,
    case FromDebugInfo of
        {ok, Fs} -> Fs;
        error -> source_forms(M)
    end.

source_forms(M) ->
    Source = proplists:get_value(source, M:module_info(compile), none),
    case is_list(Source) andalso filelib:is_regular(Source) of
        false ->
            erlang:error({mcerlang, {no_abstract_code, M,
                                     "compile it with debug_info or keep its source"}});
        true ->
            Dir = filename:dirname(Source),
            Opts = [{includes, [Dir, filename:join(Dir, "../include")]}],
            case epp:parse_file(Source, Opts) of
                {ok, Forms} ->
                    case [E || {error, E} <- Forms] of
                        [] -> Forms;
                        [E | _] -> erlang:error({mcerlang, {source_error, M, E}})
                    end;
                {error, E} ->
                    erlang:error({mcerlang, {source_error, M, E}})
            end
    end.

analyse(M, Forms) ->
    {ok, MD5} = current_md5(M),
    (analyse_forms(M, Forms))#mod{md5 = MD5}.

analyse_forms(M, Forms0) ->
    case [A || {attribute, _, A, _} <- Forms0, A =:= on_load orelse A =:= nifs] of
        [] -> ok;
        _ -> erlang:error({mcerlang, {nif_module, M,
                                      "modules that load native code cannot be checked; "
                                      "model the NIF in Erlang"}})
    end,
    Forms = yield_points(M, clean_caught_stacks(model_calls(sleep_as_receive(
                                                            resolve_imports(record_creations(Forms0)))))),
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
    [case F of
         {function, L, N, A, Cs} -> {function, L, N, A, postwalk(Rewrite, Cs)};
         _ -> F
     end || F <- Forms].

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
side_effect(M, F, _A) when M =:= atomics; M =:= counters ->
    F =/= new;
side_effect(ets, F, _A) ->
    not lists:member(F, [match_spec_compile, match_spec_run, test_ms, fun2ms, is_compiled_ms]);
side_effect(_, _, _) ->
    false.

%% A stack trace caught by `Class:Reason:Stack' names the original modules
%% and functions, as on the VM: the variable is bound to the cleaned stack
%% (try bodies that suspend get theirs cleaned by their handler frames).
clean_caught_stacks(Forms) ->
    Rewrite = fun({'try', L, Body, Of, Catches, After}) ->
                      {'try', L, Body, Of, [clean_catch(C) || C <- Catches], After};
                 (Other) -> Other
              end,
    [case F of
         {function, L, N, A, Cs} -> {function, L, N, A, postwalk(Rewrite, Cs)};
         _ -> F
     end || F <- Forms].

clean_catch({clause, L, [{tuple, TL, [C, R, {var, VL, S}]}], G, B}) when S =/= '_' ->
    Raw = {var, VL, list_to_atom("MCE@Raw" ++ atom_to_list(S))},
    Clean = {match, VL, {var, VL, S},
             {call, VL, {remote, VL, {atom, VL, mce_rt}, {atom, VL, clean_stack}}, [Raw]}},
    {clause, L, [{tuple, TL, [C, R, Raw]}], G, [Clean | B]};
clean_catch(Clause) ->
    Clause.

model_call(rpc, call, A) when A =:= 4; A =:= 5 -> {mce_rpc, rpc_call};
model_call(rpc, cast, 4) -> {mce_rpc, rpc_cast};
model_call(erpc, call, A) when A =:= 4; A =:= 5 -> {mce_rpc, erpc_call};
model_call(erpc, cast, 4) -> {mce_rpc, erpc_cast};
model_call(rpc, multicall, A) when A >= 3, A =< 5 -> {mce_rpc, rpc_multicall};
model_call(timer, send_interval, A) when A =:= 2; A =:= 3 -> {mce_timer, send_interval};
model_call(timer, apply_after, 4) -> {mce_timer, apply_after};
model_call(timer, apply_interval, 4) -> {mce_timer, apply_interval};
model_call(timer, tc, A) when A >= 1, A =< 3 -> {mce_timer, tc};
model_call(timer, kill_after, A) when A =:= 1; A =:= 2 -> {mce_timer, kill_after};
model_call(timer, exit_after, A) when A =:= 2; A =:= 3 -> {mce_timer, exit_after};
%% io output follows the I/O protocol towards the group leader (mce_io):
%% a call that may block.
model_call(io, F, A) when (F =:= format orelse F =:= fwrite), A >= 1, A =< 3 -> {mce_io, F};
model_call(io, put_chars, A) when A =:= 1; A =:= 2 -> {mce_io, put_chars};
model_call(io, nl, A) when A =:= 0; A =:= 1 -> {mce_io, nl};
model_call(io, write, A) when A =:= 1; A =:= 2 -> {mce_io, write};
model_call(_, _, _) -> none.

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
    [case F of
         {function, L, N, A, Cs} -> {function, L, N, A, postwalk(Rewrite, Cs)};
         _ -> F
     end || F <- Forms].

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
            [case F of
                 {function, L, N, A, Cs} -> {function, L, N, A, postwalk(Rewrite, Cs)};
                 _ -> F
             end || F <- Forms]
    end.

postwalk(F, T) when is_tuple(T) ->
    F(list_to_tuple(postwalk(F, tuple_to_list(T))));
postwalk(F, L) when is_list(L) ->
    [postwalk(F, X) || X <- L];
postwalk(_F, X) ->
    X.

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

%% The arguments of a library higher-order call that may be the funs it
%% calls: the fun expressions written there or, when there are none, every
%% argument that is not a literal.  (OTP's higher-order functions take one
%% fun; the runtime check of lost suspensions covers the rest.)
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

fold_no_funs(F, Acc, T) ->
    fold(F, Acc, T, false).

%% Modules named literally in calls, spawns and fun references, funs
%% included: the closure of what the program can reach without `apply'.
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

%% The set of {M, F, A} that may reach a receive, over the modules being
%% translated plus the cached ones they call.
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
                         %% on the funs passed (runs_with/1, routes_to_library/2),
                         %% not on whether an earlier check translated them.
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

compile_and_load(#mod{name = M} = Mod, Blocking, Mods) ->
    Forms = translate_module(Mod, Blocking, Mods),
    TrM = translated_name(M),
    case compile:forms(Forms, ?COMPILE_OPTS) of
        {ok, TrM, Bin} ->
            _ = code:soft_purge(TrM),
            case code:load_binary(TrM, atom_to_list(TrM) ++ ".beam", Bin) of
                {module, TrM} ->
                    persistent_term:put({?MODULE, forms, M}, Forms),
                    ok;
                {error, Why} -> erlang:error({mcerlang, {load_failed, M, Why}})
            end;
        {error, Errors, _Warnings} ->
            erlang:error({mcerlang, {translation_failed, M, Errors}})
    end.

%% @doc The abstract code of user module M as compiled (for mce_closure).
-spec original_forms(module()) -> [erl_parse:abstract_form()].
original_forms(M) ->
    module_forms(M).

-spec debug_forms(module()) -> [erl_parse:abstract_form()].
debug_forms(M) ->
    module_forms(M).

-spec debug_translate(module()) -> [erl_parse:abstract_form()].
debug_translate(M) ->
    Mods = gather([M], #{}),
    translate_module(maps:get(M, Mods), blocking_fixpoint(Mods), Mods).

%% @doc The compiler options used for translated modules (for the bench).
-spec compile_options() -> [atom()].
compile_options() ->
    ?COMPILE_OPTS.

translated_forms(M) ->
    case persistent_term:get({?MODULE, forms, M}, undefined) of
        undefined -> error;
        Forms -> {ok, Forms}
    end.

%%====================================================================
%% Module translation
%%====================================================================

-record(tr, {mod :: module(),
             newmod :: module(),
             fa = {undefined, 0} :: {atom(), arity()},
             defs :: sets:set({atom(), arity()}),
             blocking :: sets:set(mfa()),
             translated :: fun((module()) -> boolean())}).

translate_module(#mod{name = M, forms = Forms, defs = Defs}, Blocking, Mods) ->
    NewM = translated_name(M),
    Translated = fun(X) -> is_map_key(X, Mods) orelse translatable(X) end,
    St = #tr{mod = M, newmod = NewM, defs = Defs, blocking = Blocking,
             translated = Translated},
    %% Translating a module can trigger the translation of a library module
    %% (ensure_library/1): the per-module state is saved and restored.
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
    Source = case [F || {attribute, _, file, {F, _}} <- Forms] of
                 [F | _] -> F;
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
        %% explicitly (record_creations/1), where it may block.
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
      bound => fun bound/1,
      lower_comprehension => fun(C, EnvNow) -> lower_comprehension(C, EnvNow, St) end}.

%% A list comprehension whose template or qualifiers may block becomes
%% calls of generated recursive functions, one per generator, which the
%% translator then handles like any function.  The variables of the
%% enclosing scope it uses are passed as extra arguments.
lower_comprehension({lc, L, E, Quals} = C, Env, St) ->
    Outer = intersection(Env, vars_all(C)),
    lc_expr(L, E, Quals, Outer, St);
lower_comprehension({bc, L, _, _}, _Env, St) ->
    unsupported(L, St, blocking_code_in_binary_comprehension).

lc_expr(L, E, [], _Vars, _St) ->
    {cons, L, E, {nil, L}};
lc_expr(L, E, [{generate, GL, P, ListExpr} | Rest], Vars, St) ->
    N = counter(),
    Name = gen_name("lc", N),
    Args = [{var, GL, V} || V <- Vars],
    T = {var, GL, gen_var("Tl", N)},
    Other = {var, GL, gen_var("G", N)},
    Recur = {call, GL, {atom, GL, Name}, [T | Args]},
    Inner = lc_expr(L, E, Rest, union(Vars, pat_vars(P)), St),
    Clauses = [{clause, GL, [{cons, GL, P, T} | Args], [], [{op, GL, '++', Inner, Recur}]},
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
lc_expr(L, _E, [{b_generate, GL, _, _} | _], _Vars, St) ->
    unsupported(GL, St#tr{}, {blocking_code_in_comprehension_with_binary_generator, L});
lc_expr(L, E, [Filter | Rest], Vars, St) ->
    FL = element(2, Filter),
    Then = lc_expr(L, E, Rest, Vars, St),
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

is_literal(E) ->
    try erl_parse:normalise(E) of _ -> true
    catch _:_ -> false
    end.

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
%% Variables
%%--------------------------------------------------------------------

pat_vars(P) ->
    lists:usort(fold_all(fun({var, _, '_'}, Acc) -> Acc;
                            ({var, _, V}, Acc) -> [V | Acc];
                            (_, Acc) -> Acc
                         end, [], P)).

vars_all(T) ->
    pat_vars(T).

%% Variables an expression binds that stay bound after it.
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

body_bound(Es) ->
    lists:foldl(fun(E, Acc) -> union(Acc, bound(E)) end, [], Es).

clauses_bound([]) -> [];
clauses_bound(Cls) ->
    Sets = [union(pat_vars(Ps), body_bound(B)) || {clause, _, Ps, _, B} <- Cls],
    lists:foldl(fun intersection/2, hd(Sets), tl(Sets)).

%%--------------------------------------------------------------------
%% Generic traversal of expressions (patterns are left alone)
%%--------------------------------------------------------------------

subexprs(E) ->
    Collect = fun(X) -> put(mce_tr_sub, [X | get(mce_tr_sub)]), X end,
    put(mce_tr_sub, []),
    _ = map_subexprs(Collect, E),
    lists:reverse(erase(mce_tr_sub)).

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
