%% @doc The step debugger: walk a program's states by hand.
%%
%% A debugger is a process holding a stepping session (mce_session) and a
%% path from the initial state to the current one.  Over a counterexample
%% it starts at the initial state with the counterexample's steps as the
%% plan, so `next' replays them one at a time; over an entry there is no
%% plan and `next' takes the only enabled transition (or asks which).
%% Commands are lines of text, as typed at the prompt of repl/2
%% (mcerlang:debug/1,2); command/2 runs one and returns the text to show,
%% so the debugger can be scripted and tested.
-module(mce_debug).

-export([repl/2, start/2, command/2, stop/1]).
-export([help/0]).

-record(st, {session :: mce_session:session(),
             %% The path, current state first: {State, StepIntoIt, Observer}.
             path :: [{pos_integer(), none | map(), [term()]}],
             plan :: [map()],       % the counterexample's steps (trace ++ cycle)
             plan_kept :: non_neg_integer(), % steps of the path that follow the plan
             cycle_from :: none | non_neg_integer(),
             format :: map()}).

-define(CALL_TIMEOUT, infinity).

%%--------------------------------------------------------------------
%% The prompt
%%--------------------------------------------------------------------

%% @doc Reads commands from standard input until `quit' (or end of
%% input), showing each one's answer.
-spec repl(mcerlang:counterexample() | mcerlang:entry(), map() | [{atom(), term()}]) -> ok.
repl(What, Options) ->
    {ok, D, Banner} = start_with_banner(What, Options),
    io:put_chars(Banner),
    try prompt_loop(D)
    after stop(D)
    end.

prompt_loop(D) ->
    case io:get_line("mce> ") of
        eof -> ok;
        {error, _} -> ok;
        Line ->
            case command(D, Line) of
                {quit, Text} -> io:put_chars(Text);
                {ok, Text} -> io:put_chars(Text), prompt_loop(D)
            end
    end.

%%--------------------------------------------------------------------
%% The debugger process
%%--------------------------------------------------------------------

%% @doc Starts a debugger over a counterexample (its entry and options;
%% `Options' may add format options `depth', `width', `full') or over
%% `Entry' with check options.
-spec start(mcerlang:counterexample() | mcerlang:entry(), map() | [{atom(), term()}]) -> {ok, pid()}.
start(What, Options) ->
    {ok, D, _Banner} = start_with_banner(What, Options),
    {ok, D}.

start_with_banner(What, Options0) ->
    Options = case Options0 of
                  _ when is_list(Options0) -> maps:from_list(Options0);
                  _ when is_map(Options0) -> Options0;
                  _ -> erlang:error({mcerlang, {bad_options, Options0}})
              end,
    FormatOpts = maps:with([depth, width, full], Options),
    {Entry, Given, Plan, CycleFrom} =
        case What of
            #{trace := Trace, entry := _, options := _} ->
                {E, G} = mcerlang:replayable(What, maps:without([depth, width, full], Options)),
                {E, G,
                 Trace ++ maps:get(cycle, What, []),
                 case What of
                     #{cycle := [_ | _]} -> length(Trace);
                     _ -> none
                 end};
            #{trace := _} ->
                erlang:error({mcerlang, {not_replayable, "the counterexample has no entry and "
                                         "options (made by check/2, simulate/2 or load/1)"}});
            _ ->
                {What, maps:without([depth, width, full], Options), [], none}
        end,
    %% An interactive session has no time limit: properties are judged
    %% without a deadline (mce_guard).
    Opts = (mcerlang:options(Given))#{progress => false, max_time => infinity},
    InitCall = mcerlang:entry(Entry, Opts),
    Caller = self(),
    Ref = make_ref(),
    D = spawn(fun() ->
                      Counter = receive {Ref, go, C} -> C end,
                      put('$mce_watch', Counter),
                      %% Modules reached at run time are translated with
                      %% the session's disk cache (see mcerlang:isolated/2).
                      mce_translate_cache:use(maps:get(translation_cache, Opts)),
                      Reply = try
                                  ok = mce_stubs:install(maps:get(stubs, Opts)),
                                  Sess = mce_session:open(InitCall, Opts),
                                  Root = mce_session:root(Sess),
                                  %% The initial state is judged, as by check/2.
                                  Initial = mce_session:initial_observer(Sess),
                                  {Observer, Note} =
                                      case mce_session:judge(Sess, Root, none, Initial) of
                                          {ok, O} -> {O, ""};
                                          skip -> {Initial, "  (a monitor prunes the initial state)\n"};
                                          {violation, V} -> {Initial, ["  ", violation_text(V)]}
                                      end,
                                  St = #st{session = Sess, path = [{Root, none, Observer}],
                                           plan = Plan, plan_kept = 0, cycle_from = CycleFrom,
                                           format = FormatOpts},
                                  {ok, St, [banner(Entry, Plan, St), Note]}
                              catch error:{mcerlang, _} = E1 -> {raise, E1};
                                    error:{mcerlang_internal, _, _} = E1 -> {raise, E1}
                              end,
                      case Reply of
                          {ok, St0, Banner} ->
                              Caller ! {Ref, {ok, Banner}},
                              serve(St0);
                          _ ->
                              Caller ! {Ref, Reply}
                      end
              end),
    D ! {Ref, go, mce_watchdog:start(Caller, D, maps:get(max_reductions, Opts))},
    case await(D, Ref) of
        {ok, Banner} -> {ok, D, Banner};
        {raise, Err} -> erlang:error(Err)
    end.

%% @doc Runs one command line; returns the text to show, tagged `quit'
%% when the command ends the session.
-spec command(pid(), string() | binary()) -> {ok | quit, unicode:chardata()}.
command(D, Line) ->
    Ref = make_ref(),
    D ! {cmd, self(), Ref, unicode:characters_to_list(Line)},
    case await(D, Ref) of
        {raise, E} -> erlang:error(E);
        Reply -> Reply
    end.

