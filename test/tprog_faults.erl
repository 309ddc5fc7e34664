%% @doc Programs for aimed faults (mce_faults_tests): kills aimed at a
%% named server or at the entry, node crashes and disconnections aimed at
%% some nodes only.
-module(tprog_faults).
-behaviour(gen_server).

-export([kill_server/0, watch_entry/0, watcher/1, remote_worker/1, remote_waiter/0]).
-export([init/1, handle_call/3, handle_cast/2]).

%% A client of a named server: a kill of the server makes a call fail
%% (the client ends with {killed | noproc, {gen_server, call, _}}).
kill_server() ->
    {ok, _} = gen_server:start({local, store}, ?MODULE, 0, []),
    1 = gen_server:call(store, incr),
    2 = gen_server:call(store, incr),
    ok.

%% The entry itself is watched: a watcher ends abnormally if the entry is
%% killed.  Nothing else can go wrong (a killed watcher is no violation).
watch_entry() ->
    Self = self(),
    {W, _} = spawn_monitor(?MODULE, watcher, [Self]),
    receive
        ready -> ok;
        {'DOWN', _, process, W, _} -> ok    % the watcher was killed
    end.

-spec watcher(pid()) -> ok.
watcher(Entry) ->
    Ref = monitor(process, Entry),
    Entry ! ready,
    receive
        {'DOWN', Ref, process, _, killed} -> exit(entry_killed);
        {'DOWN', Ref, process, _, _} -> ok
    end.

%% The entry (on the first node, the observer) traps exits and links to a
%% worker on Node, then waits for the link to break: a crash or
%% disconnection of the worker's node is expected; one of the observer's
%% node kills the worker with noconnection (an abnormal exit).
remote_worker(Node) ->
    process_flag(trap_exit, true),
    _ = spawn_link(Node, ?MODULE, remote_waiter, []),
    receive {'EXIT', _, _} -> ok end.

-spec remote_waiter() -> ok.
remote_waiter() ->
    receive stop -> ok end.

-spec init(integer()) -> {ok, integer()}.
init(N) -> {ok, N}.

-spec handle_call(incr, term(), integer()) -> {reply, integer(), integer()}.
handle_call(incr, _From, N) -> {reply, N + 1, N + 1}.

-spec handle_cast(term(), integer()) -> {noreply, integer()}.
handle_cast(_, N) -> {noreply, N}.
