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
     fun(Peers) ->
             Nodes = [N || {_, N} <- Peers],
             [{timeout, 300, fun() -> same_counts(Nodes) end},
              {timeout, 300, fun() -> violation_replays(Nodes) end},
              {timeout, 300, fun() -> stats_per_node(Nodes) end},
              {timeout, 120, fun() -> bad_values(Nodes) end}]
     end}.

%% A peer killed during a check: its own pair of peers, since one dies.
node_down_test_() ->
    {setup, fun start_peers/0, fun stop_peers/1,
     fun(Peers) -> {timeout, 300, fun() -> node_down(Peers) end} end}.

start_peers() ->
    _ = os:cmd("epmd -daemon"),
    case node() of
        nonode@nohost -> {ok, _} = net_kernel:start([list_to_atom("mce_cluster_test_" ++ os:getpid()),
                                                     shortnames]);
        _ -> ok
    end,
    %% The test build's code: mcerlang's ebin (the NIF is beside it, in
    %% priv), the examples' and the tests' (the models).
    Paths = lists:usort([filename:dirname(code:which(M))
                         || M <- [mcerlang, client_server, locker, ?MODULE]]),
    [begin
         {ok, Pid, Node} = peer:start(#{name => peer:random_name(?MODULE),
                                             args => lists:append([["-pa", P] || P <- Paths])}),
         {Pid, Node}
     end || _ <- [1, 2]].

stop_peers(Peers) ->
    [catch peer:stop(Pid) || {Pid, _} <- Peers],
    ok.

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
    ?assertEqual(maps:get(violation, Cex), maps:get(violation, Again)),
    %% A deadlock, too (a program whose every path ends in one).
    D = {client_server, start, [3, 2]},
    case mcerlang:check(D, ?FULL#{property => deadlock, idle => none}) of
        {error, DSeq} ->
            {error, DCex} = mcerlang:check(D, ?FULL#{property => deadlock, idle => none,
                                                     cluster => Nodes}),
            ?assertEqual(maps:get(violation, DSeq), maps:get(violation, DCex)),
            ?assertMatch({ok, _}, mcerlang:replay(DCex));
        {ok, _} ->
            ok
    end.

stats_per_node(Nodes) ->
    {ok, St} = mcerlang:check({client_server, start, [3, 2]}, ?FULL#{cluster => Nodes}),
    ?assertEqual(3, maps:get(cluster, St)),
    ?assertEqual({off, option}, maps:get(reduction, St)),
    {ok, St2} = mcerlang:check({client_server, start, [3, 2]},
                               #{progress => false, cluster => Nodes}),
    ?assertEqual({off, cluster}, maps:get(reduction, St2)),
    ?assertEqual({off, cluster}, maps:get(symmetry, St2)),
    ?assertEqual(maps:get(states, St), maps:get(states, St2)),
    [?assert(maps:get(bytes_sent, Sh) > 0) || Sh <- maps:get(node_stats, St)].

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
                 mcerlang:check(E, ?FULL#{cluster => Nodes, table => hash_compact})).

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
