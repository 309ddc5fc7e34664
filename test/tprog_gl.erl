%% @doc Programs for the differential tests of mce_gl_tests: per-process
%% group leaders.  group_leader/2 sets any live process's leader, a spawn
%% (spawn_link, spawn_monitor, spawn_opt, proc_lib, gen_server) inherits
%% the spawner's, process_info/2 reads it.  Each scenario ends its root
%% with exit({result, R}), R free of pids and refs.  No scenario writes
%% output once a leader is one of its own processes (the real VM would send
%% it io_requests that nobody answers).
-module(tprog_gl).
-behaviour(gen_server).

-export([set_and_read/0, inherit_spawns/0, inherit_same_step/0, badargs/0,
         inherit_gen_server/0, output_to_user/0, capture_output/0, capture_explicit/0,
         remote_inherit/0, capture_all/0, leader_dies/0, leader_is_self/0,
         unregistered_device/0, output_default/0, output_default_fails/0, set_then_fail/0,
         remote_capture/0, capture_indirect/0, set_user_leader/0]).
-export([waiter/0, report/1]).
-export([init/1, handle_call/3, handle_cast/2]).

waiter() ->
    receive stop -> ok end.

%% Sends its group leader to To.
report(To) ->
    To ! {gl, self(), group_leader()}.

%% group_leader/2 on another process: it reads the new leader itself, and
%% process_info/2 shows it; the leader need not be alive.
set_and_read() ->
    Self = self(),
    L = spawn(fun waiter/0),
    P = spawn(fun() -> receive go -> report(Self) end end),
    T = group_leader(L, P),
    {group_leader, G1} = process_info(P, group_leader),
    P ! go,
    G2 = receive {gl, P, G} -> G end,
    D = spawn(fun() -> ok end),
    Mon = monitor(process, D),
    receive {'DOWN', Mon, _, _, _} -> ok end,
    T2 = group_leader(D, self()),
    Mine = group_leader(),
    {group_leader, Mine2} = process_info(self(), group_leader),
    L ! stop,
    exit({result, {T, G1 =:= L, G2 =:= L, T2, Mine =:= D, Mine2 =:= D}}).

%% Every way of spawning passes the spawner's leader on, to grandchildren too.
inherit_spawns() ->
    Self = self(),
    L = spawn(fun waiter/0),
    true = group_leader(L, self()),
    P1 = spawn(?MODULE, report, [Self]),
    P2 = spawn_link(fun() -> report(Self) end),
    {P3, _} = spawn_monitor(fun() -> report(Self) end),
    P4 = spawn_opt(fun() -> report(Self) end, [link]),
    P5 = proc_lib:spawn(fun() -> report(Self) end),
    P6 = spawn(fun() -> spawn(?MODULE, report, [Self]) end),
    Gs = [receive {gl, P, G} -> G =:= L end || P <- [P1, P2, P3, P4, P5]],
    G6 = receive {gl, P, G} when P =/= P6 -> G =:= L end,
    L ! stop,
    exit({result, Gs ++ [G6]}).

%% A process spawned before its spawner changes its own leader keeps the
%% old one; one spawned after gets the new one, all in one step.
inherit_same_step() ->
    Old = group_leader(),
    L = spawn(fun waiter/0),
    P1 = spawn(fun waiter/0),
    true = group_leader(L, self()),
    P2 = spawn(fun waiter/0),
    {group_leader, G1} = process_info(P1, group_leader),
    {group_leader, G2} = process_info(P2, group_leader),
    [P ! stop || P <- [L, P1, P2]],
    exit({result, {G1 =:= Old, G2 =:= L}}).

%% badarg for a non-pid leader or process and for a dead process.
badargs() ->
    D = spawn(fun() -> ok end),
    Mon = monitor(process, D),
    receive {'DOWN', Mon, _, _, _} -> ok end,
    Try = fun(F) -> try F() catch error:badarg -> badarg end end,
    exit({result, [Try(fun() -> group_leader(self(), D) end),
                   Try(fun() -> group_leader(foo, self()) end),
                   Try(fun() -> group_leader(self(), foo) end),
                   Try(fun() -> process_info(D, group_leader) end)]}).

%% gen_server:start_link (proc_lib) starts the server with its caller's leader.
inherit_gen_server() ->
    L = spawn(fun waiter/0),
    true = group_leader(L, self()),
    {ok, S} = gen_server:start_link(?MODULE, [], []),
    G = gen_server:call(S, gl),
    {group_leader, G2} = process_info(S, group_leader),
    L ! stop,
    exit({result, {G =:= L, G2 =:= L}}).

