%% @doc The runtime calls that translated code makes instead of the
%% process BIFs: the step protocol and the step's context.
%%
%% Translated code runs inside the executor process (see mce_exec).  It must
%% never touch real processes: every side effect is recorded as an effect of
%% the current step, and the C runtime applies the effects to the successor
%% state.  The step's context lives in the executor's process dictionary
%% under '$mce_*' keys, set up and torn down by mce_exec for each step.
%%
%% This module owns how a step talks to the executor and the search:
%% suspending in a receive, yields, choices, props and probes, hibernation,
%% calls computed at run time, stopping the check (fatal/1), and the step
%% context that the whole runtime shares (effect/1, sim_pid/2, my_node/0);
%% and the BIFs every program calls: self/0, node/0, `!' and the process
%% dictionary.  The other process BIFs are the rest of the family, one
%% concern each (docs/ARCHITECTURE.md, "The runtime"):
%%   mce_rt_signals  links, exit signals, trap_exit, refs, monitors, aliases
%%   mce_rt_spawn    the spawn family, on this node and on others
%%   mce_rt_procs    the process table as the step sees it: liveness, the
%%                   registry, the system processes init and user,
%%                   process_info/2, processes/0
%%   mce_rt_io       group leaders, and the output recorded with the step
%%   mce_rt_node     the simulated nodes: nodes/0, ping, monitor_node, halt
%%   mce_rt_netkernel net_kernel:monitor_nodes/1,2, connect_node/1, node_info/1,2
%%   mce_rt_time     timers, clocks, unique integers, statistics
%%
%% Invariant: a step's side effects exist only in the effect log
%% ('$mce_effects', newest first) and the overlay ('$mce_overlay': what the
%% step has changed so far, read before the stored state); no module of the
%% runtime writes the stored state or touches a real process.  The
%% suspension values and the continuations {mce_rt, resume | prop_resume |
%% '$mce_hibernated', _} are matched by this module's name in mce_exec and
%% mce_search, and are part of stored states: they stay here.
-module(mce_rt).
-compile({no_auto_import, [put/2, get/0, get/1, erase/0, erase/1, get_keys/0, get_keys/1, self/0,
                            node/0, apply/2, apply/3, send/3]}).

-export([yield/1, yield/2, yield/3, resume/1, prop/1, prop_resume/1, probe/2, self/0, node/0,
         send/2, send/3, suspend/4, apply/2, apply/3, function_exported/3, ensure_loaded/1,
         module_loaded/1, is_loaded/1,
         unsupported/3, fatal/1, clean_stack/1,
         erlang_yield/0, send_nosuspend/2, send_nosuspend/3, choice/1, choice/2, hibernate/3,
         '$mce_hibernated'/5, put/2, get/0, get/1, erase/0, erase/1, get_keys/0, get_keys/1]).
%% For the other modules of the runtime.
-export([modules/0, effect/1, my_node/0, is_local/1, sim_pid/2]).

-type location() :: {module(), atom(), arity(), non_neg_integer()}.
-export_type([location/0]).

%%--------------------------------------------------------------------
%% The step's context: the running process, its node, its effects
%%--------------------------------------------------------------------

-spec self() -> pid().
self() ->
    erlang:get('$mce_self').

-spec node() -> node().
node() ->
    mce_pid:node_of(erlang:get('$mce_pid')).

%% The index of the running process's node.
-spec my_node() -> non_neg_integer().
my_node() ->
    erlang:get('$mce_pid') bsr 24.

-spec is_local(non_neg_integer()) -> boolean().
is_local(N) ->
    N bsr 24 =:= my_node().

%% The number of a simulated pid; badarg for a non-pid, a stop for a real
%% process (the model cannot reach it).
-spec sim_pid(term(), [term()]) -> non_neg_integer().
sim_pid(Pid, Args) ->
    case mce_pid:number(Pid) of
        {ok, N} -> N;
        error when is_pid(Pid) -> fatal({mcerlang, {send_to_real_process, Pid}});
        error -> erlang:error(badarg, Args)
    end.

%% The step's effect log, newest first: mce_exec hands it to the C runtime
%% oldest first when the step ends.
-spec effect(tuple()) -> term().
effect(E) ->
    erlang:put('$mce_effects', [E | erlang:get('$mce_effects')]).

%%--------------------------------------------------------------------
%% Messages
%%--------------------------------------------------------------------

%% @doc `To ! Msg'.  Like the BIF it returns Msg; an unregistered name is
%% badarg, but `{Name, node()}' for an unregistered name drops the message
%% (both as on the VM).  `{Name, Node}' for another node is resolved there,
%% when the message arrives; an unknown node cannot be reached, so the
%% message is lost.
-spec send(term(), Msg) -> Msg.
send(To, Msg) when is_atom(To) ->
    case mce_rt_procs:whereis(To) of
        undefined -> erlang:error(badarg, [To, Msg]);
        Pid -> send(Pid, Msg)
    end;
