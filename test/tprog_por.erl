%% Programs for test/mce_por_tests.erl: partial-order reduction
%% (c_src/por.h) on and off must give the same verdicts.
-module(tprog_por).
-export([workers/1, worker/0, chain/1, link_chain/1, go_done/1, go_worker/1,
         deadlock/1, crash/1, crasher/1, assert_race/0, observer/0, observed/0,
         local_steps/1, stepper/2, kill_race/0, victim/0,
         replies/1, reply_server/0, caller/1,
         linked_server/0, linked_server_body/1, timeout_caller/0, second_writer/0,
         exit_guard/0, link_guard/0, processes_guard/0, killed_server/0,
         exit_later/0, yield_race/0, yield_sender/2, poll_or_msg/0, poll_sender/1,
         alias_replies/1, alias_server/0, alias_caller/1, gen_replies/2,
         alias_second_writer/0, boom_and_ok/0,
         renamed_spawn/0, renamed_spawner/1, renamed_quit/0, renamed_pivot/0, renamed_child/3,
         early_end/0, early_watcher/1, early_end_alive/0, early_tester/1,
         ref_reuse/0, ref_sink/0, ref_maker/1, ref_go/1,
         demonitor_flush/1, alias_demonitor_race/0, alias_user/0,
         monitor_race/1, monitored/0, call_stop_race/0, spawn_then_monitor/0,
         monby_self/0, name_race/1, call_name_stop_race/0, armed_end_race/1]).

%% N workers that each go straight to a receive, then are told to stop.
workers(N) ->
    Ws = [spawn(?MODULE, worker, []) || _ <- lists:seq(1, N)],
    [W ! stop || W <- Ws],
    ok.

worker() ->
    receive stop -> ok end.

%% A chain of N processes, each spawned by the one before, each waiting
%% for a stop that never comes once it has started the next (the last one
%% ends): a deadlock, or with property abnormal_exit a clean end.  Under
%% small granularity each process's receive is a step of its own, after
%% the spawn.
chain(0) -> ok;
chain(N) ->
    spawn(?MODULE, link_chain, [N - 1]),
    ok.

link_chain(0) -> ok;
link_chain(N) ->
    Next = spawn(?MODULE, link_chain, [N - 1]),
    receive stop -> Next ! stop end.

%% 16 workers spawned at once wait for go and answer done.
go_done(N) ->
    Self = self(),
    Ws = [spawn(?MODULE, go_worker, [Self]) || _ <- lists:seq(1, N)],
    [W ! go || W <- Ws],
    [receive done -> ok end || _ <- Ws],
    ok.

go_worker(Parent) ->
    receive go -> Parent ! done end.

%% Workers that wait for a message that never comes: a deadlock once the
%% entry is done, whatever the order.
deadlock(N) ->
    [spawn(?MODULE, worker, []) || _ <- lists:seq(1, N)],
    ok.

%% One of N workers crashes on its message.
crash(N) ->
    Ws = [spawn(?MODULE, crasher, [I]) || I <- lists:seq(1, N)],
    [W ! go || W <- Ws],
    ok.

crasher(I) ->
    receive go when I =:= 2 -> erlang:error(boom);
            go -> ok
    end.

%% An assertion that fails in one interleaving only: two writers race to
%% tell the reader.
assert_race() ->
    Self = self(),
    spawn(fun() -> Self ! {v, 1} end),
    spawn(fun() -> Self ! {v, 2} end),
    receive {v, X} -> 1 = X end,
    receive {v, _} -> ok end.

%% process_info of another process observes its local steps: the
%% observer (spawned after the worker, so a higher pid) fails only when it
%% runs before the worker's first step, a safe step the reduction takes
%% first.  Only the run without the reduction finds the failure.
observer() ->
    W = spawn(?MODULE, observed, []),
    spawn(fun() ->
                  case erlang:process_info(W, status) of
                      {status, runnable} -> exit(saw_unstarted);
                      _ -> ok
                  end,
                  W ! stop
          end),
    ok.

observed() ->
    receive stop -> ok end.

%% N processes each taking K local steps (a choice of one alternative,
%% under small granularity a yield) before a receive.
local_steps(N) ->
    Self = self(),
    Ps = [spawn(?MODULE, stepper, [Self, 3]) || _ <- lists:seq(1, N)],
    [P ! go || P <- Ps],
    [receive done -> ok end || _ <- Ps],
    ok.

