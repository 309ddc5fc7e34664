%% @doc Simulated pids as real Erlang pid terms.
%%
%% A simulated process is numbered by the runtime (least-fresh numbering,
%% per node); user code sees a genuine pid term on its simulated node, so
%% `is_pid/1', `node/1', printing and term order behave as on the real VM.
%% The creation differs from the running VM's own, so a simulated pid can
%% never alias a real process: a stray real send to one is dropped by the VM.
%%
%% The runtime names a pid by a key, `NodeIndex bsl 24 bor Number', where
%% NodeIndex is the position of its node in the check's `nodes' option.
%% The node list of the check running in this process is kept in its
%% process dictionary (set_nodes/1); without one the single node is
%% `nonode@nohost', as on a VM that is not distributed.
-module(mce_pid).

-export([node_name/0, creation/0, cached_creation/0, node_bin/1, bin_index/1, term/1, term/2, number/1, set_nodes/1, nodes/0, node_of/1,
         node_index/1, key/2, by_name/1, is_by_name/1]).

-compile({no_auto_import, [nodes/0]}).

-define(DEFAULT, 'nonode@nohost').
-define(SHIFT, 24).
-define(NUM_MASK, 16#ffffff).
-define(BY_NAME, 16#ffffff).

%% @doc The first (default) node.
-spec node_name() -> node().
node_name() -> element(1, nodes_tuple()).

-spec set_nodes([node()]) -> ok.
set_nodes(Nodes) ->
    put('$mce_nodes', list_to_tuple(Nodes)),
    %% Pids and refs are encoded and decoded on every send: the node names'
    %% bytes and the creation are looked up once per check.
    put('$mce_node_bins', list_to_tuple([atom_to_binary(N, latin1) || N <- Nodes])),
    put('$mce_node_index', maps:from_list(lists:zip([atom_to_binary(N, latin1) || N <- Nodes],
                                                    lists:seq(0, length(Nodes) - 1)))),
    put('$mce_creation', creation()),
    ok.

-spec node_bin(non_neg_integer()) -> binary().
node_bin(Index) ->
    case get('$mce_node_bins') of
        undefined -> atom_to_binary(element(Index + 1, nodes_tuple()), latin1);
        Bins -> element(Index + 1, Bins)
    end.

%% @doc The index of the node named Bin, or error.
-spec bin_index(binary()) -> {ok, non_neg_integer()} | error.
bin_index(Bin) ->
    case get('$mce_node_index') of
        undefined -> node_index(binary_to_atom(Bin, utf8));
        Map ->
            case Map of
                #{Bin := I} -> {ok, I};
                #{} -> error
            end
    end.

-spec cached_creation() -> pos_integer().
cached_creation() ->
    case get('$mce_creation') of
        undefined -> creation();
        Cr -> Cr
    end.

-spec nodes() -> [node()].
nodes() -> tuple_to_list(nodes_tuple()).

nodes_tuple() ->
    case get('$mce_nodes') of
        undefined -> {?DEFAULT};
        T -> T
    end.

%% @doc The node of a key.
-spec node_of(non_neg_integer()) -> node().
node_of(Key) -> element((Key bsr ?SHIFT) + 1, nodes_tuple()).

%% @doc The index of a simulated node, or `error'.
-spec node_index(atom()) -> {ok, non_neg_integer()} | error.
node_index(Node) -> index(Node, nodes(), 0).

index(N, [N | _], I) -> {ok, I};
index(N, [_ | T], I) -> index(N, T, I + 1);
index(_, [], _) -> error.

-spec key(non_neg_integer(), non_neg_integer()) -> non_neg_integer().
key(NodeIndex, Number) -> NodeIndex bsl ?SHIFT bor Number.

%% @doc The key that stands for "a registered name on node NodeIndex".
-spec by_name(non_neg_integer()) -> non_neg_integer().
by_name(NodeIndex) -> key(NodeIndex, ?BY_NAME).

-spec is_by_name(non_neg_integer()) -> boolean().
is_by_name(Key) -> Key band ?NUM_MASK =:= ?BY_NAME.

-spec creation() -> pos_integer().
creation() ->
    case erlang:system_info(creation) of
        16#4d43 -> 16#4d44;
        _ -> 16#4d43
    end.

-spec term(non_neg_integer()) -> pid().
term(Key) when is_integer(Key), Key >= 0 ->
    Node = node_bin(Key bsr ?SHIFT),
    binary_to_term(<<131, 88, 100, (byte_size(Node)):16, Node/binary,
                     (Key band ?NUM_MASK):32, 0:32, (cached_creation()):32>>).

%% @doc The pid of Key in a check whose nodes are Nodes (from another
%% process than the check's).
-spec term(non_neg_integer(), [node()]) -> pid().
term(Key, Nodes) ->
    Node = atom_to_binary(lists:nth((Key bsr ?SHIFT) + 1, Nodes), latin1),
    binary_to_term(<<131, 88, 100, (byte_size(Node)):16, Node/binary,
                     (Key band ?NUM_MASK):32, 0:32, (creation()):32>>).

%% @doc The key of a simulated pid, or `error' for anything else.
-spec number(term()) -> {ok, non_neg_integer()} | error.
number(Pid) when is_pid(Pid) ->
    Cr = cached_creation(),
    case term_to_binary(Pid) of
        <<131, 88, Tag, Size:16, Node:Size/binary, N:32, 0:32, Cr:32>>
          when Tag =:= 100; Tag =:= 118 ->
            case bin_index(Node) of
                {ok, I} when N =< ?NUM_MASK -> {ok, key(I, N)};
                _ -> error
            end;
        _ -> error
    end;
number(_) ->
    error.
