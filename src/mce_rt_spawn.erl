%% @doc The runtime (see mce_rt) for creating processes: spawn/1-4,
%% spawn_link/1-4, spawn_monitor/1-4 and spawn_opt/2,4, on this node and on
%% the other simulated nodes.
%%
%% A new process is a fresh pid (least-fresh numbering, from the C search)
%% and a `spawn' effect carrying its initial call; it runs in a later step.
%%
%% Invariant: an initial call is always one the sandbox has classified
%% (mce_sandbox:init_fun/1, init_mfa/3): a translation, a model or a pure
%% function, never untranslated program code.  A process spawned on this
%% node is alive in the overlay from the spawn on.
-module(mce_rt_spawn).
-compile({no_auto_import, [spawn/1, spawn/3, spawn_link/1, spawn_link/3, spawn_monitor/1,
                            spawn_monitor/3, spawn/2, spawn/4, spawn_link/2, spawn_link/4,
                            spawn_opt/2, spawn_opt/4, spawn_monitor/2, spawn_monitor/4]}).

-export([spawn_init/2, spawn_init_opt/3, spawn/1, spawn/3, spawn_link/1, spawn_link/3, spawn_monitor/1, spawn_monitor/3, spawn/2,
         spawn/4, spawn_link/2, spawn_link/4, spawn_opt/2, spawn_opt/4, spawn_monitor/2,
         spawn_monitor/4]).

-spec spawn(function()) -> pid().
spawn(Fun) -> spawn_fun(Fun, false).

-spec spawn_link(function()) -> pid().
spawn_link(Fun) -> spawn_fun(Fun, true).

-spec spawn(module(), atom(), [term()]) -> pid().
spawn(M, F, A) -> spawn_mfa(M, F, A, false).

-spec spawn_link(module(), atom(), [term()]) -> pid().
spawn_link(M, F, A) -> spawn_mfa(M, F, A, true).

spawn_fun(Fun, Link) when is_function(Fun, 0) ->
    new_process(mce_rt:my_node(), init(Fun), Link);
spawn_fun(Fun, _Link) ->
    erlang:error(badarg, [Fun]).

spawn_mfa(M, F, A, Link) ->
    new_process(mce_rt:my_node(), init_mfa(M, F, A, [M, F, A]), Link).

%% @doc A process whose initial call the checker made itself (the abstract
%% interpreter's machines, mce_abs_eval), on this node.
-spec spawn_init({module(), atom(), [term()]}, boolean()) -> pid().
spawn_init(InitCall, Link) ->
    new_process(mce_rt:my_node(), InitCall, Link).

%% @doc spawn_opt/2,4 of such a process (`Args': the call's arguments, for
%% errors).
-spec spawn_init_opt({module(), atom(), [term()]}, [term()], [term()]) ->
          pid() | {pid(), reference()}.
spawn_init_opt(InitCall, Opts, Args) ->
    spawn_with_opts(fun() -> spawn_init(InitCall, false) end, Opts, Args).

new_process(Node, InitCall, Link) ->
    case mce_nif:fresh_pid(erlang:get('$mce_search'), Node) of
        N when is_integer(N) ->
            mce_rt:effect({spawn, N, InitCall, Link}),
            Node =:= mce_rt:my_node() andalso mce_rt_procs:overlay_alive(N, true),
            mce_pid:term(N);
        {error, Where, Why} ->
            mce_rt:fatal({mcerlang_internal, Where, Why})
    end.

%% @doc spawn/2,4 and spawn_link/2,4 on a simulated node.  The process is
%% created at once (a spawn request and its reply are one step); on a node
%% that cannot be reached it does not exist, and spawn_link then gives a
%% noconnection exit signal.
-spec spawn(node(), function()) -> pid().
spawn(Node, Fun) when is_function(Fun, 0) ->
    new_process(spawn_node(Node, [Node, Fun]), init(Fun), false);
spawn(Node, Fun) -> erlang:error(badarg, [Node, Fun]).

