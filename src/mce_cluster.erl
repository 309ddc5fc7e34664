%% @doc The distributed search (`cluster => [Node]', issue 20 item 2), in
%% Stern and Dill's hash-partitioned scheme ("Parallelizing the Murphi
%% verifier", CAV 1997).
%%
%% The calling node and each node of `cluster' are participants 0..N-1.
%% Each runs a breadth-first search of its own (its own NIF store, one
%% worker) over the states it owns: the owner of a state is the hash of its
%% canonical bytes (c_src/state_wire.h) mod N.  A successor owned elsewhere
%% is not stored: the C search puts its bytes in an outbox with its parent
%% (this participant's pool node) and the label of the step into it, and the
%% participant's driver sends the outbox between steps, one message per
%% owner (a batch), to the owner's driver, which imports the states and
%% queues the new ones (c_src/search_cluster.h).  Every state is stored and
%% expanded by its owner alone, once, so the states and transitions of the
%% participants add up to the sequential search's.  Under symmetry the
%% finder routes an orbit's representative, with the renaming to it, so
%% an orbit has one owner and a path's renamings are all kept.
%%
%% Termination: the coordinator (a process on the calling node) runs
%% waves: it asks every driver for its count of batches sent and received
%% and whether it is idle (its queue empty and its outbox sent), and ends
%% the search when two waves in a row find every driver idle, with the
%% same counts, and the batches sent equal to those received.  This is
%% Mattern's four-counter method ("Algorithms for distributed termination
%% detection", Distributed Computing 2, 1987) with the passive flag a
%% participant with local work needs: say driver i answered wave 1 at a_i
%% and wave 2 at b_i, every a_i before every b_j.  A driver idle at a_i and
%% at b_i with the same counts received no batch in between (counts only
%% grow), and an idle driver that receives nothing stays idle and sends
%% nothing.  So at T = max a_i, which is inside every [a_i, b_i], every
%% driver is idle and its counts are those of wave 1, whose sums are
%% equal: every batch sent was received, none is in flight, and nothing can
%% ever wake a driver again.  The converse: once the search is over, two
%% waves find exactly that.  Distribution keeps a batch in order and
%% delivers it unless the nodes disconnect, which ends the check.
%%
%% A violation ends the check: its participant asks the others for the
%% labels of their segments of the path (each imported state remembers its
%% remote parent) and builds the counterexample, prefix first.  A
%% participant that dies, or a node that goes down or disconnects, ends the
%% check as `{inconclusive, {node_down, Node}, Stats}': never a verdict.
%% Limits (max_time, memory, max_states) hold per node.
-module(mce_cluster).

-export([run/2, poll/3, participant_main/1, merge_stats/1]).

-record(share, {me :: non_neg_integer(),
                peers :: tuple(),                 % driver pid by index + 1
                coordinator :: pid(),
                coordinator_ref :: reference() | none,
                sent = 0 :: non_neg_integer(),     % batches
                received = 0 :: non_neg_integer()}).
-opaque share() :: #share{}.
-export_type([share/0]).

%% An idle driver waits this long for a batch before it looks at its
%% limits again; waves run this often while some driver is busy.
-define(IDLE_WAIT, 20).
-define(WAVE_PAUSE, 5).
%% A node has this long to load the program and answer.
-define(SETUP_TIMEOUT, 60000).

%%--------------------------------------------------------------------
%% The calling node: participant 0
%%--------------------------------------------------------------------

%% The check's search, started (its first request `First'), becomes
%% participant 0; the others are started on the `cluster' nodes.
-spec run(mce_nif:request(), mce_search:ctx()) -> term().
run(First, Ctx) ->
    S = mce_search:search(Ctx),
    Opts = mce_search:options(Ctx),
    Nodes = maps:get(cluster, Opts),
    [reachable(Node, Nodes) || Node <- Nodes],
    InitCall = mce_search:init_call(Ctx),
    Caller = self(),
    Setup = #{caller => Caller, init_call => InitCall, opts => Opts, nodes => [node() | Nodes],
              modules => translated_modules(), creation => mce_pid:creation()},
    Coord = spawn_link(fun() -> coordinator(Setup) end),
    receive
        {mce_cluster_go, Coord, Peers} ->
            %% The coordinator is linked to this process: no monitor.
            Share = #share{me = 0, peers = Peers, coordinator = Coord, coordinator_ref = none},
            Ctx1 = mce_search:set_share(mce_search:progress_off(Ctx), Share),
            Result = try mce_search:loop(First, Ctx1)
                     catch Class:Reason:Stack ->
                             %% The others end with the coordinator (they
                             %% monitor it); the exception goes on.
                             unlink(Coord),
                             exit(Coord, kill),
                             erlang:raise(Class, Reason, Stack)
                     end,
            case finish(S, Share, Result) of
                {raise, C, R} -> erlang:raise(C, R, []);
                Final -> Final
            end;
        {mce_cluster_failed, Coord, {raise, Class, Reason}} ->
            erlang:raise(Class, Reason, []);
        {mce_cluster_failed, Coord, Why} ->
            erlang:error({mcerlang, Why})
    end.

reachable(Node, Nodes) ->
    case net_adm:ping(Node) of
        pong -> ok;
        pang -> erlang:error({mcerlang, {bad_option_value, cluster, Nodes,
                                         lists:flatten(io_lib:format("node ~p does not answer", [Node]))}})
    end.

%% The translated modules loaded here, by MD5: every participant must run
%% the same code (a fun's encoding names its module's MD5).
translated_modules() ->
    [{M, M:module_info(md5)} || {M, _} <- code:all_loaded(),
                               lists:prefix("mce$", atom_to_list(M))].


%% A participant's search ended: its result goes to the coordinator
%% (a violation with the whole path), then it answers the others' path
%% questions until the coordinator has the final result.
finish(_S, _Share, {inconclusive, {cluster, coordinator_down}, _}) ->
    coordinator_down;
finish(S, Share, Result0) ->
    Result = case Result0 of
                 {error, Cex} -> whole_path(S, Share, Cex);
                 _ -> Result0
             end,
    Share#share.coordinator ! {mce_cluster_result, Share#share.me, with_counts(S, Result)},
    serve(S, Share).

with_counts(S, {error, #{stats := St} = Cex}) -> {error, Cex#{stats => counts(S, St)}};
with_counts(S, {inconclusive, Why, St}) -> {inconclusive, Why, counts(S, St)};
with_counts(_S, Other) -> Other.

counts(S, St) ->
    #{sent := Sent, sent_bytes := Bytes, received := Received, por_sent := PorSent,
      por_hazard := Hazard} = mce_nif:cluster_stats(S),
    St#{node => node(), states_sent => Sent, bytes_sent => Bytes, states_received => Received,
        '$mce_por_guard' => {PorSent, Hazard}}.

serve(S, #share{coordinator = Coord, coordinator_ref = CRef} = Share) ->
    receive
        {mce_cluster_final, Coord, Final} ->
            Final;
        {mce_cluster_path, From, Ref, Index} ->
            From ! {mce_cluster_path_reply, Ref, mce_nif:cluster_path(S, Index)},
            serve(S, Share);
        {mce_cluster_probe, Coord, Ref} ->
            Coord ! {mce_cluster_probe_reply, Ref, Share#share.me, Share#share.sent,
                     Share#share.received, true, #{}},
            serve(S, Share);
        {mce_cluster_batch, _, _} ->
            serve(S, Share);
        {mce_cluster_stop, Coord, _} ->
            serve(S, Share);
        {'DOWN', CRef, process, Coord, _} ->
            coordinator_down
    end.

%% The trace of a violation found here starts at the state this
%% participant imported: the others hold the steps before it, and under
%% symmetry the renamings of the states they lead through, which the
%% counterexample's way back to concrete pids needs from the initial state
%% on (mce_search:concrete/1).
whole_path(S, Share, #{trace := Trace} = Cex) ->
    case mce_nif:cluster_stack(S) of
        {_, none} ->
            {error, mce_search:concrete(Cex)};
        {Label, {From, Index}} when is_binary(Label) ->
            case prefix(S, Share, From, Index, []) of
                {ok, Prefix} ->
                    Steps = [mce_search:step(binary_to_term(B))
                             || B <- [L || {L, _} <- Prefix, is_binary(L)] ++ [Label]],
                    Whole = renamed_from_root(Cex#{trace => Steps ++ Trace},
                                              [Perm || {_, Perm} <- Prefix]),
                    {error, mce_search:concrete(Whole)};
                {node_down, Node} ->
                    {inconclusive, {node_down, Node}, maps:get(stats, Cex)}
            end;
        Error ->
            mce_search:internal_error(Error)
    end.

%% The renamings of the states before this participant's stack (the
%% renamings the pool kept are lists of pid-key pairs, as the stack's).
renamed_from_root(#{'$mce_concrete' := {Renamings, InitCall, Opts}} = Cex, Before) ->
    Cex#{'$mce_concrete' => {Before ++ Renamings, InitCall, Opts}};
renamed_from_root(Cex, _Before) ->
    Cex.

prefix(S, Share, From, Index, Acc) ->
    case path_of(S, Share, From, Index) of
        {Labels, none} -> {ok, Labels ++ Acc};
        {Labels, {From1, Index1}} -> prefix(S, Share, From1, Index1, Labels ++ Acc);
        {node_down, _} = Down -> Down;
        Error -> mce_search:internal_error(Error)
    end.

path_of(S, #share{me = Me}, Me, Index) ->
    mce_nif:cluster_path(S, Index);
path_of(S, #share{peers = Peers} = Share, From, Index) ->
    Pid = element(From + 1, Peers),
    Ref = erlang:monitor(process, Pid),
    Pid ! {mce_cluster_path, self(), Ref, Index},
    await_path(S, Share, Pid, Ref).

%% While waiting, this participant answers the others (two violations
%% at once ask each other).
await_path(S, #share{coordinator = Coord} = Share, Pid, Ref) ->
    receive
        {mce_cluster_path_reply, Ref, Reply} ->
            erlang:demonitor(Ref, [flush]),
            Reply;
        {'DOWN', Ref, process, Pid, _} ->
            {node_down, node(Pid)};
        {mce_cluster_path, From, Ref2, Index} ->
            From ! {mce_cluster_path_reply, Ref2, mce_nif:cluster_path(S, Index)},
            await_path(S, Share, Pid, Ref);
        {mce_cluster_probe, Coord, PRef} ->
            Coord ! {mce_cluster_probe_reply, PRef, Share#share.me, Share#share.sent,
                     Share#share.received, false, #{}},
            await_path(S, Share, Pid, Ref)
    end.

%%--------------------------------------------------------------------
%% Every participant: the exchange, between steps
%%--------------------------------------------------------------------

%% Called by the search loop (mce_search) every few hundred steps (busy)
%% and whenever the C search has nothing to expand (idle): the outbox goes
%% to the owners, the batches that came in are imported, the coordinator's
%% questions are answered.  An idle participant waits a little for work.
-spec poll(mce_nif:search(), share(), busy | idle) -> {ok, share()} | {stop, term()}.
poll(S, Share0, Mode) ->
    Share = send_outbox(S, Share0),
    Wait = case Mode of
               idle -> ?IDLE_WAIT;
               busy -> 0
           end,
    drain(S, Share, Mode, Wait).

send_outbox(S, #share{peers = Peers, me = Me} = Share) ->
    case mce_nif:cluster_outbox(S) of
        [] ->
            Share;
        Out when is_list(Out) ->
            ByOwner = lists:foldr(fun({Owner, Parent, Depth, Wire, Label, Perm}, Acc) ->
                                          Entry = {Parent, Depth, Wire, Label, Perm},
                                          maps:update_with(Owner, fun(L) -> [Entry | L] end,
                                                           [Entry], Acc)
                                  end, #{}, Out),
            maps:foreach(fun(Owner, Batch) ->
                                 element(Owner + 1, Peers) ! {mce_cluster_batch, Me, Batch}
                         end, ByOwner),
            Share#share{sent = Share#share.sent + map_size(ByOwner)};
        Error ->
            mce_search:internal_error(Error)
    end.

drain(S, #share{coordinator = Coord, coordinator_ref = CRef} = Share, Mode, Wait) ->
    receive
        {mce_cluster_batch, From, Batch} ->
            case mce_nif:cluster_import(S, From, Batch) of
                {ok, _New} -> drain(S, Share#share{received = Share#share.received + 1}, busy, 0);
                Error -> mce_search:internal_error(Error)
            end;
        {mce_cluster_probe, Coord, Ref} ->
            #{states := States, transitions := Transitions, memory_used := Mem} = mce_nif:stats(S),
            Coord ! {mce_cluster_probe_reply, Ref, Share#share.me, Share#share.sent,
                     Share#share.received, Mode =:= idle,
                     #{states => States, transitions => Transitions, memory_used => Mem}},
            drain(S, Share, Mode, Wait);
        {mce_cluster_path, From, Ref, Index} ->
            From ! {mce_cluster_path_reply, Ref, mce_nif:cluster_path(S, Index)},
            drain(S, Share, Mode, Wait);
        {mce_cluster_stop, Coord, Why} ->
            {stop, {cluster, Why}};
        {'DOWN', CRef, process, Coord, _} ->
            {stop, {cluster, coordinator_down}}
    after Wait ->
            {ok, Share}
    end.

%%--------------------------------------------------------------------
%% The other nodes' participants
%%--------------------------------------------------------------------

%% Spawned on a `cluster' node by the coordinator: runs the participant
%% under mcerlang:isolated/2 (a watchdog, a bounded heap) as the calling
%% node runs its check, and reports what went wrong to the coordinator.
-spec participant_main(map()) -> ok.
participant_main(#{coordinator := Coord, index := I, opts := Opts} = Setup) ->
    try mcerlang:isolated(fun() -> participant(Setup) end, Opts) of
        _ -> ok
    catch
        Class:Reason ->
            Coord ! {mce_cluster_raised, I, self(), {raise, Class, Reason}},
            ok
    end.

participant(#{coordinator := Coord, index := I, init_call := InitCall, opts := Opts,
              modules := Modules, creation := Creation}) ->
    same_code(InitCall, Modules),
    mce_pid:creation() =:= Creation orelse
        erlang:error({mcerlang, {cluster_node_differs, node(), creation,
                                 "this node's simulated pids would not be the caller's"}}),
    CRef = erlang:monitor(process, Coord),
    Coord ! {mce_cluster_ready, I, self()},
    receive
        {mce_cluster_go, Coord, Peers} ->
            Share = #share{me = I, peers = Peers, coordinator = Coord, coordinator_ref = CRef},
            {S, Result} = mce_search:participant(InitCall, Opts, Share),
            finish(S, Share, Result);
        {'DOWN', CRef, process, Coord, _} ->
            coordinator_down
    end.

%% The translations the caller loaded, here: the entry's closure
%% translated the same way (the translation cache on disk makes it a
%% load), and every translated module loaded on both nodes the same by
%% MD5 (modules translated later, on demand, are translated from the same
%% sources by the same translator).
same_code({TrM, _F, _A}, Modules) ->
    case atom_to_list(TrM) of
        "mce$" ++ M -> _ = mce_translate:ensure(list_to_atom(M)), ok;
        _ -> ok
    end,
    Here = maps:from_list(translated_modules()),
    [erlang:error({mcerlang, {cluster_node_differs, node(), TrMod,
                              "the translation differs from the caller's: "
                              "the nodes must run the same code"}})
     || {TrMod, MD5} <- Modules, maps:get(TrMod, Here, MD5) =/= MD5],
    ok;
same_code(_InitCall, _Modules) ->
    erlang:error({mcerlang, {cluster_node_differs, node(), entry,
                             "a distributed check takes an entry {M, F, Args} or fun M:F/0"}}).

%%--------------------------------------------------------------------
%% The coordinator
%%--------------------------------------------------------------------

-record(co, {caller :: pid(),
             nodes :: [node()],
             drivers :: tuple(),               % by index + 1
             monitors = #{} :: #{reference() => non_neg_integer()},
             results = #{} :: #{non_neg_integer() => term()},
             stopping = false :: false | {true, term()},
             last = none :: none | [{non_neg_integer(), non_neg_integer()}],
             progress :: boolean(),
             reported :: integer(),
             started :: integer()}).

coordinator(#{caller := Caller, nodes := [_ | Others] = Nodes, opts := Opts} = Setup) ->
    N = length(Nodes),
    Outer = [{I, spawn(Node, ?MODULE, participant_main,
                       [Setup#{coordinator => self(), index => I,
                               opts => Opts#{'$mce_cluster' => {N, I}, progress => false}}])}
             || {I, Node} <- lists:zip(lists:seq(1, N - 1), Others)],
    Mons = maps:from_list([{erlang:monitor(process, P), I} || {I, P} <- Outer]),
    case await_ready(Outer, Mons, #{}) of
        {ok, Drivers} ->
            Peers = list_to_tuple([Caller | [maps:get(I, Drivers) || I <- lists:seq(1, N - 1)]]),
            [P ! {mce_cluster_go, self(), Peers} || P <- tuple_to_list(Peers)],
            %% The drivers are watched from now on; a node that goes
            %% down takes its driver with it (noconnection).
            [erlang:demonitor(R, [flush]) || R <- maps:keys(Mons)],
            Watched = maps:from_list([{erlang:monitor(process, element(I + 1, Peers)), I}
                                      || I <- lists:seq(1, N - 1)]),
            Now = erlang:monotonic_time(millisecond),
            waves(#co{caller = Caller, nodes = Nodes, drivers = Peers, monitors = Watched,
                      progress = maps:get(progress, Opts), reported = Now, started = Now});
        {failed, Why} ->
            [exit(P, kill) || {_, P} <- Outer],
            Caller ! {mce_cluster_failed, self(), Why}
    end.

await_ready(Outer, _Mons, Ready) when map_size(Ready) =:= length(Outer) ->
    {ok, Ready};
await_ready(Outer, Mons, Ready) ->
    receive
        {mce_cluster_ready, I, Driver} ->
            await_ready(Outer, Mons, Ready#{I => Driver});
        {mce_cluster_raised, _I, _Pid, Raise} ->
            {failed, Raise};
        {'DOWN', Ref, process, Pid, Reason} when is_map_key(Ref, Mons) ->
            {failed, {cluster_node_failed, node(Pid), Reason}}
    after ?SETUP_TIMEOUT ->
            {failed, {cluster_setup_timeout, [node(P) || {I, P} <- Outer, not is_map_key(I, Ready)]}}
    end.

%% Waves until the search ends, then the results.
waves(#co{stopping = {true, _}} = Co) ->
    collect(Co);
waves(#co{drivers = Drivers} = Co) ->
    Ref = make_ref(),
    [P ! {mce_cluster_probe, self(), Ref} || P <- tuple_to_list(Drivers)],
    case wave(Co, Ref, #{}) of
        {replies, Replies, Co1} ->
            Co2 = progress(Co1, Replies),
            Counts = [{Sent, Received} || {_, {Sent, Received, _, _}} <- lists:sort(maps:to_list(Replies))],
            AllIdle = lists:all(fun({_, {_, _, Idle, _}}) -> Idle end, maps:to_list(Replies)),
            Balanced = lists:sum([S || {S, _} <- Counts]) =:= lists:sum([R || {_, R} <- Counts]),
            case AllIdle andalso Balanced andalso Co2#co.last =:= Counts of
                true ->
                    collect(stop_all(Co2, done));
                false ->
                    Last = case AllIdle andalso Balanced of
                               true -> Counts;
                               false -> none
                           end,
                    AllIdle orelse timer:sleep(?WAVE_PAUSE),
                    waves(Co2#co{last = Last})
            end;
        {stopped, Co1} ->
            collect(Co1)
    end.

%% One wave's replies; a result or a death met meanwhile stops the search.
wave(#co{drivers = Drivers} = Co, _Ref, Replies) when map_size(Replies) =:= tuple_size(Drivers) ->
    {replies, Replies, Co};
wave(Co, Ref, Replies) ->
    receive
        {mce_cluster_probe_reply, Ref, I, Sent, Received, Idle, Summary} ->
            wave(Co, Ref, Replies#{I => {Sent, Received, Idle, Summary}});
        Msg ->
            case event(Co, Msg) of
                {stopped, Co1} -> {stopped, Co1};
                {continue, Co1} -> wave(Co1, Ref, Replies)
            end
    end.

%% A participant's result or death.  A result other than the end the
%% coordinator announced stops the others.
event(Co, {mce_cluster_result, I, Result}) ->
    Co1 = Co#co{results = (Co#co.results)#{I => Result}},
    {stopped, stop_all(Co1, stop_reason(Result))};
event(Co, {mce_cluster_raised, _, Pid, Raise}) ->
    I = index_of(Co, Pid),
    {stopped, stop_all(Co#co{results = (Co#co.results)#{I => Raise}}, raised)};
event(#co{monitors = Mons} = Co, {'DOWN', Ref, process, Pid, _Reason}) when is_map_key(Ref, Mons) ->
    I = maps:get(Ref, Mons),
    Co1 = Co#co{results = maps:merge(#{I => {node_down, node(Pid)}}, Co#co.results)},
    {stopped, stop_all(Co1, {node_down, node(Pid)})};
event(Co, _Stale) ->
    {continue, Co}.

index_of(#co{drivers = Drivers}, Pid) ->
    case [I || I <- lists:seq(0, tuple_size(Drivers) - 1), element(I + 1, Drivers) =:= Pid] of
        [I] -> I;
        [] -> 0
    end.

stop_reason({error, _}) -> violation;
stop_reason({inconclusive, Why, _}) -> Why;
stop_reason(_) -> stopped.

stop_all(#co{stopping = {true, _}} = Co, _Why) ->
    Co;
stop_all(#co{drivers = Drivers} = Co, Why) ->
    [P ! {mce_cluster_stop, self(), Why} || P <- tuple_to_list(Drivers)],
    Co#co{stopping = {true, Why}}.

%% Every participant's result (a dead one's is node_down), then the
%% final result to all of them; the caller returns it.
collect(#co{results = Results, drivers = Drivers} = Co) when map_size(Results) =:= tuple_size(Drivers) ->
    Final = final(Co),
    [P ! {mce_cluster_final, self(), Final} || P <- tuple_to_list(Drivers)],
    ok;
collect(Co) ->
    receive
        Msg ->
            case event(Co, Msg) of
                {_, Co1} -> collect(Co1)
            end
    end.

%% A node down wins over everything but a whole counterexample (a real
%% path of the program, whoever died after); then a reduced search voided
%% (mce_search:safety/2 runs the check again): by a participant (the
%% program's use of pid order under symmetry, a read of another process's
%% record), or by the guard of sending safe steps across participants
%% (por_guard/1); then an error raised, a limit; the end announced is `ok'.
final(#co{results = Results, nodes = Nodes}) ->
    Ordered = [maps:get(I, Results) || I <- lists:seq(0, length(Nodes) - 1)],
    AllStats = [St || R <- Ordered, St <- [result_stats(R)], St =/= none],
    Stats = merge_stats(AllStats),
    Violations = lists:sort([{length(maps:get(trace, Cex)), I, Cex}
                             || {I, {error, Cex}} <- lists:enumerate(0, Ordered)]),
    Down = [Node || {node_down, Node} <- Ordered]
        ++ [Node || {inconclusive, {node_down, Node}, _} <- Ordered],
    Voids = [V || {reduction_void, _} = V <- Ordered] ++ por_guard(AllStats),
    Raised = [R || {raise, _, _} = R <- Ordered],
    Limits = [Why || {inconclusive, Why, _} <- Ordered, not cluster_end(Why)],
    case {Violations, Down, Voids, Raised, Limits} of
        {[{_, _, Cex} | _], _, _, _, _} -> {error, Cex#{stats => Stats}};
        {[], [Node | _], _, _, _} -> {inconclusive, {node_down, Node}, Stats};
        {[], [], [Void | _], _, _} -> Void;
        {[], [], [], [Raise | _], _} -> Raise;
        {[], [], [], [], [Why | _]} -> {inconclusive, Why, Stats};
        {[], [], [], [], []} -> {ok, Stats}
    end.

%% The guard of sending safe steps (c_src/por.h, rule 7 (g)) over the
%% participants: one search is void when it both took a sending step as
%% safe and met an exit signal or link to another process or a list of
%% the processes; a distributed search is one search, so one participant's
%% sending step and another's hazard void it too.  Each participant's
%% search voids itself for its own pair; the pairs across participants
%% are judged here, at the end, since a violation found meanwhile is a
%% real run whatever the guard says (docs/ARCHITECTURE.md, "Distributed
%% search").
por_guard(AllStats) ->
    Guards = [G || #{'$mce_por_guard' := G} <- AllStats],
    case {lists:any(fun({Sent, _}) -> Sent end, Guards),
          [Why || {_, Why} <- Guards, Why =/= none]} of
        {true, [Why | _]} -> [{reduction_void, Why}];
        _ -> []
    end.

cluster_end({cluster, _}) -> true;
cluster_end(_) -> false.

result_stats({error, #{stats := St}}) -> St;
result_stats({inconclusive, _, St}) -> St;
result_stats(_) -> none.

%% A progress line a second for each node, from the wave's replies.
progress(#co{progress = true, reported = Last, nodes = Nodes, started = T0} = Co, Replies) ->
    Now = erlang:monotonic_time(millisecond),
    case Now - Last >= 1000 of
        true ->
            Secs = max(Now - T0, 1) / 1000,
            [io:format(standard_error, "mcerlang: ~p: ~b states, ~b states/s, ~b transitions, ~.1f MB~n",
                       [lists:nth(I + 1, Nodes), St, round(St / Secs), Tr, Mem / 1048576])
             || {I, {_, _, _, #{states := St, transitions := Tr, memory_used := Mem}}}
                    <- lists:sort(maps:to_list(Replies))],
            Co#co{reported = Now};
        false ->
            Co
    end;
progress(Co, _Replies) ->
    Co.

%% The stats of a distributed search from its participants' (the calling
%% node's first): counts add up, each node's share is listed.
-spec merge_stats([map()]) -> map().
merge_stats([]) ->
    #{};
merge_stats(All) ->
    Combined = mce_search:combine_stats(
                 [maps:remove('$mce_por_guard', St) || St <- All],
                 [transitions, parts, memory, match_memo, step_cache_hits,
                  step_cache_misses, step_cache_entries, step_cache_bytes,
                  states_sent, states_received, bytes_sent, reduced_states, symmetric_states],
                 [max_depth], lists:sum([maps:get(memory_used, St, 0) || St <- All])),
    (maps:remove(node, Combined))#{
        cluster => length(All),
        node_stats => [maps:with([node, states, transitions, states_sent, states_received,
                                  bytes_sent, memory_used, time_ms, states_per_second], St)
                       || St <- All]}.
