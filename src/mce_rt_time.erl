%% @doc The runtime (see mce_rt) for time: erlang's timers (send_after,
%% start_timer, cancel_timer, read_timer) and timer:send_after/cancel, the
%% clocks, erlang:unique_integer/0,1 and statistics/1.
%%
%% The checker is untimed: a timer may fire at any moment (with
%% `timeouts => when_idle' only when nothing else can happen; with
%% `{infinite_above, Ms}' a timer of Ms or more never fires, which the C
%% search decides from the time the `timer' effect carries: the timer is
%% set and pending all the same), and every clock reads one fixed
%% instant, so states do not differ by when they were reached.
%%
%% Invariant: a timer is a simulated ref and a `timer' effect; the time
%% left of a live timer is its whole time (none passes) and is read from
%% the overlay before the stored state.  unique_integer/0,1 counts in the
%% state, so its values increase along every path.
-module(mce_rt_time).
-compile({no_auto_import, [send_after/3, send_after/4, start_timer/3, start_timer/4,
                            cancel_timer/1, cancel_timer/2, read_timer/1, read_timer/2,
                            unique_integer/0, unique_integer/1, monotonic_time/0, monotonic_time/1,
                            system_time/0, system_time/1, timestamp/0]}).

-export([statistics/1, send_after/3, send_after/4, start_timer/3, start_timer/4, cancel_timer/1,
         cancel_timer/2, read_timer/1, read_timer/2, timer_send_after/2, timer_send_after/3,
         timer_cancel/1, unique_integer/0, unique_integer/1, monotonic_time/0, monotonic_time/1,
         system_time/0, system_time/1, timestamp/0]).

%%--------------------------------------------------------------------
%% Timers (untimed: a timer may fire at any moment; with
%% timeouts => when_idle only when nothing else can happen)
%%--------------------------------------------------------------------

-spec send_after(non_neg_integer(), pid() | atom(), term()) -> reference().
send_after(Time, Dest, Msg) ->
    send_after(Time, Dest, Msg, []).

-spec send_after(non_neg_integer(), pid() | atom(), term(), list()) -> reference().
send_after(Time, Dest, Msg, Opts) ->
    timer_start(Time, Dest, Opts, fun(_Ref) -> Msg end, [Time, Dest, Msg, Opts]).

-spec start_timer(non_neg_integer(), pid() | atom(), term()) -> reference().
start_timer(Time, Dest, Msg) ->
    start_timer(Time, Dest, Msg, []).

-spec start_timer(non_neg_integer(), pid() | atom(), term(), list()) -> reference().
start_timer(Time, Dest, Msg, Opts) ->
    timer_start(Time, Dest, Opts, fun(Ref) -> {timeout, Ref, Msg} end, [Time, Dest, Msg, Opts]).

timer_start(Time, Dest, Opts, Build, Args) when is_integer(Time), Time >= 0, Time < 1 bsl 31,
                                                 is_list(Opts) ->
    lists:all(fun({abs, B}) -> is_boolean(B); (_) -> false end, Opts)
        orelse erlang:error(badarg, Args),
    {Key, Name} = case Dest of
                      _ when is_atom(Dest) -> {mce_pid:by_name(mce_rt:my_node()), Dest};
                      _ when is_pid(Dest) ->
                          N = mce_rt:sim_pid(Dest, Args),
                          mce_rt:is_local(N) orelse erlang:error(badarg, Args),
                          {N, none};
                      _ -> erlang:error(badarg, Args)
                  end,
    Ref = mce_rt_signals:make_ref(),
    {ok, R} = mce_ref:number(Ref),
    %% A timer aimed at a pid that is not alive is cancelled at once.
    Live = Name =/= none orelse Key =:= erlang:get('$mce_pid') orelse mce_rt_procs:alive(Key),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{timer, R} => Live andalso Time}),
    Live andalso mce_rt:effect({timer, R, Key, Name, Build(Ref), Time}),
    Ref;
timer_start(_Time, _Dest, _Opts, _Build, Args) ->
    erlang:error(badarg, Args).

-spec cancel_timer(reference()) -> non_neg_integer() | false.
cancel_timer(Ref) ->
    cancel_timer(Ref, []).

%% @doc cancel_timer/2: the time left is the timer's whole time (untimed,
%% none has passed), false for a timer that fired or never was.
-spec cancel_timer(reference(), list()) -> non_neg_integer() | false | ok.
cancel_timer(Ref, Opts) when is_reference(Ref), is_list(Opts) ->
    Async = proplists:get_value(async, Opts, false),
    Info = proplists:get_value(info, Opts, true),
    Left = timer_left(Ref),
    case mce_ref:number(Ref) of
        {ok, R} when Left =/= false ->
            erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{timer, R} => false}),
            mce_rt:effect({cancel_timer, R});
        _ -> ok
    end,
    case {Async, Info} of
        {false, true} -> Left;
        {true, true} -> mce_rt:send(mce_rt:self(), {cancel_timer, Ref, Left}), ok;
        {_, false} -> ok
    end;
cancel_timer(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).

-spec read_timer(reference()) -> non_neg_integer() | false.
read_timer(Ref) ->
    read_timer(Ref, []).

-spec read_timer(reference(), list()) -> non_neg_integer() | false | ok.
read_timer(Ref, Opts) when is_reference(Ref), is_list(Opts) ->
    Left = timer_left(Ref),
    case proplists:get_value(async, Opts, false) of
        false -> Left;
        true -> mce_rt:send(mce_rt:self(), {read_timer, Ref, Left}), ok
    end;