stepper(Parent, 0) ->
    receive go -> Parent ! done end;
stepper(Parent, K) ->
    mcerlang:choice([fun() -> ok end]),
    stepper(Parent, K - 1).

%% A safe step of a process another kills: the kill absorbs it.
kill_race() ->
    V = spawn(?MODULE, victim, []),
    exit(V, kill),
    ok.

victim() ->
    process_flag(trap_exit, false),
    receive _ -> ok end.

%% Sending safe steps (rule 7 of docs/ARCHITECTURE.md): a server's reply
%% to a caller that waits for it and that no one else can write to.

%% N callers of one server, one request each.
replies(N) ->
    S = spawn(?MODULE, reply_server, []),
    [spawn(?MODULE, caller, [S]) || _ <- lists:seq(1, N)],
    ok.

reply_server() ->
    receive {req, From} -> From ! reply, reply_server() end.

caller(S) ->
    S ! {req, self()},
    receive reply -> ok end.

%% A caller that watches the server, and fails if the server dies before
%% it replies.
watching_caller(S, Before) ->
    _ = erlang:monitor(process, S),
    Before(),
    S ! {req, self()},
    receive
        reply -> ok;
        {'DOWN', _, process, _, noproc} -> ok;
        {'DOWN', _, process, _, _} -> exit(saw_down)
    end.

%% 7a: the server is linked to a process that ends (shutdown) when the
%% caller tells it to: the server can die between the request and the
%% reply, so its reply is not safe.
linked_server() ->
    Self = self(),
    spawn(?MODULE, linked_server_body, [Self]),
    receive {x, S, X} ->
            spawn(fun() -> watching_caller(S, fun() -> X ! go end) end)
    end,
    ok.

linked_server_body(Parent) ->
    X = spawn_link(fun() -> receive go -> exit(shutdown) end end),
    Parent ! {x, self(), X},
    reply_server().

%% 7b: a caller whose receive times out (under timeouts => any the
%% timeout can fire before the reply; under when_idle it cannot).
timeout_caller() ->
    S = spawn(?MODULE, reply_server, []),
    spawn(fun() ->
                  S ! {req, self()},
                  receive reply -> ok after 10 -> exit(timed_out) end
          end),
    ok.

%% 7c: the caller's pid is also held by a process that writes to it: the
%% caller fails if that message comes first.
second_writer() ->
    S = spawn(?MODULE, reply_server, []),
    Y = spawn(fun() -> receive {hello, P} -> P ! hi end end),
    spawn(fun() ->
                  S ! {req, self()},
                  Y ! {hello, self()},
                  receive
                      reply -> ok;
                      hi -> exit(hi_first)
                  end
          end),
    ok.

%% 7g, the guard: a third process kills the server (exit/2), links to it
%% and then ends, or lists the processes and writes to the caller, when
%% the caller tells it to, between the request and the reply.
exit_guard() ->
    guarded(fun(S) -> exit(S, kill) end).

link_guard() ->
    guarded(fun(S) -> link(S), exit(shutdown) end).

guarded(Act) ->
    S = spawn(?MODULE, reply_server, []),
    X = spawn(fun() -> receive go -> Act(S) end end),
    spawn(fun() -> watching_caller(S, fun() -> X ! go end) end),
    ok.

processes_guard() ->
    S = spawn(?MODULE, reply_server, []),
    X = spawn(fun() -> receive go -> [P ! hi || P <- processes(), P =/= self(), P =/= S] end end),
    spawn(fun() ->
                  S ! {req, self()},
                  X ! go,
                  receive
                      reply -> ok;
                      hi -> exit(hi_first)
                  end
          end),
    ok.

%% 7a, the fault budget: with max_kills the server can be killed between
%% the request and the reply.
killed_server() ->
    S = spawn(?MODULE, reply_server, []),
    spawn(fun() -> watching_caller(S, fun() -> ok end) end),
    ok.

%% exit/2 of an existing process by another, in a program whose safe
%% steps send nothing: the guard leaves the reduction on.
exit_later() ->
    W = spawn(?MODULE, worker, []),
    spawn(fun() -> exit(W, kill) end),
    ok.

