%% @doc Runs user callbacks (invariants, monitors, LTL predicates) and the
%% LTL translation under the check's limits.
%%
%% A callback that loops or blocks would otherwise hang the check: the
%% search looks at the clock, the memory and `mcerlang:stop/1' only
%% between its own requests.  So the work runs in a helper process,
%% long-lived (spawning one per call would cost more than most callbacks),
%% while the search process waits for it and polls: the deadline, a stop
%% request and the memory cap end the wait at once (the helper is killed,
%% the check is inconclusive); a callback that uses more than its budget
%% of reductions, or waits in a receive that nothing ends, is killed and
%% the check fails with `{property_timeout, Which}'.
%%
%% The limits are those of the check, set by `setup/1' in the process
%% that runs the search (the process dictionary, as for translated code).
-module(mce_guard).

-export([setup/1, call/2, call/3]).

%% How often the waiting process looks at the helper.
-define(POLL_MS, 50).
%% A helper waiting in a receive, its reductions unchanged, for this
%% many polls in a row is blocked for good (a callback is a pure
%% function; even io:format's reply comes within milliseconds).
-define(BLOCKED_POLLS, 20).

-type limits() :: #{deadline := integer() | infinity,
                    memory := pos_integer() | infinity,
                    reductions := pos_integer() | infinity}.

%% @doc The limits of the calls that this process makes from now on:
%% `deadline' (monotonic milliseconds), `memory' (bytes the helper may
%% hold) and `reductions' (a callback's budget).
-spec setup(limits()) -> ok.
setup(Limits) ->
    put('$mce_guard_limits', Limits),
    ok.

%% @doc `Fun()' run as callback `Which' within the reduction budget.
%% A crash of `Fun' fails the check with `{property_crashed, Which, _}'.
%% Called inside a guarded call it runs in place (Which still names the
%% culprit of a timeout).
-spec call(term(), fun(() -> T)) -> T.
call(Which, Fun) ->
    call(Which, Fun, #{}).

%% @doc As `call/2'; `#{budget => none}': no reduction budget, only the
%% check's time, memory and stop request (the LTL translation).
-spec call(term(), fun(() -> T), #{budget => none}) -> T.
call(Which, Fun, Opts) ->
    case get('$mce_guard_helper_of') of
        undefined -> remote(Which, Fun, Opts);
        _Worker -> in_helper(Which, Fun)
    end.

%% The reason a guarded call was interrupted by a limit of the check
%% (`max_time', `stopped', `{memory, Cap}'), thrown as this term; the
%% search loops catch it and end inconclusive.
-spec interrupted(term()) -> {mce_guard_interrupted, term()}.
interrupted(Why) ->
    {mce_guard_interrupted, Why}.

in_helper(Which, Fun) ->
    Outer = put('$mce_guard_which', Which),
    try Fun()
    catch
        error:{mcerlang, _} = E:Stack -> erlang:raise(error, E, Stack);
        Class:Reason:Stack ->
            erlang:error({mcerlang, {property_crashed, Which, {Class, Reason, Stack}}})
    after
        put('$mce_guard_which', Outer)
    end.

remote(Which, Fun, Opts) ->
    Limits = case get('$mce_guard_limits') of
                 undefined -> #{deadline => infinity, memory => infinity, reductions => infinity};
                 L -> L
             end,
    Budget = case Opts of
                 #{budget := none} -> infinity;
                 _ -> maps:get(reductions, Limits)
             end,
    H = helper(),
    Ref = make_ref(),
    H ! {call, Ref, Which, Fun},
    wait(H, Ref, Which, Limits#{reductions := Budget, start => reductions(H)}, 0, -1).

wait(H, Ref, Which, #{deadline := Deadline} = Limits, Polls, Last) ->
    Timeout = case Deadline of
                  infinity -> ?POLL_MS;
                  _ -> max(0, min(?POLL_MS, Deadline - erlang:monotonic_time(millisecond)))
              end,
    receive
        {Ref, {ok, Value}} -> Value;
        {Ref, {raise, Class, Reason, Stack}} -> erlang:raise(Class, Reason, Stack);
        '$mce_stop' -> give_up(H, interrupted(stopped))
    after Timeout ->
            poll(H, Ref, Which, Limits, Polls, Last)
    end.

poll(H, Ref, Which, #{deadline := Deadline, memory := Cap, reductions := Budget,
                      start := Start} = Limits, Polls, Last) ->
    Now = erlang:monotonic_time(millisecond),
    %% One item at a time, reductions first: asking for the memory costs
    %% the helper a reduction.
    Reds = reductions(H),
    Waiting = process_info(H, status) =:= {status, waiting},
    Mem = case Cap of
              infinity -> 0;
              _ -> case process_info(H, memory) of
                       {memory, M} -> M;
                       undefined -> 0
                   end
          end,
    Blocked = case Waiting andalso Reds - Last =< 1 of
                  true -> Polls + 1;
                  false -> 0
              end,
    if
        Deadline =/= infinity, Now >= Deadline ->
            give_up(H, interrupted(max_time));
        Cap =/= infinity, Mem > Cap ->
            give_up(H, interrupted({memory, Cap}));
        Budget =/= infinity, Reds - Start > Budget; Blocked >= ?BLOCKED_POLLS ->
            Culprit = culprit(H, Which),
            kill(H),
            erlang:error({mcerlang, {property_timeout, Culprit}});
        true ->
            wait(H, Ref, Which, Limits, Blocked, Reds)
    end.

%% The callback running when the helper was stopped: the innermost
%% guarded call (a monitor within a state's judgement).
culprit(H, Which) ->
    case process_info(H, dictionary) of
        {dictionary, Dict} ->
            case proplists:get_value('$mce_guard_which', Dict) of
                undefined -> Which;
                Inner -> Inner
            end;
        undefined -> Which
    end.

-spec give_up(pid(), term()) -> no_return().
give_up(H, Thrown) ->
    kill(H),
    throw(Thrown).

kill(H) ->
    unlink(H),
    exit(H, kill),
    erase('$mce_guard_helper'),
    ok.

reductions(H) ->
    case process_info(H, reductions) of
        {reductions, R} -> R;
        undefined -> 0
    end.

%% The helper of this process, started on first use and linked: it ends
%% with the search.
helper() ->
    case get('$mce_guard_helper') of
        undefined ->
            Worker = self(),
            H = spawn_link(fun() -> put('$mce_guard_helper_of', Worker), serve() end),
            put('$mce_guard_helper', H),
            H;
        H ->
            H
    end.

serve() ->
    receive
        {call, Ref, Which, Fun} ->
            Reply = try {ok, in_helper(Which, Fun)}
                    catch Class:Reason:Stack -> {raise, Class, Reason, Stack}
                    end,
            erase('$mce_guard_which'),
            Worker = get('$mce_guard_helper_of'),
            Worker ! {Ref, Reply},
            serve()
    end.
