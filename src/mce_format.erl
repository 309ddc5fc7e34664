%% @doc Renders counterexamples as text: one line per step, then the
%% violation and the processes of the final state.
-module(mce_format).

-export([counterexample/1]).

-define(DEPTH, 12).

-spec counterexample(mcerlang:counterexample()) -> unicode:chardata().
counterexample(#{violation := Violation, trace := Trace, final_state := Final}) ->
    Steps = lists:zip(lists:seq(1, length(Trace)), Trace),
    [io_lib:format("Counterexample (~b steps):~n", [length(Trace)]),
     [step(N, L) || {N, L} <- Steps],
     violation(Violation),
     "Final state:\n",
     case Final of
         [] -> "  (no processes)\n";
         _ -> [process(P) || P <- Final]
     end].

step(N, #{pid := Pid, action := Action, effects := Effects, output := Output,
          outcome := Outcome}) ->
    Parts = [action(Action)] ++ [effect(E) || E <- Effects] ++
        [io_lib:format("prints ~tp", [O]) || O <- Output] ++ [outcome(Outcome)],
    io_lib:format("~4b. ~p ~ts~n", [N, mce_pid:term(Pid), lists:join("; ", Parts)]).

action({start, Call}) -> ["starts ", call(Call)];
action(timeout) -> "times out in receive";
action({choice, I}) -> io_lib:format("takes alternative ~b of mcerlang:choice/1", [I]);
action({'receive', Msg}) -> ["receives ", term(Msg)].

effect({send, To, Msg}) ->
    io_lib:format("sends ~ts to ~p", [term(Msg), mce_pid:term(To)]);
effect({spawn, Child, Call, Link}) ->
    io_lib:format("~ts ~p running ~ts",
                  [case Link of true -> "spawn_links"; false -> "spawns" end,
                   mce_pid:term(Child), call(Call)]).

outcome({waiting, Where}) -> ["waits in receive", where(Where)];
outcome({choosing, N}) -> io_lib:format("reaches mcerlang:choice/1 with ~b alternatives", [N]);
outcome({exit, normal}) -> "exits normally";
outcome({exit, Reason}) -> ["exits with reason ", term(Reason)].

violation(deadlock) ->
    "Violation: deadlock (processes are alive but none can move)\n";
violation({abnormal_exit, Pid, Reason}) ->
    io_lib:format("Violation: process ~p exited abnormally: ~ts~n", [Pid, term(Reason)]).

process(#{pid := Pid, status := Status, where := Where, mailbox := Mailbox}) ->
    What = case Status of
               init -> "not started yet";
               choosing -> "at mcerlang:choice/1";
               waiting -> ["blocked in receive", where(Where)]
           end,
    Box = case Mailbox of
              [] -> "mailbox empty";
              _ -> ["mailbox ", term(Mailbox)]
          end,
    io_lib:format("  ~p ~ts, ~ts~n", [Pid, What, Box]).

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
