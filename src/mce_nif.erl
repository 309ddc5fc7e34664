%% @doc The NIF boundary: loads `priv/mce_nif.so' and declares its calls.
%%
%% The C side owns the state space (interned states, the DFS stack, the
%% match memo); these calls carry only the deltas of one transition.  See
%% docs/ARCHITECTURE.md for the request/answer protocol.
-module(mce_nif).

-export([new/1, start/3, join/1, work/2, stop_workers/1,
         cluster_outbox/1, cluster_import/3, cluster_path/2, cluster_stack/1, cluster_stats/1, match/2, resume/1, ran/5, observed/3, deaths_judged/2, fresh_pid/2, fresh_ref/2, node_status/3, ether/1,
         alias_active/3, timer/2, unique/1, live_searches/0, process/2, ets_table/2, app_env/1,
         ets_named/3, ets_tables/2,
         stats/1, trace/1, renamings/1,
         top_state/1, top_conts/1, part_term/2, alive/2, group_leader/2, whereis/3, registered/2, processes/2, pid_order/1, monby_read/1, key_order/1, ref_order/1, rename_term/5, monitor_active/3,
         buchi_check/2, expand/2, focus/2, label_binaries/1,
         buchi_new/1, buchi_start/2, buchi_answer/4, buchi_lasso/1, buchi_stats/1]).

-on_load(load/0).

-type search() :: reference().
-type buchi() :: reference().
%% Who moves in a transition (expand-only searches): a process (its pid
%% key), an ether channel, or none (a fault).
-type agent() :: non_neg_integer() | {chan, non_neg_integer(), non_neg_integer(), non_neg_integer()}
               | none.
-type buchi_request() :: {need, non_neg_integer()} | empty | found | incomplete
                       | {error, string()}.
-type request() :: {match, term(), term()}
                 | {run, pos_integer(), start | timeout | {'receive', term()}, term(),
                    [{term(), term()}], boolean()}
                 | {observe, term(), term()}
                 | {deaths, [{pos_integer(), term()}]}
                 | {expanded, pos_integer(), [{pos_integer(), agent(), term(), boolean()}],
                    boolean()}
                 %% the LTL check's expansions, with the reduction: the
                 %% successors (by index) that come from a safe step
                 | {expanded, pos_integer(), [{pos_integer(), agent(), term(), boolean()}],
                    boolean(), [{non_neg_integer(), 1 | 2}]}
                 | done | max_states | deadlock | stopped | yield
                 %% workers: nothing to expand yet; another worker ended the search
                 | idle | abandoned
                 | {reduction_void, mce_search:void_reason() | pid_order}   % the reduced search proves nothing
                 | {error, {string(), integer()}, string()}.
%% A successor bound for another participant of a distributed search:
%% {Owner, ParentNode, Depth, Wire, Label} (cluster_outbox/1).
-type outgoing() :: {non_neg_integer(), non_neg_integer(), pos_integer(), binary(), binary()}.
-export_type([search/0, request/0, buchi/0, agent/0, buchi_request/0, outgoing/0]).

load() ->
    Dir = case code:priv_dir(mcerlang) of
              {error, bad_name} ->
                  filename:join(filename:dirname(filename:dirname(code:which(?MODULE))), "priv");
              D -> D
          end,
    Variant = case os:getenv("MCERLANG_NIF") of
                  "asan" -> filename:join([Dir, "asan", "mce_nif"]);
                  _ -> filename:join(Dir, "mce_nif")
              end,
    erlang:load_nif(Variant, 0).

-spec new(map()) -> search() | {error, term(), string()}.
new(_Config) -> erlang:nif_error(not_loaded).

-spec start(search(), term(), pos_integer()) -> request().
start(_Search, _InitCall, _Pid) -> erlang:nif_error(not_loaded).

%% A new worker of a breadth-first search made with `workers => N'
%% (N > 1): its own stack, step cache and match memo, the first's states
%% and queue (c_src/search_pool.h).
-spec join(search()) -> search().
join(_Search) -> erlang:nif_error(not_loaded).

%% A joined worker's first request (`idle' until the first worker has
%% queued states); the pid is the entry process's, as given to start/3.
%% After the first's start/3: before it the pool is empty and nobody
%% expands anything, which is `done'.  Once per search.
-spec work(search(), pos_integer()) -> request().
work(_Search, _Pid) -> erlang:nif_error(not_loaded).

%% Every worker of the search ends at its next request (`abandoned').
-spec stop_workers(search()) -> ok.
stop_workers(_Search) -> erlang:nif_error(not_loaded).