%% @doc Ends a debugger and frees its state space.
-spec stop(pid()) -> ok.
stop(D) ->
    exit(D, kill),
    ok.

await(D, Ref) ->
    MRef = monitor(process, D),
    receive
        {Ref, Reply} ->
            demonitor(MRef, [flush]),
            Reply;
        {mce_runaway, D, SimPid, Where, Budget} ->
            demonitor(MRef, [flush]),
            erlang:error({mcerlang, {runaway_step, SimPid, Where, {max_reductions, Budget}}});
        {mce_blocked, D, SimPid, Where} ->
            demonitor(MRef, [flush]),
            erlang:error({mcerlang, {blocked_outside_the_model, SimPid, Where}});
        {'DOWN', MRef, process, D, Reason} ->
            erlang:error({mcerlang, {debugger_ended, Reason}})
    after ?CALL_TIMEOUT ->
            erlang:error(timeout)
    end.

serve(St) ->
    receive
        {cmd, From, Ref, Line} ->
            try run(string:lexemes(Line, " \t\r\n"), St) of
                {quit, Text} ->
                    From ! {Ref, {quit, Text}};
                {Text, St1} ->
                    From ! {Ref, {ok, Text}},
                    serve(St1)
            catch
                error:{mcerlang, _} = E ->
                    %% The search may be half-way through an expansion: the
                    %% session cannot go on.
                    From ! {Ref, {raise, E}};
                error:{mcerlang_internal, _, _} = E ->
                    From ! {Ref, {raise, E}}
            end
    end.

%%--------------------------------------------------------------------
%% Commands
%%--------------------------------------------------------------------

