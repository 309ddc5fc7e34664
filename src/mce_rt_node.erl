%% @doc The runtime (see mce_rt) for the simulated nodes as a process sees
%% them: known_node/1, nodes/0, net_adm:ping/1, monitor_node/2, and
%% erlang:halt/0,1,2 and init:stop/0,1, which take the running process's
%% node down.
%%
%% Invariant: the nodes are those of the check's `nodes' option
%% (mce_pid); whether one can be reached is read from the stored state
%% (crashes and disconnections are faults of the C search), never decided
%% here.  The real VM is never halted.
-module(mce_rt_node).
-compile({no_auto_import, [nodes/0, monitor_node/2, halt/0, halt/1, halt/2]}).

-export([nodes/0, monitor_node/2, ping/1, known_node/1, halt/0, halt/1, halt/2, init_stop/0,
         init_stop/1]).

%%--------------------------------------------------------------------
%% Nodes
%%--------------------------------------------------------------------

%% @doc Is Node one of the check's simulated nodes?
-spec known_node(atom()) -> boolean().
known_node(Node) ->
    mce_pid:node_index(Node) =/= error.

%% @doc The other simulated nodes that are up and connected to this one.
-spec nodes() -> [node()].
nodes() ->
    Me = mce_rt:my_node(),
    S = erlang:get('$mce_search'),
    [N || N <- mce_pid:nodes(), {ok, I} <- [mce_pid:node_index(N)], I =/= Me,
          mce_nif:node_status(S, Me, I) =:= up].

%% @doc net_adm:ping/1: pong for this node and the nodes it can reach; a
%% node that is not distributed (nonode@nohost) answers pang, even for
%% itself, as on the VM.
-spec ping(atom()) -> pong | pang.
ping(Node) when is_atom(Node) ->
    Distributed = mce_rt:node() =/= 'nonode@nohost',
    case mce_pid:node_index(Node) of
        _ when not Distributed -> pang;
        {ok, I} ->
            case mce_nif:node_status(erlang:get('$mce_search'), mce_rt:my_node(), I) of
                up -> pong;
                _ -> pang
            end;
        error -> pang
    end;
ping(Node) ->
    erlang:error(function_clause, [Node]).

%% @doc monitor_node/2: {nodedown, Node} when Node crashes or is
%% disconnected from this node; at once when it cannot be reached now.
-spec monitor_node(atom(), boolean()) -> true.
monitor_node(Node, Flag) when is_atom(Node), is_boolean(Flag) ->
    case mce_pid:node_index(Node) of
        {ok, I} -> mce_rt:effect({monitor_node, I, Flag});
        error when Flag -> mce_rt:effect({send, erlang:get('$mce_pid'), {nodedown, Node}});
        error -> ok
    end,
    true;
monitor_node(Node, Flag) ->
    erlang:error(badarg, [Node, Flag]).

%%--------------------------------------------------------------------
%% Stopping a node
%%--------------------------------------------------------------------

%% @doc erlang:halt/0,1,2 and init:stop/0,1 in checked code: the
%% simulated node stops, as if it crashed (its processes, tables and
%% channels vanish; other nodes see noconnection and nodedown), as a step
%% of the running process.  The real VM is never halted.
-spec halt() -> no_return().
halt() -> halt(0, []).

-spec halt(non_neg_integer() | abort | string()) -> no_return().
halt(Status) -> halt(Status, []).

-spec halt(non_neg_integer() | abort | string(), list()) -> no_return().
halt(Status, Opts) when is_list(Opts), (is_integer(Status) andalso Status >= 0) orelse
                                       Status =:= abort orelse is_list(Status) ->
    mce_rt:effect({halt, Status}),
    %% The process goes with the node; its exit reason is never seen.
    mce_rt_signals:die(normal);
halt(Status, Opts) ->
    erlang:error(badarg, [Status, Opts]).

%% @doc init:stop/0,1: the node stops (see halt/2).
-spec init_stop() -> no_return().
init_stop() -> halt(0, []).

-spec init_stop(non_neg_integer() | string()) -> no_return().
init_stop(Status) -> halt(Status, []).