send({Name, Node}, Msg) when is_atom(Name), is_atom(Node) ->
    case Node =:= node() of
        true ->
            case mce_rt_procs:whereis(Name) of
                undefined -> Msg;
                Pid -> send(Pid, Msg)
            end;
        false ->
            case mce_pid:node_index(Node) of
                {ok, I} when Name =:= init; Name =:= user ->
                    {ok, Key} = mce_rt_procs:system_process_key(Name, I),
                    to_system_process(Key, Msg);
                {ok, I} ->
                    mce_rt_procs:remote_name_modelled(Name, I),
                    effect({send_name, mce_pid:by_name(I), Name, Msg});
                error -> ok
            end,
            Msg
    end;
send(To, Msg) when is_reference(To) ->
    %% An alias: delivered only while it is active; any other reference is
    %% silently dropped, as on the VM.
    case mce_ref:number(To) of
        {ok, R} -> effect({send_alias, R, Msg});
        error -> ok
    end,
    Msg;
send(To, Msg) ->
    N = sim_pid(To, [To, Msg]),
    case mce_rt_procs:system_process(N) of
        false -> effect({send, N, Msg});
        _ -> to_system_process(N, Msg)
    end,
    Msg.

%% `init' and `user' ignore messages that are not requests of theirs (seen
%% on OTP 25); a request would need an answer the model does not give.
to_system_process(N, Msg) when element(1, Msg) =:= io_request; element(1, Msg) =:= stop ->
    mce_rt_procs:system_process_refused(N, {send, Msg});
to_system_process(_N, _Msg) ->
    ok.

%% @doc erlang:send/3: as send/2, returning ok; with `noconnect' a send to
%% a node that cannot be reached returns noconnect.
-spec send(term(), term(), [nosuspend | noconnect]) -> ok | noconnect.
send(To, Msg, Opts) when is_list(Opts) ->
    lists:all(fun(O) -> O =:= nosuspend orelse O =:= noconnect end, Opts)
        orelse erlang:error(badarg, [To, Msg, Opts]),
    Node = case To of
               {_, N} when is_atom(N) -> N;
               _ when is_pid(To) -> erlang:node(To);
               _ -> node()
           end,
    case lists:member(noconnect, Opts) andalso Node =/= node() andalso
         mce_rt_node:ping(Node) =:= pang of
        true -> noconnect;
        false ->
            try send(To, Msg) catch error:badarg -> erlang:error(badarg, [To, Msg, Opts]) end,
            ok
    end;
send(To, Msg, Opts) ->
    erlang:error(badarg, [To, Msg, Opts]).

%% @doc erlang:send_nosuspend/2,3: a send that never suspends; the model's
%% sends never do, so it is a send that succeeds.
-spec send_nosuspend(term(), term()) -> true.
send_nosuspend(Dest, Msg) ->
    _ = send(Dest, Msg),
    true.

-spec send_nosuspend(term(), term(), [atom()]) -> true.
send_nosuspend(Dest, Msg, Opts) ->
    _ = send(Dest, Msg, Opts),
    true.

%%--------------------------------------------------------------------
%% Nondeterminism
%%--------------------------------------------------------------------

%% @doc mcerlang:choice/1 in checked code: the process suspends, and the
%% search takes every alternative as a separate transition.
-spec choice([function() | {module(), atom(), [term()]}]) -> tuple().
choice(Alternatives) ->
    choice(Alternatives, undefined).

%% @doc choice/1 with the source location of the call, `{M, F, A, Line}',
%% named by the error when the suspension is lost on its way out.
-spec choice([function() | {module(), atom(), [term()]}],
             {module(), atom(), arity(), integer()} | undefined) -> tuple().
choice(Alternatives, Where) when is_list(Alternatives), Alternatives =/= [],
                                 length(Alternatives) =< 65535 ->
    Alts = [case A of
                F when is_function(F, 0) -> mce_sandbox:init_fun(F);
                {M, F, Args} when is_atom(M), is_atom(F), is_list(Args) ->
                    mce_sandbox:init_mfa(M, F, Args);
                _ -> erlang:error(badarg, [Alternatives])
            end || A <- Alternatives],
    erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
    {'$mce_suspend', {'$mce_choice', Alts}, []};
