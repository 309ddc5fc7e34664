%% @doc The "World Hello" program of Fredlund and Svensson's McErlang paper
%% (../shared/papers/004_2999ceb9aa2f1435.txt, Fig. 1).
%%
%% A spawns C and B, sends `hello' to C and then `world' to B; B forwards
%% `world' to C; C prints the two messages it receives.  On one node
%% delivery is instantaneous, so C always gets `hello' first.  When A and B
%% are on other nodes than C, the only guarantee is that messages between a
%% pair of processes stay in order: `hello' (A to C) and `world' (B to C)
%% travel on different pairs, and C may print "world hello".  That holds
%% even when A and B share a node (nodes 1 = 2 =/= 3): ordering is per pair
%% of processes, not per pair of nodes.  With `ordering => node_pair' (all
%% signals from one node to another in send order, as over BEAM's single
%% connection between two nodes) hello always comes first in that case, and
%% world hello remains possible only with three nodes.
%%
%% C exits with `{wrong_order, X, Y}' when the messages come the other way
%% round, so the checker reports that order as an abnormal exit.
-module(world_hello).

-export([worldhello/3, procA/2, procB/1, procC/0]).

-spec worldhello(node(), node(), node()) -> pid().
worldhello(Node1, Node2, Node3) ->
    spawn(Node1, ?MODULE, procA, [Node2, Node3]).

-spec procA(node(), node()) -> world.
procA(Node2, Node3) ->
    PidC = spawn(Node3, ?MODULE, procC, []),
    PidB = spawn(Node2, ?MODULE, procB, [PidC]),
    PidC ! hello,
    PidB ! world.

-spec procB(pid()) -> world.
procB(PidC) ->
    receive world -> PidC ! world end.

-spec procC() -> ok.
procC() ->
    X = receive M1 -> M1 end,
    Y = receive M2 -> M2 end,
    io:format("~p ~p~n", [X, Y]),
    case {X, Y} of
        {hello, world} -> ok;
        _ -> exit({wrong_order, X, Y})
    end.
