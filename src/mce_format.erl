%% @doc Renders counterexamples as text (mcerlang:format/1,2).
%%
%% A header naming the violation, then the numbered steps: who moves (its
%% pid, registered name, node and the function it was started with), what
%% it does, and where in the source; the effects of a step go on indented
%% lines below it.  A lasso's cycle follows its stem under a marker.  Then
%% the violation, the processes of the final state (for a lasso, the state
%% where the cycle starts), the signals in the ether, and a line on the
%% search.
%%
%% The steps say little about the processes themselves, so the report
%% learns as it walks the trace: a spawn tells a child's initial function,
%% a register its name, and a step's outcome where the process stands for
%% its next step (the receive that step completes).
%%
%% Every term is printed on one line, cut at a depth (as `~P') and at a
%% width in characters; `full => true' prints every term whole.
-module(mce_format).

-export([counterexample/1, counterexample/2]).
%% Pieces of the report, for tools that show a run a step at a time (the
%% debugger, the command line).
-export([step/3, violation/1, term/2, run_steps/2, run_state/4, state_counts/1]).

-define(DEPTH, 8).
-define(WIDTH, 100).
%% A step's effects and outcome go on lines of their own, indented past
%% its number.
-define(MORE, "        ").

%% What the walk knows about a process: the call it was started with, its
%% registered name and its last outcome (where it stands).
-type proc() :: #{call => term(), name => atom(), outcome => term()}.

-record(fmt, {depth = ?DEPTH :: pos_integer() | infinity,
              width = ?WIDTH :: pos_integer() | infinity,
              nodes = false :: boolean(),         % show the node of each pid
              procs = #{} :: #{pid() => proc()}}).

%% @equiv counterexample(Counterexample, #{})
-spec counterexample(mcerlang:counterexample()) -> unicode:chardata().
counterexample(Cex) ->
    counterexample(Cex, #{}).

%% @doc The text report of a counterexample.  Options: `depth' (default
%% 8) and `width' (characters, default 100) bound each printed term, a
%% positive integer or `infinity'; `full => true' prints terms whole;
%% `fold => otp' reads OTP's call protocol as calls and replies (mce_fold;
%% default `none').
-spec counterexample(mcerlang:counterexample(), map()) -> unicode:chardata().
counterexample(#{violation := Violation} = Cex0, Opts) when is_map(Opts) ->
    #{trace := Trace, final_state := Final} = Cex = fold(Cex0, Opts),
    Cycle = maps:get(cycle, Cex, []),
    F0 = (options(Opts))#fmt{nodes = length(cex_nodes(Cex)) > 1},
    {StemText, F1} = steps(1, Trace, F0),
    %% The final state is where the stem ends; the cycle comes back to it.
    {CycleText, _} = steps(length(Trace) + 1, Cycle, F1),
    [header(Violation, length(Trace), Cycle, F1),
     StemText,
     case Cycle of
         [] -> "";
         _ -> ["Cycle (repeats forever):\n", CycleText]
     end,
     violation(Violation, F1),
     cause(Violation, Trace, F1),
     final_state(Final, Cycle, F1),
     ether(maps:get(ether, Cex, []), F1),
     footer(Cex)].

%% @doc One step as the report shows it, numbered `N', out of context:
%% without the trace before it, the process shows by its pid alone (and
%% its initial function when the step starts it).  Options as for
%% counterexample/2.
-spec step(pos_integer(), map(), map()) -> unicode:chardata().
step(N, Step, Opts) when is_map(Step), is_map(Opts) ->
    %% Alone, a step cannot tell whether the run spans nodes: a pid shows
    %% its node when that is not this one.
    Remote = [P || P <- pids(Step, []), node(P) =/= node()],
    {Text, _} = step_text(N, Step, (options(Opts))#fmt{nodes = Remote =/= []}),
    Text.

%% @doc The steps of a run, numbered from 1, each shown in the context of
%% those before it (as in the report: processes with their initial
%% functions and names).
-spec run_steps([map()], map()) -> [unicode:chardata()].
run_steps(Steps, Opts) when is_list(Steps), is_map(Opts) ->
    F0 = (options(Opts))#fmt{nodes = length(cex_nodes(#{trace => Steps})) > 1},
    {Texts, _} = steps(1, Steps, F0),
    Texts.

%% @doc The processes of a state and its ether, as the report's final
%% state shows them, after the steps of the run that led there.
-spec run_state([map()], [map()], [map()], map()) -> unicode:chardata().
run_state(Processes, Ether, Steps, Opts) when is_list(Processes), is_map(Opts) ->
    F0 = (options(Opts))#fmt{nodes = length(cex_nodes(#{trace => Steps,
                                                        final_state => Processes})) > 1},
    {_, F} = steps(1, Steps, F0),
    [case Processes of
         [] -> "  (no processes)\n";
         _ -> [process(P, F) || P <- Processes]
     end,
     ether(Ether, F)].

%% @doc The report's line on a violation (the `violation' of a
%% counterexample), ending in a newline.
-spec violation(term()) -> unicode:chardata().
violation(Violation) ->
    violation(Violation, #fmt{}).

%% @doc A term as the report prints it: on one line, cut at the `depth'
%% and `width' of the options (as for counterexample/2).
-spec term(term(), map()) -> unicode:chardata().
term(T, Opts) when is_map(Opts) ->
    show(T, options(Opts)).

%%--------------------------------------------------------------------
%% Options
%%--------------------------------------------------------------------

options(Opts) ->
    F = maps:fold(fun option/3, #fmt{}, Opts),
    case maps:get(full, Opts, false) of
        true -> F#fmt{depth = infinity, width = infinity};
        false -> F
    end.

option(depth, V, F) when V =:= infinity; is_integer(V), V > 0 -> F#fmt{depth = V};
option(width, V, F) when V =:= infinity; is_integer(V), V > 0 -> F#fmt{width = V};
option(full, V, F) when is_boolean(V) -> F;
option(fold, V, F) when V =:= otp; V =:= none -> F;
option(K, V, _F) -> erlang:error({mcerlang, {bad_format_option, K, V}}).

%% `fold => otp': OTP's call protocol read as calls and replies (mce_fold).
fold(Cex, #{fold := otp}) -> mce_fold:otp(Cex);
fold(Cex, _Opts) -> Cex.

%%--------------------------------------------------------------------
%% Header, violation, final state, footer
%%--------------------------------------------------------------------

header(Violation, N, [], F) ->
    io_lib:format("Counterexample: ~ts ~ts~n", [summary(Violation, F), after_steps(N)]);
header(Violation, N, Cycle, F) ->
    io_lib:format("Counterexample: ~ts ~ts, then a cycle of ~ts repeating forever~n",
                  [summary(Violation, F), after_steps(N), count(length(Cycle), "step")]).

after_steps(0) -> "in the initial state";
after_steps(N) -> ["after ", count(N, "step")].

count(1, What) -> ["1 ", What];
count(N, What) -> [integer_to_list(N), " ", What, "s"].

summary(deadlock, _F) -> "deadlock";
summary({mailbox_bound, Pid, _Length, _Bound}, F) -> ["mailbox bound exceeded by ", pid(Pid, F)];
summary({abnormal_exit, Pid, _}, F) -> ["abnormal exit of ", pid(Pid, F)];
summary({ltl, Formula}, _F) -> ["the LTL property ", Formula, " fails"];
summary({invariant, _}, _F) -> "an invariant fails";
summary({monitor, M, _}, F) -> ["monitor ", show(M, F), " objects"];
summary(_, _F) -> "violation".

%% A process that did not end by its own last step died of an exit signal
%% (exit/2, a link, a fault's noconnection) that the last step sent or
%% delivered.
cause({abnormal_exit, Pid, _}, [_ | _] = Trace, F) ->
    case lists:last(Trace) of
        #{kind := run, pid := Pid} -> "";
        _ -> io_lib:format("  (~ts died of an exit signal caused by step ~b)~n",
                           [label(Pid, F), length(Trace)])
    end;
cause(_Violation, _Trace, _F) ->
    "".

violation(deadlock, _F) ->
    "Violation: deadlock (processes are alive but none can move)\n";
violation({abnormal_exit, Pid, Reason}, F) ->
    case stacktrace(Reason) of
        {Why, Stack} ->
            [io_lib:format("Violation: process ~ts exited abnormally: ~ts~n",
                           [label(Pid, F), show(Why, F)]),
             stack(Stack, F)];
        none ->
            io_lib:format("Violation: process ~ts exited abnormally: ~ts~n",
                          [label(Pid, F), show(Reason, F)])
    end;
violation({mailbox_bound, Pid, Length, Bound}, F) ->
    io_lib:format("Violation: process ~ts has ~b messages in its mailbox (mailbox_bound ~b)~n",
                  [label(Pid, F), Length, Bound]);
violation({ltl, Formula}, _F) ->
    io_lib:format("Violation: the LTL property ~ts fails on this run (the cycle repeats "
                  "forever)~n", [Formula]);
violation({invariant, Inv}, F) ->
    io_lib:format("Violation: invariant ~ts does not hold~n", [call(Inv, F)]);
violation({monitor, M, Verdict}, F) ->
    io_lib:format("Violation: monitor ~ts says ~ts~n", [show(M, F), show(Verdict, F)]);
violation(Other, F) ->
    io_lib:format("Violation: ~ts~n", [show(Other, F)]).

%% One frame a line, innermost first, as the shell shows a crash.
stack([First | Rest], F) ->
    ["  stack: ", frame(First, F), "\n", [["         ", frame(Fr, F), "\n"] || Fr <- Rest]].

frame({M, Fun, Args, Info}, F) when is_list(Args) ->
    [io_lib:format("~tp:~tp(", [original(M), Fun]), lists:join(",", [show(A, F) || A <- Args]), ")",
     file_line(Info)];
frame({M, Fun, Arity, Info}, _F) ->
    [mfa(M, Fun, Arity), file_line(Info)].

file_line(Info) ->
    case {proplists:get_value(file, Info), proplists:get_value(line, Info)} of
        {File, Line} when is_list(File), is_integer(Line), Line > 0 ->
            io_lib:format(" at ~ts:~b", [filename:basename(File), Line]);
        _ ->
            ""
    end.

final_state(Final, Cycle, F) ->
    [case Cycle of
         [] -> "Final state:\n";
         _ -> "State where the cycle starts:\n"
     end,
     case Final of
         [] -> "  (no processes)\n";
         _ -> [process(P, F) || P <- Final]
     end].

process(#{pid := Pid, status := Status, where := Where, mailbox := Mailbox} = P, F0) ->
    %% The state knows the registered name for sure; the walk may not.
    Known = maps:get(Pid, F0#fmt.procs, #{}),
    Proc = case maps:get(name, P, undefined) of
               undefined -> maps:remove(name, Known);
               Name -> Known#{name => Name}
           end,
    Call = case {Status, Where} of
               {init, {M, Fn, A, _, _}} when not is_map_key(call, Proc) -> {M, Fn, A};
               _ -> maps:get(call, Proc, undefined)
           end,
    F = F0#fmt{procs = (F0#fmt.procs)#{Pid => Proc#{call => Call}}},
    What = case Status of
               init -> "not started yet";
               waiting -> ["waits in receive", where(Where)];
               choosing -> standing(maps:get(outcome, Proc, undefined), F);
               _ -> show(Status, F)
           end,
    Box = case Mailbox of
              [] -> "mailbox empty";
              _ -> ["mailbox ", show(Mailbox, F)]
          end,
    Links = case maps:get(links, P, []) of
                [] -> "";
                Ls -> [", linked to ", lists:join(", ", [pid(L, F) || L <- Ls])]
            end,
    io_lib:format("  ~ts ~ts, ~ts~ts~n", [label(Pid, F), What, Box, Links]).

%% A process that can move without a message: what it is about to do.
standing(yielded, _F) -> "yielded (granularity small), about to continue";
standing({prop, T}, F) -> ["at mcerlang:prop(", show(T, F), ")"];
standing({choosing, N}, _F) -> io_lib:format("at mcerlang:choice/1 with ~b alternatives", [N]);
standing(_, _F) -> "at mcerlang:choice/1".

ether([], _F) ->
    "";
ether(Channels, F) ->
    ["In the ether:\n",
     [io_lib:format("  ~ts -> ~ts: ~ts~n",
                    [target(From, F), target(To, F),
                     lists:join(", ", [signal(S, F) || S <- Signals])])
      || #{from := From, to := To, signals := Signals} <- Channels]].

footer(#{simulation := #{seed := Seed, run := Run}} = Cex) when is_integer(Seed), is_integer(Run) ->
    [io_lib:format("Found by random simulation: run ~b with seed ~b (simulate/2 with "
                   "seed => ~b walks it again)~n", [Run, Seed, Seed]),
     search_stats(Cex)];
footer(Cex) ->
    search_stats(Cex).

search_stats(#{stats := #{states := States, transitions := Trans, time_ms := Ms} = Stats})
  when is_integer(States), is_integer(Trans), is_integer(Ms) ->
    io_lib:format("(~ts, ~b ms)~n", [state_counts(Stats), Ms]);
search_stats(_) ->
    "".

%% "N states, T transitions" from a check's stats, with the states passed
%% through rather than kept (`cut_states => pass') when there were any.
-spec state_counts(#{states := non_neg_integer(), transitions := non_neg_integer(),
                     passed_states => non_neg_integer(), _ => _}) -> iolist().
state_counts(#{states := States, transitions := Trans} = Stats) ->
    Passed = case Stats of
                 #{passed_states := P} when is_integer(P), P > 0 ->
                     io_lib:format(" (~b more passed through)", [P]);
                 #{} -> ""
             end,
    [count(States, "state"), Passed, ", ", count(Trans, "transition")].

%%--------------------------------------------------------------------
%% Steps
%%--------------------------------------------------------------------

steps(First, Steps, F0) ->
    {Texts, {_, F}} = lists:mapfoldl(fun(S, {N, F1}) ->
                                             {Text, F2} = step_text(N, S, F1),
                                             {Text, {N + 1, F2}}
                                     end, {First, F0}, Steps),
    {Texts, F}.

step_text(N, #{kind := run, pid := Pid, action := Action, effects := Effects, output := Output,
          outcome := Outcome} = Step, F0) ->
    F = case Action of
            {start, Call} -> learn(Pid, call, Call, F0);
            _ -> F0
        end,
    Before = maps:get(outcome, maps:get(Pid, F#fmt.procs, #{}), undefined),
    Head = [label(Pid, F), " ", action(Action, Before, F)],
    More = [effect(E, F) || E <- Effects] ++
        [["prints ", show(O, F)] || O <- Output] ++
        [["probe ", show(L, F), ": ", show(T, F)] || {L, T} <- maps:get(probes, Step, [])],
    %% A process that halts its node has no exit of its own: it vanishes
    %% with the node.
    Last = case lists:keymember(halt, 1, Effects) of
               true -> "goes with its node";
               false -> outcome(Outcome, F)
           end,
    Text = case More of
               [] -> [num(N), Head, "; ", Last, "\n"];
               _ -> [num(N), Head, "\n", [[?MORE, L, "\n"] || L <- More ++ [Last]]]
           end,
    {Text, learn(Pid, outcome, Outcome, lists:foldl(fun learn_effect/2, F, Effects))};
step_text(N, #{kind := deliver, from := From, to := To, signal := Signal}, F) ->
    {[num(N), "ether delivers ", signal(Signal, F), " from ", target(From, F), " to ",
      target(To, F), "\n"], F};
step_text(N, #{kind := timer, ref := Ref, to := To, signal := Signal}, F) ->
    {[num(N), "timer ", show(Ref, F), " fires: delivers ", signal(Signal, F), " to ",
      target(To, F), "\n"], F};
step_text(N, #{kind := fault, fault := Fault}, F) ->
    {[num(N), "FAULT: ", fault(Fault, F), "\n"], F};
step_text(N, #{kind := stutter}, F) ->
    {[num(N), "(no process or channel can move: the run stays here)\n"], F};
step_text(N, Other, F) ->
    {[num(N), show(Other, F), "\n"], F}.

num(N) ->
    io_lib:format("~4b. ", [N]).

learn(Pid, Key, Value, #fmt{procs = Procs} = F) ->
    F#fmt{procs = Procs#{Pid => (maps:get(Pid, Procs, #{}))#{Key => Value}}}.

%% A spawned pid may be one of a process that ended: it starts afresh.
learn_effect({spawn, Child, Call, _Link}, #fmt{procs = Procs} = F) ->
    F#fmt{procs = Procs#{Child => #{call => Call}}};
learn_effect({register, Name, Pid}, F) ->
    learn(Pid, name, Name, F);
learn_effect({unregister, Name}, #fmt{procs = Procs} = F) ->
    F#fmt{procs = maps:map(fun(_, #{name := N} = P) when N =:= Name -> maps:remove(name, P);
                              (_, P) -> P
                           end, Procs)};
learn_effect(_, F) ->
    F.

%% The location a step shows is where the process stood before it: the
%% receive it completes.
action({start, _}, _Before, _F) -> "starts";
%% Folded OTP calls (`fold => otp', mce_fold): a call and its reply.
action({'receive', {'$call', Caller, Request}}, Before, F) ->
    ["receives call ", show(Request, F), " from ", pid(Caller, F), at(Before)];
action({'receive', {'$reply', Reply}}, Before, F) ->
    ["gets reply ", show(Reply, F), at(Before)];
action({'receive', Msg}, Before, F) -> ["receives ", show(Msg, F), at(Before)];
action(timeout, Before, _F) -> ["times out in receive", at(Before)];
action(resume, _Before, _F) -> "continues";
action({choice, I}, _Before, _F) -> io_lib:format("takes alternative ~b of mcerlang:choice/1", [I]);
action({prop_passed, T}, _Before, F) -> ["passes mcerlang:prop(", show(T, F), ")"];
action(Other, _Before, F) -> show(Other, F).

at({waiting, {_M, _F, _A, File, Line}}) when is_list(File), Line > 0 ->
    io_lib:format(" at ~ts:~b", [filename:basename(File), Line]);
at(_) ->
    "".

outcome({waiting, {erlang, hibernate, 3, _, _}}, _F) -> "hibernates until a message comes";
outcome({waiting, Where}, _F) -> ["waits in receive", where(Where)];
outcome(yielded, _F) -> "yields (granularity small)";
outcome({choosing, N}, _F) -> io_lib:format("reaches mcerlang:choice/1 with ~b alternatives", [N]);
outcome({prop, T}, F) -> ["stands at mcerlang:prop(", show(T, F), ")"];
outcome({exit, normal}, _F) -> "exits normally";
outcome({exit, Reason}, F) ->
    case stacktrace(Reason) of
        {Why, [{M, Fun, Args, Info} | _]} ->
            ["crashes: ", show(Why, F), " in ", mfa(M, Fun, arity(Args)), file_line(Info)];
        none ->
            ["exits with reason ", show(Reason, F)]
    end;
outcome(Other, F) -> show(Other, F).

arity(Args) when is_list(Args) -> length(Args);
arity(Arity) -> Arity.

%% An exception's exit reason, {Reason, Stack}: the stack has frames with
%% a location list.
stacktrace({Why, [_ | _] = Stack}) ->
    case lists:all(fun({M, Fun, A, Info}) ->
                           is_atom(M) andalso is_atom(Fun) andalso
                               (is_integer(A) orelse is_list(A)) andalso is_list(Info);
                      (_) -> false
                   end, Stack) of
        true -> {Why, Stack};
        false -> none
    end;
stacktrace(_) ->
    none.

effect({send, To, {'$call', _Caller, Request}}, F) ->
    ["calls ", target(To, F), " with ", show(Request, F)];
effect({send, To, {'$reply', Reply}}, F) ->
    ["replies ", show(Reply, F), " to ", target(To, F)];
effect({send, To, Msg}, F) ->
    ["sends ", show(Msg, F), " to ", target(To, F)];
effect({spawn, Child, Call, Link}, F) ->
    [case Link of true -> "spawn_links "; false -> "spawns " end,
     pid(Child, F), " running ", call(Call, F)];
effect({link, Pid}, F) -> ["links to ", target(Pid, F)];
effect({unlink, Pid}, F) -> ["unlinks from ", target(Pid, F)];
effect({exit, Pid, Reason}, F) -> ["sends exit signal ", show(Reason, F), " to ", target(Pid, F)];
effect({register, Name, Pid}, F) -> ["registers ", pid(Pid, F), " as ", show(Name, F)];
effect({unregister, Name}, F) -> ["unregisters ", show(Name, F)];
effect({monitor, What, Ref}, F) -> ["monitors ", target(What, F), " (", show(Ref, F), ")"];
effect({demonitor, Ref, _Flush}, F) -> ["demonitors ", show(Ref, F)];
effect({monitor_node, Node, true}, F) -> ["monitors node ", show(Node, F)];
effect({monitor_node, Node, false}, F) -> ["stops monitoring node ", show(Node, F)];
effect({timer, Ref, Dest, Msg, Time}, F) ->
    [io_lib:format("starts a ~b ms timer ", [Time]), show(Ref, F), " to send ", show(Msg, F),
     " to ", target(Dest, F)];
effect({cancel_timer, Ref}, F) -> ["cancels timer ", show(Ref, F)];
effect({alias, Ref}, F) -> ["makes alias ", show(Ref, F)];
effect({unalias, Ref}, F) -> ["removes alias ", show(Ref, F)];
effect({unique, _}, _F) -> "takes a unique integer";
effect({trap_exit, Flag}, F) -> ["sets trap_exit to ", show(Flag, F)];
effect({ets_put, Tid, _Owner, _Heir, Name, {_Type, _Prot, _KeyPos, Objects, _Info}, _HeirData},
       F) ->
    ["ETS table ", table(Tid, Name, F), " now holds ",
     show(lists:append([Os || {_Key, Os} <- Objects]), F)];
effect({ets_delete, Tid}, F) -> ["deletes ETS table ", show(Tid, F)];
effect({group_leader, Pid, Leader}, F) ->
    ["sets the group leader of ", pid(Pid, F), " to ", pid(Leader, F)];
effect({halt, Status}, F) -> ["halts its node (erlang:halt(", show(Status, F), "))"];
effect(Other, F) -> show(Other, F).

table(Tid, none, F) -> show(Tid, F);
table(_Tid, Name, F) -> show(Name, F).

signal({message, Msg}, F) -> ["message ", show(Msg, F)];
signal({exit, Reason}, F) -> ["exit signal ", show(Reason, F)];
signal({link_exit, Reason}, F) -> ["exit signal (link) ", show(Reason, F)];
signal(link, _F) -> "link request";
signal(unlink, _F) -> "unlink request";
signal({monitor, Ref}, F) -> ["monitor request ", show(Ref, F)];
signal({demonitor, Ref}, F) -> ["demonitor request ", show(Ref, F)];
signal({down, Ref, Reason}, F) -> ["'DOWN' ", show(Ref, F), " with reason ", show(Reason, F)];
signal(Other, F) -> show(Other, F).

fault({crash_node, Node}, F) -> ["node ", show(Node, F), " crashes"];
fault({disconnect, A, B}, F) -> ["nodes ", show(A, F), " and ", show(B, F), " disconnect"];
fault({reconnect, A, B}, F) -> ["nodes ", show(A, F), " and ", show(B, F), " reconnect"];
fault({kill, Pid}, F) -> ["process ", label(Pid, F), " is killed"];
fault(Other, F) -> show(Other, F).

%%--------------------------------------------------------------------
%% Processes, functions and places
%%--------------------------------------------------------------------

%% A process as a step's subject: pid, registered name, initial function.
label(Pid, #fmt{procs = Procs} = F) ->
    Proc = maps:get(Pid, Procs, #{}),
    [pid(Pid, F),
     case Proc of
         #{name := Name} -> [" ", show(Name, F)];
         #{} -> ""
     end,
     case Proc of
         #{call := Call} when Call =/= undefined -> [" (", call(Call, F), ")"];
         #{} -> ""
     end].

%% A pid of a run that spans nodes shows its node (`n2@host/<0.3.0>',
%% mce_pid_text); alone, a pid of another node than this VM's does too.
pid(Pid, #fmt{nodes = Nodes}) when is_pid(Pid) ->
    mce_pid_text:pid(Pid, Nodes);
pid(Pid, F) ->
    show(Pid, F).

%% Where a signal goes or comes from: a pid, a registered name on a node,
%% an alias or a timer.
target({Name, Node}, #fmt{nodes = false}) when is_atom(Name), is_atom(Node) ->
    io_lib:format("~p", [Name]);
target(Pid, F) ->
    pid(Pid, F).

call({M, init_p, [_Parent, _Ancestors | Start]} = Call, F) when M =:= proc_lib; M =:= 'mce$proc_lib' ->
    proc_lib_start(Start, Call, F);
call({M, Fun, Args}, _F) when is_atom(M), is_atom(Fun), is_list(Args) ->
    mfa(original(M), Fun, length(Args));
call({M, Fun, A}, _F) when is_atom(M), is_atom(Fun), is_integer(A) ->
    mfa(original(M), Fun, A);
call(Fun, _F) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, Name} = erlang:fun_info(Fun, name),
    {arity, Arity} = erlang:fun_info(Fun, arity),
    case erlang:fun_info(Fun, type) of
        {type, external} -> ["fun ", mfa(M, Name, Arity)];
        %% A fun of code no longer loaded (a loaded counterexample of an
        %% older version) has no name.
        {type, local} when not is_atom(Name) -> io_lib:format("fun of ~tp/~b", [original(M), Arity]);
        {type, local} -> local_fun(M, Name, Arity)
    end;
call(Other, F) ->
    show(Other, F).

%% What a process started by proc_lib runs: for a gen_server, gen_statem or
%% supervisor, the behaviour and the callback module.
proc_lib_start([gen, init_it, [GenMod, _Starter, _Parent | Rest]], _Call, F)
  when length(Rest) =:= 3; length(Rest) =:= 4 ->
    case lists:nthtail(length(Rest) - 3, Rest) of
        [supervisor, {_, Mod, _}, _] when GenMod =:= gen_server, is_atom(Mod) ->
            ["supervisor ", show(original(Mod), F)];
        [Mod, _, _] when is_atom(GenMod), is_atom(Mod) ->
            [show(original(GenMod), F), " ", show(original(Mod), F)];
        _ ->
            mfa(gen, init_it, 3 + length(Rest))
    end;
proc_lib_start([M, Fun, Args], _Call, F) when is_atom(M), is_atom(Fun), is_list(Args) ->
    call({M, Fun, Args}, F);
proc_lib_start([Fun], _Call, F) when is_function(Fun) ->
    call(Fun, F);
proc_lib_start(_, {M, Fun, Args}, _F) ->
    mfa(original(M), Fun, length(Args)).

%% The translation moves funs into generated functions, renaming them; the
%% translated module knows the original names (when it is loaded).
local_fun(M, Name, Arity) ->
    {OM, ON} = case erlang:function_exported(M, '$mce_info', 1) of
                   true ->
                       case M:'$mce_info'({'fun', Name}) of
                           {OrigM, OrigName, _, _, _} when is_atom(OrigName) -> {OrigM, OrigName};
                           _ -> {original(M), Name}
                       end;
                   false ->
                       {original(M), Name}
               end,
    case fun_home(ON) of
        {Fn, A} -> ["fun in ", mfa_name(OM, Fn, A)];
        none -> ["fun ", mfa_name(OM, ON, Arity)]
    end.

%% The function a fun is defined in, from the compiler's name for it
%% (`-F/A-fun-N-').
fun_home(Name) ->
    case re:run(atom_to_list(Name), "^-(.+)/([0-9]+)-fun-[0-9]+-$",
                [unicode, {capture, all_but_first, list}]) of
        {match, [Fn, A]} -> {list_to_atom(Fn), list_to_integer(A)};
        nomatch -> none
    end.

mfa(M, Fun, A) ->
    case fun_home(Fun) of
        {Fn, FA} -> ["fun in ", mfa_name(M, Fn, FA)];
        none -> mfa_name(M, Fun, A)
    end.

mfa_name(M, Fun, A) when is_integer(A) ->
    io_lib:format("~tp:~tp/~b", [original(M), Fun, A]);
mfa_name(M, Fun, _) ->
    io_lib:format("~tp:~tp", [original(M), Fun]).

where({M, Fun, A, File, Line}) when is_list(File), Line > 0 ->
    io_lib:format(" at ~ts:~b (~ts)", [filename:basename(File), Line, mfa(M, Fun, A)]);
where({M, Fun, A, _, _}) ->
    [" in ", mfa(M, Fun, A)];
where(_) ->
    "".

original(M) ->
    case atom_to_list(M) of
        "mce$" ++ Orig -> list_to_atom(Orig);
        _ -> M
    end.

%% The nodes of the pids in a counterexample: more than one, and each pid
%% shows its node.
cex_nodes(Cex) ->
    lists:usort([node(P) || P <- pids(maps:with([violation, trace, cycle, final_state, ether],
                                                 Cex), [])]).

pids(P, Acc) when is_pid(P) -> [P | Acc];
pids([H | T], Acc) -> pids(T, pids(H, Acc));
pids(T, Acc) when is_tuple(T) -> pids(tuple_to_list(T), Acc);
pids(M, Acc) when is_map(M) -> pids(maps:values(M), Acc);
pids(_, Acc) -> Acc.

%%--------------------------------------------------------------------
%% Terms
%%--------------------------------------------------------------------

%% One line, at most `depth' deep (as ~P) and `width' characters wide.
%% Pids of other nodes inside the term read node-qualified.
show(T, #fmt{depth = infinity, width = W}) ->
    cut(mce_pid_text:rewrite(io_lib:format("~0tp", [T]), T), W);
show(T, #fmt{depth = D, width = W}) ->
    cut(mce_pid_text:rewrite(io_lib:format("~0tP", [T, D]), T), W).

cut(Text, infinity) ->
    Text;
cut(Text, W) ->
    Chars = lists:flatten(Text),
    case length(Chars) > W of
        true -> [lists:sublist(Chars, max(W - 3, 0)), "..."];
        false -> Chars
    end.
