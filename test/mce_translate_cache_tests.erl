%% The translator's disk cache (mce_translate_cache), through the public
%% API: each check runs in a fresh VM (a peer with this VM's code paths),
%% as the command line and a new EUnit run do, since the VM's own cache
%% (persistent_term) would answer first in this one.  Whether a VM
%% translated is counted with call_count on the translator's code
%% generator and on compile:forms/2.
-module(mce_translate_cache_tests).

-include_lib("eunit/include/eunit.hrl").

-export([check_counted/2, check_changed/3, check_unwritable/2, log/2]).

%% OTP's gen_server, gen, proc_lib, sys and the library translations:
%% the closure a fresh VM spends most of a small check translating.
-define(ENTRY, {counter_server, start, [1, 1]}).

%%--------------------------------------------------------------------
%% Fresh VMs
%%--------------------------------------------------------------------

%% Two VMs translating at once into the same directory, then a third VM
%% that translates nothing and gets the same result.
shared_directory_test_() ->
    {timeout, 60,
     fun() ->
             Dir = tmp_dir("shared"),
             Self = self(),
             Cold = [spawn_link(fun() -> Self ! {self(), in_peer(check_counted, [?ENTRY, Dir])} end)
                     || _ <- [1, 2]],
             [{R1, C1}, {R2, C2}] = [receive {P, R} -> R end || P <- Cold],
             ?assertEqual(R1, R2),
             ?assertMatch({error, _, _, _}, R1),
             ?assert(C1 > 0 andalso C2 > 0),
             ?assertMatch([_ | _], entries(Dir)),
             ?assertEqual([], filelib:wildcard(filename:join(Dir, "*.tmp.*"))),
             ?assertEqual({R1, 0}, in_peer(check_counted, [?ENTRY, Dir]))
     end}.

%% A module changed and recompiled is translated again, in the VM that
%% checked the old one and in a fresh VM reading the directory.
changed_module_test_() ->
    {timeout, 60,
     fun() ->
             Dir = tmp_dir("changed"),
             Src = tmp_dir("changed_src"),
             {R1, R2} = in_peer(check_changed, [Src, Dir, true]),
             ?assertMatch({ok, _, _}, R1),
             ?assertMatch({error, _, _, _}, R2),
             %% The directory now holds the second version: a fresh VM
             %% with it loaded translates nothing.
             ?assertEqual({R2, 0}, in_peer(check_changed, [Src, Dir, false]))
     end}.

%% Corrupt, truncated and foreign entries are ignored and rewritten; a
%% directory that cannot be written leaves the check as it was.
corrupt_entries_test_() ->
    {timeout, 60,
     fun() ->
             Dir = tmp_dir("corrupt"),
             {Good, _} = in_peer(check_counted, [?ENTRY, Dir]),
             Files = entries(Dir),
             Contents = [{F, element(2, file:read_file(F))} || F <- Files],
             [A, B, C, D | _] = Files,
             {ok, BinA} = file:read_file(A),
             ok = file:write_file(A, binary:part(BinA, 0, byte_size(BinA) div 2)),
             {ok, BinB} = file:read_file(B),
             Last = byte_size(BinB) - 1,
             <<Head:Last/binary, Byte>> = BinB,
             ok = file:write_file(B, <<Head/binary, (Byte bxor 1)>>),
             ok = file:write_file(C, <<>>),
             {ok, BinD} = file:read_file(D),
             ok = file:write_file(D, <<"MCET", 99, BinD/binary>>),
             {Again, Count} = in_peer(check_counted, [?ENTRY, Dir]),
             ?assertEqual(Good, Again),
             ?assert(Count > 0),
             %% Rewritten as they were.
             ?assertEqual(Contents, [{F, element(2, file:read_file(F))} || F <- Files]),
             %% Not a directory: translated, the same result, and one
             %% warning for two checks that could not write.
             NotDir = filename:join(Dir, "counter_server.mcet"),
             ?assertMatch({Good, {ok, _, _}, 1}, in_peer(check_unwritable, [?ENTRY, NotDir]))
     end}.

%% translation_cache => false writes nothing, not even in the default
%% directory (the user's cache directory, here under XDG_CACHE_HOME),
%% which the default setting fills.
no_cache_test_() ->
    {timeout, 60,
     fun() ->
             Home = tmp_dir("xdg"),
             Env = [{"XDG_CACHE_HOME", Home}],
             {Result, _} = in_peer(check_counted, [?ENTRY, false], Env),
             ?assertEqual([], filelib:wildcard(filename:join(Home, "**"))),
             {Result, _} = in_peer(check_counted, [?ENTRY, true], Env),
             Default = filename:join(Home, "mcerlang"),
             ?assertMatch([_ | _], entries(Default)),
             ?assertEqual({Result, 0}, in_peer(check_counted, [?ENTRY, true], Env)),
             %% clear_translation_cache/0 empties the default directory.
             ok = in_peer(mcerlang, clear_translation_cache, [], Env),
             ?assertEqual([], entries(Default))
     end}.

%% Every module of the translator (mce_translate*, and what they call to
%% classify and rewrite) is part of the translator's version.
translator_version_test() ->
    ok = case application:load(mcerlang) of
             ok -> ok;
             {error, {already_loaded, mcerlang}} -> ok
         end,
    {ok, Modules} = application:get_key(mcerlang, modules),
    Translator = [M || M <- Modules, lists:prefix("mce_translate", atom_to_list(M))]
        ++ [mce_anf, mce_closure, mce_sandbox],
    ?assertEqual([], Translator -- mce_translate_cache:translator_modules()).

bad_option_test() ->
    ?assertError({mcerlang, {bad_option_value, translation_cache, 42}},
                 mcerlang:check(?ENTRY, #{translation_cache => 42})).

%%--------------------------------------------------------------------
%% Run in the peers
%%--------------------------------------------------------------------

%% The check's result, in short, and how many modules this VM translated.
-spec check_counted(mcerlang:entry(), file:filename() | boolean()) -> term().
check_counted(Entry, Cache) ->
    count_translations(),
    Result = short(mcerlang:check(Entry, #{translation_cache => Cache, progress => false})),
    {Result, translations()}.

%% Checks a module of its own, mce_cache_tmod: if First, its first version
%% (which holds), then its second (a violation) in the same VM; else the
%% second version, already compiled, only.
-spec check_changed(file:filename(), file:filename(), boolean()) -> term().
check_changed(Src, Dir, true) ->
    true = code:add_patha(Src),
    R1 = check_version(Src, Dir, "ok"),
    R2 = check_version(Src, Dir, "exit(changed)"),
    {R1, R2};
check_changed(Src, Dir, false) ->
    true = code:add_patha(Src),
    count_translations(),
    {module, mce_cache_tmod} = code:ensure_loaded(mce_cache_tmod),
    {short(mcerlang:check({mce_cache_tmod, start, []},
                          #{translation_cache => Dir, progress => false})),
     translations()}.

check_version(Src, Dir, Body) ->
    File = filename:join(Src, "mce_cache_tmod.erl"),
    ok = file:write_file(File, ["-module(mce_cache_tmod).\n-export([start/0]).\n"
                                "start() -> P = spawn(fun() -> receive go -> ", Body, " end end),\n"
                                "    P ! go.\n"]),
    {ok, mce_cache_tmod} = compile:file(File, [debug_info, {outdir, Src}]),
    _ = code:purge(mce_cache_tmod),
    {module, mce_cache_tmod} = code:load_file(mce_cache_tmod),
    short(mcerlang:check({mce_cache_tmod, start, []}, #{translation_cache => Dir, progress => false})).

%% Two checks (the second of another program, so that it translates and
%% writes too) with an unwritable directory: their results and the number
%% of warnings logged.
-spec check_unwritable(mcerlang:entry(), file:filename()) -> term().
check_unwritable(Entry, Dir) ->
    ok = logger:add_handler(?MODULE, ?MODULE, #{config => self()}),
    Opts = #{translation_cache => Dir, progress => false},
    R1 = short(mcerlang:check(Entry, Opts)),
    R2 = short(mcerlang:check({pingpong, start, [2]}, Opts)),
    ok = logger:remove_handler(?MODULE),
    {R1, R2, warnings(0)}.

warnings(N) ->
    receive {?MODULE, warning} -> warnings(N + 1)
    after 0 -> N
    end.

%% A logger handler (in the peer): counts the warnings.
-spec log(logger:log_event(), logger:handler_config()) -> ok.
log(#{level := warning}, #{config := Pid}) ->
    Pid ! {?MODULE, warning},
    ok;
log(_, _) ->
    ok.

count_translations() ->
    {module, _} = code:ensure_loaded(mce_translate_gen),
    {module, _} = code:ensure_loaded(compile),
    1 = erlang:trace_pattern({mce_translate_gen, translate_module, 3}, true, [call_count]),
    1 = erlang:trace_pattern({compile, forms, 2}, true, [call_count]).

translations() ->
    {call_count, N} = erlang:trace_info({mce_translate_gen, translate_module, 3}, call_count),
    {call_count, N} = erlang:trace_info({compile, forms, 2}, call_count),
    N.

short({ok, #{states := S, transitions := T}}) -> {ok, S, T};
short({error, #{violation := V, stats := #{states := S, transitions := T}}}) -> {error, V, S, T};
short(Other) -> Other.

%%--------------------------------------------------------------------

in_peer(F, Args) ->
    in_peer(F, Args, []).

in_peer(F, Args, Env) ->
    in_peer(?MODULE, F, Args, Env).

in_peer(M, F, Args, Env) ->
    Paths = lists:append([["-pa", D] || D <- code:get_path(), D =/= "."]),
    {ok, Peer, _} = peer:start_link(#{connection => standard_io, args => Paths, env => Env}),
    try peer:call(Peer, M, F, Args, 30000)
    after
        peer:stop(Peer)
    end.

entries(Dir) ->
    lists:sort(filelib:wildcard(filename:join(Dir, "*.mcet"))).

tmp_dir(Name) ->
    Base = case os:getenv("TMPDIR") of
               false -> "/tmp";
               T -> T
           end,
    Dir = filename:join(Base, lists:flatten(io_lib:format("mce_cache_~ts_~s_~b",
                                                          [Name, os:getpid(),
                                                           erlang:unique_integer([positive])]))),
    ok = filelib:ensure_path(Dir),
    Dir.
