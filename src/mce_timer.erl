%% @doc A model of timer's interval and apply timers for checked code.
%%
%% Like mce_rpc, this module is not called directly: the translator
%% rewrites `timer:send_interval/2,3', `timer:apply_after/4',
%% `timer:apply_interval/4' and `timer:tc/1,2,3' in user code into calls of its translation, so
%% it runs under the checker like user code.  Each timer is a process of
%% the model, on the caller's node, that waits with `after Time' and then
%% sends or applies; it ends when the process it serves (the destination
%% pid, else the caller) ends, and `timer:cancel/1' kills it
%% (mce_rt_time:timer_cancel/1).  Time is untimed: with `timeouts => any' an
%% interval may fire any number of times before its receiver runs (an
%% unbounded mailbox, so no end to the state space); with `timeouts =>
%% when_idle' it fires only when nothing else can move; with `timeouts =>
%% {infinite_above, Ms}' a timer of Ms or more never fires (its `after' is
%% reported as `after infinity', mce_exec:timeout_kind/3).
-module(mce_timer).

-export([send_interval/2, send_interval/3, apply_after/4, apply_interval/4, tc/1, tc/2, tc/3,
         kill_after/1, kill_after/2, exit_after/2, exit_after/3]).
-export([interval/4, after_apply/4, interval_apply/5]).

-spec send_interval(non_neg_integer(), term()) -> {ok, {mce_timer, pid()}} | {error, badarg}.
send_interval(Time, Msg) ->
    send_interval(Time, self(), Msg).

-spec send_interval(non_neg_integer(), pid() | atom() | {atom(), node()}, term()) ->
          {ok, {mce_timer, pid()}} | {error, badarg}.
send_interval(Time, Dest, Msg)
  when is_integer(Time), Time >= 0, (is_pid(Dest) orelse is_atom(Dest) orelse is_tuple(Dest)) ->
    Owner = case is_pid(Dest) of
                true -> Dest;
                false -> self()
            end,
    {ok, {mce_timer, spawn(?MODULE, interval, [Time, Dest, Msg, Owner])}};
send_interval(_Time, _Dest, _Msg) ->
    {error, badarg}.

-spec apply_after(non_neg_integer(), module(), atom(), [term()]) ->
          {ok, {mce_timer, pid()}} | {error, badarg}.
apply_after(Time, M, F, A) when is_integer(Time), Time >= 0, is_atom(M), is_atom(F), is_list(A) ->
    {ok, {mce_timer, spawn(?MODULE, after_apply, [Time, M, F, A])}};
apply_after(_Time, _M, _F, _A) ->
    {error, badarg}.

-spec apply_interval(non_neg_integer(), module(), atom(), [term()]) ->
          {ok, {mce_timer, pid()}} | {error, badarg}.
apply_interval(Time, M, F, A) when is_integer(Time), Time >= 0, is_atom(M), is_atom(F),
                                   is_list(A) ->
    {ok, {mce_timer, spawn(?MODULE, interval_apply, [Time, M, F, A, self()])}};
apply_interval(_Time, _M, _F, _A) ->
    {error, badarg}.

%% @doc timer:tc/1,2,3: the call's value, and 0 microseconds: time does
%% not pass under the checker.  The function may block: it runs here,
%% translated.
-spec tc(fun(() -> T)) -> {0, T}.
tc(F) ->
    {0, F()}.

-spec tc(function(), [term()]) -> {0, term()}.
tc(F, A) ->
    {0, apply(F, A)}.

-spec tc(module(), atom(), [term()]) -> {0, term()}.
tc(M, F, A) ->
    {0, apply(M, F, A)}.

%% @doc timer:kill_after/1,2 and exit_after/2,3: exit(Pid, Reason) after
%% Time, from a timer process (apply_after of erlang:exit/2).
-spec kill_after(non_neg_integer()) -> {ok, {mce_timer, pid()}} | {error, badarg}.
kill_after(Time) -> exit_after(Time, self(), kill).

-spec kill_after(non_neg_integer(), pid() | atom()) -> {ok, {mce_timer, pid()}} | {error, badarg}.
kill_after(Time, Pid) -> exit_after(Time, Pid, kill).

-spec exit_after(non_neg_integer(), term()) -> {ok, {mce_timer, pid()}} | {error, badarg}.
exit_after(Time, Reason) -> exit_after(Time, self(), Reason).

-spec exit_after(non_neg_integer(), pid() | atom(), term()) ->
          {ok, {mce_timer, pid()}} | {error, badarg}.
exit_after(Time, Pid, Reason) ->
    apply_after(Time, erlang, exit, [Pid, Reason]).

%% The timer processes.

-spec interval(non_neg_integer(), term(), term(), pid()) -> ok.
interval(Time, Dest, Msg, Owner) ->
    interval_loop(Time, Dest, Msg, monitor(process, Owner)).

interval_loop(Time, Dest, Msg, Ref) ->
    receive
        {'DOWN', Ref, process, _, _} -> ok
    after Time ->
            %% As timer's server: a name that is not registered is skipped.
            try Dest ! Msg
            catch error:badarg -> ok
            end,
            interval_loop(Time, Dest, Msg, Ref)
    end.

-spec after_apply(non_neg_integer(), module(), atom(), [term()]) -> term().
after_apply(Time, M, F, A) ->
    receive
    after Time -> apply(M, F, A)
    end.

-spec interval_apply(non_neg_integer(), module(), atom(), [term()], pid()) -> ok.
interval_apply(Time, M, F, A, Owner) ->
    interval_apply_loop(Time, M, F, A, monitor(process, Owner)).

interval_apply_loop(Time, M, F, A, Ref) ->
    receive
        {'DOWN', Ref, process, _, _} -> ok
    after Time ->
            _ = spawn(M, F, A),
            interval_apply_loop(Time, M, F, A, Ref)
    end.
