%% Programs and monitors for the tests of limits on properties
%% (mce_budget_tests): a model big enough to outlast a time limit, and
%% monitors that block or look at the initial state.
-module(tprog_budget).
-behaviour(mcerlang_monitor).

-export([many/2, counter/1]).
-export([init/1, state_change/3]).

%% N processes counting down from K independently: K^N interleavings,
%% more states than any test waits for.
many(N, K) ->
    [spawn(fun() -> counter(K) end) || _ <- lists:seq(1, N)],
    ok.

counter(0) ->
    ok;
counter(I) ->
    self() ! tick,
    receive tick -> counter(I - 1) end.

init(Mode) -> {ok, Mode}.

%% block: waits for a message that never comes (a monitor that calls a
%% server it should not); initial: reports what it sees in the state
%% before the first step.
state_change(_View, block, _Step) ->
    receive never -> {ok, block} end;
state_change(#{processes := Procs}, initial, none) ->
    {initial, [{S, W} || #{status := S, where := W} <- Procs]};
state_change(_View, initial, _Step) ->
    {ok, initial}.
