%% @doc The translator's disk cache: the compiled translation of a module
%% (its beam binary) and what the in-VM cache records about it, kept in a
%% directory between VMs, so that a fresh VM (the command line, a new EUnit
%% run) does not translate and compile OTP's gen_server, gen, proc_lib, ...
%% again (about 90% of a small check's time in a fresh VM).
%%
%% One file per translated module, `Dir/Module.mcet', holding one entry:
%%
%%   <<"MCET", Version:8, MD5(Payload):16/binary, Payload/binary>>
%%   Payload = term_to_binary(#{key, beam, blocking, deps, libs, forms})
%%
%% `key' is everything the translation depends on that is not in the
%% entry's own deps: the module, its original's MD5 and source file, the translator's
%% version (the MD5s of the translator's own modules, so any change to the
%% translator invalidates every entry without anyone bumping a number),
%% the OTP release and the versions of the erts, compiler and stdlib that
%% compiled it.  `deps' are the inputs that come from other modules: for
%% each module the translation refers to, whether it is translated and
%% which of its functions may block; mce_translate checks them against
%% the closure before loading any entry of it (an entry alone proves
%% nothing about its neighbours).
%%
%% Invariants: an entry is used only if its checksum, format version and
%% key match, and its beam is the module 'mce$M' expected; anything else
%% (truncated, corrupt, stale, another translator's) is a miss, never an
%% error, and is replaced by the next write.  Writes go to a temporary file
%% renamed over the entry, so concurrent checks and VMs sharing the
%% directory read either the old entry or the new one.  Entries are written
%% only by the translator, never on behalf of checked code.  A directory
%% that cannot be written is a silent fallback to translating (one warning
%% per VM and directory).  The directory holds at most one entry per
%% module name: a new key replaces the old entry.
%%
%% Where: `translation_cache => Dir | true | false' (option of
%% mcerlang:check/2 and friends; true, the default, is
%% filename:basedir(user_cache, "mcerlang")), given to the translator
%% through the process dictionary of the process translating (with/2), as
%% the executor's other per-check settings are.
-module(mce_translate_cache).

-export([with/2, use/1, dir/0, default_dir/0, read/2, write/3, clear/1, translator_modules/0]).

-define(MAGIC, "MCET").
-define(FORMAT, 1).
-define(EXT, ".mcet").
-define(KEY, '$mce_translation_cache').

%% What an entry holds besides its key (see the module doc).
-type entry() :: #{beam := binary(),
                   blocking := [mfa()],
                   deps := [{module(), boolean(), [mfa()]}],
                   libs := [module()],
                   forms := binary()}.
-export_type([entry/0]).

%% The translator modules whose code decides what a translation is.
-define(TRANSLATOR, [mce_translate, mce_translate_expand, mce_translate_blocking,
                     mce_translate_gen, mce_translate_syntax, mce_anf, mce_closure,
                     mce_sandbox, mce_translate_cache, mce_translate_order, mce_rt_order]).

%% @doc Runs Fun with the disk cache setting `Setting' (a directory,
%% true for the default one, false for none) for the translations it makes
%% in this process.
-spec with(file:filename() | boolean(), fun(() -> T)) -> T.
with(Setting, Fun) ->
    Outer = put(?KEY, Setting),
    try Fun()
    after
        case Outer of
            undefined -> erase(?KEY);
            _ -> put(?KEY, Outer)
        end
    end.

%% @doc The disk cache setting for the translations this process makes
%% from now on (a process that lives for one check or session).
-spec use(file:filename() | boolean()) -> ok.
use(Setting) ->
    put(?KEY, Setting),
    ok.

%% @doc The directory of this process's translations, or false.
-spec dir() -> file:filename() | false.
dir() ->
    case get(?KEY) of
        false -> false;
        Dir when is_list(Dir); is_binary(Dir) -> Dir;
        _ -> default_dir()
    end.

%% @doc The default directory: the user's cache directory.
-spec default_dir() -> file:filename().
default_dir() ->
    filename:basedir(user_cache, "mcerlang").

%% @doc The entry for module M whose original has MD5 `MD5', if the
%% directory holds a current and intact one.
-spec read(module(), binary()) -> {ok, entry()} | miss.
read(M, MD5) ->
    case dir() of
        false -> miss;
        Dir ->
            case file:read_file(file_name(Dir, M)) of
                {ok, Bin} -> decode(Bin, key(M, MD5), mce_translate:translated_name(M));
                {error, _} -> miss
            end
    end.

decode(<<?MAGIC, ?FORMAT:8, Sum:16/binary, Payload/binary>>, Key, TrM) ->
    case erlang:md5(Payload) =:= Sum of
        true -> valid(payload(Payload), Key, TrM);
        false -> miss
    end;
