%% @doc The search driver: the loop that answers the C search's requests.
%%
%% The C search (mce_nif) decides what to explore; this loop only runs the
%% Erlang code it asks for (a match test or a process step) and hands the
%% answer back, one NIF call per request.  It also owns the checks that are
%% policy rather than mechanism: which exits are abnormal, the time limit,
%% and building the result.
-module(mce_search).

-export([run/2]).

-record(ctx, {search :: mce_nif:search(),
              opts :: map(),
              started :: integer(),
              deadline :: integer() | infinity}).

-spec run(term(), map()) -> mcerlang:result().
run(InitCall, Opts) ->
    CheckDeadlock = case lists:member(deadlock, maps:get(property, Opts)) of
                        true -> 1;
                        false -> 0
                    end,
    Search = mce_nif:new(#{node => mce_pid:node_name(),
                           creation => mce_pid:creation(),
                           max_states => maps:get(max_states, Opts),
                           max_depth => maps:get(max_depth, Opts),
                           table_size => maps:get(table_size, Opts),
                           check_deadlock => CheckDeadlock,
                           timeouts_when_idle => case maps:get(timeouts, Opts) of
                                                     when_idle -> 1;
                                                     any -> 0
                                                 end}),
    internal_error(Search),
    Now = erlang:monotonic_time(millisecond),
    Deadline = case maps:get(max_time, Opts) of
                   infinity -> infinity;
                   Ms -> Now + Ms
               end,
    Ctx = #ctx{search = Search, opts = Opts, started = Now, deadline = Deadline},
    loop(mce_nif:start(Search, InitCall, 1), Ctx).

loop({match, Cont, Msg}, #ctx{search = S} = Ctx) ->
    loop(mce_nif:match(S, mce_exec:matches(Cont, Msg)), Ctx);
loop({run, Pid, How, Cont, Dict, TrapExit}, #ctx{search = S, opts = Opts} = Ctx) ->
    {Outcome, Effects, Label} = mce_exec:run(S, Pid, How, Cont, Dict, TrapExit),
    Violation = violation(Outcome, Pid, Opts),
    Next = mce_nif:ran(S, Outcome, Effects, Label, Violation =/= none),
    case Violation of
        none ->
            case over_time(Ctx) of
                true -> {inconclusive, max_time, stats(Ctx)};
                false -> loop(Next, Ctx)
            end;
        _ ->
            internal_error(Next),
            counterexample(Violation, Ctx)
    end;
loop(done, Ctx) ->
    Stats = stats(Ctx),
    case maps:get(truncated, Stats) of
        true -> {inconclusive, max_depth, Stats};
        false -> {ok, Stats}
    end;
loop(max_states, Ctx) ->
    {inconclusive, max_states, stats(Ctx)};
loop(deadlock, Ctx) ->
    counterexample(deadlock, Ctx);
loop(Other, _Ctx) ->
    internal_error(Other).

internal_error({error, Where, Why}) ->
    erlang:error({mcerlang_internal, Where, Why});
internal_error(_) ->
    ok.

violation({exit, Reason}, Pid, Opts) ->
    case lists:member(abnormal_exit, maps:get(property, Opts)) andalso
         not normal_reason(Reason, maps:get(treat_as_normal, Opts)) of
        true -> {abnormal_exit, mce_pid:term(Pid), Reason};
        false -> none
    end;
violation(_, _, _) ->
    none.

normal_reason(Reason, Normal) ->
    lists:member(Reason, Normal) orelse
        (is_tuple(Reason) andalso tuple_size(Reason) =:= 2 andalso
         element(1, Reason) =:= shutdown andalso lists:member(shutdown, Normal)).

over_time(#ctx{deadline = infinity}) -> false;
over_time(#ctx{deadline = D}) -> erlang:monotonic_time(millisecond) >= D.

counterexample(Violation, Ctx) ->
    {error, build_cex(Violation, Ctx)}.

build_cex(Violation, #ctx{search = S} = Ctx) ->
    Trace = mce_nif:trace(S),
    internal_error(Trace),
    Final = [#{pid => mce_pid:term(P), status => Status, where => mce_exec:location(Cont),
               mailbox => Msgs, links => [mce_pid:term(L) || L <- Links], name => Name}
             || {P, Status, Cont, Msgs, Links, Name} <- mce_nif:top_state(S)],
    #{violation => Violation, trace => Trace, final_state => Final, stats => stats(Ctx)}.

stats(#ctx{search = S, started = T0}) ->
    St = mce_nif:stats(S),
    Ms = max(erlang:monotonic_time(millisecond) - T0, 0),
    States = maps:get(states, St),
    St#{time_ms => Ms,
        states_per_second => States * 1000 div max(Ms, 1),
        bytes_per_state => maps:get(memory_used, St) div max(States, 1),
        table => exact}.
