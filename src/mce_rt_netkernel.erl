%% @doc The runtime (see mce_rt) for net_kernel's calls that distributed
%% code makes: monitor_nodes/1,2, connect_node/1 and node_info/2.
%%
%% A monitor_nodes subscription is part of the state: a node monitor of the
%% C world whose node field is NODEMON_ALL or'ed with the options
%% (sys_state.h), so it is stored, hashed, renamed by symmetry and dropped
%% with its process like monitor_node/2's.  The C search delivers the
%% messages from the model's own node events (ether.c, nodes_event): a
%% node crash or halt (`{nodedown, Node}', reason connection_closed), a
%% disconnection fault (reason net_tick_timeout) and a reconnection
%% (`{nodeup, Node}'), one message per subscription, as erts does.  The
%% model's nodes are connected from the start, so no nodeup comes before a
%% reconnection.
%%
%% Invariant: nothing here reaches the real distribution; whether a node
%% can be reached is read from the stored state (mce_nif:node_status/3).
-module(mce_rt_netkernel).

-export([monitor_nodes/1, monitor_nodes/2, connect_node/1, node_info/1, node_info/2]).

%% sys_state.h: NODEMON_ALL and NODES_OPT_*.
-define(NODEMON_ALL, 16#100).
-define(OPT_INFO, 16#1).
-define(OPT_REASON, 16#2).
-define(OPT_TYPE, 16#4).
-define(OPT_HIDDEN_ONLY, 16#8).

%% @doc net_kernel:monitor_nodes/1.
-spec monitor_nodes(term()) -> ok | error.
monitor_nodes(Flag) ->
    monitor_nodes(Flag, []).

%% @doc net_kernel:monitor_nodes/2: `ok', or the VM's answer to a bad
%% flag (`error') or bad options (`{error, Why}', as net_kernel words it).
%% Subscriptions stack: each true adds one (one message each), each false
%% removes one with the same options.
-spec monitor_nodes(term(), term()) -> ok | error | {error, term()}.
monitor_nodes(Flag, _Options) when not is_boolean(Flag) ->
    error;
monitor_nodes(Flag, Options) when is_list(Options) ->
    case lists:member(connection_id, Options) of
        true ->
            mce_rt:fatal({mcerlang, {unsupported_call, {net_kernel, monitor_nodes, 2},
                                     {option, connection_id},
                                     "connection ids are not modelled: give a stub (option stubs)"}});
        false -> ok
    end,
    case accepted(Options, 0, none) of
        {ok, Bits} ->
            mce_rt:effect({monitor_node, ?NODEMON_ALL bor Bits, Flag}),
            ok;
        refused -> option_error(Options)
    end;
monitor_nodes(_Flag, Options) when is_map(Options) ->
    mce_rt:fatal({mcerlang, {unsupported_call, {net_kernel, monitor_nodes, 2},
                             {options, Options},
                             "the map form of the options is not modelled: give a list, "
                             "or a stub (option stubs)"}});
monitor_nodes(_Flag, Options) ->
    {error, {invalid_options, Options}}.

%% The options erts takes: nodedown_reason, and one node_type.  The bits
%% are the subscription's (sys_state.h NODES_OPT_*).
accepted([], 0, none) -> {ok, 0};
accepted([], Bits, _Type) -> {ok, Bits bor ?OPT_INFO};
accepted([nodedown_reason | T], Bits, Type) -> accepted(T, Bits bor ?OPT_REASON, Type);
accepted([{node_type, V} | T], Bits, Type) when Type =:= none orelse Type =:= V,
                                                (V =:= visible orelse V =:= all) ->
    accepted(T, Bits bor ?OPT_TYPE, V);
accepted([{node_type, hidden} | T], Bits, Type) when Type =:= none; Type =:= hidden ->
    accepted(T, Bits bor ?OPT_TYPE bor ?OPT_HIDDEN_ONLY, hidden);
accepted(_, _Bits, _Type) -> refused.

%% What net_kernel answers for an option list erts refused: a node_type
%% given twice with different values, then a bad node_type, then the
%% options left once node_type and nodedown_reason are taken out (in the
%% order its scans leave them).
option_error(Options) ->
    try
        Rest1 = case scan({node_type, value}, Options) of
                    {found, {node_type, T}, R1} when T =:= visible; T =:= hidden; T =:= all -> R1;
                    {found, Bad, _} -> throw({bad_option_value, Bad});
                    none -> Options
                end,
        Rest2 = case scan(nodedown_reason, Rest1) of
                    {found, _, R2} -> R2;
                    none -> Rest1
                end,
        {error, {unknown_options, Rest2}}
    catch throw:Why -> {error, Why}
    end.

scan(Opt, Options) ->
    scan(Opt, Options, none, []).

scan(_Opt, [], none, _Others) -> none;
scan(_Opt, [], {found, O}, Others) -> {found, O, Others};
scan(Opt, [Opt | T], _Found, Others) when is_atom(Opt) -> scan(Opt, T, {found, Opt}, Others);
scan({K, value} = Opt, [{K, _} = O | T], none, Others) -> scan(Opt, T, {found, O}, Others);
scan({K, value} = Opt, [{K, _} = O | T], {found, O}, Others) -> scan(Opt, T, {found, O}, Others);
scan({K, value}, [{K, _} = O | _], {found, Prev}, _Others) ->
    throw({option_value_mismatch, [O, Prev]});
scan(Opt, [X | T], Found, Others) -> scan(Opt, T, Found, [X | Others]);
scan(_Opt, _Improper, _Found, _Others) -> throw({invalid_options, _Improper}).

%% @doc net_kernel:connect_node/1: true for this node and the nodes it
%% reaches, false for the others; `ignored' on a node that is not
%% distributed.
-spec connect_node(term()) -> boolean() | ignored.
connect_node(Node) when is_atom(Node) ->
    case mce_rt:node() of
        'nonode@nohost' -> ignored;
        Node -> true;
        _ -> mce_rt_node:ping(Node) =:= pong
    end;
connect_node(Node) ->
    erlang:error(function_clause, [Node]).

%% @doc net_kernel:node_info/1: the connection's owner, address and traffic
%% counts are not modelled; a node this one does not reach is
%% `{error, bad_node}' as on the VM.
-spec node_info(term()) -> {error, bad_node}.
node_info(Node) ->
    case connected(Node) of
        false -> {error, bad_node};
        true -> mce_rt:fatal({mcerlang, {unsupported_call, {net_kernel, node_info, 1}, {node, Node},
                                         mce_stubs:hint({net_kernel, node_info, 1})}})
    end.

%% @doc net_kernel:node_info/2 for the items the model knows: `state' (up)
%% and `type' (normal); the others stop the check naming the item.
-spec node_info(term(), term()) -> {ok, term()} | {error, bad_node}.
node_info(Node, Item) ->
    case connected(Node) of
        false -> {error, bad_node};
        true when Item =:= state -> {ok, up};
        true when Item =:= type -> {ok, normal};
        true when Item =:= owner; Item =:= address; Item =:= in; Item =:= out ->
            mce_rt:fatal({mcerlang, {unsupported_call, {net_kernel, node_info, 2}, {item, Item},
                                     mce_stubs:hint({net_kernel, node_info, 2})}});
        true -> {error, invalid_key}
    end.

%% Another node of the model that this one reaches now.  On a node that is
%% not distributed the VM's node_info raises badarg (its table of
%% connections does not exist).
connected(Node) ->
    case mce_rt:node() of
        'nonode@nohost' -> erlang:error(badarg, [Node]);
        Node -> false;
        _ when is_atom(Node) ->
            lists:member(Node, mce_rt_node:nodes());
        _ -> false
    end.