decode(_, _, _) ->
    miss.

%% The checksum matched, so the payload is what a translator wrote: a term
%% that does not decode is a translator's bug, but still only a miss.
payload(Payload) ->
    try binary_to_term(Payload)
    catch error:badarg -> undefined
    end.

valid(#{key := Key, beam := Beam, blocking := B, deps := D, libs := L, forms := F} = E, Key, TrM)
  when is_binary(Beam), is_list(B), is_list(D), is_list(L), is_binary(F) ->
    case beam_lib:version(Beam) of
        {ok, {TrM, _}} -> {ok, maps:with([beam, blocking, deps, libs, forms], E)};
        _ -> miss
    end;
valid(_, _, _) ->
    miss.

%% @doc Stores the entry for M (original's MD5 `MD5'); a directory that
%% cannot be written is warned about once and otherwise ignored.
-spec write(module(), binary(), entry()) -> ok.
write(M, MD5, Entry) ->
    case dir() of
        false -> ok;
        Dir ->
            Payload = term_to_binary(Entry#{key => key(M, MD5)}),
            Bin = <<?MAGIC, ?FORMAT:8, (erlang:md5(Payload))/binary, Payload/binary>>,
            File = file_name(Dir, M),
            Tmp = lists:flatten([File, ".tmp.", os:getpid(), $.,
                                 integer_to_list(erlang:unique_integer([positive]))]),
            case write_atomic(Dir, Tmp, File, Bin) of
                ok -> ok;
                {error, Why} ->
                    _ = file:delete(Tmp),
                    warn_once(Dir, Why)
            end
    end.

write_atomic(Dir, Tmp, File, Bin) ->
    maybe_ok([fun() -> filelib:ensure_path(Dir) end,
              fun() -> file:write_file(Tmp, Bin) end,
              fun() -> file:rename(Tmp, File) end]).

maybe_ok([]) -> ok;
maybe_ok([Step | Rest]) ->
    case Step() of
        ok -> maybe_ok(Rest);
        {error, _} = E -> E
    end.

warn_once(Dir, Why) ->
    Key = {?MODULE, warned, Dir},
    case persistent_term:get(Key, false) of
        true -> ok;
        false ->
            persistent_term:put(Key, true),
            logger:warning("mcerlang: cannot write the translation cache in ~ts (~p): "
                           "translating without it", [Dir, Why])
    end.

%% @doc Deletes every entry in Dir (and only entries).
-spec clear(file:filename()) -> ok.
clear(Dir) ->
    lists:foreach(fun(F) -> _ = file:delete(F) end,
                  filelib:wildcard(filename:join(Dir, "*" ?EXT))
                  ++ filelib:wildcard(filename:join(Dir, "*" ?EXT ".tmp.*"))).

%%--------------------------------------------------------------------

key(M, MD5) ->
    {M, MD5, source(M), translator_version(), otp()}.

%% The source file M was compiled from: the translation names it in its
%% '$mce_info' (for traces), and the same code compiled elsewhere has the
%% same MD5.
source(M) ->
    Info = case erlang:module_loaded(M) of
               true -> {ok, {M, [{compile_info, M:module_info(compile)}]}};
               false -> beam_lib:chunks(code:which(M), [compile_info])
           end,
    case Info of
        {ok, {M, [{compile_info, Compile}]}} -> proplists:get_value(source, Compile);
        _ -> undefined
    end.

translator_version() ->
    erlang:md5(term_to_binary([Mod:module_info(md5) || Mod <- ?TRANSLATOR])).

%% @doc The modules whose code decides what a translation is: a change to
%% any of them invalidates every entry.
-spec translator_modules() -> [module()].
translator_modules() ->
    ?TRANSLATOR.

%% The runtime and compiler the beam was made by and for.
otp() ->
    {erlang:system_info(otp_release), erlang:system_info(version),
     [filename:basename(code:lib_dir(App)) || App <- [compiler, stdlib, kernel]]}.

%% One file per module name.  Names outside [A-Za-z0-9_@] are written in
%% hexadecimal, so no module name reaches outside the directory.
file_name(Dir, M) ->
    Name = atom_to_list(M),
    Safe = lists:all(fun(C) -> (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z)
                                   orelse (C >= $0 andalso C =< $9) orelse C =:= $_ orelse C =:= $@
                     end, Name),
    Base = case Safe andalso Name =/= "" of
               true -> Name;
               false -> "%" ++ binary_to_list(binary:encode_hex(atom_to_binary(M)))
           end,
    filename:join(Dir, Base ++ ?EXT).
