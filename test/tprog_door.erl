-module(tprog_door).
%% A door lock as a gen_statem (state functions, state enter calls, a
%% state timeout that relocks the door): for the OTP differential tests.
-behaviour(gen_statem).
-export([start/0, init/1, callback_mode/0, locked/3, open/3]).
start() ->
    {ok, P} = gen_statem:start(?MODULE, [], []),
    A = gen_statem:call(P, {button, 1}),
    B = gen_statem:call(P, {button, 2}),
    C = gen_statem:call(P, state),
    gen_statem:stop(P),
    exit({result, {A, B, C}}).
init([]) -> {ok, locked, []}.
callback_mode() -> [state_functions, state_enter].
locked(enter, _, D) -> {keep_state, D};
locked({call, From}, {button, 1}, D) -> {keep_state, D, [{reply, From, wrong}]};
locked({call, From}, {button, 2}, D) -> {next_state, open, D, [{reply, From, opened}, {state_timeout, 100, lock}]};
locked({call, From}, state, D) -> {keep_state, D, [{reply, From, locked}]}.
open(enter, _, D) -> {keep_state, D};
open(state_timeout, lock, D) -> {next_state, locked, D};
open({call, From}, state, D) -> {keep_state, D, [{reply, From, open}]}.
