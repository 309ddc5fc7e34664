%% Test programs of automatic symmetry reduction (test/mce_autosym_tests.erl):
%% identical processes whose pids the program compares, sorts or prints,
%% which no renaming of pids may merge, and identical clients it may.
-module(tprog_autosym).
-export([min_leader/0, sort_leader/0, text_leader/0, guard_leader/0, receive_guard/0,
         sort_fun_leader/0, apply_leader/0, case_leader/0, fun_guard_leader/0, set_leader/0,
         links_leader/0, linked_hello/1, first_leader/0,
         hello/1, clients/1, client/2, server/0, same_workers/1]).

%% Two identical workers announce themselves; the coordinator elects the
%% smaller pid and fails when the first to announce is not the leader.
%% Which worker announces first is free, so the failure is reachable; a
%% symmetric search that ignored pid order would only keep the
%% representative where the first in the mailbox has the smaller pid.
min_leader() ->
    {A, B} = two_hellos(),
    case min(A, B) of
        A -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% The opposite election: it fails when the first to announce is the
%% leader.  The representative of a symmetric search puts the first in the
%% mailbox on the smaller pid, so its first run fails in the very step that
%% compares the pids; the violation is real, but it must come from the
%% search without symmetry to be a run of these pids.
first_leader() ->
    {A, B} = two_hellos(),
    case min(A, B) of
        A -> erlang:error(first_was_leader);
        _ -> ok
    end.

%% The same election by lists:sort/1.
sort_leader() ->
    {A, B} = two_hellos(),
    case lists:sort([A, B]) of
        [A, _] -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% The same by the pids' text: io_lib:format, then a comparison of strings
%% (neither holds a pid any more).
text_leader() ->
    {A, B} = two_hellos(),
    TA = lists:flatten(io_lib:format("~w", [A])),
    TB = lists:flatten(io_lib:format("~w", [B])),
    case length(TA) < length(TB) orelse (length(TA) =:= length(TB) andalso TA < TB) of
        true -> ok;
        false -> erlang:error(first_was_not_leader)
    end.

%% The same by a comparison in a function's guard.
guard_leader() ->
    {A, B} = two_hellos(),
    leader(A, B).

leader(A, B) when A < B -> ok;
leader(_, _) -> erlang:error(first_was_not_leader).

%% lists:sort/2 with the VM's own order as the fun.
sort_fun_leader() ->
    {A, B} = two_hellos(),
    case lists:sort(fun erlang:'=<'/2, [A, B]) of
        [A, _] -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% A receive that takes the hello of the smaller pid first: the first
%% hello to arrive decides nothing; the guard does.
receive_guard() ->
    Me = self(),
    [P1, P2] = [spawn(?MODULE, hello, [Me]) || _ <- [1, 2]],
    receive {hello, P} when P > P1; P > P2 -> ok end,
    receive {hello, Q} -> Q end,
    case P of
        P1 -> erlang:error(larger_was_first);
        _ -> ok
    end.

%% The same by a sort called with its module and function computed at run
%% time.
apply_leader() ->
    {A, B} = two_hellos(),
    M = list_to_atom("lists"),
    case M:sort([A, B]) of
        [A, _] -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% The same by a comparison in a case clause's guard.
case_leader() ->
    {A, B} = two_hellos(),
    case {A, B} of
        {X, Y} when X < Y -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% The same by a comparison in a fun's guard.
fun_guard_leader() ->
    {A, B} = two_hellos(),
    Leader = fun(X, Y) when X < Y -> ok;
                (_, _) -> erlang:error(first_was_not_leader)
             end,
    Leader(A, B).

%% The same by an ordered set of the two pids.
set_leader() ->
    {A, B} = two_hellos(),
    case ordsets:from_list([B, A]) of
        [A, _] -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

%% The same by the order of process_info(self(), links) (pid order).
links_leader() ->
    Me = self(),
    _ = [spawn_link(?MODULE, linked_hello, [Me]) || _ <- [1, 2]],
    A = receive {hello, P} -> P end,
    B = receive {hello, Q} -> Q end,
    {links, Links} = process_info(self(), links),
    A ! stop,
    B ! stop,
    case Links of
        [A, B] -> ok;
        _ -> erlang:error(first_was_not_leader)
    end.

linked_hello(To) ->
    To ! {hello, self()},
    receive stop -> ok end.

two_hellos() ->
    Me = self(),
    _ = [spawn(?MODULE, hello, [Me]) || _ <- [1, 2]],
    A = receive {hello, P} -> P end,
    B = receive {hello, Q} -> Q end,
    {A, B}.

hello(To) ->
    To ! {hello, self()}.

%% N identical clients of a server, two requests each, the entry waiting
%% for all: the state space symmetry reduction is for.
clients(N) ->
    S = spawn(?MODULE, server, []),
    Me = self(),
    _ = [spawn(?MODULE, client, [S, Me]) || _ <- lists:seq(1, N)],
    [receive done -> ok end || _ <- lists:seq(1, N)],
    S ! stop,
    ok.

server() ->
    receive
        {req, From} -> From ! reply, server();
        stop -> ok
    end.

client(S, Coord) ->
    S ! {req, self()},
    receive reply -> ok end,
    S ! {req, self()},
    receive reply -> ok end,
    Coord ! done.

%% Identical workers that compare integers, sort atoms and print nothing
%% of pids: nothing observes pid order, so symmetry stays on.
same_workers(N) ->
    Me = self(),
    _ = [spawn(fun() -> Me ! {n, lists:sort([b, a]), max(1, 2) < 3} end) || _ <- lists:seq(1, N)],
    [receive {n, [a, b], true} -> ok end || _ <- lists:seq(1, N)],
    ok.
