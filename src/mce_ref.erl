%% @doc Simulated refs as real Erlang reference terms.
%%
%% make_ref/0 and monitor/2 in checked code return genuine references on
%% the simulated node (so is_reference/1, matching and printing work), whose
%% number the runtime allocates least-fresh, as it does pids: a program
%% that makes a ref per request does not make the state space infinite.
-module(mce_ref).

-export([term/1, number/1]).

-spec term(non_neg_integer()) -> reference().
term(N) when is_integer(N), N >= 0 ->
    Node = atom_to_binary(mce_pid:node_name(), latin1),
    binary_to_term(<<131, 90, 3:16, 100, (byte_size(Node)):16, Node/binary,
                     (mce_pid:creation()):32, N:32, 0:32, 0:32>>).

%% @doc The number of a simulated ref, or `error' for any other term.
-spec number(term()) -> {ok, non_neg_integer()} | error.
number(Ref) when is_reference(Ref) ->
    Node = atom_to_binary(mce_pid:node_name(), latin1),
    Size = byte_size(Node),
    Cr = mce_pid:creation(),
    case term_to_binary(Ref) of
        <<131, 90, 3:16, 100, Size:16, Node:Size/binary, Cr:32, N:32, 0:32, 0:32>> -> {ok, N};
        _ -> error
    end;
number(_) ->
    error.
