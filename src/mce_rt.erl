%% @doc The runtime calls that translated code makes instead of the
%% process BIFs.
%%
%% Translated code runs inside the executor process (see mce_exec).  It must
%% never touch real processes: every side effect is recorded as an effect of
%% the current step, and the C runtime applies the effects to the successor
%% state.  The step's context lives in the executor's process dictionary
%% under '$mce_*' keys, set up and torn down by mce_exec for each step.
-module(mce_rt).

-export([self/0, node/0, send/2, spawn/1, spawn/3, spawn_link/1, spawn_link/3,
         suspend/4, apply/2, apply/3, output/1, output/2, output/3, unsupported/3,
         fatal/1, clean_stack/1]).

-type location() :: {module(), atom(), arity(), non_neg_integer()}.
-export_type([location/0]).

-spec self() -> pid().
self() ->
    get('$mce_self').

-spec node() -> node().
node() ->
    mce_pid:node_name().

%% @doc `To ! Msg'.  Like the BIF it returns Msg and raises badarg for a
%% destination that is not a pid or a registered name.  Names cannot be
%% registered yet, so a name is always unregistered (badarg, as on the VM).
-spec send(term(), Msg) -> Msg.
send(To, Msg) ->
    case mce_pid:number(To) of
        {ok, N} ->
            effect({send, N, Msg}),
            Msg;
        error when is_pid(To) ->
            fatal({mcerlang, {send_to_real_process, To}});
        error ->
            erlang:error(badarg, [To, Msg])
    end.

-spec spawn(function()) -> pid().
spawn(Fun) -> spawn_fun(Fun, false).

-spec spawn_link(function()) -> pid().
spawn_link(Fun) -> spawn_fun(Fun, true).

-spec spawn(module(), atom(), [term()]) -> pid().
spawn(M, F, A) -> spawn_mfa(M, F, A, false).

-spec spawn_link(module(), atom(), [term()]) -> pid().
spawn_link(M, F, A) -> spawn_mfa(M, F, A, true).

spawn_fun(Fun, Link) when is_function(Fun, 0) ->
    new_process(checker_call(fun() -> mce_translate:init_call(Fun) end), Link);
spawn_fun(Fun, _Link) ->
    erlang:error(badarg, [Fun]).

spawn_mfa(M, F, A, Link) when is_atom(M), is_atom(F), is_list(A) ->
    new_process(checker_call(fun() -> mce_translate:init_call({M, F, A}) end), Link);
spawn_mfa(M, F, A, _Link) ->
    erlang:error(badarg, [M, F, A]).

new_process(InitCall, Link) ->
    case mce_nif:fresh_pid(get('$mce_search')) of
        N when is_integer(N) ->
            effect({spawn, N, InitCall, Link}),
            mce_pid:term(N);
        {error, Where, Why} ->
            fatal({mcerlang_internal, Where, Why})
    end.

%% @doc A `receive' was reached: return the suspension that the translated
%% callers extend with their continuation frames on the way out.
-spec suspend(module(), atom(), [term()], timeout()) -> {'$mce_suspend', tuple(), []}.
suspend(Mod, Name, FreeVars, Timeout)
  when Timeout =:= infinity; is_integer(Timeout), Timeout >= 0 ->
    put('$mce_suspensions', [{Mod, Name} | get('$mce_suspensions')]),
    {'$mce_suspend', {Mod, Name, FreeVars, Timeout}, []};
suspend(_Mod, _Name, _FreeVars, _Timeout) ->
    erlang:error(timeout_value).

%% @doc `apply(Fun, Args)' and `Fun(Args...)' from translated code.
-spec apply(function(), [term()]) -> term().
apply(Fun, Args) ->
    erlang:apply(Fun, Args).

%% @doc `M:F(Args)' with M or F computed at run time, and `apply/3'.
-spec apply(module(), atom(), [term()]) -> term().
apply(M, F, Args) when is_atom(M), is_atom(F), is_list(Args) ->
    case mce_translate:classify_call(M, F, length(Args)) of
        {redirect, RM, RF} -> erlang:apply(RM, RF, Args);
        {unsupported, Why} -> fatal({mcerlang, {Why, {M, F, length(Args)}, dynamic_call}});
        pure -> erlang:apply(M, F, Args);
        library_hof -> erlang:apply(checker_call(fun() -> mce_translate:ensure_library(M) end), F, Args);
        translate -> erlang:apply(checker_call(fun() -> mce_translate:ensure(M) end), F, Args)
    end;
apply(M, F, Args) ->
    erlang:apply(M, F, Args).

%% @doc io:format/1 and io:fwrite/1.
-spec output(io:format()) -> ok.
output(Format) ->
    output(Format, []).

%% @doc io:format/1,2 and io:fwrite/1,2: the text is recorded with the step
%% (and shown in counterexamples) instead of being printed during search.
-spec output(io:format(), [term()]) -> ok.
output(Format, Args) ->
    Text = lists:flatten(io_lib:format(Format, Args)),
    put('$mce_output', [Text | get('$mce_output')]),
    ok.

%% @doc io:format/3 and io:fwrite/3: the device is ignored.
-spec output(term(), io:format(), [term()]) -> ok.
output(_Device, Format, Args) ->
    output(Format, Args).

%% @doc A call the checker cannot model yet was reached.
-spec unsupported(mfa(), location(), atom()) -> no_return().
unsupported(MFA, Location, Why) ->
    fatal({mcerlang, {Why, MFA, Location}}).

%% @doc Stops the check: the program reached something the checker cannot
%% model.  The reason is recorded before it is raised, so a `catch' in the
%% program cannot hide it: the executor stops the check after the step.
-spec fatal(term()) -> no_return().
fatal(Reason) ->
    case get('$mce_fatal') of
        undefined -> put('$mce_fatal', Reason);
        _ -> ok
    end,
    erlang:error(Reason).

%% @doc A stack trace as the program would see it on the real VM: original
%% module and function names, without the checker's frames.
-spec clean_stack([tuple()]) -> [tuple()].
clean_stack(Stack) ->
    mce_exec:clean_stack(Stack).

%% Errors of the checker itself (a module that cannot be translated, say)
%% raised while running program code.
checker_call(Fun) ->
    try Fun()
    catch error:{mcerlang, _} = E -> fatal(E)
    end.

effect(E) ->
    put('$mce_effects', [E | get('$mce_effects')]).
