%% @doc The distributed search's bench (issue 20 item 2, `make
%% bench-cluster'): the bench models checked by this node alone and with
%% one and two peer nodes of this machine (started with OTP's `peer'),
%% the reductions off so every run stores the same states; and one model
%% with partial-order reduction on (`red'), whose counts grow with the
%% nodes (a node cuts a state only toward a state it owns itself).
%%
%% Per row: the states and transitions (the one-node row's, `red' aside),
%% the wall time, the CPU time of all the nodes' VMs and per state, states
%% per wall second, the successors sent to another node per state stored
%% (a successor owned elsewhere crosses even when its owner has it), the
%% payload per successor sent (the state's wire bytes and the step's
%% label, c_src/state_wire.h) and the bytes that crossed the distribution
%% sockets per state stored (the sockets' counters on every node: batches,
%% waves and everything else the check sent).  Rounds are interleaved, a row is the median.
%% docs/SCALING.md reads these rows.
-module(mce_bench_cluster).

-export([main/0, main/1]).

-define(ROUNDS, 3).
-define(MAX_TIME, 300000).

-spec main() -> ok.
main() ->
    main(?ROUNDS).

-spec main(pos_integer()) -> ok.
main(Rounds) ->
    Off = #{reduction => false, symmetry => false, progress => false, max_time => ?MAX_TIME},
    Models = [{"client_server(5,2)", {client_server, start, [5, 2]}, Off},
              {"counter_server(4,2)", {counter_server, start, [4, 2]}, Off#{timeouts => when_idle}},
              {"locker(aEaEaS,1)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
               Off#{timeouts => when_idle, property => abnormal_exit}},
              {"client_server(5,2) red", {client_server, start, [5, 2]}, Off#{reduction => true}}],
    Paths = lists:usort([filename:absname(filename:dirname(code:which(M))) || M <- [mcerlang, client_server, ?MODULE]]),
    Peers = [begin
                 {ok, Pid, Node} = peer:start(#{name => peer:random_name(?MODULE),
                                                args => ["+sbwt", "none", "-hidden" | lists:append([["-pa", P] || P <- Paths])]}),
                 {Pid, Node}
             end || _ <- [1, 2]],
    Nodes = [N || {_, N} <- Peers],
    Setups = [{"1 node", []}, {"2 nodes", lists:sublist(Nodes, 1)}, {"3 nodes", Nodes}],
    io:format("~ncluster (issue 20 item 2): ~b schedulers online here, peers on this machine, "
              "~b rounds interleaved, medians~n", [erlang:system_info(schedulers_online), Rounds]),
    [mce_translate:ensure(M) || {_, {M, _, _}, _} <- Models],
    Runs = [{Label, Setup, run(Entry, Opts, Cluster)}
            || _ <- lists:seq(1, Rounds), {Label, Entry, Opts} <- Models, {Setup, Cluster} <- Setups],
    io:format("~-20s ~-8s ~8s ~9s ~8s ~8s ~9s ~9s ~6s ~9s ~9s~n",
              ["model", "nodes", "states", "trans", "wall ms", "cpu ms", "cpu us/st", "states/s",
               "sent%", "B/sent", "dist B/st"]),
    [print(Label, Setup, mce_bench_workers:median_row([R || {L, S, R} <- Runs, L =:= Label, S =:= Setup]))
     || {Label, _, _} <- Models, {Setup, _} <- Setups],
    [peer:stop(Pid) || {Pid, _} <- Peers],
    ok.

run(Entry, Opts, Cluster) ->
    erlang:garbage_collect(),
    Before = dist_bytes([node() | Cluster]),
    Cpu0 = cpu_ms([node() | Cluster]),
    T0 = erlang:monotonic_time(microsecond),
    Result = mcerlang:check(Entry, Opts#{cluster => Cluster}),
    Wall = erlang:monotonic_time(microsecond) - T0,
    Cpu1 = cpu_ms([node() | Cluster]),
    After = dist_bytes([node() | Cluster]),
    Stats = case Result of
                {ok, St} -> St;
                {error, #{stats := St}} -> St;
                {inconclusive, _, St} -> St
            end,
    #{verdict => element(1, Result), states => maps:get(states, Stats),
      transitions => maps:get(transitions, Stats), wall_us => Wall,
      nodes => length(Cluster) + 1, sent => maps:get(states_sent, Stats, 0),
      payload => maps:get(bytes_sent, Stats, 0), dist => After - Before, cpu_ms => Cpu1 - Cpu0}.

%% CPU milliseconds of these nodes' VMs so far (every thread).
cpu_ms(Nodes) ->
    lists:sum([element(1, rpc:call(N, erlang, statistics, [runtime])) || N <- Nodes]).

%% Bytes sent on the distribution sockets of these nodes so far.
dist_bytes(Nodes) ->
    lists:sum([case rpc:call(N, erlang, system_info, [dist_ctrl]) of
                   Ctrl when is_list(Ctrl) ->
                       lists:sum([case rpc:call(N, inet, getstat, [Port, [send_oct]]) of
                                      {ok, [{send_oct, B}]} -> B;
                                      _ -> 0
                                  end || {_, Port} <- Ctrl, is_port(Port)]);
                   _ -> 0
               end || N <- Nodes]).

print(Label, Setup, #{states := S, transitions := T, wall_us := Us, sent := Sent, cpu_ms := Cpu,
                      payload := Payload, dist := Dist, verdict := V}) ->
    Rate = S * 1000000 / max(Us, 1),
    io:format("~-20s ~-8s ~8b ~9b ~8b ~8b ~9.1f ~9b ~6.1f ~9b ~9b~s~n",
              [Label, Setup, S, T, Us div 1000, Cpu, Cpu * 1000 / max(S, 1), round(Rate),
               100 * Sent / max(S, 1), Payload div max(Sent, 1), Dist div max(S, 1),
               case V of ok -> ""; _ -> io_lib:format("  (~p)", [V]) end]).
