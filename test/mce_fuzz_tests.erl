%% Seeded, bounded fuzzing of the two ways input reaches the checker:
%%
%% - the NIF boundary: every mce_nif function called with random terms
%%   (and with live search resources among them), in a peer VM, so that a
%%   crash of the NIF shows as that VM gone, with the seed and the call;
%% - mcerlang:check over generated hostile programs (runaway loops, huge
%%   terms, calls the model does not have, kills, traps, tables, funs made
%%   at run time): each check ends within its limits with a result or an
%%   error naming the culprit, never a crash of the checker, and frees its
%%   search.
%%
%% MCE_FUZZ_SEED=N picks another seed (the default keeps CI reproducible).
-module(mce_fuzz_tests).

-include_lib("eunit/include/eunit.hrl").

-export([nif_fuzz/2]).

-define(NIF_CALLS, 20000).
-define(PROGRAMS, 80).
-define(MODULE_NAME, mce_fuzz_progs).

seed() ->
    case os:getenv("MCE_FUZZ_SEED") of
        false -> 20261124;
        S -> list_to_integer(S)
    end.

%%--------------------------------------------------------------------
%% The NIF boundary
%%--------------------------------------------------------------------

nif_boundary_test_() ->
    {timeout, 120,
     fun() ->
             Paths = lists:append([["-pa", D] || D <- code:get_path(), D =/= "."]),
             {ok, Peer, _} = peer:start_link(#{connection => standard_io, args => Paths}),
             try
                 Seed = seed(),
                 Result = try peer:call(Peer, ?MODULE, nif_fuzz, [Seed, ?NIF_CALLS], 100000)
                          catch C:R -> {peer_died, C, R}
                          end,
                 ?assertEqual({survived, ?NIF_CALLS}, Result)
             after
                 catch peer:stop(Peer)
             end
     end}.

%% Runs in the peer: Calls random calls of mce_nif functions.  If one
%% kills the VM, the test fails with the peer gone: rerun with the seed
%% and bisect Calls to find it.
-spec nif_fuzz(integer(), pos_integer()) -> {survived, pos_integer()}.
nif_fuzz(Seed, Calls) ->
    rand:seed(exsss, Seed),
    {module, mce_nif} = code:ensure_loaded(mce_nif),
    Funs = [FA || {F, _} = FA <- mce_nif:module_info(exports),
                  not lists:member(F, [module_info, load])],
    lists:foreach(fun(_) -> one_call(Funs) end, lists:seq(1, Calls)),
    {survived, Calls}.

one_call(Funs) ->
    {F, A} = pick(Funs),
    Args = [case rand:uniform(3) of
                1 when I =:= 1 -> catch resource();
                _ -> term(3)
            end || I <- lists:seq(1, A)],
    %% Any answer and any exception are fine; only the VM must live.
    try apply(mce_nif, F, Args) catch _:_ -> ok end.

%% A live search (fresh or started), or a Büchi check.
resource() ->
    Base = #{nodes => [nonode@nohost], creation => 1},
    case rand:uniform(4) of
        1 -> mce_nif:new(Base);
        2 -> mce_nif:new(Base#{table_mode => rand:uniform(3) - 1, bitstate_bits => rand:uniform(5000),
                               expand_only => rand:uniform(2) - 1});
        3 ->
            S = mce_nif:new(Base),
            _ = (catch mce_nif:start(S, {m, f, []}, 1)),
            S;
        4 -> catch mce_nif:buchi_new(term(2))
    end.

pick(List) -> lists:nth(rand:uniform(length(List)), List).

term(0) -> leaf();
term(D) ->
    case rand:uniform(8) of
        1 -> list_to_tuple([term(D - 1) || _ <- lists:seq(1, rand:uniform(4) - 1)]);
        2 -> [term(D - 1) || _ <- lists:seq(1, rand:uniform(4) - 1)];
        3 -> maps:from_list([{leaf(), term(D - 1)} || _ <- lists:seq(1, rand:uniform(3) - 1)]);
        4 -> [term(D - 1) | leaf()];
        _ -> leaf()
    end.

