%% @doc User stubs (option `stubs => #{{M, F, A} => Fun}'): a call to
%% M:F/A from checked code runs Fun inside the model instead.
%%
%% How a stub reaches translated code:
%%
%%   static calls   mce_translate_expand rewrites `M:F(Args)' (and a local
%%                  call inside M, an auto-imported BIF, `fun M:F/A',
%%                  `fun F/A' inside M) into `(mce_stubs:stub({M, F, A}))(Args)':
%%                  a call of a computed fun, which the blocking analysis
%%                  counts as a call that may block and the code generator
%%                  gives a frame, so the stub may send, receive and block;
%%   dynamic calls  apply/3, erlang:make_fun/3, spawn(M, F, Args) and
%%                  external funs called at run time ask lookup/3
%%                  (mce_rt:apply/3, mce_sandbox) before they classify.
%%
%% The stub's fun is translated like checked code before the search
%% starts (install/1, in the check's worker): `fun Mod:Fun/A' of a user
%% module becomes the translation's, a closure compiled into a user module
%% (an EUnit test module) or typed in the shell becomes the same fun
%% expression of a translated module (mce_sandbox:entry_args/1, as funs in
%% an entry's arguments).  Its steps are the calling process's steps.
%%
%% The translation depends on which calls are stubbed: the set of stubbed
%% {M, F, A} is part of the translation cache's key (digest/0, mixed into
%% the module's MD5 by mce_translate), so a module translated with one set
%% is never used with another.  The set is held in the process dictionary
%% of the process that translates and runs the check (with_keys/2 in the
%% caller while the entry is translated, install/1 in the worker).
%%
%% Invariant: in the worker, `'$mce_stubs'' maps each stubbed {M, F, A} to
%% a fun of arity A that runs as translated code (a fun of a translated
%% module or of a pure OTP module), never to a fun that would run checked
%% code untranslated.
-module(mce_stubs).

-export([option/1, with_keys/2, install/1, digest/0, stub/1, lookup/3, hint/1]).

-define(KEY, '$mce_stubs').
-define(DIGEST, '$mce_stubs_digest').

%%====================================================================
%% The option
%%====================================================================

%% @doc The option's value, checked: keys `{M, F, A}' (atoms, 0..255),
%% funs of arity A, no BIF the model must keep.
-spec option(term()) -> #{mfa() => function()}.
option(Stubs) when is_map(Stubs) ->
    maps:foreach(fun check/2, Stubs),
    Stubs;
option(Other) ->
    erlang:error({mcerlang, {bad_option_value, stubs, Other,
                             "expected #{{Module, Function, Arity} => fun of that arity}"}}).

check({M, F, A} = MFA, Fun) when is_atom(M), is_atom(F), is_integer(A), A >= 0, A =< 255 ->
    case kept(M, F, A) of
        false -> ok;
        true -> bad(MFA, Fun, "the model keeps this call: it cannot be stubbed")
    end,
    is_function(Fun, A) orelse
        bad(MFA, Fun, io_lib:format("expected a fun of arity ~b", [A])),
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {module, FM} = erlang:fun_info(Fun, module),
            {name, FF} = erlang:fun_info(Fun, name),
            {FM, FF, A} =/= MFA orelse bad(MFA, Fun, "a stub cannot be the call it stubs"),
            _ = code:ensure_loaded(FM),
            erlang:function_exported(FM, FF, A) orelse
                bad(MFA, Fun, io_lib:format("~ts:~ts/~b is not exported by a module on the code path",
                                            [FM, FF, A]));
        {type, local} -> ok
    end;
check(Key, _Fun) ->
    erlang:error({mcerlang, {bad_option_value, stubs, Key,
                             "a stub's key is {Module, Function, Arity}: two atoms and 0..255"}}).

bad(MFA, Fun, Why) ->
    erlang:error({mcerlang, {bad_stub, MFA, Fun, lists:flatten(Why)}}).

%% Calls the model must keep for itself: the process BIFs it models
%% (send, spawn, link, monitor, self, ...), apply and the atom and fun
%% makers of the sandbox, guard BIFs and operators (a guard cannot call a
%% stub), mcerlang's own calls and the checker's modules.
kept(erlang, F, A) ->
    erl_internal:guard_bif(F, A) orelse erl_internal:arith_op(F, A) orelse
        erl_internal:comp_op(F, A) orelse erl_internal:bool_op(F, A) orelse
        erl_internal:list_op(F, A) orelse erl_internal:send_op(F, A) orelse
        case mce_translate:classify_call(erlang, F, A) of
            {redirect, _, _} -> true;
            _ -> lists:member(F, [spawn, spawn_link, spawn_monitor, spawn_opt, spawn_request,
                                  send, apply, make_fun, hibernate, yield])
        end;
kept(M, _F, _A) ->
    M =:= mcerlang orelse lists:prefix("mce_", atom_to_list(M))
        orelse lists:prefix("mce$", atom_to_list(M)).

%%====================================================================
%% The stubbed set, for the translator
%%====================================================================

%% @doc Runs Fun with the stubbed set of `Stubs' for the translations it
%% makes in this process (the entry's, before the check's worker starts).
-spec with_keys(#{mfa() => function()}, fun(() -> T)) -> T.
with_keys(Stubs, Fun) ->
    Outer = {get(?KEY), get(?DIGEST)},
    set(Stubs),
    try Fun()
    after
        {Map, Digest} = Outer,
        restore(?KEY, Map),
        restore(?DIGEST, Digest)
    end.

restore(Key, undefined) -> erase(Key);
restore(Key, Value) -> put(Key, Value).

set(Stubs) ->
    put(?KEY, Stubs),
    case map_size(Stubs) of
        0 -> erase(?DIGEST);
        _ -> put(?DIGEST, erlang:md5(term_to_binary(lists:sort(maps:keys(Stubs)))))
    end.

%% @doc The digest of the stubbed set that translations made now depend
%% on; `none' without stubs (translations are then those of a check
%% without the option).
-spec digest() -> binary() | none.
digest() ->
    case get(?DIGEST) of
        undefined -> none;
        D -> D
    end.

%% @doc Makes the stubs of a check's worker: each fun translated (see the
%% module doc), the set in force for what the worker translates.
-spec install(#{mfa() => function()}) -> ok.
install(Stubs) ->
    set(Stubs),
    Translated = maps:map(fun(MFA, Fun) ->
                                  try mce_sandbox:entry_args(Fun)
                                  catch error:{mcerlang, Why} ->
                                          erlang:error({mcerlang, {bad_stub, MFA, Fun, Why}})
                                  end
                          end, Stubs),
    put(?KEY, Translated),
    ok.

%%====================================================================
%% At run time
%%====================================================================

%% @doc The fun that runs in place of M:F/A (a call the translator
%% rewrote).
-spec stub(mfa()) -> function().
stub(MFA) ->
    case get(?KEY) of
        #{MFA := Fun} -> Fun;
        _ -> mce_rt:fatal({mcerlang, {stub_missing, MFA,
                                      "code translated with this stub ran in a check without it "
                                      "(two checks with different stubs at once in one VM?)"}})
    end.

%% @doc The stub of M:F/A, if the check has one (dynamic calls).
-spec lookup(atom(), atom(), arity()) -> {ok, function()} | none.
lookup(M, F, A) ->
    case get(?KEY) of
        #{{M, F, A} := Fun} -> {ok, Fun};
        _ -> none
    end.

%% @doc What an unsupported call's error says about the way out.
-spec hint(mfa()) -> string().
hint({M, F, A} = MFA) ->
    case kept(M, F, A) of
        true -> "the model keeps this call and cannot run it";
        false ->
            lists:flatten(
              io_lib:format("not modelled: give the check a stub, option "
                            "stubs => #{~tp => fun ...} (command line: --stub ~ts:~ts/~b=Mod:Fun)",
                            [MFA, M, F, A]))
    end.
