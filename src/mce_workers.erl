%% @doc The parallel safety search (`workers => N', issue 20): N workers
%% expand the states of one breadth-first search at once.
%%
%% Each worker is a process answering the requests of a C search of its
%% own (its stack, step cache and match memo); the searches share one part
%% store, which is the visited set, and the nodes and queue of the
%% discovered states (c_src/search_pool.h).  A worker claims a state by
%% interning it first, so every state is expanded once, by one worker:
%% with the exact table the count is the sequential search's, whatever the
%% interleaving of the workers.
%%
%% The check's worker process is the first worker and the coordinator: it
%% starts the others, runs its own loop, then collects theirs and makes one
%% result of them.  The others run under mcerlang:isolated/2 as the first
%% does (a watchdog of their own stops a runaway step, their heap is
%% bounded, an error naming a culprit comes back to be raised here).  A
%% worker whose search ends other than exhausted (a violation, a limit, an
%% error) stops the others (c_src/search.c, search_settled; the limits
%% checked in Erlang and crashes, from here: mce_nif:stop_workers/1).
-module(mce_workers).

-export([run/2, merge_stats/1]).

%% The first worker's first request is `First' (mce_nif:start/3 made it).
-spec run(mce_nif:request(), mce_search:ctx()) -> term().
run(First, Ctx) ->
    S = mce_search:search(Ctx),
    Opts = mce_search:options(Ctx),
    Joined = [mce_nif:join(S) || _ <- lists:seq(2, mce_search:workers(Ctx))],
    Helpers = [spawn_worker(W, mce_search:progress_off(Ctx), Opts) || W <- Joined],
    Mine = try mce_search:loop(First, mce_search:with_others(Ctx, Joined))
           catch Class:Reason:Stack ->
                   ok = mce_nif:stop_workers(S),
                   _ = collect(Helpers, []),
                   erlang:raise(Class, Reason, Stack)
           end,
    ended(S, Mine),
    combine([{ok, Mine} | collect(Helpers, [])]).

%% A worker that ends other than by exhausting the states, or by being
%% abandoned, ends the others (the C search does so itself for what it
%% decides: this covers the limits the driver checks).
ended(_S, {ok, _}) -> ok;
ended(_S, {abandoned, _}) -> ok;
ended(S, _) -> ok = mce_nif:stop_workers(S).

spawn_worker(S, Ctx, Opts) ->
    Coordinator = self(),
    %% Linked: if the coordinator dies, so does this process, and with it
    %% (its watchdog sees to that) the worker and its search.
    spawn_link(fun() ->
                       Result = try {ok, mcerlang:isolated(fun() -> mce_search:worker_loop(S, Ctx) end,
                                                           Opts)}
                                catch Class:Reason:Stack -> {raise, Class, Reason, Stack}
                                end,
                       case Result of
                           {ok, R} -> ended(S, R);
                           _ -> ok = mce_nif:stop_workers(S)
                       end,
                       Coordinator ! {mce_worker_result, self(), Result}
               end).

%% Every worker ends soon once the search is stopped or exhausted: at its
%% next request, or when its watchdog ends a step that runs away.
collect([], Acc) ->
    lists:reverse(Acc);
collect(Helpers, Acc) ->
    receive
        {mce_worker_result, Pid, Result} ->
            collect(lists:delete(Pid, Helpers), [Result | Acc])
    end.

%% One result from the workers': a reduced search that proved nothing
%% runs again (mce_search:safety/2); a violation, the shortest one found;
%% then an error a worker raised; then a limit; else the search is
%% exhausted.  The stats are the sum of the workers'.
combine(Results) ->
    Ended = [R || {ok, R} <- Results],
    Stats = merge_stats([worker_stats(R) || R <- Ended, worker_stats(R) =/= none]),
    Voids = [R || {reduction_void, _} = R <- Ended],
    Violations = lists:sort([{length(maps:get(trace, Cex)), N, Cex}
                             || {N, {error, Cex}} <- lists:enumerate(Ended)]),
    Raised = [R || {raise, _, _, _} = R <- Results],
    Limits = [R || {inconclusive, _, _} = R <- Ended],
    case {Voids, Violations, Raised, Limits} of
        {[Void | _], _, _, _} -> Void;
        {[], [{_, _, Cex} | _], _, _} -> {error, Cex#{stats => Stats}};
        {[], [], [{raise, Class, Reason, Stack} | _], _} -> erlang:raise(Class, Reason, Stack);
        {[], [], [], [{inconclusive, Why, _} | _]} -> {inconclusive, Why, Stats};
        {[], [], [], []} -> {ok, Stats}
    end.

worker_stats({ok, St}) -> St;
worker_stats({abandoned, St}) -> St;
worker_stats({inconclusive, _, St}) -> St;
worker_stats({error, #{stats := St}}) -> St;
worker_stats(_) -> none.

%% The stats of a parallel search from its workers' (the first worker's
%% first): counts add up, the store and the nodes, which they share, count
%% once; `worker_stats' lists each worker's share of the work.
-spec merge_stats([map()]) -> map().
merge_stats([]) ->
    #{};
merge_stats(All) ->
    Shared = lists:max([maps:get(shared_memory, St, 0) || St <- All]),
    Private = fun(K) -> lists:sum([maps:get(K, St) - maps:get(shared_memory, St, 0) || St <- All]) end,
    %% A worker's `states' are those it claimed; the cut states passed
    %% through (c_src/search.c, search_pass_cut) may have been claimed by
    %% another worker, so the kept states are the claims less the passes.
    Kept = [St#{states => maps:get(states, St) - maps:get(passed_states, St, 0)} || St <- All],
    Combined = mce_search:combine_stats(
                 Kept, [transitions, match_memo, step_cache_hits, step_cache_misses,
                        step_cache_entries, step_cache_bytes, decoded_terms_bytes, reduced_states,
                        symmetric_states, renamed_states, passed_states],
                 [max_depth, parts, table_bytes, symmetry_groups, symmetry_stopped],
                 Shared + Private(memory_used)),
    Combined#{memory => Shared + Private(memory),
              worker_stats => [maps:with([states, transitions, step_cache_hits,
                                          step_cache_misses], St) || St <- All]}.
