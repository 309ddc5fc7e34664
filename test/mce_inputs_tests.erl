%% Untrusted and bad input: counterexample files (load/1, replay/2), the
%% command line's entry, and every API function given bad arguments.
-module(mce_inputs_tests).

-include_lib("eunit/include/eunit.hrl").

-define(OPTS, #{progress => false}).

tmp(Name) ->
    Dir = filename:join(["/tmp", "mce_inputs_tests_" ++ os:getpid()]),
    ok = filelib:ensure_path(Dir),
    filename:join(Dir, Name).

%%--------------------------------------------------------------------
%% Counterexample files
%%--------------------------------------------------------------------

%% A fun in a counterexample file's options is never run: replay refuses
%% it until the option is given again.  The fun here stands for one an
%% attacker wrote (it reports that it ran).
file_funs_never_run_test_() ->
    {timeout, 60,
     fun() ->
             Self = self(),
             Final = fun(#{processes := Ps}) -> [V || #{props := Props} <- Ps, {final, V} <- Props] end,
             Two = fun(View) -> Self ! invariant_ran,
                                lists:all(fun(V) -> V =:= 2 end, Final(View)) end,
             {error, Cex} = mcerlang:check({tprog_props, counter_race, []}, ?OPTS#{invariant => Two}),
             flush(invariant_ran),
             File = tmp("fun.cex"),
             ok = mcerlang:save(Cex, File),
             {ok, Loaded} = mcerlang:load(File),
             ?assertMatch(#{options := #{invariant := {'$mcerlang_fun_from_file', _}}}, Loaded),
             ?assertError({mcerlang, {fun_from_file, invariant, _, _}}, mcerlang:replay(Loaded)),
             ?assertError({mcerlang, {fun_from_file, invariant, _, _}}, mcerlang:debug(Loaded)),
             receive invariant_ran -> ?assert(false) after 0 -> ok end,
             %% Given again by the user, it runs.
             ?assertMatch({ok, _}, mcerlang:replay(Loaded, #{invariant => Two})),
             ?assertMatch({ok, _}, mcerlang:replay(Loaded, [{invariant, Two}])),
             %% A fun entry (with its arguments) is refused too.
             Forged = Cex#{entry => fun() -> Self ! entry_ran end},
             ok = mcerlang:save(Forged, File),
             {ok, LoadedFun} = mcerlang:load(File),
             ?assertError({mcerlang, {fun_from_file, entry, _, _}},
                          mcerlang:replay(LoadedFun, #{invariant => Two})),
             receive entry_ran -> ?assert(false) after 0 -> ok end,
             ?assertError({mcerlang, {bad_options, x}}, mcerlang:replay(Loaded, x))
     end}.

flush(Msg) ->
    receive Msg -> flush(Msg) after 0 -> ok end.

%% The same through the command line: a saved invariant is not run by
%% `replay' until given again with --invariant.
cli_replay_file_funs_test_() ->
    {timeout, 120,
     fun() ->
             Saved = tmp("cli_fun.cex"),
             Inv = "fun(#{processes := Ps}) -> length(Ps) < 2 end",
             {1, _} = mce_cli_tests:run_cli(["check", "--no-progress", "--invariant", Inv, "--save", Saved,
                                             "examples/pingpong.erl", "pingpong:start(1)"]),
             {2, Refused} = mce_cli_tests:run_cli(["replay", "examples/pingpong.erl", Saved]),
             ?assertNotEqual(nomatch, string:find(Refused, "fun_from_file")),
             {1, Again} = mce_cli_tests:run_cli(["replay", "--invariant", Inv, "examples/pingpong.erl", Saved]),
             ?assertNotEqual(nomatch, string:find(Again, "replay: the counterexample reproduces"))
     end}.

%% A compressed term declares its inflated size: a file declaring more
%% than the bound is refused before inflating.  (1 MB inflating to 1 GiB
%% used to take 40 s and 2 GB; here 300 MiB of zeros, compressed in
%% chunks.)
decompression_bomb_test_() ->
    {timeout, 60,
     fun() ->
             Size = 300 bsl 20,
             Z = zlib:open(),
             ok = zlib:deflateInit(Z, default),
             Chunk = <<0:(1 bsl 23)>>,
             Deflated = [zlib:deflate(Z, [<<109, Size:32>>]),
                         [zlib:deflate(Z, Chunk) || _ <- lists:seq(1, Size div byte_size(Chunk))],
                         zlib:deflate(Z, <<>>, finish)],
             zlib:close(Z),
             Term = iolist_to_binary([<<131, 80, (Size + 5):32>>, Deflated]),
             ?assert(byte_size(Term) < 1 bsl 20),
             File = tmp("bomb.cex"),
             ok = file:write_file(File, [<<"mcerlang-counterexample 1 0\n">>, Term]),
             {Micros, Result} = timer:tc(mcerlang, load, [File]),
             ?assertEqual({error, {bad_counterexample_file, File,
                                   "the term inflates to more than 256 MiB"}}, Result),
             ?assert(Micros < 100000)
     end}.

%% Files too large, and files that are not regular (a device would be
%% read forever), are refused without reading them.
file_size_bounds_test() ->
    Big = tmp("big.cex"),
    {ok, F} = file:open(Big, [write]),
    {ok, _} = file:position(F, (64 bsl 20) + 1),
    ok = file:truncate(F),
    ok = file:close(F),
    ?assertEqual({error, {bad_counterexample_file, Big, "larger than 64 MiB"}}, mcerlang:load(Big)),
    ?assertEqual({error, {bad_counterexample_file, "/dev/zero", "not a regular file"}},
                 mcerlang:load("/dev/zero")),
    %% Atoms are never collected: a file naming more than 1000 unknown
    %% ones is refused, and none of them is made.
    Names = [iolist_to_binary(["mce_inputs_unknown_", integer_to_list(I)]) || I <- lists:seq(1, 1001)],
    Atoms = iolist_to_binary([<<131, 108, 1001:32>>, [<<119, (byte_size(N)), N/binary>> || N <- Names], 106]),
    Unknown = tmp("atoms.cex"),
    ok = file:write_file(Unknown, [<<"mcerlang-counterexample 1 0\n">>, Atoms]),
    ?assertEqual({error, {bad_counterexample_file, Unknown,
                          "names more than 1000 atoms this node does not know"}}, mcerlang:load(Unknown)),
    ?assertError(badarg, binary_to_existing_atom(lists:last(Names))),
    %% Lengths that lie, truncated terms, trailing garbage in the header.
    [?assertMatch({error, {bad_counterexample_file, _, "damaged contents"}},
                  (fun() -> ok = file:write_file(Unknown, [<<"mcerlang-counterexample 1 ">>, B]),
                            mcerlang:load(Unknown) end)())
     || B <- [<<"0\n", 131, 108, 255, 255, 255, 255, 106>>, <<"0\n", 131, 109, 0, 0, 0, 9, 1>>,
              <<"x\n", 131, 106>>, <<"99\n", 131, 106>>, <<"-1\n", 131, 106>>,
              <<"0\n", 131, 80, 0, 0, 0, 10, 1, 2, 3>>, <<"0\n", 131, 100, 1, 0, "a">>,
              <<"0\n", 131, 106>>]].

%% The command line's entry arguments are literal terms, never evaluated.
cli_entry_literal_test() ->
    Marker = tmp("pwned"),
    Call = "pingpong:start(os:cmd(\"touch " ++ Marker ++ "\"))",
    ?assertEqual(2, mce_cli:run(["check", "--no-progress", Call])),
    ?assertNot(filelib:is_file(Marker)),
    ?assertEqual(2, mce_cli:run(["check", "--no-progress", "pingpong:start(1 + 2)"])),
    ?assertEqual(0, mce_cli:run(["check", "--no-progress", "--quiet", "pingpong:start(3)"])).

%%--------------------------------------------------------------------
%% Every API function, bad arguments
%%--------------------------------------------------------------------

%% Values no option, entry, file name or options list accepts (most of
%% them), and the edge cases of each kind: 2^64 does not fit the NIF's
%% 64-bit counts, improper lists crash length/1 and lists:*, a
%% non-Latin-1 atom crashes latin1 encodings, 2^40 bits do not fit in
%% memory.
bad_values() ->
    [foo, -1, 0, 1 bsl 64, 1.5, "str", <<"bin">>, [a | b], [{a, b} | c], {x}, fun(_) -> ok end,
     fun(_, _, _) -> ok end, list_to_atom([1000 | "@h"]), self(), #{x => y}, [1 bsl 64],
     [deadlock | abnormal_exit], [nonode@nohost | x], {bitstate, 1 bsl 40}, {bitstate, 1 bsl 64},
     #{kill => 1 bsl 64}, [{a, [{b, c} | d]}], [{a, #{}} | x], lists:duplicate(65, 'a@b'),
     "[] (", [1, 2, 3]].

check_options() ->
    [property, treat_as_normal, max_states, max_depth, max_time, max_reductions, memory, shortest,
     monitor, invariant, mailbox_bound, ltl, predicates, fairness, progress, timeouts, table_size,
     table, nodes, delivery, granularity, env, faults, no_such_option].

%% Runs F in a process of its own under a time limit: a call that
%% returns, or raises {mcerlang, Reason} naming the culprit (not a crash
%% of the checker reported as one), is well-behaved.
outcome(F) ->
    Self = self(),
    {Pid, Ref} = spawn_monitor(fun() -> Self ! {self(), try {returned, F()} catch C:R -> {C, R} end} end),
    receive
        {Pid, R} -> erlang:demonitor(Ref, [flush]), R;
        {'DOWN', Ref, _, _, Why} -> {died, Why}
    after 20000 -> exit(Pid, kill), timeout
    end.

file_name(V) ->
    is_atom(V) orelse is_binary(V) orelse io_lib:deep_char_list(V).

well_behaved({error, {mcerlang, {checker_crashed, _}}}) -> false;
well_behaved({error, {mcerlang, _}}) -> true;
well_behaved({returned, _}) -> true;
well_behaved(_) -> false.

misbehaving(Calls) ->
    [{What, R} || {What, F} <- Calls, R <- [outcome(F)], not well_behaved(R)].

api_bad_options_test_() ->
    {timeout, 300,
     fun() ->
             E = {pingpong, start, [1]},
             Calls = [{{Fn, K, V}, fun() -> mcerlang:Fn(E, #{K => V, progress => false, runs => 2}) end}
                      || Fn <- [check, simulate], K <- check_options() ++ [runs, max_steps, seed],
                         V <- bad_values(), Fn =:= simulate orelse not lists:member(K, [runs, max_steps, seed])],
             ?assertEqual([], misbehaving(Calls))
     end}.

api_bad_arguments_test_() ->
    {timeout, 300,
     fun() ->
             E = {pingpong, start, [1]},
             {error, Cex} = mcerlang:check({dining, start, [2]}, ?OPTS),
             Entries = bad_values() ++ [{pingpong, start, [1 | 2]}, {pingpong, start, foo}, {"p", s, []},
                                        {nosuch, f, []}, {lists, map, []}, {pingpong, nosuch, []}],
             Calls = [{{check, V}, fun() -> mcerlang:check(V, ?OPTS) end} || V <- Entries]
                 ++ [{{simulate, V}, fun() -> mcerlang:simulate(V, ?OPTS) end} || V <- Entries]
                 ++ [{{check_options, V}, fun() -> mcerlang:check(E, V) end} || V <- bad_values()]
                 ++ [{{Fn, V}, fun() -> mcerlang:Fn(V) end}
                     || Fn <- [check, stop, format, replay, load, translate, choice, debug], V <- bad_values()]
                 ++ [{{Fn, cex, V}, fun() -> mcerlang:Fn(Cex, V) end}
                     || Fn <- [format, replay, debug], V <- bad_values()]
                 %% (Not the values that are file names: they would be written.)
                 ++ [{{Fn, cex, V}, fun() -> mcerlang:Fn(Cex, V) end}
                     || Fn <- [msc, save], V <- bad_values(), not file_name(V)]
                 ++ [{{Fn, V, ok}, fun() -> mcerlang:Fn(V, tmp("x")) end} || Fn <- [msc, save], V <- bad_values()]
                 ++ [{{format, K, V}, fun() -> mcerlang:format(Cex, #{K => V}) end}
                     || K <- [depth, width, full, no_such_option], V <- bad_values()]
                 ++ [{{debug, E, V}, fun() -> mcerlang:debug(E, V) end} || V <- bad_values(), not is_map(V)],
             ?assertEqual([], misbehaving(Calls))
     end}.

%% The command line: bad arguments give a message and exit code 2, never an
%% internal error.  (Names longer than an atom can hold used to crash in
%% list_to_atom.)
cli_bad_arguments_test_() ->
    {timeout, 300,
     fun() ->
             Long = lists:duplicate(300, $a),
             Bad = [["--fairness", Long], ["--nodes", Long ++ "@h"], ["--property", Long],
                    ["--monitor", Long], ["--timeouts", Long], ["--option", Long ++ "=1"],
                    ["--pred", Long ++ "=x"], ["--table", Long], ["--faults", Long ++ "=1"],
                    ["--max-states", "99999999999999999999999"], ["--table", "bitstate:1099511627776"],
                    ["--env", "[a|b]"], ["--option", "max_states=[a|b]"], ["--seed", "1.5"],
                    ["--pred", "x=y="]],
             Results = [{Args, mce_cli_tests:run_cli(["check", "--no-progress" | Args]
                                                     ++ ["examples/pingpong.erl", "pingpong:start(1)"])}
                        || Args <- Bad],
             ?assertEqual([], [{A, R} || {A, {Code, Out} = R} <- Results,
                                         Code =/= 2 orelse string:find(Out, "internal error") =/= nomatch])
     end}.

%% mce_etf lists the atoms of every kind of term a counterexample holds
%% without creating them, and decodes them as binary_to_term does.
etf_decodes_every_kind_of_term_test() ->
    Bounds = #{max_inflated => 1 bsl 20, max_new_atoms => 0},
    Terms = [0, 255, 256, -1, 1 bsl 31, 1 bsl 64, -(1 bsl 300), 1.5, -0.0, a, 'ünï', '', "abc", [1000],
             [], [a | b], {}, {a, {b, [c]}}, list_to_tuple(lists:seq(1, 300)), <<>>, <<1, 2>>, <<1:3>>,
             #{}, #{a => [b], {c} => #{d => e}}, maps:from_list([{I, I} || I <- lists:seq(1, 40)]),
             self(), make_ref(), alias(), list_to_pid("<0.1.0>"), hd(erlang:ports()),
             fun lists:reverse/1, fun() -> ok end, (fun(X) -> fun() -> X end end)({captured, self()}),
             lists:seq(1, 1000), lists:duplicate(20, {x, "y", <<"z">>})],
    [?assertEqual({ok, T}, mce_etf:decode(term_to_binary(T), Bounds)) || T <- Terms],
    [?assertEqual({ok, T}, mce_etf:decode(term_to_binary(T, [compressed]), Bounds)) || T <- Terms],
    %% Older encodings: Latin-1 atoms (ATOM_EXT), text floats.
    [?assertEqual({ok, Terms}, mce_etf:decode(term_to_binary(Terms, [{minor_version, V}]), Bounds))
     || V <- [0, 1]],
    %% A compressed stream that inflates beyond its declared size is cut off.
    <<131, 80, Size:32, Z/binary>> = term_to_binary(lists:duplicate(1000, a), [compressed]),
    ?assertEqual({error, "damaged contents"}, mce_etf:decode(<<131, 80, (Size - 1):32, Z/binary>>, Bounds)).
