%% @doc The behaviour of safety monitors (option `monitor => {Module, Arg}').
%%
%% A monitor watches every state the checker reaches, as McErlang's do
%% (paper 004, section 4): `init(Arg)' gives its first state; then for each
%% new step `state_change(View, State, Step)' sees the state the step led to
%% (mcerlang:view(): processes, mailboxes, props, probes, nodes, the ether)
%% and returns `{ok, NewState}' to go on, `skip' to prune the path there,
%% or anything else, which is the violation reported with the
%% counterexample.  The initial state (the entry's process, not started
%% yet) is judged first, with `Step = none'; a violation there has an
%% empty trace.  The monitor's state is part of the checked state, so a
%% monitor may count or remember (bounded, or the space grows).  It must be
%% a pure function of its arguments: it runs on the real VM, outside the
%% model.
-module(mcerlang_monitor).

-callback init(Arg :: term()) -> {ok, State :: term()}.
-callback state_change(View :: mcerlang:view(), State :: term(), Step :: map() | none) ->
    {ok, NewState :: term()} | skip | Violation :: term().