%% A distributed search's participant (c_src/search_cluster.h, made with
%% cluster_n and cluster_me in new/1): the successors owned by others
%% since the last call, {Owner, ParentNode, Depth, Wire, Label}, which are
%% then the caller's to send.
-spec cluster_outbox(search()) -> [outgoing()] | {error, term(), string()}.
cluster_outbox(_Search) -> erlang:nif_error(not_loaded).

%% Imports participant From's states [{FromNode, Depth, Wire, Label}]:
%% {ok, HowManyWereNew}.
-spec cluster_import(search(), non_neg_integer(),
                     [{non_neg_integer(), pos_integer(), binary(), binary()}]) ->
          {ok, non_neg_integer()} | {error, term(), string()}.
cluster_import(_Search, _From, _States) -> erlang:nif_error(not_loaded).

%% The labels (ETF) of node Index's segment of its path, and where the
%% segment starts: none (the root) or {Participant, Node}.
-spec cluster_path(search(), non_neg_integer()) ->
          {[binary()], none | {non_neg_integer(), non_neg_integer()}} | {error, term(), string()}.
cluster_path(_Search, _Index) -> erlang:nif_error(not_loaded).

%% After a violation: the label into the first state on the stack (none at
%% the root) and where its segment starts.
-spec cluster_stack(search()) ->
          {binary() | none, none | {non_neg_integer(), non_neg_integer()}} | {error, term(), string()}.
cluster_stack(_Search) -> erlang:nif_error(not_loaded).

-spec cluster_stats(search()) -> map() | {error, term(), string()}.
cluster_stats(_Search) -> erlang:nif_error(not_loaded).

%% After `yield' (the C search did its share of work in one call), or
%% `idle' (a worker waited for the others to queue states).
-spec resume(search()) -> request().
resume(_Search) -> erlang:nif_error(not_loaded).

-spec match(search(), boolean() | maybe) -> request().
match(_Search, _Matches) -> erlang:nif_error(not_loaded).

-spec ran(search(), mce_exec:outcome(), list(), term(), boolean()) -> request().
ran(_Search, _Outcome, _Effects, _Label, _Stop) -> erlang:nif_error(not_loaded).

-spec fresh_pid(search(), non_neg_integer()) -> pos_integer() | {error, term(), string()}.
fresh_pid(_Search, _Node) -> erlang:nif_error(not_loaded).

-spec alias_active(search(), non_neg_integer(), non_neg_integer()) -> boolean().
alias_active(_Search, _Pid, _Ref) -> erlang:nif_error(not_loaded).

-spec timer(search(), non_neg_integer()) -> non_neg_integer() | false.
timer(_Search, _Ref) -> erlang:nif_error(not_loaded).

-spec process(search(), non_neg_integer()) -> undefined | tuple() | {error, term(), string()}.
process(_Search, _Pid) -> erlang:nif_error(not_loaded).

-spec ets_table(search(), non_neg_integer()) -> undefined | tuple() | {error, term(), string()}.
ets_table(_Search, _Tid) -> erlang:nif_error(not_loaded).

-spec ets_named(search(), non_neg_integer(), atom()) -> non_neg_integer() | undefined.
ets_named(_Search, _Node, _Name) -> erlang:nif_error(not_loaded).

-spec ets_tables(search(), non_neg_integer()) -> [non_neg_integer()] | {error, term(), string()}.
ets_tables(_Search, _Node) -> erlang:nif_error(not_loaded).

-spec app_env(search()) -> map() | undefined | {error, term(), string()}.
app_env(_Search) -> erlang:nif_error(not_loaded).

-spec unique(search()) -> non_neg_integer().
unique(_Search) -> erlang:nif_error(not_loaded).

%% @doc The verdict of the safety monitors on the successor of an
%% `{observe, MonitorStates, Label}' request.
-spec observed(search(), ok | skip | violation, term()) -> request().
observed(_Search, _Verdict, _MonitorStates) -> erlang:nif_error(not_loaded).

%% @doc The verdict on a `{deaths, [{PidKey, Reason}]}' request: whether
%% one of the processes that died of an exit signal in the step is a
%% violation (the search then stops at the successor).
-spec deaths_judged(search(), boolean()) -> request().
deaths_judged(_Search, _Violation) -> erlang:nif_error(not_loaded).

%% @doc How many searches in this VM are not yet freed.
-spec live_searches() -> non_neg_integer().
live_searches() -> erlang:nif_error(not_loaded).

