%% @doc Randomised soundness evidence for the reductions of issue 18:
%% generated concurrent programs checked with the reductions off and on
%% (mce_reduction_tests:same_verdicts/1: same deadlock verdict, same set of
%% abnormal exits, the reduced modes' counterexamples replayed with the
%% reductions off).
%%
%% mce_random_tests' programs are deterministic by construction (one
%% receiver, one sender), which tells little about a reduction: what a
%% reduction may get wrong is which interleavings of different processes
%% it skips.  These programs are made of the operations whose
%% (in)dependence the reductions decide: a root and two or three workers
%% (two to four) that send to one another (each message planned with a
%% matching receive,
%% by tag or of any message, so the program may or may not deadlock
%% depending on the order), write, read and insert_new in one shared ETS
%% table, register, unregister and look up one name, send to that name,
%% and now and then kill a peer.  A second family (`monitor_programs_test_')
%% adds what the renaming's guarded rules decide (rules 9-12 of
%% docs/ARCHITECTURE.md): monitors of the root or a peer, a look at the
%% first `'DOWN'' in the mailbox (its reason tells `noproc' from a real
%% end), demonitors with and without `flush', liveness tests and links.
%% Each process collects what it read and
%% received, and ends abnormally (`{bad, Program, Process, History}') when
%% a hash of its history says so, so the reachable abnormal exits are a
%% sample of the reachable histories: a reduction that drops an
%% interleaving with a different history changes the set.  No program
%% orders pids (histories hold no pids), so symmetry is on in a third mode.
%%
%% The programs come from a fixed list of seeds, so a run is the same
%% every time; `source/0' is the module's text (to look at a failure:
%% `io:format("~s", [mce_reduction_random_tests:source()])').
-module(mce_reduction_random_tests).
-include_lib("eunit/include/eunit.hrl").

-export([source/0, source/1, program/3]).

-define(MODULE_NAME, mce_reduction_random_progs).
-define(SEEDS, lists:seq(1, 100)).
%% The second family: its own module and seeds, so that the first's
%% programs stay as they were.
-define(MON_MODULE_NAME, mce_reduction_random_mon_progs).
-define(MON_SEEDS, lists:seq(101, 140)).
%% Programs of odd seeds run with `granularity => small' (every send, ETS
%% access and name operation its own step), where there is most to reduce.

%% The share of programs that must be compared (the others were
%% inconclusive within mce_reduction_tests' limits in some mode).
-define(MIN_COMPARED, 0.8).

random_programs_test_() ->
    family(basic).

monitor_programs_test_() ->
    family(monitors).

family(Family) ->
    {setup, fun() -> build(Family) end, fun cleanup/1,
     fun({_Dir, Tab}) ->
             [{"seed " ++ integer_to_list(Seed),
               {timeout, 120, fun() -> compare(Tab, Family, I, Seed) end}}
              || {I, Seed} <- lists:enumerate(seeds(Family))]
                 ++ [{"coverage", fun() -> coverage(Tab, Family) end}]
     end}.

seeds(basic) -> ?SEEDS;
seeds(monitors) -> ?MON_SEEDS.

module_name(basic) -> ?MODULE_NAME;
module_name(monitors) -> ?MON_MODULE_NAME.

build(Family) ->
    Module = module_name(Family),
    Dir = filename:join(["/tmp", "mce_reduction_random_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Src = filename:join(Dir, atom_to_list(Module) ++ ".erl"),
    ok = file:write_file(Src, source(Family)),
    {ok, Module} = compile:file(Src, [debug_info, {outdir, Dir}, report_errors]),
    true = code:add_patha(Dir),
    code:purge(Module),
    {module, Module} = code:load_abs(filename:join(Dir, atom_to_list(Module))),
    %% translated here, outside the tests' time limits
    _ = mce_translate:ensure(Module),
    {Dir, ets:new(?MODULE, [public, set])}.

cleanup({Dir, Tab}) ->
    ets:delete(Tab),
    code:del_path(Dir).

compare(Tab, Family, I, Seed) ->
    Label = "p_" ++ integer_to_list(I),
    Opts = case Seed rem 2 of
               1 -> #{granularity => small};
               0 -> #{}
           end,
    %% and with two workers, whose cycle proviso is their own
    Status = mce_reduction_tests:same_verdicts({Label, {module_name(Family), list_to_atom(Label), []}, Opts, sym},
                                               [par]),
    ets:insert(Tab, {I, Status}),
    case Status of
        compared -> ok;
        {skipped, Why} -> ?debugFmt("~s skipped: inconclusive in ~p", [Label, Why])
    end.

coverage(Tab, Family) ->
    Skipped = [I || {I, {skipped, _}} <- ets:tab2list(Tab)],
    %% a program whose comparison failed is not in the table: it counts
    %% against the skipped, not here
    ?assert(length(Skipped) =< (1 - ?MIN_COMPARED) * length(seeds(Family))).

%%--------------------------------------------------------------------
%% The generator
%%--------------------------------------------------------------------

%% @doc The module of every program of the first family, one per seed.
-spec source() -> iolist().
source() ->
    source(basic).

%% @doc The module of every program of a family (`basic' or `monitors').
-spec source(basic | monitors) -> iolist().
source(Family) ->
    [header(module_name(Family)) | [program(I, Seed, Family) || {I, Seed} <- lists:enumerate(seeds(Family))]].

