%% @doc Renders counterexamples as text: one line per step, then the
%% violation and the processes of the final state.
-module(mce_format).

-export([counterexample/1]).

-define(DEPTH, 12).

-spec counterexample(mcerlang:counterexample()) -> unicode:chardata().
counterexample(#{violation := Violation, trace := Trace, final_state := Final} = Cex) ->
    Steps = lists:zip(lists:seq(1, length(Trace)), Trace),
    Nodes = lists:usort([Node || #{node := Node} <- Final]),
    Cycle = maps:get(cycle, Cex, none),
    [io_lib:format("Counterexample (~b steps~ts):~n",
                   [length(Trace), case Cycle of
                                       none -> "";
                                       _ -> io_lib:format(", then a cycle of ~b", [length(Cycle)])
                                   end]),
     [step(N, L) || {N, L} <- Steps],
     case Cycle of
         none -> "";
         _ -> ["Cycle (repeats forever):\n",
               [step(N, L) || {N, L} <- lists:zip(lists:seq(length(Trace) + 1,
                                                             length(Trace) + length(Cycle)),
                                                  Cycle)]]
     end,
     violation(Violation),
     case Cycle of
         none -> "Final state:\n";
         _ -> "State where the cycle starts:\n"
     end,
     case Final of
         [] -> "  (no processes)\n";
         _ -> [process(P, length(Nodes) > 1) || P <- Final]
     end,
     case maps:get(ether, Cex, []) of
         [] -> "";
         Ether -> ["In the ether:\n", [channel(C) || C <- Ether]]
     end].

step(N, #{kind := deliver, from := From, to := To, signal := Signal}) ->
    io_lib:format("~4b. ether delivers ~ts from ~ts to ~ts~n",
                  [N, signal(Signal), pid(From), pid(To)]);
step(N, #{kind := timer, ref := Ref, to := To, signal := Signal}) ->
    io_lib:format("~4b. timer ~ts fires: delivers ~ts to ~ts~n",
                  [N, term(Ref), signal(Signal), pid(To)]);
step(N, #{kind := stutter}) ->
    io_lib:format("~4b. (no process or channel can move: the run stays here)~n", [N]);
step(N, #{kind := fault, fault := Fault}) ->
    io_lib:format("~4b. FAULT: ~ts~n", [N, fault(Fault)]);
step(N, #{pid := Pid, action := Action, effects := Effects, output := Output,
          outcome := Outcome} = Label) ->
    Parts = [action(Action)] ++ [effect(E) || E <- Effects] ++
        [io_lib:format("prints ~tp", [O]) || O <- Output] ++
        [["probe ", term(L), ": ", term(T)] || {L, T} <- maps:get(probes, Label, [])] ++
        [outcome(Outcome)],
    io_lib:format("~4b. ~ts ~ts~n", [N, pid(Pid), lists:join("; ", Parts)]).

pid(Pid) when is_pid(Pid) ->
    case node(Pid) of
        'nonode@nohost' -> io_lib:format("~p", [Pid]);
        Node -> io_lib:format("~p@~p", [Pid, Node])
    end;
pid(Other) ->
    term(Other).

signal({message, Msg}) -> ["message ", term(Msg)];
signal({exit, Reason}) -> ["exit signal ", term(Reason)];
signal({link_exit, Reason}) -> ["exit signal (link) ", term(Reason)];
signal(link) -> "link request";
signal(unlink) -> "unlink request";
signal({monitor, Ref}) -> ["monitor request ", term(Ref)];
signal({demonitor, Ref}) -> ["demonitor request ", term(Ref)];
signal({down, Ref, Reason}) -> ["'DOWN' ", term(Ref), " ", term(Reason)].

fault({crash_node, Node}) -> io_lib:format("node ~p crashes", [Node]);
fault({disconnect, A, B}) -> io_lib:format("nodes ~p and ~p disconnect", [A, B]);
fault({reconnect, A, B}) -> io_lib:format("nodes ~p and ~p reconnect", [A, B]);
fault({kill, Pid}) -> io_lib:format("process ~ts is killed", [pid(Pid)]).

channel(#{from := From, to := To, signals := Signals}) ->
    io_lib:format("  ~ts -> ~ts: ~ts~n",
                  [pid(From), pid(To), lists:join(", ", [signal(S) || S <- Signals])]).

action({start, Call}) -> ["starts ", call(Call)];
action(timeout) -> "times out in receive";
action(resume) -> "continues";
action({choice, I}) -> io_lib:format("takes alternative ~b of mcerlang:choice/1", [I]);
action({prop_passed, T}) -> ["passes mcerlang:prop(", term(T), ")"];
action({'receive', Msg}) -> ["receives ", term(Msg)].

effect({send, To, Msg}) ->
    io_lib:format("sends ~ts to ~ts", [term(Msg), pid(To)]);
effect({spawn, Child, Call, Link}) ->
    io_lib:format("~ts ~ts running ~ts",
                  [case Link of true -> "spawn_links"; false -> "spawns" end,
                   pid(Child), call(Call)]);
effect({link, Pid}) -> ["links to ", pid(Pid)];
effect({unlink, Pid}) -> ["unlinks from ", pid(Pid)];
effect({exit, Pid, Reason}) -> io_lib:format("sends exit signal ~ts to ~ts", [term(Reason), pid(Pid)]);
effect({register, Name, Pid}) -> io_lib:format("registers ~ts as ~p", [pid(Pid), Name]);
effect({unregister, Name}) -> io_lib:format("unregisters ~p", [Name]);
effect({monitor, What, _Ref}) -> ["monitors ", pid(What)];
effect({demonitor, _Ref, _Flush}) -> "demonitors";
effect({monitor_node, Node, true}) -> io_lib:format("monitors node ~p", [Node]);
effect({monitor_node, Node, false}) -> io_lib:format("stops monitoring node ~p", [Node]);
effect({timer, _Ref, Dest, Msg, Time}) ->
    io_lib:format("starts a ~b ms timer to send ~ts to ~ts", [Time, term(Msg), pid(Dest)]);
effect({cancel_timer, Ref}) -> ["cancels timer ", term(Ref)];
effect({alias, Ref}) -> ["makes alias ", term(Ref)];
effect({unalias, Ref}) -> ["removes alias ", term(Ref)];
effect({unique, _}) -> "takes a unique integer";
effect({trap_exit, Flag}) -> io_lib:format("sets trap_exit to ~p", [Flag]);
effect(Other) -> term(Other).

outcome({waiting, Where}) -> ["waits in receive", where(Where)];
outcome(yielded) -> "yields (granularity small)";
outcome({choosing, N}) -> io_lib:format("reaches mcerlang:choice/1 with ~b alternatives", [N]);
outcome({prop, T}) -> ["stands at mcerlang:prop(", term(T), ")"];
outcome({exit, normal}) -> "exits normally";
outcome({exit, Reason}) -> ["exits with reason ", term(Reason)].

violation(deadlock) ->
    "Violation: deadlock (processes are alive but none can move)\n";
violation({abnormal_exit, Pid, Reason}) ->
    io_lib:format("Violation: process ~p exited abnormally: ~ts~n", [Pid, term(Reason)]);
violation({ltl, Formula}) ->
    io_lib:format("Violation: the LTL property ~ts fails on this run (the cycle repeats "
                  "forever)~n", [Formula]);
violation({invariant, F}) ->
    io_lib:format("Violation: invariant ~ts does not hold~n", [term(F)]);
violation({monitor, M, Verdict}) ->
    io_lib:format("Violation: monitor ~p says ~ts~n", [M, term(Verdict)]);
violation(Other) ->
    io_lib:format("Violation: ~ts~n", [term(Other)]).

process(#{pid := Pid, status := Status, where := Where, mailbox := Mailbox}, ShowNode) ->
    What = case Status of
               init -> "not started yet";
               choosing -> "at mcerlang:choice/1";
               waiting -> ["blocked in receive", where(Where)]
           end,
    Box = case Mailbox of
              [] -> "mailbox empty";
              _ -> ["mailbox ", term(Mailbox)]
          end,
    Who = case ShowNode of
              true -> pid(Pid);
              false -> io_lib:format("~p", [Pid])
          end,
    io_lib:format("  ~ts ~ts, ~ts~n", [Who, What, Box]).

where({M, F, A, File, Line}) when Line > 0 ->
    io_lib:format(" at ~ts:~b (~p:~p/~b)", [filename:basename(File), Line, M, F, A]);
where({M, F, A, _, _}) ->
    io_lib:format(" in ~p:~p/~b", [M, F, A]);
where(undefined) ->
    "".

call({M, F, Args}) when is_atom(M), is_list(Args) ->
    io_lib:format("~p:~p/~b", [original(M), F, length(Args)]);
call(Fun) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, N} = erlang:fun_info(Fun, name),
    io_lib:format("fun ~p:~p", [original(M), N]).

original(M) ->
    case atom_to_list(M) of
        "mce$" ++ Orig -> list_to_atom(Orig);
        _ -> M
    end.

term(T) ->
    io_lib:format("~0tP", [T, ?DEPTH]).
