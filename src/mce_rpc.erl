%% @doc A model of rpc and erpc for checked code.
%%
%% This module is not called directly: the translator rewrites
%% `rpc:call/4,5', `rpc:cast/4', `erpc:call/4,5' and `erpc:cast/4' in user
%% code into calls of its translation (`'mce$mce_rpc''), so it runs under
%% the checker like user code, with every interleaving.  It does what erpc
%% does in OTP 25: spawn a process on the target node that applies the
%% function, monitor it, and wait for its result or its 'DOWN'.  rpc:call is
%% erpc:call with the OTP 25 conversion of errors to `{badrpc, _}'.
%%
%% The results and errors are those of OTP 25:
%%   erpc:call: the value; `throw(V)' for a throw; `exit({exception, R})'
%%   for an exit; `error({exception, R, Stack})' for an error;
%%   `error({erpc, noconnection})' when the node cannot be reached or is
%%   lost; `error({erpc, timeout})' after a finite timeout (untimed: it may
%%   fire whenever the result has not arrived); the timed-out call's process
%%   is abandoned, not killed, as in OTP 25.
%%   rpc:call: the value (also for a throw); `{badrpc, {'EXIT', R}}' for an
%%   exit; `{badrpc, {'EXIT', {R, Stack}}}' for an error; `{badrpc, nodedown}';
%%   `{badrpc, timeout}'.
-module(mce_rpc).

-export([erpc_call/4, erpc_call/5, erpc_cast/4, rpc_call/4, rpc_call/5, rpc_cast/4,
         rpc_multicall/3, rpc_multicall/4, rpc_multicall/5]).
-export([run/3]).

%% The reason a call's process exits with: a normal end for the checker.
-define(RESULT, '$mce_erpc_result').

-spec erpc_call(node(), module(), atom(), [term()]) -> term().
erpc_call(Node, M, F, A) ->
    erpc_call(Node, M, F, A, infinity).

-spec erpc_call(node(), module(), atom(), [term()], timeout()) -> term().
erpc_call(Node, M, F, A, Timeout)
  when is_atom(Node), is_atom(M), is_atom(F), is_list(A),
       (Timeout =:= infinity orelse (is_integer(Timeout) andalso Timeout >= 0)) ->
    case mce_rt_node:known_node(Node) of
        false -> erlang:error({erpc, noconnection});
        true ->
            {Pid, Ref} = spawn_monitor(Node, ?MODULE, run, [M, F, A]),
            receive
                {'DOWN', Ref, process, Pid, Reason} -> down(Reason)
            after Timeout ->
                    case abandon(Ref, Pid) of
                        abandoned -> erlang:error({erpc, timeout});
                        {down, Reason} -> down(Reason)
                    end
            end
    end;
erpc_call(Node, M, F, A, Timeout) ->
    erlang:error({erpc, badarg}, [Node, M, F, A, Timeout]).

-spec erpc_cast(node(), module(), atom(), [term()]) -> ok.
erpc_cast(Node, M, F, A) when is_atom(Node), is_atom(M), is_atom(F), is_list(A) ->
    case mce_rt_node:known_node(Node) of
        true -> spawn(Node, ?MODULE, run, [M, F, A]);
        false -> ok
    end,
    ok;
erpc_cast(Node, M, F, A) ->
    erlang:error({erpc, badarg}, [Node, M, F, A]).

-spec rpc_call(node(), module(), atom(), [term()]) -> term().
rpc_call(Node, M, F, A) ->
    rpc_call(Node, M, F, A, infinity).

-spec rpc_call(node(), module(), atom(), [term()], timeout()) -> term().
rpc_call(Node, M, F, A, Timeout) ->
    try erpc_call(Node, M, F, A, Timeout)
    catch
        throw:V -> V;
        exit:{exception, R} -> {badrpc, {'EXIT', R}};
        error:{exception, R, Stack} -> {badrpc, {'EXIT', {R, Stack}}};
        error:{erpc, noconnection} -> {badrpc, nodedown};
        error:{erpc, timeout} -> {badrpc, timeout}
    end.

-spec rpc_cast(node(), module(), atom(), [term()]) -> true.
rpc_cast(Node, M, F, A) ->
    erpc_cast(Node, M, F, A),
    true.

%% @doc rpc:multicall/3,4,5: the call on every node at once, one process
%% each; `{Results, BadNodes}' with the results in the order of the nodes
%% that answered (`{badrpc, {'EXIT', _}}' for one that raised), the nodes
%% that could not be reached (or did not answer in time) in BadNodes.
-spec rpc_multicall(module(), atom(), [term()]) -> {[term()], [node()]}.
rpc_multicall(M, F, A) ->
    rpc_multicall([node() | nodes()], M, F, A, infinity).

-spec rpc_multicall([node()] | module(), module() | atom(), atom() | [term()], [term()] | timeout()) ->
          {[term()], [node()]}.
rpc_multicall(Nodes, M, F, A) when is_list(Nodes) ->
    rpc_multicall(Nodes, M, F, A, infinity);
rpc_multicall(M, F, A, Timeout) ->
    rpc_multicall([node() | nodes()], M, F, A, Timeout).

-spec rpc_multicall([node()], module(), atom(), [term()], timeout()) -> {[term()], [node()]}.
rpc_multicall(Nodes, M, F, A, Timeout)
  when is_list(Nodes), is_atom(M), is_atom(F), is_list(A),
       (Timeout =:= infinity orelse (is_integer(Timeout) andalso Timeout >= 0)) ->
    Started = [{N, case is_atom(N) andalso mce_rt_node:known_node(N) of
                       true -> spawn_monitor(N, ?MODULE, run, [M, F, A]);
                       false -> unreachable
                   end} || N <- Nodes],
    Answers = [{N, multicall_answer(S, Timeout)} || {N, S} <- Started],
    {[R || {_, {ok, R}} <- Answers], [N || {N, bad} <- Answers]};
rpc_multicall(Nodes, M, F, A, Timeout) ->
    erlang:error(badarg, [Nodes, M, F, A, Timeout]).

multicall_answer(unreachable, _Timeout) ->
    bad;
multicall_answer({Pid, Ref}, Timeout) ->
    receive
        {'DOWN', Ref, process, Pid, Reason} -> multicall_down(Reason)
    after Timeout ->
            case abandon(Ref, Pid) of
                abandoned -> bad;
                {down, Reason} -> multicall_down(Reason)
            end
    end.

multicall_down({?RESULT, Result}) -> {ok, rpc_value(Result)};
multicall_down(noconnection) -> bad;
multicall_down(Reason) -> {ok, {badrpc, {'EXIT', Reason}}}.

%% A call that timed out is abandoned as OTP 25's erpc does (call_abandon/1):
%% the monitor goes, the process runs on and its end is nobody's concern.
%% Only if its 'DOWN' came first (demonitor finds no monitor) is that the
%% answer; the model waits for that 'DOWN' where OTP, which finds it in the
%% mailbox already, polls.
-spec abandon(reference(), pid()) -> abandoned | {down, term()}.
abandon(Ref, Pid) ->
    case erlang:demonitor(Ref, [info]) of
        true -> abandoned;
        false -> receive {'DOWN', Ref, process, Pid, Reason} -> {down, Reason} end
    end.

down({?RESULT, Result}) -> result(Result);
down(noconnection) -> erlang:error({erpc, noconnection});
down(Reason) -> erlang:exit({exception, Reason}).

rpc_value({return, V}) -> V;
rpc_value({throw, V}) -> V;
rpc_value({exit, R}) -> {badrpc, {'EXIT', R}};
rpc_value({error, R, Stack}) -> {badrpc, {'EXIT', {R, Stack}}}.

%% @doc The process on the target node.
-spec run(module(), atom(), [term()]) -> no_return().
run(M, F, A) ->
    Result = try {return, apply(M, F, A)}
             catch
                 throw:V -> {throw, V};
                 exit:R -> {exit, R};
                 error:R:Stack -> {error, R, Stack}
             end,
    exit({?RESULT, Result}).

result({return, V}) -> V;
result({throw, V}) -> throw(V);
result({exit, R}) -> exit({exception, R});
result({error, R, Stack}) -> erlang:error({exception, R, Stack}).