header(Module) ->
    ["-module(", atom_to_list(Module), ").\n",
     "-compile([export_all, nowarn_export_all, nowarn_unused_vars]).\n\n",
     "wait_down(0) -> ok;\n",
     "wait_down(N) -> receive {'DOWN', _, process, _, _} -> wait_down(N - 1) end.\n\n",
     "finish(I, J, Acc) ->\n",
     "    case erlang:phash2(Acc, 4) of\n",
     "        0 -> exit({bad, I, J, lists:reverse(Acc)});\n",
     "        _ -> ok\n",
     "    end.\n\n"].

%% @doc The text of program p_I of a family, drawn from Seed: the root
%% (process 0) and workers 1..W, each a straight line of operations.
-spec program(pos_integer(), integer(), basic | monitors) -> iolist().
program(I, Seed, Family) ->
    rand:seed(exsss, Seed),
    W = 1 + rand:uniform(3),
    Procs = lists:seq(0, W),
    %% the messages: {From, To, Tag}, each with a send and a receive
    Msgs = [{From, To, list_to_atom("t" ++ integer_to_list(K))}
            || K <- lists:seq(1, rand:uniform(7) - 1),
               {From, To} <- [two_of(Procs)]],
    Ops0 = maps:from_list([{P, []} || P <- Procs]),
    Ops1 = lists:foldl(fun({From, To, Tag}, Acc) ->
                               Recv = case rand:uniform(2) of
                                          1 -> {recv, Tag};
                                          2 -> recv_any
                                      end,
                               insert(To, Recv, insert(From, {send, To, Tag}, Acc))
                       end, Ops0, Msgs),
    %% shared-state operations of the workers
    Ops = lists:foldl(fun(P, Acc) ->
                              lists:foldl(fun(_, A) -> insert(P, local_op(Family, P, W), A) end,
                                          Acc, lists:seq(1, rand:uniform(5)))
                      end, Ops1, lists:seq(1, W)),
    S = integer_to_list(I),
    [root(S, W, maps:get(0, Ops)) | [worker(S, J, maps:get(J, Ops)) || J <- lists:seq(1, W)]].

two_of(Procs) ->
    From = lists:nth(rand:uniform(length(Procs)), Procs),
    Others = Procs -- [From],
    {From, lists:nth(rand:uniform(length(Others)), Others)}.

%% Op at a random place of P's list.
insert(P, Op, Ops) ->
    L = maps:get(P, Ops),
    {A, B} = lists:split(rand:uniform(length(L) + 1) - 1, L),
    Ops#{P := A ++ [Op | B]}.

local_op(monitors, P, W) ->
    %% a target other than P itself: 0 is the root
    Target = lists:nth(rand:uniform(W), lists:seq(0, W) -- [P]),
    case rand:uniform(12) of
        N when N =< 3 -> {monitor, Target};
        N when N =< 5 -> down;
        6 -> {demonitor, [flush]};
        7 -> {demonitor, []};
        8 -> {alive, Target};
        9 -> {link, Target};
        _ -> local_op(basic, P, W)
    end;
local_op(basic, P, W) ->
    Key = lists:nth(rand:uniform(2), [k1, k2]),
    case rand:uniform(20) of
        N when N =< 4 -> {ets_write, Key};
        N when N =< 8 -> {ets_read, Key};
        N when N =< 10 -> {ets_insert_new, Key};
        N when N =< 12 -> register;
        13 -> unregister;
        N when N =< 15 -> whereis;
        N when N =< 17 -> send_name;
        18 -> {kill, hd(lists:seq(1, W) -- [P])};
        _ -> {ets_read, Key}
    end.

