%% @doc The distributed search (`cluster => [Node]', mce_cluster and
%% c_src/search_cluster.c) on two peer nodes of this machine started with
%% OTP's `peer': the verdicts and the state and transition counts of the
%% sequential search on the bench models; a counterexample rebuilt across
%% the nodes that replays; a node killed during a check gives an
%% inconclusive result; bad `cluster' values are refused naming the
%% culprit.
-module(mce_cluster_tests).
-include_lib("eunit/include/eunit.hrl").

-define(FULL, #{progress => false, reduction => false, symmetry => false}).
-define(LOCKER, #{timeouts => when_idle, property => abnormal_exit}).

cluster_test_() ->
    {setup, fun start_peers/0, fun stop_peers/1,
     fun({_, Peers}) ->
             Nodes = [N || {_, N} <- Peers],
             [{timeout, 300, fun() -> same_counts(Nodes) end},
              {timeout, 300, fun() -> violation_replays(Nodes) end},
              {timeout, 300, fun() -> stats_per_node(Nodes) end},
              {timeout, 120, fun() -> bad_values(Nodes) end},
              {timeout, 300, fun() -> symmetry(Nodes) end},
              {timeout, 600, fun() -> reductions(Nodes) end},
              {timeout, 300, fun() -> limits(Nodes) end}]
     end}.

%% A peer killed during a check: its own pair of peers, since one dies.
node_down_test_() ->
    {setup, fun start_peers/0, fun stop_peers/1,
     fun({_, Peers}) -> {timeout, 300, fun() -> node_down(Peers) end} end}.

start_peers() ->
    _ = os:cmd("epmd -daemon"),
    Started = case node() of
                  nonode@nohost ->
                      {ok, _} = net_kernel:start([list_to_atom("mce_cluster_test_" ++ os:getpid()),
                                                  shortnames]),
                      true;
                  _ ->
                      false
              end,
    %% The test build's code: mcerlang's ebin (the NIF is beside it, in
    %% priv), the examples' and the tests' (the models).
    Paths = lists:usort([filename:absname(filename:dirname(code:which(M)))
                         || M <- [mcerlang, client_server, locker, dining, ?MODULE]]),
    %% Hidden: `global' keeps no mesh of hidden nodes, so its guard against
    %% overlapping partitions never cuts a peer (which then halts, its
    %% origin gone) when two peers connect to each other during a check.
    {Started, [begin
                   {ok, Pid, Node} = peer:start(#{name => peer:random_name(?MODULE),
                                                  args => ["-hidden" | lists:append([["-pa", P] || P <- Paths])]}),
                   {Pid, Node}
               end || _ <- [1, 2]]}.

%% The node goes back to what it was: later tests may expect a node that
%% is not distributed.
stop_peers({Started, Peers}) ->
    [catch peer:stop(Pid) || {Pid, _} <- Peers],
    Started andalso net_kernel:stop(),
    ok.

