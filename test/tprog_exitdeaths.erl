%% @doc Programs whose processes die of exit signals sent by others (issue
%% 14 item 1): each returns, in exit({result, R}), the reason the victim's
%% monitor saw, so the real VM shows the reason the checker must report.
-module(tprog_exitdeaths).

-export([exit_boom/0, exit_kill/0, exit_shutdown_tuple/1, linked_pair/0, linked_remote/1,
         brutal_kill/0, shutdown_timeout/0]).
-export([init/1, start_child/0, stubborn/0]).

%% exit(P, boom) from another process kills P with boom.
exit_boom() ->
    victim_reason(boom).

%% exit(P, kill) kills P with reason killed.
exit_kill() ->
    victim_reason(kill).

%% {Atom, Detail}: covered by Atom in treat_as_normal.
exit_shutdown_tuple(Atom) ->
    victim_reason({Atom, detail}).

victim_reason(Signal) ->
    P = spawn(fun() -> receive never -> ok end end),
    Ref = monitor(process, P),
    exit(P, Signal),
    receive {'DOWN', Ref, process, P, Reason} -> exit({result, Reason}) end.

%% A process linked to another (the kill fault's victim, or the process
%% that a crashed node took along) dies of the propagated reason.
linked_pair() ->
    Self = self(),
    A = spawn(fun() ->
                      B = spawn_link(fun() -> receive never -> ok end end),
                      Self ! {b, B},
                      receive never -> ok end
              end),
    receive {b, B} -> ok end,
    {A, B}.

%% B on this node is linked to A on `Node': when that node crashes B dies
%% with noconnection.
linked_remote(Node) ->
    Self = self(),
    spawn(fun() ->
                  A = spawn(Node, fun() -> receive never -> ok end end),
                  link(A),
                  Self ! linked,
                  receive never -> ok end
          end),
    receive linked -> ok end.

%% A supervisor whose child has shutdown => brutal_kill: stopping the
%% supervisor kills the child with reason killed (OTP supervisor(3),
%% "brutal_kill means that the child process is unconditionally terminated
%% using exit(Child, kill)").
brutal_kill() ->
    stop_supervisor(brutal_kill, start_child).

%% With a shutdown time the child gets exit(Child, shutdown) first; one that
%% traps exits and ignores it is killed once the time is up.
shutdown_timeout() ->
    stop_supervisor(10, stubborn).

stop_supervisor(Shutdown, Start) ->
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, {Shutdown, Start}),
    [{c, Pid, worker, _}] = supervisor:which_children(Sup),
    Ref = monitor(process, Pid),
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Pid, Reason} -> exit({result, Reason}) end.

init({Shutdown, Start}) ->
    {ok, {#{strategy => one_for_one},
          [#{id => c, start => {?MODULE, Start, []}, shutdown => Shutdown}]}}.

start_child() ->
    {ok, spawn_link(fun() -> receive never -> ok end end)}.

stubborn() ->
    Sup = self(),
    Pid = spawn_link(fun() ->
                             process_flag(trap_exit, true),
                             Sup ! {ready, self()},
                             receive never -> ok end
                     end),
    receive {ready, Pid} -> {ok, Pid} end.