%% @doc The commands, as `help' shows them.
-spec help() -> string().
help() ->
    "Commands (short forms in brackets):\n"
    "  next [K]      [n]  take the next step of the counterexample (or the only enabled one), K times\n"
    "  back [K]      [b]  undo the last step (K steps)\n"
    "  goto N        [g]  go to the state after step N (0: the initial state)\n"
    "  enabled       [e]  list the enabled transitions, numbered (* marks the counterexample's)\n"
    "  choose K      [c]  take enabled transition K\n"
    "  show PID      [p]  one process: status, where it stands, mailbox, links (PID as <0.3.0> or 3)\n"
    "  mailboxes     [m]  every process's mailbox\n"
    "  state         [s]  every process and the signals in the ether\n"
    "  trace         [t]  the steps taken so far\n"
    "  where         [w]  the step number and what is next\n"
    "  help          [h]  this text\n"
    "  quit          [q]  end the session\n".

run([], St) -> {"", St};
run([C | Args], St) ->
    case {command_name(C), Args} of
        {next, []} -> next(1, St);
        {next, [K]} -> with_count(K, fun(N) -> next(N, St) end, St);
        {back, []} -> back(1, St);
        {back, [K]} -> with_count(K, fun(N) -> back(N, St) end, St);
        {goto, [K]} -> with_number(K, fun(N) -> goto(N, St) end, St);
        {enabled, []} -> enabled(St);
        {choose, [K]} -> with_count(K, fun(N) -> choose(N, St) end, St);
        {show, [P]} -> show(P, St);
        {mailboxes, []} -> mailboxes(St);
        {state, []} -> state(St);
        {trace, []} -> trace(St);
        {where, []} -> {where(St), St};
        {help, _} -> {help(), St};
        {quit, _} -> {quit, "bye\n"};
        {unknown, _} -> {io_lib:format("unknown command ~ts: type help~n", [C]), St};
        {Known, _} -> {io_lib:format("~p: wrong arguments; type help~n", [Known]), St}
    end.

command_name(C) ->
    case string:lowercase(C) of
        X when X =:= "n"; X =:= "next" -> next;
        X when X =:= "b"; X =:= "back" -> back;
        X when X =:= "g"; X =:= "goto" -> goto;
        X when X =:= "e"; X =:= "enabled" -> enabled;
        X when X =:= "c"; X =:= "choose" -> choose;
        X when X =:= "p"; X =:= "show" -> show;
        X when X =:= "m"; X =:= "mailboxes" -> mailboxes;
        X when X =:= "s"; X =:= "state" -> state;
        X when X =:= "t"; X =:= "trace" -> trace;
        X when X =:= "w"; X =:= "where" -> where;
        X when X =:= "h"; X =:= "help"; X =:= "?" -> help;
        X when X =:= "q"; X =:= "quit"; X =:= "exit" -> quit;
        _ -> unknown
    end.

with_count(Text, Fun, St) ->
    case string:to_integer(Text) of
        {N, []} when N > 0 -> Fun(N);
        _ -> {io_lib:format("expected a positive number, not ~ts~n", [Text]), St}
    end.

with_number(Text, Fun, St) ->
    case string:to_integer(Text) of
        {N, []} when N >= 0 -> Fun(N);
        _ -> {io_lib:format("expected a step number, not ~ts~n", [Text]), St}
    end.

depth(#st{path = Path}) -> length(Path) - 1.

current(#st{path = [{W, Step, Observer} | _]}) -> {W, Step, Observer}.

%% The transition the plan takes from here, if the path still follows it.
planned(#st{plan = Plan, plan_kept = Kept} = St) ->
    Depth = depth(St),
    case Kept =:= Depth andalso Depth < length(Plan) of
        true -> lists:nth(Depth + 1, Plan);
        false -> none
    end.

next(0, St) ->
    {"", St};
next(N, St) ->
    {W, _, _} = current(St),
    {Succs, Deadlock, Sess} = mce_session:expand(St#st.session, W),
    St1 = St#st{session = Sess},
    case {planned(St1), Succs} of
        {#{kind := stutter} = Step, _} ->
            {Text, St2} = take_stutter(Step, St1),
            continue(N, Text, St2);
        {none, [Only]} ->
            {Text, St2} = take(Only, St1),
            continue(N, Text, St2);
        {none, []} ->
            {[end_text(Deadlock, St1)], St1};
        {none, _} ->
            {io_lib:format("~b transitions are enabled: list them with enabled, take one with "
                           "choose K~n", [length(Succs)]), St1};
        {Step, _} ->
            case [S || #{step := S1} = S <- Succs, mce_session:same_step(Step, S1)] of
                [Succ | _] ->
                    {Text, St2} = take(Succ, St1),
                    continue(N, Text, St2);
                [] ->
                    {"the counterexample's next step is not enabled here: it does not replay\n", St1}
            end
    end.

continue(1, Text, St) ->
    {Text, St};
continue(N, Text, St) ->
    {More, St1} = next(N - 1, St),
    {[Text, More], St1}.

%% Takes a successor: the plan is kept while the path follows it.
take(#{state := W1, step := Step, label := Label, violation := V}, St) ->
    {_, _, Observer} = current(St),
    Depth = depth(St),
    Follows = planned(St) =/= none andalso mce_session:same_step(planned(St), Step),
    Judged = case V of
                 none -> mce_session:judge(St#st.session, W1, Label, Observer);
                 _ -> {violation, V}
             end,
    Observer1 = case Judged of
                    {ok, O} -> O;
                    _ -> Observer
                end,
    St1 = St#st{path = [{W1, Step, Observer1} | St#st.path],
                plan_kept = case Follows of
                                true -> Depth + 1;
                                false -> St#st.plan_kept
                            end},
    {Note, St2} = case Judged of
                      {ok, _} -> deadlock_note(W1, St1);
                      skip -> {"  (a monitor prunes this state: the check does not go on from here)\n",
                               St1};
                      {violation, Violation} -> {["  ", violation_text(Violation)], St1}
                  end,
    {[lists:last(mce_format:run_steps(path_steps(St2), St2#st.format)), Note, cycle_note(St2)],
     St2}.

%% A state the move leads to where nothing can move: say so at once.
deadlock_note(W, St) ->
    {Succs, Deadlock, Sess} = mce_session:expand(St#st.session, W),
    Deadlocks = Deadlock andalso
        lists:member(deadlock, maps:get(property, mce_session:options(Sess))),
    Note = case {Succs, Deadlocks} of
               {[], true} -> ["  ", violation_text(deadlock)];
               {[], false} -> "  (nothing can move any more)\n";
               _ -> ""
           end,
    {Note, St#st{session = Sess}}.

take_stutter(Step, St) ->
    {W, _, Observer} = current(St),
    St1 = St#st{path = [{W, Step, Observer} | St#st.path], plan_kept = depth(St) + 1},
    {[lists:last(mce_format:run_steps(path_steps(St1), St1#st.format)), cycle_note(St1)], St1}.

cycle_note(#st{cycle_from = From, plan = Plan, plan_kept = Kept} = St) when From =/= none ->
    Depth = depth(St),
    if
        Kept =:= Depth, Depth =:= From -> "  (the cycle starts here: its steps repeat forever)\n";
        Kept =:= Depth, Depth =:= length(Plan) -> "  (back where the cycle started)\n";
        true -> ""
    end;
cycle_note(_) ->
    "".

back(N, St) ->
    case depth(St) of
        0 -> {"at the initial state\n", St};
        D ->
            K = min(N, D),
            St1 = St#st{path = lists:nthtail(K, St#st.path),
                        plan_kept = min(St#st.plan_kept, D - K)},
            {where(St1), St1}
    end.

goto(N, St) ->
    D = depth(St),
    if
        N =< D -> back_to(N, St);
        true ->
            {Text, St1} = next(N - D, St),
            {[Text, where(St1)], St1}
    end.

back_to(N, St) when N =:= 0 ->
    case depth(St) of
        0 -> {where(St), St};
        D -> back(D, St)
    end;
back_to(N, St) ->
    back(depth(St) - N, St).

enabled(St) ->
    {W, _, _} = current(St),
    {Succs, Deadlock, Sess} = mce_session:expand(St#st.session, W),
    St1 = St#st{session = Sess},
    Plan = planned(St1),
    case Succs of
        [] -> {end_text(Deadlock, St1), St1};
        _ ->
            Numbered = lists:zip(lists:seq(1, length(Succs)), Succs),
            {[io_lib:format("~ts~ts", [case Plan =/= none andalso mce_session:same_step(Plan, Step) of
                                           true -> "*";
                                           false -> " "
                                       end,
                                       step_text(I, Step, St1)])
              || {I, #{step := Step}} <- Numbered], St1}
    end.

choose(K, St) ->
    {W, _, _} = current(St),
    {Succs, Deadlock, Sess} = mce_session:expand(St#st.session, W),
    St1 = St#st{session = Sess},
    if
        Succs =:= [] -> {end_text(Deadlock, St1), St1};
        K > length(Succs) ->
            {io_lib:format("only ~b transitions are enabled~n", [length(Succs)]), St1};
        true -> take(lists:nth(K, Succs), St1)
    end.

end_text(true, St) ->
    ["no transition is enabled: ", violation_text(deadlock), where(St)];
end_text(false, St) ->
    ["no transition is enabled: every process has finished\n", where(St)].

show(PidText, St) ->
    Procs = processes(St),
    case find_process(PidText, Procs) of
        {ok, P} -> {process_text(P, St), St};
        error -> {io_lib:format("no process ~ts in this state; processes: ~ts~n",
                                [PidText, lists:join(" ", [pid_text(Pid) || #{pid := Pid} <- Procs])]),
                  St}
    end.

mailboxes(St) ->
    case processes(St) of
        [] -> {"no processes\n", St};
        Procs ->
            {[io_lib:format("  ~ts: ~ts~n", [pid_text(Pid), case Box of
                                                                [] -> "empty";
                                                                _ -> term(Box, St)
                                                            end])
              || #{pid := Pid, mailbox := Box} <- Procs], St}
    end.

state(St) ->
    {W, _, _} = current(St),
    #{final_state := Procs, ether := Ether} = mce_session:final_state(St#st.session, W),
    {[where(St), mce_format:run_state(Procs, Ether, path_steps(St), St#st.format)], St}.

path_steps(St) ->
    lists:reverse([Step || {_, Step, _} <- St#st.path, Step =/= none]).

trace(St) ->
    case path_steps(St) of
        [] -> {"no steps taken: at the initial state\n", St};
        Steps -> {mce_format:run_steps(Steps, St#st.format), St}
    end.

where(#st{plan = Plan} = St) ->
    D = depth(St),
    Next = case planned(St) of
               none when Plan =/= [], St#st.plan_kept < D ->
                   "; off the counterexample's path";
               none when Plan =/= [] -> "; the counterexample's steps are done";
               none -> "";
               _ -> io_lib:format("; next: step ~b of ~b", [D + 1, length(Plan)])
           end,
    io_lib:format("at step ~b~ts~n", [D, Next]).

processes(St) ->
    {W, _, _} = current(St),
    maps:get(final_state, mce_session:final_state(St#st.session, W)).

find_process(Text, Procs) ->
    Wanted = string:trim(Text, both, "<> "),
    Matches = [P || #{pid := Pid} = P <- Procs,
                    begin
                        Full = string:trim(pid_to_list(Pid), both, "<>"),
                        [_, Num, _] = string:split(Full, ".", all),
                        Wanted =:= Full orelse Wanted =:= Num orelse
                            string:trim(Text) =:= mce_pid_text:pid(Pid)
                    end],
    case Matches of
        [P | _] -> {ok, P};
        [] -> error
    end.

process_text(#{pid := Pid, node := Node, name := Name, status := Status, where := Where,
               mailbox := Box, links := Links}, St) ->
    [io_lib:format("process ~ts on ~p~n", [pid_text(Pid), Node]),
     case Name of
         undefined -> "";
         _ -> io_lib:format("  registered as ~p~n", [Name])
     end,
     io_lib:format("  status: ~ts~n", [status_text(Status, Where)]),
     io_lib:format("  mailbox: ~ts~n", [case Box of
                                           [] -> "empty";
                                           _ -> term(Box, St)
                                       end]),
     io_lib:format("  links: ~ts~n", [case Links of
                                         [] -> "none";
                                         _ -> lists:join(" ", [pid_text(L) || L <- Links])
                                     end])].

status_text(init, _) -> "not started yet";
status_text(choosing, _) -> "at mcerlang:choice/1";
status_text(waiting, {M, F, A, File, Line}) when Line > 0 ->
    io_lib:format("waits in receive at ~ts:~b (~p:~p/~b)", [filename:basename(File), Line, M, F, A]);
status_text(waiting, _) -> "waits in receive".

%% As the text report and the chart write it (`n2@host/<0.3.0>').
pid_text(Pid) when is_pid(Pid) ->
    mce_pid_text:pid(Pid);
pid_text(Other) ->
    io_lib:format("~0tp", [Other]).

term(T, #st{format = Opts}) ->
    mce_format:term(T, Opts).

step_text(N, Step, #st{format = Opts}) ->
    mce_format:step(N, Step, Opts).

violation_text(V) ->
    mce_format:violation(V).

banner(Entry, Plan, St) ->
    [io_lib:format("mcerlang debugger: ~ts~n", [entry_text(Entry)]),
     case Plan of
         [] -> "no counterexample: choose the steps (enabled, choose K)\n";
         _ -> io_lib:format("following a counterexample of ~b steps (next takes the next one)~n",
                            [length(Plan)])
     end,
     where(St), "type help for the commands\n"].

entry_text({M, F, Args}) -> io_lib:format("~p:~p/~b", [M, F, length(Args)]);
entry_text(Fun) -> io_lib:format("~p", [Fun]).