%% The NIF's import answers bytes that are no state with an error, and
%% a malformed batch with badarg: never a crash.
bad_batches_test() ->
    S = mce_nif:new(#{node => nonode@nohost, creation => mce_pid:creation(), breadth_first => 1,
                      cluster_n => 2, cluster_me => 0, reduction => 0, symmetry => 0}),
    ?assert(is_reference(S)),
    rand:seed(exsss, {1, 2, 3}),
    Results = [mce_nif:cluster_import(S, 1, [{0, 1, Bin, <<131, 106>>, []}])
               || Bin <- [<<>>, <<"M">>, <<"M", 1>>, <<"M", 1, 0, 1>>]
                      ++ [<<"M", 1, (rand:bytes(rand:uniform(64)))/binary>> || _ <- lists:seq(1, 300)]],
    ?assertEqual([], [R || R <- Results, not is_error(R), R =/= {ok, 0}]),
    ?assert(length([R || R <- Results, is_error(R)]) > 250),
    ?assertError(badarg, mce_nif:cluster_import(S, 1, [{0, 1, not_a_binary, <<>>, []}])),
    ?assertError(badarg, mce_nif:cluster_import(S, 1, [{0, 1, <<>>}])),
    ?assertError(badarg, mce_nif:cluster_import(S, 1, [{0, 1, <<>>, <<>>}])),
    ?assertError(badarg, mce_nif:cluster_import(S, 1, [{0, 1, <<>>, <<>>, not_a_list}])),
    ?assertError(badarg, mce_nif:cluster_import(S, 1, improper)),
    %% A renaming that is no list of {From, To}: an error, nothing imported.
    ?assertMatch({error, _, _}, mce_nif:cluster_import(S, 1, [{0, 1, <<"M", 1>>, <<>>, [x]}])),
    ?assertMatch({error, _, _}, mce_nif:cluster_import(S, 1, [{0, 1, <<"M", 1>>, <<>>, [{1, -1}]}])),
    %% From itself or from no participant: refused.
    ?assertMatch({error, _, _}, mce_nif:cluster_import(S, 0, [{0, 1, <<"M", 1>>, <<>>, []}])),
    ?assertMatch({error, _, _}, mce_nif:cluster_import(S, 5, [{0, 1, <<"M", 1>>, <<>>, []}])),
    ?assertMatch([], mce_nif:cluster_outbox(S)),
    ?assertMatch(#{sent := 0}, mce_nif:cluster_stats(S)),
    %% A search made for no cluster has none of it.
    Plain = mce_nif:new(#{node => nonode@nohost, creation => mce_pid:creation()}),
    ?assertMatch({error, _, _}, mce_nif:cluster_import(Plain, 1, [{0, 1, <<"M", 1>>, <<>>, []}])),
    %% The NIF refuses a participant that is not breadth-first, or one
    %% numbered past the participants.
    ?assertError(badarg, mce_nif:new(#{node => nonode@nohost, creation => 1, cluster_n => 2,
                                       cluster_me => 0})),
    ?assertError(badarg, mce_nif:new(#{node => nonode@nohost, creation => 1, cluster_n => 2,
                                       cluster_me => 2, breadth_first => 1})).

is_error({error, _, _}) -> true;
is_error(_) -> false.