%% Two processes that yield (a receive without clauses, `after 0': a safe
%% step) and then report to the root, which asserts the first report is
%% a's: the other order is a violation that the reduction must keep.
yield_race() ->
    Root = self(),
    spawn(?MODULE, yield_sender, [Root, a]),
    spawn(?MODULE, yield_sender, [Root, b]),
    receive First -> a = First end,
    receive _ -> ok end.

yield_sender(Root, Tag) ->
    erlang:yield(),
    Root ! Tag.

%% A receive with a clause and `after 0' is no poll: the child's send
%% disables the root's timeout, so the timeout is not safe, and the crash
%% when the message comes first is kept (taking that timeout as safe would
%% explore only the root's steps and lose it).
poll_or_msg() ->
    spawn(?MODULE, poll_sender, [self()]),
    erlang:yield(),
    receive go -> erlang:error(message_first) after 0 -> receive go -> ok end end.

poll_sender(P) ->
    P ! go.

%% Rule 7 through aliases: N callers of a server that replies to the alias
%% each caller made with its monitor, as gen:call does.
alias_replies(N) ->
    S = spawn(?MODULE, alias_server, []),
    [spawn(?MODULE, alias_caller, [S]) || _ <- lists:seq(1, N)],
    ok.

alias_server() ->
    receive {req, Alias} -> Alias ! {Alias, reply}, alias_server() end.

alias_caller(S) ->
    Alias = erlang:monitor(process, S, [{alias, demonitor}]),
    S ! {req, Alias},
    receive {Alias, reply} -> erlang:demonitor(Alias, [flush]) end.

%% The same with OTP's gen_server:call, K calls per caller.
gen_replies(N, K) ->
    {ok, S} = gen_server:start(tprog_por_server, [], []),
    [spawn(fun() -> [gen_server:call(S, ping) || _ <- lists:seq(1, K)] end)
     || _ <- lists:seq(1, N)],
    ok.

%% 7c through an alias: the caller hands its alias to a process that writes
%% through it too; the caller fails if that message comes first.
alias_second_writer() ->
    S = spawn(?MODULE, alias_server, []),
    Y = spawn(fun() -> receive {hello, A} -> A ! {A, hi} end end),
    spawn(fun() ->
                  Alias = erlang:alias(),
                  S ! {req, Alias},
                  Y ! {hello, Alias},
                  receive
                      {Alias, reply} -> ok;
                      {Alias, hi} -> exit(hi_first)
                  end
          end),
    ok.

%% Two processes started together, the first of which exits abnormally:
%% a session lists the second's start beside the first's violation.
boom_and_ok() ->
    spawn(fun() -> exit(boom) end),
    spawn(fun() -> ok end),
    ok.

%% Steps safe only up to a renaming of pid numbers (c_src/por.h, rule 8):
%% the spawner's spawn is taken before the other steps of the state, so
%% its child gets the number the quitter still holds (5), never the one
%% the quitter frees when it ends first (3, in the full search).  The child
%% compares its pid with the pivot's (4): an observation of pid numbers,
%% which must void the reduced search.  Without that guard the reduced
%% search misses the abnormal exit of the child numbered 3.
renamed_spawn() ->
    S = spawn(?MODULE, renamed_spawner, [self()]),
    _ = spawn(?MODULE, renamed_quit, []),
    P = spawn(?MODULE, renamed_pivot, []),
    S ! {pivot, P},
    receive done -> ok end.

renamed_spawner(Entry) ->
    receive
        {pivot, P} ->
            spawn(?MODULE, renamed_child, [Entry, self(), P]),
            receive stop -> ok end
    end.

renamed_quit() ->
    ok.

renamed_pivot() ->
    receive stop -> ok end.

renamed_child(Entry, S, P) ->
    case self() < P of
        true -> exit(renumbered);
        false -> P ! stop, S ! stop, Entry ! done
    end.

%% An end taken as safe (c_src/por.h, rule 9): the quitter ends before the
%% watcher's monitor whenever both can move, so the monitor answers
%% `noproc'; the full search also monitors it alive, and then the 'DOWN'
%% says `normal', which the watcher treats as a failure.  A monitor of a
%% process that is gone must void the reduced search (without that guard
%% it answers ok).
early_end() ->
    Q = spawn(?MODULE, renamed_quit, []),
    _ = spawn(?MODULE, early_watcher, [Q]),
    ok.

early_watcher(Q) ->
    Ref = erlang:monitor(process, Q),
    receive
        {'DOWN', Ref, process, Q, normal} -> exit(saw_it_alive);
        {'DOWN', Ref, process, Q, noproc} -> ok
    end.

%% The same with is_process_alive/1 (a liveness read, c_src/peek.c).
early_end_alive() ->
    Q = spawn(?MODULE, renamed_quit, []),
    _ = spawn(?MODULE, early_tester, [Q]),
    ok.

early_tester(Q) ->
    case is_process_alive(Q) of
        true -> exit(saw_it_alive);
        false -> ok
    end.

%% Ref counters up to a renaming (c_src/por.h): the sink's receive drops
%% the last copy of the maker's first ref, freeing its counter, and the
%% maker's next ref takes the least free one.  Whether it then sorts after
%% the ref the maker kept depends on which came first (the reduced search
%% takes the sink's receive first, so only the full one sorts it after:
%% the abnormal exit); the maker reads the
%% order through maps:keys/1 of a map keyed by its two refs, which must
%% void a search reduced up to a renaming of ref counters (without that
%% report the reduced search answers ok).
ref_reuse() ->
    Q = spawn(?MODULE, ref_sink, []),
    P = spawn(?MODULE, ref_maker, [Q]),
    _ = spawn(?MODULE, ref_go, [P]),
    ok.

ref_sink() ->
    receive {ref, _} -> ok end.

ref_maker(Q) ->
    A = make_ref(),
    Q ! {ref, A},
    M = make_ref(),
    receive go -> ok end,
    B = make_ref(),
    case maps:keys(#{B => b, M => m}) of
        [B, M] -> ok;
        [M, B] -> exit(not_reused)
    end.

ref_go(P) ->
    P ! go.

%% Rule 10 (c_src/por.c, demonitor_safe): a client's `demonitor(Ref,
%% [flush])' races its target's death: with the flush no 'DOWN' is left
%% whichever comes first (`Flush' true: ok); without it one may be
%% (false: the abnormal exit saw_down).
-spec demonitor_flush(boolean()) -> ok.
demonitor_flush(Flush) ->
    Target = spawn(fun() -> receive stop -> ok end end),
    Self = self(),
    spawn(fun() ->
                  Ref = monitor(process, Target),
                  Self ! monitoring,
                  case Flush of
                      true -> demonitor(Ref, [flush]);
                      false -> demonitor(Ref)
                  end,
                  receive {'DOWN', Ref, _, _, _} -> exit(saw_down) after 0 -> ok end
          end),
    receive monitoring -> ok end,
    Target ! stop,
    ok.

%% The alias a monitor made with `{alias, demonitor}' ends with the
%% demonitor: a message another process sends to it is delivered only if
%% it comes first.  The other process holds the ref (in its mailbox), so
%% the demonitor is no safe step; taken as one, the reduced search would
%% order it first and miss got_it (checked by hand with key_private
%% answering yes).
-spec alias_demonitor_race() -> ok.
alias_demonitor_race() ->
    Target = spawn(fun() -> receive stop -> ok end end),
    User = spawn(?MODULE, alias_user, []),
    Ref = monitor(process, Target, [{alias, demonitor}]),
    User ! {ref, Ref},
    demonitor(Ref, [flush]),
    receive {Ref, hi} -> exit(got_it) after 0 -> ok end,
    Target ! stop,
    ok.

-spec alias_user() -> ok.
alias_user() ->
    receive {ref, R} -> R ! {R, hi}, ok end.

%% Rule 11 (c_src/por.h): a monitor of a process another process stops.
%% The stop may come before the monitor ('DOWN' with noproc) or after it
%% ('DOWN' with normal).  The entry's monitor is safe with every other
%% step, the target's death aside, so the reduced search takes it first
%% and would never see noproc; the guard sees the target die while the
%% entry is armed (it has sent the target nothing) and the check runs again
%% with the exact rules.  With `Ping' the entry sends to the target after
%% the monitor (which disarms it): the stop still comes first in the
%% orders where the send waits, which the search explores because the
%% send is no safe step (the stopper holds the target's pid too).  Checked
%% by hand with the guard never voiding: ok, both ways.
-spec monitor_race(boolean()) -> ok.
monitor_race(Ping) ->
    Target = spawn(?MODULE, monitored, []),
    spawn(fun() -> Target ! stop end),
    Ref = monitor(process, Target),
    Ping andalso (Target ! {ping, self()}),
    receive
        {'DOWN', Ref, process, _, noproc} -> exit(saw_noproc);
        {'DOWN', Ref, process, _, normal} -> ok;
        pong -> demonitor(Ref, [flush]), ok
    end.

-spec monitored() -> ok.
monitored() ->
    receive
        stop -> ok;
        {ping, From} -> From ! pong, monitored()
    end.

%% The same race in OTP's code: gen_server:call/2 (gen:do_call's monitor,
%% then its request) against gen_server:stop/1 by another process.  The
%% call exits with noproc when the server was gone before the monitor,
%% with normal when it died after.  Checked by hand with the guard never
%% voiding: ok.
-spec call_stop_race() -> ok.
call_stop_race() ->
    {ok, S} = gen_server:start(counter_server, 0, []),
    spawn(fun() -> gen_server:stop(S) end),
    try gen_server:call(S, get) of
        _ -> ok
    catch
        exit:{noproc, _} -> exit(saw_noproc);
        exit:{normal, _} -> ok
    end.

%% A plain spawn, then a monitor: the child may end before the monitor
%% (noproc) or after (normal).  The entry never sends to the child, so it
%% stays armed, and the child's end voids the reduced search whichever
%% way it came (spawn_monitor, one operation, has no such race).
-spec spawn_then_monitor() -> ok.
spawn_then_monitor() ->
    Child = spawn(fun() -> ok end),
    Ref = monitor(process, Child),
    receive
        {'DOWN', Ref, process, _, noproc} -> exit(saw_noproc);
        {'DOWN', Ref, process, _, normal} -> ok
    end.

%% Rules 10 and 11's other guard: a process that asks who monitors it
%% sees whether another's monitor came first.  The target asks while the
%% entry monitors it; the entry's monitor, taken first, would hide the
%% order in which the target saw no watcher.
-spec monby_self() -> ok.
monby_self() ->
    Self = self(),
    Target = spawn(fun() ->
                           {monitored_by, By} = process_info(self(), monitored_by),
                           Self ! {seen, By}
                   end),
    Ref = monitor(process, Target),
    receive
        {seen, []} -> exit(saw_none);
        {seen, _} -> demonitor(Ref, [flush]), ok
    end.

%% Rule 12 (c_src/por.h): a lookup of a registered name is safe against
%% every step but one that frees the name.  Here another process makes the
%% holder end (`stop') or unregister the name (`unregister') while the
%% entry looks it up: found before, undefined after.  The reduced search
%% takes the lookup first; the guard sees the name freed and the check runs
%% again with the exact rules.  Checked by hand with the guard never
%% voiding: ok, both ways.
-spec name_race(stop | unregister) -> ok.
name_race(How) ->
    Holder = named_holder(),
    %% by pid: the entry is the only process that looks the name up
    spawn(fun() -> Holder ! How end),
    case whereis(holder) of
        undefined -> exit(saw_undefined);
        _ -> ok
    end.

%% Rule 12's guard when the reader is gone before the name is freed: a
%% reader that looks the name up and ends (a plain spawn: its end is safe,
%% rule 9), against the holder's unregister or end.  Read alone, the
%% lookup finds the name and the reader ends; the freeing then finds no
%% live reader armed, and only the end's half of the guard
%% (search_reduce.c, took_armed_end) voids.  Without it: ok (checked by
%% hand).
-spec armed_end_race(stop | unregister) -> ok.
armed_end_race(How) ->
    Holder = named_holder(),
    spawn(fun() -> name_reader() end),
    Holder ! How,
    ok.

%% A process registered as `holder' that ends (`stop') or unregisters the
%% name (`unregister') when told.
named_holder() ->
    Holder = spawn(fun() ->
                           receive
                               stop -> ok;
                               unregister -> unregister(holder)
                           end
                   end),
    register(holder, Holder),
    Holder.

name_reader() ->
    case whereis(holder) of
        undefined -> exit(saw_undefined);
        _ -> ok
    end.

%% The same in OTP's code: gen_server:call/2 to a registered name, which
%% looks the name up, against gen_server:stop/1 by another process.  The
%% call exits with noproc when the name was gone at the lookup (or the
%% server before the monitor), with normal when the server died after.
%% Checked by hand with both guards never voiding: ok.
-spec call_name_stop_race() -> ok.
call_name_stop_race() ->
    {ok, _} = gen_server:start({local, counter}, counter_server, 0, []),
    spawn(fun() -> gen_server:stop(counter) end),
    try gen_server:call(counter, get) of
        _ -> ok
    catch
        exit:{noproc, _} -> exit(saw_noproc);
        exit:{normal, _} -> ok
    end.