read_timer(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).

timer_left(Ref) ->
    case mce_ref:number(Ref) of
        {ok, R} ->
            case erlang:get('$mce_overlay') of
                #{{timer, R} := T} -> T;
                #{} -> mce_nif:timer(erlang:get('$mce_search'), R)
            end;
        error -> false
    end.

%% @doc timer:send_after/2,3 as in OTP 25: erlang:send_after for a local
%% pid ({send_local, Ref}); a name is resolved when the timer fires.
-spec timer_send_after(non_neg_integer(), term()) -> {ok, term()} | {error, badarg}.
timer_send_after(Time, Msg) ->
    timer_send_after(Time, mce_rt:self(), Msg).

-spec timer_send_after(non_neg_integer(), term(), term()) -> {ok, term()} | {error, badarg}.
timer_send_after(0, Dest, Msg) when is_pid(Dest); is_atom(Dest); is_tuple(Dest) ->
    try mce_rt:send(Dest, Msg) catch error:badarg -> ok end,
    {ok, {instant, mce_rt_signals:make_ref()}};
timer_send_after(Time, Dest, Msg) when is_integer(Time), Time > 0, is_pid(Dest) ->
    case mce_pid:number(Dest) of
        {ok, N} ->
            case mce_rt:is_local(N) of
                true -> {ok, {send_local, send_after(Time, Dest, Msg)}};
                false -> {error, badarg}
            end;
        error -> {error, badarg}
    end;
timer_send_after(Time, Dest, Msg) when is_integer(Time), Time > 0, is_atom(Dest) ->
    {ok, {once, send_after(Time, Dest, Msg)}};
timer_send_after(_Time, _Dest, _Msg) ->
    {error, badarg}.

-spec timer_cancel(term()) -> {ok, cancel} | {error, badarg}.
timer_cancel({instant, Ref}) when is_reference(Ref) -> {ok, cancel};
timer_cancel({mce_timer, Pid}) when is_pid(Pid) ->
    %% An interval or apply timer (mce_timer): its process ends at once.
    %% On the real VM no process dies (the timer server forgets the
    %% timer): the reason is one that abnormal_exit does not judge
    %% (mce_search:normal_reason/2), and mce_timer's processes do not trap
    %% exits.
    _ = mce_rt_signals:exit(Pid, '$mce_timer_cancelled'),
    {ok, cancel};
timer_cancel({Kind, Ref}) when (Kind =:= send_local orelse Kind =:= once), is_reference(Ref) ->
    _ = cancel_timer(Ref),
    {ok, cancel};
timer_cancel(_) ->
    {error, badarg}.

%%--------------------------------------------------------------------
%% Clocks.  Time does not pass under the checker (untimed semantics, as
%% for `after' and timers): every clock reads one fixed instant, so a
%% deadline computed from them is never shortened, and states do not
%% differ by the time they were reached in.
%%--------------------------------------------------------------------

-define(EPOCH_SECONDS, 1700000000).

-spec monotonic_time() -> integer().
monotonic_time() -> 0.

-spec monotonic_time(erlang:time_unit()) -> integer().
monotonic_time(Unit) -> erlang:convert_time_unit(0, native, Unit).

-spec system_time() -> integer().
system_time() -> erlang:convert_time_unit(?EPOCH_SECONDS, second, native).

-spec system_time(erlang:time_unit()) -> integer().
system_time(Unit) -> erlang:convert_time_unit(?EPOCH_SECONDS, second, Unit).

-spec timestamp() -> erlang:timestamp().
timestamp() -> {?EPOCH_SECONDS div 1000000, ?EPOCH_SECONDS rem 1000000, 0}.

%%--------------------------------------------------------------------
%% erlang:unique_integer/0,1: a counter kept in the state, so values are
%% unique and increasing along every path.
%%--------------------------------------------------------------------

-spec unique_integer() -> pos_integer().
unique_integer() ->
    unique_integer([]).

-spec unique_integer([positive | monotonic]) -> pos_integer().
unique_integer(Opts) when is_list(Opts) ->
    lists:all(fun(O) -> O =:= positive orelse O =:= monotonic end, Opts)
        orelse erlang:error(badarg, [Opts]),
    Overlay = erlang:get('$mce_overlay'),
    Last = case Overlay of
               #{unique := U} -> U;
               #{} -> mce_nif:unique(erlang:get('$mce_search'))
           end,
    N = Last + 1,
    erlang:put('$mce_overlay', Overlay#{unique => N}),
    mce_rt:effect({unique, N}),
    N;
unique_integer(Opts) ->
    erlang:error(badarg, [Opts]).

%%--------------------------------------------------------------------
%% erlang:statistics/1
%%--------------------------------------------------------------------

%% @doc erlang:statistics/1 for the clocks and counters programs read to
%% measure themselves: time does not pass under the checker, so they read
%% zero.
-spec statistics(atom()) -> term().
statistics(Item) when Item =:= wall_clock; Item =:= runtime; Item =:= reductions;
                      Item =:= exact_reductions ->
    {0, 0};
statistics(Item) when Item =:= run_queue; Item =:= total_run_queue_lengths;
                      Item =:= total_active_tasks; Item =:= context_switches ->
    case Item of
        context_switches -> {0, 0};
        _ -> 0
    end;
statistics(Item) ->
    mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, statistics, 1},
                      {item, Item, "modelled: wall_clock, runtime, reductions, run_queue, "
                                   "context_switches"}}}).
