%% @doc Simulated pids as real Erlang pid terms.
%%
%% A simulated process is numbered by the runtime (least-fresh numbering);
%% user code sees a genuine pid term on the simulated node, so `is_pid/1',
%% `node/1', printing and term order behave as on the real VM.  The creation
%% differs from the running VM's own, so a simulated pid can never alias a
%% real process: a stray real send to one is dropped by the VM.
-module(mce_pid).

-export([node_name/0, creation/0, term/1, number/1]).

-define(NODE, 'nonode@nohost').

-spec node_name() -> node().
node_name() -> ?NODE.

-spec creation() -> pos_integer().
creation() ->
    case erlang:system_info(creation) of
        16#4d43 -> 16#4d44;
        _ -> 16#4d43
    end.

-spec term(non_neg_integer()) -> pid().
term(N) when is_integer(N), N >= 0 ->
    Node = atom_to_binary(?NODE, latin1),
    binary_to_term(<<131, 88, 100, (byte_size(Node)):16, Node/binary,
                     N:32, 0:32, (creation()):32>>).

%% @doc The number of a simulated pid, or `error' for anything else.
-spec number(term()) -> {ok, non_neg_integer()} | error.
number(Pid) when is_pid(Pid) ->
    Node = atom_to_binary(?NODE, latin1),
    Size = byte_size(Node),
    Cr = creation(),
    case term_to_binary(Pid) of
        <<131, 88, 100, Size:16, Node:Size/binary, N:32, 0:32, Cr:32>> -> {ok, N};
        _ -> error
    end;
number(_) ->
    error.