root(S, W, Ops) ->
    Js = lists:seq(1, W),
    Ws = ["P" ++ integer_to_list(J) || J <- Js],
    ["p_", S, "() ->\n",
     "    T = ets:new(tab, [public, set]),\n",
     [["    {", P, ", _} = spawn_monitor(?MODULE, w_", S, "_", integer_to_list(J), ", [T]),\n"]
      || {J, P} <- lists:zip(Js, Ws)],
     "    Ps = [", lists:join(", ", Ws), "],\n",
     [["    ", P, " ! {peers, self(), Ps},\n"] || P <- Ws],
     body(S, 0, Ops, "self()", ["wait_down(", integer_to_list(W), "), "]),
     "    ok.\n\n"].

worker(S, J, Ops) ->
    ["w_", S, "_", integer_to_list(J), "(T) ->\n",
     "    {Root, Ps} = receive {peers, R, X} -> {R, X} end,\n",
     body(S, J, Ops, "Root", []),
     "    ok.\n\n"].

%% The operations, threading the history through A0, A1, ...; then finish
%% (the root after it has seen every worker end: it owns the table).
body(S, J, Ops, Root, BeforeFinish) ->
    Lines = [op(K, Op, Root) || {K, Op} <- lists:enumerate(Ops)],
    N = integer_to_list(length(Ops)),
    ["    A0 = [],\n", Lines,
     "    ", BeforeFinish, "finish(", S, ", ", integer_to_list(J), ", A", N, "),\n"].

op(K, Op, Root) ->
    A = "A" ++ integer_to_list(K),
    Prev = "A" ++ integer_to_list(K - 1),
    ["    ", A, " = ", expr(Op, Prev, Root, integer_to_list(K)), ",\n"].

expr({send, 0, Tag}, Prev, Root, _) ->
    ["begin ", Root, " ! {m, ", atom_to_list(Tag), "}, ", Prev, " end"];
expr({send, To, Tag}, Prev, _Root, _) ->
    ["begin lists:nth(", integer_to_list(To), ", Ps) ! {m, ", atom_to_list(Tag), "}, ", Prev, " end"];
expr({recv, Tag}, Prev, _, _) ->
    ["receive {m, ", atom_to_list(Tag), "} -> [", atom_to_list(Tag), " | ", Prev, "] end"];
expr(recv_any, Prev, _, K) ->
    ["receive {m, X", K, "} -> [X", K, " | ", Prev, "] end"];
expr({ets_write, Key}, Prev, _, K) ->
    ["begin ets:insert(T, {", atom_to_list(Key), ", ", K, "}), ", Prev, " end"];
expr({ets_read, Key}, Prev, _, K) ->
    ["[case ets:lookup(T, ", atom_to_list(Key), ") of [{_, V", K, "}] -> V", K,
     "; [] -> none end | ", Prev, "]"];
expr({ets_insert_new, Key}, Prev, _, K) ->
    ["[ets:insert_new(T, {", atom_to_list(Key), ", ", K, "}) | ", Prev, "]"];
expr(register, Prev, _, _) ->
    ["[try register(nm, self()) catch error:badarg -> taken end | ", Prev, "]"];
expr(unregister, Prev, _, _) ->
    ["[try unregister(nm) catch error:badarg -> not_registered end | ", Prev, "]"];
expr(whereis, Prev, _, _) ->
    ["[is_pid(whereis(nm)) | ", Prev, "]"];
expr(send_name, Prev, _, _) ->
    ["[try nm ! {m, by_name} of _ -> sent catch error:badarg -> no_name end | ", Prev, "]"];
expr({monitor, To}, Prev, Root, _) ->
    ["begin put(mon, monitor(process, ", pid_of(To, Root), ")), [mon | ", Prev, "] end"];
expr(down, Prev, _, K) ->
    %% the reason of the first 'DOWN' in the mailbox, if any: noproc when
    %% the monitor came after the end
    ["receive {'DOWN', _, process, _, R", K, "} -> [R", K, " | ", Prev, "] after 0 -> [no_down | ", Prev,
     "] end"];
expr({demonitor, Flush}, Prev, _, K) ->
    ["case get(mon) of undefined -> [no_mon | ", Prev, "]; M", K, " -> demonitor(M", K, ", ",
     io_lib:format("~p", [Flush]), "), [demon | ", Prev, "] end"];
expr({alive, To}, Prev, Root, _) ->
    ["[is_process_alive(", pid_of(To, Root), ") | ", Prev, "]"];
expr({link, To}, Prev, Root, _) ->
    ["[try link(", pid_of(To, Root), ") of true -> linked catch error:noproc -> noproc end | ", Prev, "]"];
expr({kill, J}, Prev, _, _) ->
    ["begin exit(lists:nth(", integer_to_list(J), ", Ps), kill), ", Prev, " end"].

pid_of(0, Root) -> Root;
pid_of(J, _Root) -> ["lists:nth(", integer_to_list(J), ", Ps)"].