choice(Other, _Where) ->
    erlang:error(badarg, [Other]).

%% @doc A scheduling point after a side effect (see
%% mce_translate_expand:yield_points/1): with `granularity => small' the process
%% suspends here and resumes with Value as a transition of its own; in the
%% default big-step mode it just returns Value.
-spec yield(T) -> T | {'$mce_suspend', tuple(), []}.
yield(Value) ->
    yield(Value, undefined).

%% @doc yield/1 with the source location of the call, `{M, F, A, Line}',
%% named by the error when the suspension is lost on its way out.
-spec yield(T, {module(), atom(), arity(), integer()} | undefined) ->
          T | {'$mce_suspend', tuple(), []}.
yield(Value, Where) ->
    case erlang:get('$mce_granularity') of
        small ->
            erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
            {'$mce_suspend', {'$mce_choice', [{mce_rt, resume, [Value]}]}, []};
        _ ->
            Value
    end.

%% @doc The scheduling point before an access to shared memory (ETS,
%% atomics, counters; see mce_translate_expand:shared_yield/3) in big steps: it
%% suspends when the step already accessed shared memory, so another
%% process may run between the two accesses.  Under small granularity the
%% yield after each access does that.  A fun called by code the checker
%% does not translate (ets:foldl/3, sofs) cannot suspend: there, as when
%% the stack is too deep to tell, the step goes on (the big step of old).
-spec yield(T, {module(), atom(), arity(), integer()}, shared) -> T | {'$mce_suspend', tuple(), []}.
yield(Value, Where, shared) ->
    case {erlang:get('$mce_granularity'), erlang:get('$mce_shared_touched')} of
        {small, _} ->
            Value;
        {_, true} ->
            {current_stacktrace, [_This | Callers]} = erlang:process_info(erlang:self(), current_stacktrace),
            case translated_up_to_step(Callers) of
                true ->
                    erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
                    {'$mce_suspend', {'$mce_choice', [{mce_rt, resume, [Value]}]}, []};
                false ->
                    Value
            end;
        _ ->
            erlang:put('$mce_shared_touched', true),
            Value
    end.

%% Every caller, up to the executor's start of the step, is translated code
%% (modules 'mce$...'), which passes a suspension on.
translated_up_to_step([{mce_exec, invoke, 4, _} | _]) ->
    true;
translated_up_to_step([{M, _, _, _} | Callers]) ->
    case atom_to_list(M) of
        "mce$" ++ _ -> translated_up_to_step(Callers);
        _ -> false
    end;
translated_up_to_step([]) ->
    false.

%% @doc mcerlang:prop(Term) in checked code (paper 003, section 4): the
%% state in which the process is about to evaluate prop(Term) has Term as a
%% proposition.  So the process stops there, a one-way choice like a small
%% step, and the state view lists Term among its props; the next step
%% returns Term.
-spec prop(T) -> {'$mce_suspend', tuple(), []} | T.
prop(Term) ->
    {'$mce_suspend', {'$mce_choice', [{mce_rt, prop_resume, [Term]}]}, []}.

%% @doc The continuation of a prop: its argument.
-spec prop_resume(T) -> T.
prop_resume(Term) ->
    Term.

%% @doc mcerlang:probe(Label, Term) in checked code: marks the step that
%% runs it; monitors and invariants see it in the view's `probes'.
-spec probe(term(), term()) -> ok.
probe(Label, Term) ->
    erlang:put('$mce_probes', [{Label, Term} | erlang:get('$mce_probes')]),
    ok.

%% @doc The continuation of a yield: the side effect's value.
-spec resume(T) -> T.
resume(Value) ->
    %% In big steps only a shared-memory point suspends here, right before
    %% its access.
    erlang:put('$mce_shared_touched', true),
    Value.

%%--------------------------------------------------------------------
%% Receive, hibernation, calls computed at run time
%%--------------------------------------------------------------------