leaf() ->
    pick([0, 1, -1, 2, 255, 256, 1 bsl 31, 1 bsl 32, (1 bsl 64) - 1, 1 bsl 64, -(1 bsl 63), 1 bsl 200,
          1.5, -0.0, a, nonode@nohost, 'n@h', true, false, '', list_to_atom([1000]), <<>>, <<0>>,
          <<131>>, <<131, 104, 255>>, <<"abc">>, <<1:7>>, "", "abc", [0], [-1], self(), make_ref(),
          fun() -> ok end, fun lists:reverse/1, {m, f, []}, {exit, normal}, {wait, true, x, []},
          [{1, 2}], #{}, #{a => 1}, rand:uniform(1 bsl 20), -rand:uniform(100)]).

%%--------------------------------------------------------------------
%% mcerlang:check over hostile programs
%%--------------------------------------------------------------------

hostile_programs_test_() ->
    {setup, fun build/0, fun cleanup/1,
     fun({_Dir, N}) ->
             [{"p_" ++ integer_to_list(I), {timeout, 60, fun() -> bounded_check(I) end}}
              || I <- lists:seq(1, N)]
     end}.

build() ->
    rand:seed(exsss, seed()),
    Dir = filename:join(["/tmp", "mce_fuzz_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Src = filename:join(Dir, atom_to_list(?MODULE_NAME) ++ ".erl"),
    ok = file:write_file(Src, [header() | [program(I) || I <- lists:seq(1, ?PROGRAMS)]]),
    {ok, ?MODULE_NAME} = compile:file(Src, [debug_info, {outdir, Dir}, report_errors, nowarn_unused_function]),
    true = code:add_patha(Dir),
    code:purge(?MODULE_NAME),
    {module, ?MODULE_NAME} = code:load_abs(filename:join(Dir, atom_to_list(?MODULE_NAME))),
    {Dir, ?PROGRAMS}.

cleanup({Dir, _}) ->
    code:purge(?MODULE_NAME),
    code:delete(?MODULE_NAME),
    code:del_path(Dir),
    file:del_dir_r(Dir).

header() ->
    ["-module(", atom_to_list(?MODULE_NAME), ").\n-compile([export_all, nowarn_export_all]).\n",
     "spin(N) -> spin(N + 1).\n",
     "deep(0) -> []; deep(N) -> [deep(N - 1)].\n",
     "echo() -> receive {From, M} -> From ! M, echo(); stop -> ok end.\n"].

%% A program: the main process runs a few hostile statements, some of them
%% in processes of their own.
program(I) ->
    Stmts = [case rand:uniform(3) of
                 1 -> ["spawn(fun() -> ", statement(), " end)"];
                 _ -> statement()
             end || _ <- lists:seq(1, rand:uniform(4))],
    ["p_", integer_to_list(I), "() ->\n    Self = self(),\n    _ = Self,\n    ",
     lists:join(",\n    ", Stmts), ",\n    ok.\n"].

statement() ->
    pick(["spin(0)",
          "Self ! {big, lists:seq(1, 20000)}",
          "receive _ -> ok end",
          "receive {big, _} -> ok after 0 -> ok end",
          "exit(Self, kill)",
          "exit({weird, deep(200)})",
          "erlang:error(lists:duplicate(5000, x))",
          "throw(oops)",
          "catch os:cmd(\"true\")",
          "catch register(fuzz_name, self())",
          "register(fuzz_name, self())",
          "process_flag(trap_exit, true), spawn_link(fun() -> exit(boom) end), receive _ -> ok end",
          "catch ets:new(fuzz_table, [named_table, public])",
          "catch binary_to_term(<<131, 100, 0, 1, 97>>)",
          "catch list_to_atom(lists:duplicate(300, $a))",
          "catch apply(erlang, list_to_atom(\"sp\" ++ \"awn\"), [fun() -> ok end])",
          "catch (erlang:make_fun(lists, reverse, 1))([1, 2])",
          "[spawn(fun() -> ok end) || _ <- lists:seq(1, 4)]",
          "receive after 10 -> ok end",
          "E = spawn(fun echo/0), E ! {Self, hi}, receive hi -> E ! stop end",
          "E = spawn(fun echo/0), E ! {Self, hi}",
          "catch persistent_term:put(fuzz_key, v)",
          "catch erlang:process_info(Self, messages)",
          "mcerlang:choice([fun() -> ok end, fun() -> exit(chosen) end])",
          "catch link(list_to_pid(\"<0.1.0>\"))",
          "monitor(process, Self)",
          "catch gen_server:call(nobody, hello, 100)",
          "catch (fun F(0) -> ok; F(N) -> F(N - 1) end)(100000)"]).

%% The check ends (limits hold), with a verdict or an error naming the
%% culprit; the checker never crashes and frees its search.
bounded_check(I) ->
    Live = mce_nif:live_searches(),
    Entry = {?MODULE_NAME, list_to_atom("p_" ++ integer_to_list(I)), []},
    Opts = #{max_states => 3000, max_time => 5000, max_reductions => 2000000, progress => false},
    Outcome = try mcerlang:check(Entry, Opts)
              catch error:{mcerlang, Reason} -> {raised, Reason}
              end,
    case Outcome of
        {ok, #{states := _}} -> ok;
        {error, #{violation := _}} -> ok;
        {inconclusive, _, #{states := _}} -> ok;
        {raised, {checker_crashed, _} = Crash} -> erlang:error({Entry, Crash});
        {raised, _} -> ok
    end,
    wait_until(fun() -> mce_nif:live_searches() =< Live end, 50).

wait_until(Cond, 0) ->
    ?assert(Cond());
wait_until(Cond, N) ->
    case Cond() of
        true -> ok;
        false -> timer:sleep(100), wait_until(Cond, N - 1)
    end.