-spec spawn(node(), module(), atom(), [term()]) -> pid().
spawn(Node, M, F, A) ->
    new_process(spawn_node(Node, [Node, M, F, A]), init_mfa(M, F, A, [Node, M, F, A]), false).

-spec spawn_link(node(), function()) -> pid().
spawn_link(Node, Fun) when is_function(Fun, 0) ->
    new_process(spawn_node(Node, [Node, Fun]), init(Fun), true);
spawn_link(Node, Fun) -> erlang:error(badarg, [Node, Fun]).

-spec spawn_link(node(), module(), atom(), [term()]) -> pid().
spawn_link(Node, M, F, A) ->
    new_process(spawn_node(Node, [Node, M, F, A]), init_mfa(M, F, A, [Node, M, F, A]), true).

-spec spawn_monitor(node(), function()) -> {pid(), reference()}.
spawn_monitor(Node, Fun) ->
    Pid = spawn(Node, Fun),
    {Pid, mce_rt_signals:monitor_spawned(Pid)}.

-spec spawn_monitor(node(), module(), atom(), [term()]) -> {pid(), reference()}.
spawn_monitor(Node, M, F, A) ->
    Pid = spawn(Node, M, F, A),
    {Pid, mce_rt_signals:monitor_spawned(Pid)}.

spawn_node(Node, Args) when is_atom(Node) ->
    case mce_pid:node_index(Node) of
        {ok, I} -> I;
        error -> mce_rt:fatal({mcerlang, {unknown_node, Node, {erlang, spawn, length(Args)},
                                   "declare every node a program uses in the nodes option"}})
    end;
spawn_node(_Node, Args) ->
    erlang:error(badarg, Args).

init(Fun) ->
    mce_sandbox:init_fun(Fun).

init_mfa(M, F, A, _Args) when is_atom(M), is_atom(F), is_list(A) ->
    mce_sandbox:init_mfa(M, F, A);
init_mfa(_M, _F, _A, Args) ->
    erlang:error(badarg, Args).

%% @doc spawn_opt/2,4 with the options link and monitor; the options that
%% tune memory and scheduling only (heap sizes, fullsweep_after,
%% message_queue_data, priority) change nothing in the model, which
%% explores every schedule anyway, and are accepted.
-spec spawn_opt(function(), [term()]) -> pid() | {pid(), reference()}.
spawn_opt(Fun, Opts) ->
    spawn_with_opts(fun() -> spawn(Fun) end, Opts, [Fun, Opts]).

-spec spawn_opt(module(), atom(), [term()], [term()]) -> pid() | {pid(), reference()}.
spawn_opt(M, F, A, Opts) ->
    spawn_with_opts(fun() -> spawn(M, F, A) end, Opts, [M, F, A, Opts]).

spawn_with_opts(Spawn, Opts, Args) when is_list(Opts) ->
    lists:foreach(fun(link) -> ok;
                     (monitor) -> ok;
                     ({K, _}) when K =:= fullsweep_after; K =:= min_heap_size;
                                   K =:= min_bin_vheap_size; K =:= message_queue_data;
                                   K =:= priority -> ok;
                     (Opt) -> mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, spawn_opt, length(Args)},
                                                {option, Opt, "only link, monitor and the memory and priority options are modelled"}}})
                  end, Opts),
    Pid = Spawn(),
    lists:member(link, Opts) andalso mce_rt_signals:link(Pid),
    case lists:member(monitor, Opts) of
        true -> {Pid, mce_rt_signals:monitor_spawned(Pid)};
        false -> Pid
    end;
spawn_with_opts(_Spawn, _Opts, Args) ->
    erlang:error(badarg, Args).

-spec spawn_monitor(function()) -> {pid(), reference()}.
spawn_monitor(Fun) ->
    Pid = spawn(Fun),
    {Pid, mce_rt_signals:monitor_spawned(Pid)}.

-spec spawn_monitor(module(), atom(), [term()]) -> {pid(), reference()}.
spawn_monitor(M, F, A) ->
    Pid = spawn(M, F, A),
    {Pid, mce_rt_signals:monitor_spawned(Pid)}.