init([]) -> {ok, group_leader()}.
handle_call(gl, _From, G) -> {reply, G, G}.
handle_cast(_, G) -> {noreply, G}.

%% Output to the `user' device does not go through the group leader.
output_to_user() ->
    L = spawn(fun waiter/0),
    true = group_leader(L, self()),
    io:format(user, "to user~n", []),
    io:put_chars(user, "to user\n"),
    L ! stop,
    exit({result, ok}).

%% A process that makes itself the leader of a child and collects the
%% child's output: the io_requests of the I/O protocol.
capture_output() ->
    Self = self(),
    C = spawn(fun() -> receive go -> io:format("hello ~p~n", [1]), Self ! done end end),
    true = group_leader(self(), C),
    C ! go,
    collect([]).

capture_explicit() ->
    Self = self(),
    spawn(fun() -> io:put_chars(Self, "hi"), Self ! done end),
    collect([]).

collect(Acc) ->
    receive
        done -> exit({result, lists:reverse(Acc)});
        {io_request, From, ReplyAs, Req} ->
            From ! {io_reply, ReplyAs, ok},
            collect([Req | Acc])
    end.

%% A process spawned on another node has its spawner's leader, a process
%% of the spawner's node (checker only: the test VM is not distributed).
remote_inherit() ->
    [A, B] = [node() | nodes()],
    Self = self(),
    L = spawn(fun waiter/0),
    true = group_leader(L, self()),
    spawn(B, ?MODULE, report, [Self]),
    G = receive {gl, _, G0} -> G0 end,
    L ! stop,
    exit({result, {G =:= L, node(G) =:= A}}).

%% Every output function's request, through the leader and explicit devices.
capture_all() ->
    Self = self(),
    C = spawn(fun() ->
                      receive go -> ok end,
                      io:format("a"), io:fwrite("b~p", [2]), io:put_chars("c"),
                      io:put_chars([<<"d">>, $e]), io:nl(), io:write(foo),
                      io:format(standard_io, "f", []), io:put_chars(Self, "g"),
                      io:nl(Self), io:write(Self, bar), io:fwrite(Self, "h", []),
                      io:format(user, "to user~n", []),
                      Self ! done
              end),
    true = group_leader(self(), C),
    C ! go,
    collect([]).

%% The leader ends before replying: io raises terminated.
leader_dies() ->
    Self = self(),
    L = spawn(fun() -> receive {io_request, _, _, _} -> exit(gone) end end),
    C = spawn(fun() ->
                      R = try io:format("x") catch error:E -> {error, E} end,
                      Self ! {r, R}
              end),
    true = group_leader(L, C),
    exit({result, receive {r, R} -> R end}).

%% A process that is its own leader cannot write to it.
leader_is_self() ->
    Self = self(),
    C = spawn(fun() ->
                      group_leader(self(), self()),
                      R = try io:put_chars("x") catch error:E -> {error, E} end,
                      Self ! {r, R}
              end),
    exit({result, receive {r, R} -> {R, is_pid(C)} end}).

%% A device name nobody has registered: badarg.
unregistered_device() ->
    exit({result, try io:format(no_such_device, "x", []) catch error:E -> {error, E} end}).

output_default() ->
    io:format("one ~p~n", [1]),
    io:put_chars(<<"two">>),
    io:nl(),
    io:write(three).

output_default_fails() ->
    output_default(),
    exit(failed).

%% group_leader/2 in a step that is in the counterexample.
set_then_fail() ->
    L = spawn(fun waiter/0),
    true = group_leader(L, self()),
    exit(failed).

%% A process on another node inherits a leader on this node, and its output
%% travels back to it as io_requests (checker only).
remote_capture() ->
    [_, B] = [node() | nodes()],
    true = group_leader(self(), self()),
    Self = self(),
    spawn(B, fun() -> io:format("from ~p", [b]), io:nl(), Self ! done end),
    collect([]).

%% Output through a computed call, apply/3, a fun io:F/A and a fun that
%% lists:foreach calls: the same io_requests.
capture_indirect() ->
    Self = self(),
    C = spawn(fun() ->
                      receive go -> ok end,
                      M = io, F = format,
                      M:F("dyn~n", []),
                      apply(io, put_chars, ["ap"]),
                      G = fun io:format/2,
                      G("ref", []),
                      lists:foreach(fun(X) -> io:write(X) end, [1, 2]),
                      Self ! done
              end),
    true = group_leader(self(), C),
    C ! go,
    collect([]).

%% The leaders of init and user are not modelled (checker: refused).
set_user_leader() ->
    true = group_leader(self(), whereis(user)),
    ok.
