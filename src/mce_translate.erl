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
%%
%% This module is the translator's API and driver: which modules are
%% translated (`translatable/1'), the classification of every call
%% (`classify_call/3', the sandbox's one rule), gathering the closure of
%% modules to translate, the library higher-order functions, compiling and
%% loading, and the cache.  The passes are modules of their own, run in
%% this order on each module:
%%
%%   mce_translate_expand    source rewrites (records, sleeps, model calls,
%%                           scheduling points): forms -> forms;
%%   mce_translate_blocking  which {M, F, A} may reach a receive, over all
%%                           the modules translated together;
%%   mce_translate_gen       the translated module: continuations, frames,
%%                           handlers, redirected calls (with mce_anf);
%%
%% and mce_translate_syntax walks the trees for all of them.
%%
%% Invariant: a translation in the cache (`{mce_translate, M}' in
%% persistent_term) was made from the original whose MD5 it records, with
%% the blocking set it records, and is loaded; anything else is stale and
%% translated again, under a global lock per node.
-module(mce_translate).

-export([ensure/1, ensure_library/1, translated_name/1, translate/1, init_call/1, runtime_module/1,
         classify_call/3, translatable/1, make_fun/3, shell_fun/1]).
%% For measuring the translator's passes apart from the compiler.
-export([debug_forms/1, debug_translate/1, compile_options/0, original_forms/1]).
%% For the translator's passes (mce_translate_*).
-export([model_call/3, library_modules/0, cached/1]).
%% For the dead-payload analysis (mce_payload).
-export([translated_forms/1]).

-include("mce_translate.hrl").

-import(mce_translate_syntax, [fold_all/3, postwalk/2]).

%% Translated code runs under the model checker, where the SSA and boolean
%% optimisers' gains are small next to their cost (two thirds of the
%% compile time of a large module).
-define(COMPILE_OPTS, [binary, return_errors, no_spawn_compiler_process, no_ssa_opt,
                       no_bool_opt]).

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
                         fun() ->
                                 case load_closure(M) of
                                     ok -> ok;
                                     miss -> translate_closure([M])
                                 end
                         end, [node()], infinity),
            translated_name(M)
    end.

%% @doc The translated module as Erlang source text, for debugging.
-spec translate(module()) -> {ok, string()}.
translate(M) ->
    ensure(M),
    {ok, Forms} = translated_forms(M),
    {ok, lists:flatten([[erl_pp:form(F), $\n] || F <- Forms])}.

%% @doc The module the checked program runs for `M': its translation
%% (made if need be) when the checker translates M, else M itself.
-spec runtime_module(module()) -> module().
runtime_module(M) ->
    case translatable(M) of
        true -> ensure(M);
        false -> M
    end.

%% @doc The initial call of a simulated process, in terms of translated code.
-spec init_call(function() | {module(), atom(), [term()]}) -> function() | {module(), atom(), [term()]}.
init_call({M, F, A}) ->
    {runtime_module(M), F, A};
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
    Mod = (analyse_forms(M, Forms))#mod{md5 = erlang:md5(term_to_binary({Forms, mce_stubs:digest()}))},
    Refs = [R || R <- mce_translate_blocking:referenced_modules(Mod), translatable(R)],
    Mods = gather(Refs, #{M => Mod}),
    Blocking = mce_translate_blocking:blocking_fixpoint(Mods),
    maps:foreach(fun(_M, X) -> _ = compile_and_load(X, Blocking, Mods) end, Mods),
    maps:foreach(
      fun(Name, #mod{md5 = MD5}) when Name =/= M ->
              Own = sets:filter(fun({BM, _, _}) -> BM =:= Name end, Blocking),
              persistent_term:put({?MODULE, Name}, #{md5 => MD5, blocking => Own});
         (_, _) -> ok
      end, Mods).

%% @doc `fun M:F/A' for a module known only at run time.
-spec make_fun(module(), atom(), arity()) -> function().
make_fun(M, F, A) ->
    erlang:make_fun(runtime_module(M), F, A).

%% @doc How translated code must treat a call to `M:F/A'.
-spec classify_call(module(), atom(), arity()) ->
          {redirect, module(), atom()} | {model, module(), atom()} | {unsupported, atom()}
          | pure | translate | library_hof.
classify_call(erlang, F, A) -> classify_erlang(F, A);
classify_call(mcerlang, choice, 1) -> {redirect, mce_rt, choice};
classify_call(mcerlang, prop, 1) -> {redirect, mce_rt, prop};
classify_call(mcerlang, probe, 2) -> {redirect, mce_rt, probe};
classify_call(net_adm, ping, 1) -> {redirect, mce_rt_node, ping};
%% net_kernel's subscriptions to node events, connections and node info
%% (mce_rt_netkernel); the rest of net_kernel is refused.
classify_call(net_kernel, F, A) ->
    _ = code:ensure_loaded(mce_rt_netkernel),
    case erlang:function_exported(mce_rt_netkernel, F, A) of
        true -> {redirect, mce_rt_netkernel, F};
        false -> {unsupported, unsupported_call}
    end;
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
%% Loading runs a module's on_load function: the program's own modules are
%% translated instead (mce_rt:ensure_loaded/1).
classify_call(code, ensure_loaded, 1) -> {redirect, mce_rt, ensure_loaded};
%% Whether the program's own modules are loaded, asked of their
%% translations (mce_rt:is_loaded/1), as function_exported/3 is.
classify_call(code, is_loaded, 1) -> {redirect, mce_rt, is_loaded};
classify_call(code, which, 1) ->
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
                     mce_rt_procs, mce_rt_io, mce_rt_node, mce_rt_time, mce_stubs,
                     mce_rt_netkernel, mce_rt_order])
        orelse is_translation(M).

%%====================================================================
%% Library higher-order functions
%%====================================================================

%% Library modules whose higher-order functions are translated, so that a
%% fun that blocks can be passed to them (lists:foreach(fun(X) -> receive
%% ... end end, L)).  Their other functions are always called directly.
-spec library_modules() -> [module()].
library_modules() ->
    [lists, maps, proplists, dict, orddict, gb_trees, gb_sets, sets, ordsets, queue, array].

%% @doc The translation of library module M (its higher-order functions).
-spec ensure_library(module()) -> module().
ensure_library(M) ->
    case cached(M) of
        {ok, _} -> ok;
        stale ->
            global:trans({?MODULE, node()},
                         fun() ->
                                 case load_library(M) of
                                     ok -> ok;
                                     miss -> translate_library(M)
                                 end
                         end, [node()], infinity)
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
    {Beam, TrForms} = compile_and_load(Kept, Blocking, #{}),
    persistent_term:put({?MODULE, M}, #{md5 => Mod#mod.md5, blocking => Blocking}),
    store(M, Mod#mod.md5, Beam, TrForms, Blocking, []).

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
%% OTP's process groups: the scope's gen_server and its ETS table are the
%% model's, its node events net_kernel:monitor_nodes's (mce_rt_netkernel).
translatable(pg) ->
    true;
translatable(M) when is_atom(M) ->
    case is_checker_module(M) of
        true -> false;
        false -> check_memo({translatable, M}, fun() -> outside_otp(M) end)
    end;
translatable(_) ->
    false.

%% Whether M's code is found outside OTP's own library directories.
outside_otp(M) ->
    case code:which(M) of
        Path when is_list(Path) -> not lists:prefix(code:lib_dir(), Path);
        _ -> false
    end.

%% What the code path says about a module, asked at every dynamic call
%% (classify_other/3, cached/1), is asked once per check: inside a check's
%% worker (mcerlang:isolated/2 sets '$mce_watch' in it, a process of its
%% own per check) the answer is kept in the worker's dictionary.  Asked
%% each time, it was two calls to the one code_server process per dynamic
%% call (code:which/1, code:lib_dir/0), a search of the whole code path
%% through the one erl_prim_loader process for a module that is not loaded,
%% and for such a module a read and MD5 of its .beam file: a third of the
%% locker's CPU with five clients, and the calls serialised the workers of
%% a parallel search.  Outside a check (the shell's mcerlang:translate/1)
%% nothing is kept, so a module recompiled between checks is seen.
check_memo(Key, Ask) ->
    case get('$mce_watch') of
        undefined ->
            Ask();
        _ ->
            case get({?MODULE, Key}) of
                undefined ->
                    Answer = Ask(),
                    put({?MODULE, Key}, {memo, Answer}),
                    Answer;
                {memo, Answer} ->
                    Answer
            end
    end.

%% @doc The OTP calls that run in a model written in Erlang and translated
%% like user code (mce_rpc, mce_timer, mce_io): the rewrite of call sites
%% (mce_translate_expand) and the classification of `fun M:F/A' and
%% dynamic calls agree through this one table.
-spec model_call(module(), atom(), arity()) -> {module(), atom()} | none.
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
%% Whether a callback module exports a function, asked of its translation
%% (the original need not be loaded here: mce_rt:function_exported/3).
classify_erlang(function_exported, 3) -> {redirect, mce_rt, function_exported};
classify_erlang(module_loaded, 1) -> {redirect, mce_rt, module_loaded};
classify_erlang(now, 0) -> {redirect, mce_rt_time, timestamp};
classify_erlang(send_nosuspend, A) when A =:= 2; A =:= 3 -> {redirect, mce_rt, send_nosuspend};
classify_erlang(statistics, 1) -> {redirect, mce_rt_time, statistics};
classify_erlang(yield, 0) -> {redirect, mce_rt, erlang_yield};
classify_erlang(system_info, 1) -> {redirect, mce_rt_procs, system_info};
%% Lists in pid order: the symmetry guard sees them (mce_rt_order).
classify_erlang(processes, 0) -> {redirect, mce_rt_order, processes};
classify_erlang(process_info, 2) -> {redirect, mce_rt_order, process_record};
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
    [supervisor_bridge, rpc, erpc, global, global_group, pg2, application, net_adm,
     net_kernel, code, file, filelib, gen_tcp, gen_udp, gen_sctp, ssl, inet, socket,
     os, io, ets, dets, mnesia, logger, error_logger, timer, persistent_term,
     erl_ddll, init, heart, disk_log, slave, peer, httpc].

is_checker_module(M) ->
    lists:member(M, [mcerlang, mce_anf, mce_closure, mce_exec, mce_format, mce_nif, mce_pid,
                     mce_ref, mce_rt, mce_rt_signals, mce_rt_spawn, mce_rt_procs, mce_rt_io,
                     mce_rt_node, mce_rt_time, mce_search, mce_translate, mce_watchdog, mce_ets,
                     mce_logger, mce_app, mce_global, mce_session, mce_debug, mce_cli, mce_msc,
                     mce_ltl, mce_ltl_search, mcerlang_monitor, mce_pterm, mce_env,
                     mce_atomics, mce_counters, mce_sandbox, mce_etf, mce_translate_expand,
                     mce_translate_blocking, mce_translate_gen, mce_translate_syntax,
                     mce_translate_cache, mce_stubs, mce_rt_netkernel, mce_rt_order,
                     mce_translate_order])
        orelse is_translation(M).

is_translation(M) ->
    lists:prefix("mce$", atom_to_list(M)).

%%====================================================================
%% Cache
%%====================================================================

%% @doc The cache's translation of M: current, with its blocking set, or
%% stale.
-spec cached(module()) -> {ok, sets:set(mfa())} | stale.
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

%% The key of M's translation: the loaded code's MD5 (the same value
%% beam_lib:md5/1 computes from the file), mixed with the set of calls the
%% check stubs when it has stubs (the rewrite of stubbed calls changes the
%% translation, see mce_stubs).  Asked on every dynamic call into a
%% translated module, so it must not read the .beam file.
current_md5(M) ->
    MD5 = case erlang:module_loaded(M) of
              true -> {ok, M:module_info(md5)};
              false -> file_md5(M)
          end,
    case {MD5, mce_stubs:digest()} of
        {{ok, Code}, Stubs} when is_binary(Stubs) -> {ok, erlang:md5(<<Code/binary, Stubs/binary>>)};
        _ -> MD5
    end.

%% The .beam file of a module that is not loaded (OTP's `supervisor' is
%% not, in a VM where only its translation runs), read once per check
%% (check_memo/2).
file_md5(M) ->
    check_memo({file_md5, M}, fun() -> read_file_md5(M) end).

read_file_md5(M) ->
    case code:which(M) of
        Path when is_list(Path) ->
            case beam_lib:md5(Path) of
                {ok, {_, MD5}} -> {ok, MD5};
                _ -> error
            end;
        _ -> error
    end.

%%====================================================================
%% Disk cache (mce_translate_cache holds the entries)
%%====================================================================

%% Loads the translations of M's closure from the disk cache, if every
%% module of it has a current entry and the entries agree with each other:
%% each entry's recorded inputs (which modules it refers to are translated,
%% and which of their functions may block) are what the closure's entries,
%% the in-VM cache and translatable/1 say now.  Then the translations are
%% the ones translate_closure/1 would make, and nothing is translated.
load_closure(M) ->
    case disk_closure([M], #{}) of
        {ok, Entries} ->
            Agree = maps:fold(fun(_, {_, #{deps := Deps}}, Acc) ->
                                      Acc andalso lists:all(fun(D) -> dep_holds(D, Entries) end, Deps)
                              end, true, Entries),
            case Agree of
                true ->
                    maps:foreach(fun(Name, {MD5, E}) -> load_entry(Name, MD5, E) end, Entries),
                    ok;
                false -> miss
            end;
        miss -> miss
    end.

disk_closure([], Acc) ->
    {ok, Acc};
disk_closure([M | Rest], Acc) when is_map_key(M, Acc) ->
    disk_closure(Rest, Acc);
disk_closure([M | Rest], Acc) ->
    case cached(M) of
        {ok, _} -> disk_closure(Rest, Acc);
        stale ->
            case current_md5(M) of
                {ok, MD5} ->
                    case mce_translate_cache:read(M, MD5) of
                        {ok, #{deps := Deps} = E} ->
                            disk_closure([R || {R, true, _} <- Deps] ++ Rest, Acc#{M => {MD5, E}});
                        miss -> miss
                    end;
                error -> miss
            end
    end.

%% A recorded input of an entry still holds.
dep_holds({R, Translated, Own}, Entries) ->
    case Entries of
        #{R := {_, #{blocking := B}}} -> Translated andalso B =:= Own andalso translatable(R);
        #{} ->
            translatable(R) =:= Translated andalso
                case Translated of
                    false -> Own =:= [];
                    true ->
                        case cached(R) of
                            {ok, B} -> lists:sort(sets:to_list(B)) =:= Own;
                            stale -> false
                        end
                end
    end.

load_entry(M, MD5, #{beam := Beam, blocking := Blocking, libs := Libs, forms := Forms}) ->
    TrM = translated_name(M),
    _ = code:soft_purge(TrM),
    case code:load_binary(TrM, atom_to_list(TrM) ++ ".beam", Beam) of
        {module, TrM} -> ok;
        {error, Why} -> erlang:error({mcerlang, {load_failed, M, Why}})
    end,
    persistent_term:put({?MODULE, forms_bin, M}, Forms),
    _ = persistent_term:erase({?MODULE, forms, M}),
    persistent_term:put({?MODULE, M}, #{md5 => MD5, blocking => sets:from_list(Blocking)}),
    lists:foreach(fun ensure_library/1, Libs).

load_library(M) ->
    case current_md5(M) of
        {ok, MD5} ->
            case mce_translate_cache:read(M, MD5) of
                {ok, #{deps := []} = E} -> load_entry(M, MD5, E);
                _ -> miss
            end;
        error -> miss
    end.

%% Writes the entry of M's translation: its inputs from other modules
%% (Deps), and the library translations it calls, which must be loaded
%% with it.
store(M, MD5, Beam, Forms, Blocking, Deps) ->
    Libs = [L || L <- library_modules(), L =/= M,
                 mentions(translated_name(L), Forms)],
    mce_translate_cache:write(M, MD5, #{beam => Beam,
                                        blocking => lists:sort(sets:to_list(Blocking)),
                                        deps => Deps, libs => Libs,
                                        %% Compressed: most of an entry, read only
                                        %% by translate/1, and checksummed on
                                        %% every load.
                                        forms => term_to_binary(Forms, [compressed])}).

mentions(A, A) -> true;
mentions(A, T) when is_tuple(T) -> mentions_list(A, tuple_to_list(T));
mentions(A, L) when is_list(L) -> mentions_list(A, L);
mentions(_, _) -> false.

mentions_list(A, [H | T]) -> mentions(A, H) orelse mentions_list(A, T);
mentions_list(_, _) -> false.

%%====================================================================
%% Closure translation
%%====================================================================

translate_closure(Roots) ->
    Mods = gather(Roots, #{}),
    Blocking = mce_translate_blocking:blocking_fixpoint(Mods),
    Made = maps:map(fun(_M, Mod) -> compile_and_load(Mod, Blocking, Mods) end, Mods),
    maps:foreach(
      fun(M, #mod{md5 = MD5} = Mod) ->
              Own = own_blocking(M, Blocking),
              persistent_term:put({?MODULE, M}, #{md5 => MD5, blocking => Own}),
              {Beam, Forms} = maps:get(M, Made),
              Deps = [{R, is_map_key(R, Mods) orelse translatable(R),
                       lists:sort(sets:to_list(own_blocking(R, Blocking)))}
                      || R <- mce_translate_blocking:referenced_modules(Mod), R =/= M],
              store(M, MD5, Beam, Forms, Own, Deps)
      end, Mods).

own_blocking(M, Blocking) ->
    sets:filter(fun({BM, _, _}) -> BM =:= M end, Blocking).

gather([], Acc) ->
    Acc;
gather([M | Rest], Acc) when is_map_key(M, Acc) ->
    gather(Rest, Acc);
gather([M | Rest], Acc) ->
    case cached(M) of
        {ok, _} -> gather(Rest, Acc);
        stale ->
            Mod = analyse(M, module_forms(M)),
            Refs = [R || R <- mce_translate_blocking:referenced_modules(Mod), translatable(R)],
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
    mce_translate_blocking:analyse(M, mce_translate_expand:forms(M, Forms0)).

compile_and_load(#mod{name = M} = Mod, Blocking, Mods) ->
    Forms = mce_translate_gen:translate_module(Mod, Blocking, Mods),
    TrM = translated_name(M),
    case compile:forms(Forms, ?COMPILE_OPTS) of
        {ok, TrM, Bin} ->
            _ = code:soft_purge(TrM),
            case code:load_binary(TrM, atom_to_list(TrM) ++ ".beam", Bin) of
                {module, TrM} ->
                    persistent_term:put({?MODULE, forms, M}, Forms),
                    {Bin, Forms};
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
    mce_translate_gen:translate_module(maps:get(M, Mods),
                                       mce_translate_blocking:blocking_fixpoint(Mods), Mods).

%% @doc The compiler options used for translated modules (for the bench).
-spec compile_options() -> [atom()].
compile_options() ->
    ?COMPILE_OPTS.

-spec translated_forms(module()) -> {ok, [erl_parse:abstract_form()]} | error.
translated_forms(M) ->
    case persistent_term:get({?MODULE, forms, M}, undefined) of
        undefined ->
            %% Loaded from the disk cache: the forms are kept encoded until
            %% asked for.
            case persistent_term:get({?MODULE, forms_bin, M}, undefined) of
                undefined -> error;
                Bin -> {ok, binary_to_term(Bin)}
            end;
        Forms -> {ok, Forms}
    end.