-spec node_status(search(), non_neg_integer(), non_neg_integer()) -> up | down | disconnected.
node_status(_Search, _From, _Node) -> erlang:nif_error(not_loaded).

-spec ether(search()) -> [{non_neg_integer(), non_neg_integer(), atom(), [term()]}]
                         | {error, term(), string()}.
ether(_Search) -> erlang:nif_error(not_loaded).

-spec fresh_ref(search(), non_neg_integer()) -> pos_integer() | {error, term(), string()}.
fresh_ref(_Search, _Node) -> erlang:nif_error(not_loaded).

%% @doc Does process `Pid' hold monitor `Ref' in the state being expanded?
-spec monitor_active(search(), non_neg_integer(), non_neg_integer()) -> boolean().
monitor_active(_Search, _Pid, _Ref) -> erlang:nif_error(not_loaded).

-spec stats(search()) -> map().
stats(_Search) -> erlang:nif_error(not_loaded).

-spec trace(search()) -> [term()].
trace(_Search) -> erlang:nif_error(not_loaded).

%% @doc For each state of the path to the top of the stack (the initial
%% state first), the renaming of pid keys symmetry reduction applied to
%% make it its representative: `[{From, To}]', `[]' for none.
-spec renamings(search()) -> [[{non_neg_integer(), non_neg_integer()}]] | {error, term(), term()}.
renamings(_Search) -> erlang:nif_error(not_loaded).

-spec top_state(search()) ->
          [{pos_integer(), init | waiting | choosing, term(), [term()], [pos_integer()], atom()}].
top_state(_Search) -> erlang:nif_error(not_loaded).

%% @doc The part ids of the continuations of the top state's processes, in
%% pid order: an id names the same continuation for the whole search.
-spec top_conts(search()) -> [pos_integer()].
top_conts(_Search) -> erlang:nif_error(not_loaded).

%% @doc The term part `Id' (from `top_conts/1') as a term.
-spec part_term(search(), pos_integer()) -> term() | {error, term(), string()}.
part_term(_Search, _Id) -> erlang:nif_error(not_loaded).

%% @doc The group leader of `Pid' in the state being expanded, as stored:
%% its key xor'ed with the default's (0: the default, see sys_state.h).
-spec group_leader(search(), non_neg_integer()) -> non_neg_integer() | undefined.
group_leader(_Search, _Pid) -> erlang:nif_error(not_loaded).

%% @doc Is `Pid' alive in the state being expanded?
-spec alive(search(), non_neg_integer()) -> boolean().
alive(_Search, _Pid) -> erlang:nif_error(not_loaded).

%% @doc The pid registered as `Name' in the state being expanded.
-spec whereis(search(), non_neg_integer(), atom()) -> non_neg_integer() | undefined.
whereis(_Search, _Node, _Name) -> erlang:nif_error(not_loaded).

%% @doc The registered names in the state being expanded.
-spec registered(search(), non_neg_integer()) -> [atom()].
registered(_Search, _Node) -> erlang:nif_error(not_loaded).

%% @doc The pids (keys) of the processes of node `Node' in the state being
%% expanded, in pid order.
-spec processes(search(), non_neg_integer()) -> [non_neg_integer()] | {error, term(), string()}.
processes(_Search, _Node) -> erlang:nif_error(not_loaded).

%% @doc The running step observed the order of pids (mce_rt_order): a
%% symmetric search is void and the check runs again without symmetry.
-spec pid_order(search()) -> ok.
pid_order(_Search) -> erlang:nif_error(not_loaded).

%% @doc The running process asked who monitors it (process_info(self(),
%% monitored_by)): a reduced search that took a monitor or demonitor as
%% safe is void (c_src/por.h, rules 10 and 11).
-spec monby_read(search()) -> ok.
monby_read(_Search) -> erlang:nif_error(not_loaded).

%% @doc The running code iterated a map with pids or refs among its keys
%% (mce_rt_order:map_keys/1): a symmetric search that renames pids in map
%% keys is void, and the check runs again with them pinned.
-spec key_order(search()) -> ok.
key_order(_Search) -> erlang:nif_error(not_loaded).