models() ->
    [{{client_server, start, [3, 2]}, #{}},
     {{counter_server, start, [3, 2]}, #{timeouts => when_idle}},
     {{locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]}, ?LOCKER}].

%% Every state is stored and expanded by its owner only: the counts add
%% up to the sequential search's.
same_counts(Nodes) ->
    [begin
         Opts = maps:merge(?FULL, O),
         {ok, One} = mcerlang:check(E, Opts),
         {ok, Many} = mcerlang:check(E, Opts#{cluster => Nodes}),
         ?assertEqual({E, maps:with([states, transitions], One)},
                      {E, maps:with([states, transitions], Many)}),
         Shares = maps:get(node_stats, Many),
         ?assertEqual([node() | Nodes], [maps:get(node, Sh) || Sh <- Shares]),
         %% Every node owns some of the states, and what is sent is
         %% received.
         [?assert(maps:get(states, Sh) > 0) || Sh <- Shares],
         ?assertEqual(lists:sum([maps:get(states_sent, Sh) || Sh <- Shares]),
                      lists:sum([maps:get(states_received, Sh) || Sh <- Shares]))
     end || {E, O} <- models()].

%% The buggy locker: a violation found on some node, its path rebuilt
%% from the segments of the others, replays.
violation_replays(Nodes) ->
    E = {locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
    Opts = maps:merge(?FULL, ?LOCKER),
    {error, Seq} = mcerlang:check(E, Opts),
    {error, Cex} = mcerlang:check(E, Opts#{cluster => Nodes}),
    ?assertEqual(element(1, maps:get(violation, Seq)), element(1, maps:get(violation, Cex))),
    {ok, Again} = mcerlang:replay(Cex),
    %% Replayed on this node alone, with or without the other nodes.
    ?assertEqual(false, maps:is_key(cluster, element(2, mcerlang:replayable(Cex, #{})))),
    ?assertEqual(maps:get(violation, Cex), maps:get(violation, Again)),
    %% A deadlock, too: the dining philosophers.
    D = {dining, start, [3]},
    {error, DSeq} = mcerlang:check(D, ?FULL),
    {error, DCex} = mcerlang:check(D, ?FULL#{cluster => Nodes}),
    ?assertEqual(deadlock, maps:get(violation, DSeq)),
    ?assertEqual(deadlock, maps:get(violation, DCex)),
    ?assertMatch({ok, _}, mcerlang:replay(DCex)).

stats_per_node(Nodes) ->
    {ok, St} = mcerlang:check({client_server, start, [3, 2]}, ?FULL#{cluster => Nodes}),
    ?assertEqual(3, maps:get(cluster, St)),
    ?assertEqual({off, option}, maps:get(reduction, St)),
    {ok, St2} = mcerlang:check({client_server, start, [3, 2]},
                               #{progress => false, cluster => Nodes}),
    ?assertEqual(on, maps:get(reduction, St2)),
    %% symmetry => auto: on, the clients being interchangeable
    ?assertEqual(on, maps:get(symmetry, St2)),
    ?assert(maps:get(states, St2) < maps:get(states, St)),
    [?assert(maps:get(bytes_sent, Sh) > 0) || Sh <- maps:get(node_stats, St)].

%% Symmetry across the nodes: a representative is what is owned, sent
%% with the renaming its finder made, so the counts are the sequential
%% symmetric search's; a counterexample maps back to concrete pids from
%% the initial state, across the nodes' segments, and replays; a program
%% that observes pid order voids the search on every node, and the check
%% runs again without symmetry.
symmetry(Nodes) ->
    Sym = ?FULL#{symmetry => true},
    [begin
         {ok, One} = mcerlang:check(E, maps:merge(Sym, O)),
         {ok, Many} = mcerlang:check(E, maps:merge(Sym, O#{cluster => Nodes})),
         ?assertEqual({E, maps:with([states, transitions], One)},
                      {E, maps:with([states, transitions], Many)}),
         {ok, Plain} = mcerlang:check(E, maps:merge(?FULL, O)),
         ?assert(maps:get(states, Many) < maps:get(states, Plain))
     end || {E, O} <- [{{client_server, start, [3, 2]}, #{}},
                       {{counter_server, start, [3, 2]}, #{timeouts => when_idle}}]],
    {error, Cex} = mcerlang:check({tprog_sym, lost_update, [3]}, Sym#{cluster => Nodes}),
    ?assertMatch({abnormal_exit, _, {{lost_update, _, 3}, _}}, maps:get(violation, Cex)),
    ?assertMatch(#{symmetry := on}, maps:get(stats, Cex)),
    ?assertMatch({ok, _}, mcerlang:replay(Cex)),
    {error, Leader} = mcerlang:check({tprog_autosym, min_leader, []},
                                     ?FULL#{symmetry => auto, cluster => Nodes}),
    ?assertMatch({abnormal_exit, _, {first_was_not_leader, _}}, maps:get(violation, Leader)),
    ?assertEqual({off, pid_order}, maps:get(symmetry, maps:get(stats, Leader))),
    ?assertMatch({ok, _}, mcerlang:replay(Leader)).

%% Partial-order reduction across the nodes: a frame is cut only toward a
%% state its own node owns (c_src/search_cluster.h), so it reduces less
%% than on one node, and the verdicts are the unreduced ones.  The
%% programs: the supervisors (whose process_info reads void the reduced
%% search, which every node must then run again without it), the OTP
%% stops, the bugs of the hunts, the examples, and the guard of sending
%% safe steps, whose two halves may be met on two different nodes.
reductions(Nodes) ->
    E = {client_server, start, [3, 2]},
    {ok, Off} = mcerlang:check(E, ?FULL),
    {ok, On} = mcerlang:check(E, ?FULL#{reduction => true, cluster => Nodes}),
    ?assertEqual(on, maps:get(reduction, On)),
    ?assert(maps:get(reduced_states, On) > 0),
    ?assert(maps:get(states, On) < maps:get(states, Off)),
    ?assertEqual(false, maps:is_key('$mce_por_guard', On)),
    Chosen = [P || {Label, _, Opts, _} = P <- mce_reduction_tests:programs(),
                   not lists:any(fun(K) -> maps:is_key(K, Opts) end,
                                 [ltl, monitor, invariant, mailbox_bound, shortest]),
                   lists:any(fun(Prefix) -> lists:prefix(Prefix, Label) end,
                             ["tprog_sup", "tprog_statem:stop", "tprog_gs2:stop", "tprog_hunt1",
                              "client_server", "counter_server", "locker", "dining", "door",
                              "spawn_chain", "go_workers", "sup_worker", "pingpong"])],
    ?assert(length(Chosen) > 40),
    Compared = [mce_reduction_tests:same_verdicts_in(P, [{cluster, Nodes}]) || P <- Chosen],
    ?assert(length([x || compared <- Compared]) >= length(Chosen) * 9 div 10),
    %% The guard: the exit signal, the link or the list of processes
    %% after a reply taken as safe voids the reduced search, whichever
    %% nodes met them; the violation is found either way.
    [begin
         {error, Cex} = mcerlang:check({tprog_por, F, []},
                                       #{progress => false, symmetry => false, cluster => Nodes,
                                         property => abnormal_exit,
                                         treat_as_normal => [normal, shutdown, killed]}),
         ?assertMatch({F, {abnormal_exit, _, V}}, {F, maps:get(violation, Cex)}),
         %% Found by the reduced search itself (a real run), or by the
         %% check run again without it.
         ?assert(lists:member(maps:get(reduction, maps:get(stats, Cex)), [on, {off, Why}])),
         ?assertMatch({ok, _}, mcerlang:replay(Cex))
     end || {F, V, Why} <- [{exit_guard, saw_down, exit_signal}, {link_guard, saw_down, link},
                            {processes_guard, hi_first, processes}]].

bad_values(Nodes) ->
    E = {client_server, start, [2, 1]},
    Bad = fun(V) ->
                  try mcerlang:check(E, ?FULL#{cluster => V}) of
                      R -> {no_error, R}
                  catch error:{mcerlang, {bad_option_value, cluster, V, Why}} -> {refused, Why}
                  end
          end,
    ?assertMatch({refused, _}, Bad(foo)),
    ?assertMatch({refused, _}, Bad([1, 2])),
    ?assertMatch({refused, _}, Bad([node()])),
    ?assertMatch({refused, _}, Bad(Nodes ++ Nodes)),
    Missing = list_to_atom("mce_nowhere@" ++ lists:last(string:split(atom_to_list(node()), "@"))),
    {refused, Why} = Bad([Missing]),
    ?assert(string:find(Why, atom_to_list(Missing)) =/= nomatch),
    ?assertError({mcerlang, {incompatible_options, cluster, shortest}},
                 mcerlang:check(E, ?FULL#{cluster => Nodes, shortest => true})),
    ?assertError({mcerlang, {incompatible_options, cluster, table}},
                 mcerlang:check(E, ?FULL#{cluster => Nodes, table => hash_compact})),
    ?assertError({mcerlang, {incompatible_options, cluster, abstraction}},
                 mcerlang:check(E, ?FULL#{cluster => Nodes, abstraction => even_odd})).

%% The limits hold on every node and end the check everywhere.
limits(Nodes) ->
    Big = {client_server, start, [6, 3]},
    ?assertMatch({inconclusive, max_time, _},
                 mcerlang:check(Big, ?FULL#{cluster => Nodes, max_time => 500})),
    {inconclusive, {memory, Cap}, St} = mcerlang:check(Big, ?FULL#{cluster => Nodes,
                                                                   memory => 24 bsl 20}),
    ?assertEqual(24 bsl 20, Cap),
    ?assertEqual(3, length(maps:get(node_stats, St))),
    %% Nothing is left running on the peers.
    timer:sleep(200),
    [?assertEqual(0, rpc:call(N, mce_nif, live_searches, [])) || N <- Nodes].

%% A node that dies during the check: the result is inconclusive, naming
%% it, never a verdict.
node_down([{Victim, VictimNode}, {_, Other}]) ->
    Self = self(),
    %% Big enough to be still searching when the node goes.
    E = {client_server, start, [6, 2]},
    Checker = spawn(fun() ->
                            Self ! {result, catch mcerlang:check(E, ?FULL#{cluster => [VictimNode, Other]})}
                    end),
    %% Wait until the victim is searching (it has translated the program).
    wait_until(fun() -> rpc:call(VictimNode, code, is_loaded, ['mce$client_server']) =/= false end),
    timer:sleep(300),
    ok = peer:stop(Victim),
    receive
        {result, R} ->
            ?assertMatch({inconclusive, {node_down, VictimNode}, _}, R)
    after 120000 ->
            exit(Checker, kill),
            ?assert(false)
    end.

wait_until(F) ->
    case F() of
        true -> ok;
        false -> timer:sleep(10), wait_until(F)
    end.

%% The command line: two `mcerlang node's, and a check with --cluster
%% that sends them the module it compiled from the file it was given: the
%% verdict and the counts of the same check alone.  A node that does not
%% run is named.
cli_test_() ->
    {timeout, 300,
     fun() ->
             _ = os:cmd("epmd -daemon"),
             {ok, Host} = inet:gethostname(),
             Names = ["mce_cli_node_" ++ os:getpid() ++ "_" ++ integer_to_list(I) || I <- [1, 2]],
             Nodes = [start_cli_node(N) || N <- Names],
             try
                 Args = ["--reduction", "off", "--symmetry", "off", "--no-progress",
                         "test/tprog_por.erl", "tprog_por:workers(5)"],
                 {0, Alone} = mce_cli_tests:run_cli(["check" | Args]),
                 Cluster = lists:join(",", [N ++ "@" ++ Host || N <- Names]),
                 {0, Shared} = mce_cli_tests:run_cli(["check", "--cluster", lists:flatten(Cluster) | Args]),
                 Holds = fun(Out) -> hd([L || L <- string:split(Out, "\n", all),
                                              string:prefix(L, "holds:") =/= nomatch]) end,
                 ?assertMatch("holds: " ++ _, Holds(Alone)),
                 %% "holds: N states, T transitions, MS ms": all but the time
                 ?assertEqual(lists:sublist(string:lexemes(Holds(Alone), " "), 5),
                              lists:sublist(string:lexemes(Holds(Shared), " "), 5)),
                 {2, Down} = mce_cli_tests:run_cli(["check", "--cluster", "mce_no_such_node@" ++ Host | Args]),
                 ?assertNotEqual(nomatch, string:find(Down, "--cluster mce_no_such_node@")),
                 {2, NoName} = mce_cli_tests:run_cli(["node"]),
                 ?assertNotEqual(nomatch, string:find(NoName, "node needs --sname NAME or --name NAME")),
                 {2, Lone} = mce_cli_tests:run_cli(["check", "--cookie", "c" | Args]),
                 ?assertNotEqual(nomatch, string:find(Lone, "are for mcerlang node and for check --cluster"))
             after
                 [stop_cli_node(Port) || Port <- Nodes]
             end
     end}.

%% bin/mcerlang node --sname Name, once it says it is ready.
start_cli_node(Name) ->
    Root = mce_cli_tests:root(),
    Port = open_port({spawn_executable, filename:join([Root, "bin", "mcerlang"])},
                     [{args, ["node", "--sname", Name]}, {cd, Root}, exit_status, stderr_to_stdout,
                      {line, 4096}]),
    receive
        {Port, {data, {eol, "mcerlang node " ++ _}}} -> Port;
        {Port, {exit_status, Code}} -> erlang:error({cli_node_exited, Name, Code})
    after 60000 -> erlang:error({cli_node_not_ready, Name})
    end.

stop_cli_node(Port) ->
    case erlang:port_info(Port, os_pid) of
        {os_pid, Pid} -> os:cmd("kill " ++ integer_to_list(Pid));
        undefined -> ok
    end,
    catch port_close(Port),
    ok.
