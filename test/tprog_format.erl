%% @doc Programs for mce_format_tests: each has a counterexample whose
%% report shows a kind of step, or a term long enough to be abbreviated.
-module(tprog_format).
-export([long_message/0, sink/1, timeout/0, timer/0, remote_watch/1, waiter/0,
         probe_prop/0, spawn_fun/0]).

%% A registered process gets a message holding a long list and a long
%% string, and exits with an abnormal reason.
long_message() ->
    spawn(?MODULE, sink, [self()]),
    receive ready -> ok end,
    format_sink ! {data, lists:seq(1, 40), lists:duplicate(150, $x)},
    receive never -> ok end.

sink(Parent) ->
    register(format_sink, self()),
    Parent ! ready,
    receive {data, L, S} -> exit({too_long, length(L) + length(S)}) end.

%% Nothing comes: the receive times out.
timeout() ->
    receive never -> ok after 10 -> exit(timed_out) end.

%% A timer's message is a step of its own.
timer() ->
    erlang:send_after(100, self(), tick),
    receive tick -> exit(ticked) end.

%% A link and a monitor to a process on another node: the requests and
%% the 'DOWN' go through the ether.
remote_watch(Node) ->
    Pid = spawn(Node, ?MODULE, waiter, []),
    link(Pid),
    Ref = monitor(process, Pid),
    Pid ! stop,
    receive {'DOWN', Ref, process, Pid, Reason} -> exit({down, Reason}) end.

waiter() ->
    receive stop -> ok end.

probe_prop() ->
    mcerlang:probe(stage, {one, self()}),
    mcerlang:prop(checkpoint),
    exit(passed).

%% A process started with a fun, crashing in a function it calls.
spawn_fun() ->
    spawn(fun() -> crash(1) end),
    ok.

crash(N) when N > 1 -> ok.