%% @doc A `receive' was reached: return the suspension that the translated
%% callers extend with their continuation frames on the way out.
-spec suspend(module(), atom(), [term()], timeout()) -> {'$mce_suspend', tuple(), []}.
suspend(Mod, Name, FreeVars, Timeout)
  when Timeout =:= infinity; is_integer(Timeout), Timeout >= 0 ->
    erlang:put('$mce_suspensions', [{Mod, Name} | erlang:get('$mce_suspensions')]),
    {'$mce_suspend', {Mod, Name, FreeVars, Timeout}, []};
suspend(_Mod, _Name, _FreeVars, _Timeout) ->
    erlang:error(timeout_value).

%% @doc erlang:hibernate/3: the process sleeps, its stack discarded, until
%% a message arrives; the message stays in the mailbox and the process goes
%% on as M:F(A).  The suspension is a receive that matches anything; the
%% executor drops the caller's frames when it wakes (mce_exec:step/2).
-spec hibernate(module(), atom(), [term()]) -> {'$mce_suspend', tuple(), []}.
hibernate(M, F, A) when is_atom(M), is_atom(F), is_list(A) ->
    suspend(?MODULE, '$mce_hibernated', [M, F, A], infinity);
hibernate(M, F, A) ->
    erlang:error(badarg, [M, F, A]).

%% @doc The receive of a hibernating process (see hibernate/3).
-spec '$mce_hibernated'(match | body, term(), module(), atom(), [term()]) -> term().
'$mce_hibernated'(match, _Msg, _M, _F, _A) ->
    true;
'$mce_hibernated'(body, _Msg, M, F, A) ->
    effect({keep_message, true}),
    apply(M, F, A).

%% @doc erlang:function_exported/3 from translated code.  OTP's behaviours
%% ask it of their callback modules before calling them (gen_server's
%% terminate/2, handle_info/2, code_change/3; gen_statem, gen_event,
%% supervisor).  The program's modules run as their translations
%% ('mce$M'), so whether the original module happens to be loaded in the
%% checker's VM is an accident (a test that called it, an entry checked
%% before): the BIF's answer would depend on it, and on a node of a
%% distributed check that never loaded it a gen_server would end without
%% calling terminate/2 where another node calls it (a wrong verdict, both
%% on one node and across nodes).  A module the checker translates counts
%% as loaded, as it is in a real run that calls it, and the answer is
%% whether it exports F/A; any other module gets the VM's answer.
-spec function_exported(term(), term(), term()) -> boolean().
function_exported(M, F, A) when is_atom(M), is_atom(F), is_integer(A), F =/= '$mce_info' ->
    erlang:function_exported(mce_translate:runtime_module(M), F, A);
function_exported(M, F, A) ->
    erlang:function_exported(M, F, A).

%% @doc erlang:module_loaded/1 from translated code: as
%% function_exported/3, a module the checker translates counts as loaded
%% (the program runs its translation, and the original is loaded in the
%% checker's VM only by accident); any other gets the VM's answer.
-spec module_loaded(term()) -> boolean().
module_loaded(M) when is_atom(M) ->
    case mce_translate:translatable(M) of
        true -> true;
        false -> erlang:module_loaded(M)
    end;
module_loaded(M) ->
    erlang:module_loaded(M).

%% @doc code:is_loaded/1 from translated code, by the same rule: a
%% translated module is loaded from where the code server would load it.
-spec is_loaded(term()) -> {file, file:filename() | preloaded | cover_compiled} | false.
is_loaded(M) when is_atom(M) ->
    case mce_translate:translatable(M) of
        true ->
            case code:which(M) of
                Path when is_list(Path) -> {file, Path};
                _ -> {file, atom_to_list(M) ++ ".beam"}
            end;
        false -> code:is_loaded(M)
    end;
is_loaded(M) ->
    code:is_loaded(M).

%% @doc code:ensure_loaded/1 from translated code.  Loading a module runs
%% its on_load function in the checker's VM: a module the checker
%% translates is never loaded, its translation is made instead (the
%% program runs that) and the answer is the one a real run gets; OTP's own
%% modules are loaded as asked.
-spec ensure_loaded(term()) -> {module, module()} | {error, term()}.
ensure_loaded(M) when is_atom(M) ->
    case mce_translate:runtime_module(M) of
        M -> code:ensure_loaded(M);
        _Translation -> {module, M}
    end;
ensure_loaded(M) ->
    code:ensure_loaded(M).

%% @doc `apply(Fun, Args)' and `Fun(Args...)' from translated code.
-spec apply(function(), [term()]) -> term().
apply(Fun, Args) ->
    erlang:apply(mce_sandbox:checked_fun(Fun, dynamic_call), Args).

%% @doc `M:F(Args)' with M or F computed at run time, and `apply/3'.
-spec apply(module(), atom(), [term()]) -> term().
apply(M, F, Args) when is_atom(M), is_atom(F), is_list(Args) ->
    case mce_stubs:lookup(M, F, length(Args)) of
        {ok, Stub} -> erlang:apply(Stub, Args);
        none -> apply_unstubbed(M, F, Args)
    end;