%% @doc The running code observed the order of two refs of one creator (the
%% keys of a map or an ETS table, the tables of ets:all/0): a search whose
%% reduction took steps safe up to a renaming of ref counters is void
%% (c_src/por.h), symmetry is not (it keeps a creator's refs in order).
-spec ref_order(search()) -> ok.
ref_order(_Search) -> erlang:nif_error(not_loaded).

%% @doc Symmetry reduction's renaming of one term (c_src/sym_rename.c),
%% for the tests: `Bytes' (external format) with the pid keys of
%% `Pairs' ({From, To}, a bijection) renamed, pids and ref creators, the
%% pairs of small maps whose keys moved re-sorted and, with `Ets', an
%% mce_ets table's objects, into the order the VM writes.  `Nodes': the
%% simulated nodes' names, `Creation' theirs (mce_pid:creation/0).  `error'
%% when a moved key sits where the VM's order cannot be restored (a large
%% map's key, a key type c_src/etf_order.c does not order).
-spec rename_term(binary(), [binary()], pos_integer(),
                  [{non_neg_integer(), non_neg_integer()}], boolean()) ->
          {ok, binary()} | error.
rename_term(_Bytes, _Nodes, _Creation, _Pairs, _Ets) -> erlang:nif_error(not_loaded).

%% @doc Büchi emptiness check (c_src/buchi.c) over an explicit graph, for
%% the oracle tests.  `Stem' and `Cycle' are `{Key, SuccIndex}' steps: each
%% state and the 0-based index, in its successor list, of the transition
%% taken to the next step; the last step of `Stem' leads to the head of
%% `Cycle', the last of `Cycle' back to its head.  Agents `none' are exempt
%% from fairness.  `max_states' gives `incomplete' when reached.
-spec buchi_check(#{init := non_neg_integer(),
                    states := #{non_neg_integer() =>
                                    {boolean(), [non_neg_integer()],
                                     [{non_neg_integer(), non_neg_integer() | none}]}}},
                  #{algorithm := ndfs | scc, fairness => none | weak,
                    max_states => non_neg_integer(), max_depth => non_neg_integer()}) ->
          empty | incomplete
        | {lasso, [{non_neg_integer(), non_neg_integer()}],
           [{non_neg_integer(), non_neg_integer()}]}
        | {error, {unknown_state, non_neg_integer()} | string()}.
buchi_check(_Graph, _Options) -> erlang:nif_error(not_loaded).

%% @doc Expand-only searches: lists the successors of state `Id' (an id an
%% earlier `{expanded, ...}' named); answers `match'/`run' requests first.
-spec expand(search(), pos_integer()) -> request().
expand(_Search, _Id) -> erlang:nif_error(not_loaded).

%% @doc Expand-only searches, between expansions: `top_state/1',
%% `ether/1' and the other peeks show state `Id'.
-spec focus(search(), pos_integer()) -> ok.
focus(_Search, _Id) -> erlang:nif_error(not_loaded).

%% @doc Expand-only searches: from now on the labels of `{expanded, ...}'
%% come as their external term format binaries (`binary_to_term/1' gives
%% the label), for a reader that looks into few of them.
-spec label_binaries(search()) -> ok.
label_binaries(_Search) -> erlang:nif_error(not_loaded).

%% @doc A Büchi product search (c_src/buchi.c) answered one state at a
%% time: `buchi_start/2' with the initial key, then `buchi_answer/4' with
%% the data of every `{need, Key}'.
-spec buchi_new(#{algorithm := ndfs | scc, fairness => none | weak,
                  max_states => non_neg_integer(), max_depth => non_neg_integer()}) ->
          buchi() | {error, string()}.
buchi_new(_Options) -> erlang:nif_error(not_loaded).

-spec buchi_start(buchi(), non_neg_integer()) -> buchi_request().
buchi_start(_B, _Init) -> erlang:nif_error(not_loaded).

%% @doc The data of the state last asked for: whether it accepts, the
%% agents enabled in it, and its successors with who moves.
-spec buchi_answer(buchi(), boolean(), [non_neg_integer()],
                   [{non_neg_integer(), non_neg_integer() | none}]) -> buchi_request().
buchi_answer(_B, _Accepting, _Enabled, _Succs) -> erlang:nif_error(not_loaded).

%% @doc After `found': the lasso as `buchi_check/2' gives it.
-spec buchi_lasso(buchi()) -> {[{non_neg_integer(), non_neg_integer()}],
                               [{non_neg_integer(), non_neg_integer()}]} | {error, string()}.
buchi_lasso(_B) -> erlang:nif_error(not_loaded).

-spec buchi_stats(buchi()) -> #{states := non_neg_integer(), transitions := non_neg_integer(),
                                requests := non_neg_integer(), max_depth := non_neg_integer(),
                                cut := non_neg_integer()}.
buchi_stats(_B) -> erlang:nif_error(not_loaded).