apply(M, F, Args) ->
    erlang:apply(M, F, Args).

apply_unstubbed(M, F, Args) ->
    case mce_rt_order:observes(M, F, length(Args)) of
        none when M =:= maps ->
            %% A higher-order function of maps: the maps it iterates are
            %% looked at first (the guard of map order), as
            %% mce_translate_order does for a call written in the source.
            Iterated = mce_rt_order:iterates_map(F, length(Args)),
            _ = [mce_rt_order:map_keys(lists:nth(I, Args)) || I <- Iterated],
            apply_classified(M, F, Args);
        none -> apply_classified(M, F, Args);
        _ -> mce_rt_order:call(M, F, Args)
    end.

apply_classified(M, F, Args) ->
    case mce_translate:classify_call(M, F, length(Args)) of
        {redirect, RM, RF} -> erlang:apply(RM, RF, Args);
        {model, MM, MF} -> erlang:apply(checker_call(fun() -> mce_translate:ensure(MM) end), MF, Args);
        {unsupported, Why} ->
            MFA = {M, F, length(Args)},
            fatal({mcerlang, {Why, MFA, dynamic_call, mce_stubs:hint(MFA)}});
        pure -> erlang:apply(M, F, Args);
        library_hof -> erlang:apply(checker_call(fun() -> mce_translate:ensure_library(M) end), F, Args);
        translate -> erlang:apply(checker_call(fun() -> mce_translate:ensure(M) end), F, Args)
    end.

%%--------------------------------------------------------------------
%% Process dictionary (part of the simulated process's state)
%%--------------------------------------------------------------------

-spec put(term(), term()) -> term().
put(Key, Value) ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', Dict#{Key => Value}),
    maps:get(Key, Dict, undefined).

-spec get(term()) -> term().
get(Key) ->
    maps:get(Key, erlang:get('$mce_dict'), undefined).

-spec get() -> [{term(), term()}].
get() ->
    maps:to_list(erlang:get('$mce_dict')).

-spec erase(term()) -> term().
erase(Key) ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', maps:remove(Key, Dict)),
    maps:get(Key, Dict, undefined).

-spec erase() -> [{term(), term()}].
erase() ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', #{}),
    maps:to_list(Dict).

-spec get_keys() -> [term()].
get_keys() ->
    maps:keys(erlang:get('$mce_dict')).

-spec get_keys(term()) -> [term()].
get_keys(Value) ->
    [K || {K, V} <- maps:to_list(erlang:get('$mce_dict')), V =:= Value].

%%--------------------------------------------------------------------
%% Stopping the check, stack traces
%%--------------------------------------------------------------------

%% @doc erlang:yield/0: a hint to the scheduler; every schedule is
%% explored anyway.
-spec erlang_yield() -> true.
erlang_yield() -> true.

%% @doc A call the checker cannot model yet was reached.  The error says
%% the way out: a stub (option `stubs', mce_stubs:hint/1).
-spec unsupported(mfa(), location(), atom()) -> no_return().
unsupported(MFA, Location, Why) ->
    fatal({mcerlang, {Why, MFA, Location, mce_stubs:hint(MFA)}}).

%% @doc Stops the check: the program reached something the checker cannot
%% model.  The reason is recorded before it is raised, so a `catch' in the
%% program cannot hide it: the executor stops the check after the step.
-spec fatal(term()) -> no_return().
fatal(Reason) ->
    case erlang:get('$mce_fatal') of
        undefined -> erlang:put('$mce_fatal', Reason);
        _ -> ok
    end,
    erlang:error(Reason).

%% @doc A stack trace as the program would see it on the real VM: original
%% module and function names, without the checker's frames.
-spec clean_stack([tuple()]) -> [tuple()].
clean_stack(Stack) ->
    mce_exec:caught_stack(Stack).

%% Errors of the checker itself (a module that cannot be translated, say)
%% raised while running program code.
checker_call(Fun) ->
    try Fun()
    catch error:{mcerlang, _} = E -> fatal(E)
    end.

%% @doc The modules of the runtime.  In a stack trace their frames of
%% modelled BIFs stand for the BIFs, and their helpers' frames for nothing
%% (mce_exec:clean_stack/1), as if the runtime were one module.
-spec modules() -> [module()].
modules() ->
    [mce_rt, mce_rt_signals, mce_rt_spawn, mce_rt_procs, mce_rt_io, mce_rt_node, mce_rt_time,
     mce_rt_netkernel, mce_rt_order].
