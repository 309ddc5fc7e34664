%% @doc gen_statem programs for the differential tests (mce_otp_diff_tests):
%% both callback modes, postpone, generic and event timeouts, next_event,
%% reply actions, stop, repeat_state and state enter calls.  Each scenario
%% ends its root process with exit({result, R}), R free of pids and refs.
%%
%% Callback mode is chosen per instance through the process dictionary key
%% `mode` set in init/1 (callback_mode/0 runs in the server process).  Data
%% is a map holding the owner (the root, which receives reports) and a log.
-module(tprog_statem).
-behaviour(gen_statem).

-export([handle_event_fun/0, state_functions/0, postpone/0, generic_timeout/0,
         event_timeout/0, event_timeout_cancelled/0, state_timeout_cancelled/0,
         next_event_internal/0, reply_actions/0, stop/0, repeat_state/0, state_enter/0,
         call_timeout/0, abs_timeout/0, hibernate/0, postpone_enter/0, send_request/0,
         change_callback_module/0, stop_from_callback/0, init_returns/0, enter_loop/0]).
-export([enter_loop_init/1]).
-export([init/1, callback_mode/0, handle_event/4, terminate/3, off/3, on/3]).

%% handle_event_function with a complex state ({stack, List}).
handle_event_fun() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {push, a}),
    ok = gen_statem:call(P, {push, b}),
    gen_statem:cast(P, {push, c}),
    A = gen_statem:call(P, pop),
    B = gen_statem:call(P, pop),
    C = gen_statem:call(P, state),
    gen_statem:stop(P),
    exit({result, {A, B, C}}).

%% state_functions: a switch toggled by casts, queried by calls.
state_functions() ->
    {ok, P} = gen_statem:start(?MODULE, {functions, self()}, []),
    A = gen_statem:call(P, get),
    ok = gen_statem:cast(P, flip),
    B = gen_statem:call(P, get),
    ok = gen_statem:cast(P, flip),
    ok = gen_statem:cast(P, flip),
    C = gen_statem:call(P, get),
    D = gen_statem:call(P, flips),
    gen_statem:stop(P),
    exit({result, {A, B, C, D}}).

%% A call postponed in state `closed` is answered after the state changes.
postpone() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {goto, closed}),
    Root = self(),
    spawn(fun() -> Root ! {answer, gen_statem:call(P, wait_open)} end),
    receive postponed -> ok end,
    gen_statem:cast(P, {goto, open}),
    A = receive {answer, X} -> X end,
    B = gen_statem:call(P, state),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% Generic timeouts: `tick` fires, `other` is cancelled before it can.
generic_timeout() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, arm_generic),
    ok = gen_statem:call(P, cancel_other),
    A = receive {fired, Name, Msg} -> {Name, Msg} end,
    B = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% An event timeout fires when no event arrives.
event_timeout() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {arm_event, 10}),
    A = receive {fired, Name, Msg} -> {Name, Msg} end,
    B = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% Any event cancels an event timeout.
event_timeout_cancelled() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {arm_event, 5000}),
    A = gen_statem:call(P, log),
    gen_statem:stop(P),
    B = receive {fired, _, _} -> fired after 0 -> not_fired end,
    exit({result, {A, B}}).

%% A state timeout is cancelled by a state change; a new one then fires.
state_timeout_cancelled() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {arm_state, 5000}),
    ok = gen_statem:call(P, {goto, elsewhere}),
    ok = gen_statem:call(P, {arm_state, 10}),
    A = receive {fired, Name, Msg} -> {Name, Msg} end,
    B = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% next_event actions: internal events run, in order, before the next
%% external event.
next_event_internal() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    A = gen_statem:call(P, chain),
    B = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% Replies as actions: {keep_state_and_data, [{reply, ...}]}, several
%% replies in one action list, and gen_statem:reply/2.
reply_actions() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    A = gen_statem:call(P, ping),
    Root = self(),
    spawn(fun() -> Root ! {first, gen_statem:call(P, hold)} end),
    receive held -> ok end,
    B = gen_statem:call(P, release),
    C = receive {first, X} -> X end,
    D = gen_statem:call(P, via_reply),
    gen_statem:stop(P),
    exit({result, {A, B, C, D}}).

%% gen_statem:stop/1 and stop/3: terminate/3 sees the reason and the state.
stop() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:stop(P),
    A = receive {terminated, R1, S1} -> {R1, S1} end,
    {ok, Q} = gen_statem:start(?MODULE, {functions, self()}, []),
    ok = gen_statem:cast(Q, flip),
    ok = gen_statem:stop(Q, {shutdown, enough}, infinity),
    B = receive {terminated, R2, S2} -> {R2, S2} end,
    exit({result, {A, B, is_process_alive(P), is_process_alive(Q)}}).

%% repeat_state runs the state enter call again.
repeat_state() ->
    {ok, P} = gen_statem:start(?MODULE, {enter, self()}, []),
    ok = gen_statem:call(P, repeat),
    ok = gen_statem:call(P, repeat),
    A = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, A}).

%% [state_enter]: the enter call gets the old state (the state itself at
%% start), and may not change state.
state_enter() ->
    {ok, P} = gen_statem:start(?MODULE, {enter, self()}, []),
    ok = gen_statem:call(P, {goto, b}),
    ok = gen_statem:call(P, {goto, b}),
    ok = gen_statem:call(P, {goto, a}),
    A = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, A}).

%% gen_statem:call/3 with a timeout that expires: the caller gets a timeout
%% exit, and the reply the server sends later is dropped.
call_timeout() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    A = try gen_statem:call(P, hold, 50)
        catch exit:{Reason, {gen_statem, call, _}} -> Reason
        end,
    B = receive held -> gen_statem:call(P, release) end,
    C = receive Any -> Any after 0 -> none end,
    gen_statem:stop(P),
    exit({result, {A, B, C}}).

%% An absolute generic timeout ({abs, true}) set on the monotonic clock.
abs_timeout() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, arm_abs),
    A = receive {fired, Name, Msg} -> {Name, Msg} end,
    gen_statem:stop(P),
    exit({result, A}).

%% The hibernate action: the server keeps its state and goes on.
hibernate() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    ok = gen_statem:call(P, {push, a}),
    A = gen_statem:call(P, sleep),
    B = gen_statem:call(P, pop),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% Postponed events are retried after a state change, after the enter
%% call of the new state.
postpone_enter() ->
    {ok, P} = gen_statem:start(?MODULE, {enter, self()}, []),
    ok = gen_statem:call(P, {goto, closed}),
    ok = gen_statem:cast(P, {note, x}),
    ok = gen_statem:cast(P, {note, y}),
    ok = gen_statem:call(P, {goto, open}),
    A = gen_statem:call(P, log),
    gen_statem:stop(P),
    exit({result, A}).

%% gen_statem:send_request/2 and receive_response/2.
send_request() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    R1 = gen_statem:send_request(P, {push, q}),
    R2 = gen_statem:send_request(P, pop),
    A = gen_statem:receive_response(R1, infinity),
    B = gen_statem:receive_response(R2, infinity),
    gen_statem:stop(P),
    exit({result, {A, B}}).

%% The change_callback_module action: later events go to the new module
%% (here tprog_door, a state_functions machine, in its state `locked`).
change_callback_module() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    A = gen_statem:call(P, become_door),
    B = gen_statem:call(P, state),
    C = gen_statem:call(P, {button, 2}),
    D = gen_statem:call(P, state),
    gen_statem:stop(P),
    exit({result, {A, B, C, D}}).

%% {stop_and_reply, Reason, Replies}: the caller gets its reply, then the
%% machine terminates with Reason.
stop_from_callback() ->
    {ok, P} = gen_statem:start(?MODULE, {events, self()}, []),
    Ref = monitor(process, P),
    A = gen_statem:call(P, quit),
    B = receive {terminated, R, S} -> {R, S} end,
    C = receive {'DOWN', Ref, process, P, D} -> D end,
    exit({result, {A, B, C}}).

%% init/1 returning ignore, {stop, R}, and {ok, S, D, Actions} with a state
%% timeout.
init_returns() ->
    A = gen_statem:start(?MODULE, {init_return, ignore}, []),
    B = gen_statem:start(?MODULE, {init_return, {stop, no_way}}, []),
    {ok, P} = gen_statem:start(?MODULE, {init_return, {timeout_at_start, self()}}, []),
    C = receive {fired, Name, Msg} -> {Name, Msg} end,
    gen_statem:stop(P),
    exit({result, {A, B, C}}).

%% A process started with proc_lib:start_link becomes a gen_statem with
%% enter_loop/4.
enter_loop() ->
    {ok, P} = proc_lib:start_link(?MODULE, enter_loop_init, [self()]),
    ok = gen_statem:call(P, {push, z}),
    A = gen_statem:call(P, state),
    gen_statem:stop(P),
    exit({result, A}).

enter_loop_init(Owner) ->
    put(mode, events),
    proc_lib:init_ack({ok, self()}),
    gen_statem:enter_loop(?MODULE, [], {stack, [y]}, #{owner => Owner, log => [], flips => 0}).

%% --- callbacks ---

init({init_return, {timeout_at_start, Owner}}) ->
    put(mode, events),
    {ok, {stack, []}, #{owner => Owner, log => []}, [{state_timeout, 10, first}]};
init({init_return, R}) ->
    R;
init({Mode, Owner}) ->
    put(mode, Mode),
    D = #{owner => Owner, log => [], flips => 0},
    case Mode of
        events -> {ok, {stack, []}, D};
        functions -> {ok, off, D};
        enter -> {ok, a, D}
    end.

callback_mode() ->
    case get(mode) of
        events -> handle_event_function;
        functions -> state_functions;
        enter -> [handle_event_function, state_enter]
    end.

%% handle_event_function (modes events and enter)
handle_event(enter, Old, S, #{log := L} = D) ->
    {keep_state, D#{log := [{enter, Old, S} | L]}};
handle_event({call, From}, {push, X}, {stack, L}, D) ->
    {next_state, {stack, [X | L]}, D, [{reply, From, ok}]};
handle_event(cast, {push, X}, {stack, L}, D) ->
    {next_state, {stack, [X | L]}, D};
handle_event({call, From}, pop, {stack, [X | L]}, D) ->
    {next_state, {stack, L}, D, [{reply, From, X}]};
handle_event({call, From}, state, S, _D) ->
    {keep_state_and_data, [{reply, From, S}]};
handle_event({call, From}, {goto, S}, _, D) ->
    {next_state, S, D, [{reply, From, ok}]};
handle_event(cast, {goto, S}, _, D) ->
    {next_state, S, D};
handle_event({call, _From}, wait_open, closed, #{owner := O}) ->
    O ! postponed,
    {keep_state_and_data, [postpone]};
handle_event({call, From}, wait_open, S, _D) ->
    {keep_state_and_data, [{reply, From, {answered_in, S}}]};
handle_event({call, From}, arm_generic, _, _D) ->
    {keep_state_and_data, [{reply, From, ok}, {{timeout, tick}, 10, tock},
                           {{timeout, other}, 5000, never}]};
handle_event({call, From}, cancel_other, _, _D) ->
    {keep_state_and_data, [{reply, From, ok}, {{timeout, other}, cancel}]};
handle_event({call, From}, {arm_event, T}, _, _D) ->
    {keep_state_and_data, [{reply, From, ok}, {timeout, T, idle}]};
handle_event({call, From}, {arm_state, T}, _, _D) ->
    {keep_state_and_data, [{reply, From, ok}, {state_timeout, T, expired}]};
handle_event(Type, Msg, _, #{owner := O, log := L} = D)
  when Type =:= timeout; Type =:= state_timeout; element(1, Type) =:= timeout ->
    O ! {fired, Type, Msg},
    {keep_state, D#{log := [{Type, Msg} | L]}};
handle_event({call, From}, chain, _, D) ->
    {keep_state, D, [{reply, From, chained}, {next_event, internal, one},
                     {next_event, internal, two}]};
handle_event(internal, one, _, #{log := L} = D) ->
    {keep_state, D#{log := [one | L]}, [{next_event, internal, three}]};
handle_event(internal, X, _, #{log := L} = D) ->
    {keep_state, D#{log := [X | L]}};
handle_event({call, From}, log, _, #{log := L}) ->
    {keep_state_and_data, [{reply, From, lists:reverse(L)}]};
handle_event({call, From}, ping, _, _D) ->
    {keep_state_and_data, [{reply, From, pong}]};
handle_event({call, From}, hold, _, #{owner := O} = D) ->
    O ! held,
    {keep_state, D#{held => From}};
handle_event({call, From}, release, _, #{held := Held} = D) ->
    {keep_state, maps:remove(held, D), [{reply, Held, released}, {reply, From, done}]};
handle_event({call, From}, via_reply, _, _D) ->
    ok = gen_statem:reply(From, replied),
    keep_state_and_data;
handle_event({call, _From}, never_answered, _, _D) ->
    keep_state_and_data;
handle_event({call, From}, repeat, _, D) ->
    {repeat_state, D, [{reply, From, ok}]};
handle_event({call, From}, arm_abs, _, _D) ->
    At = erlang:monotonic_time(millisecond) + 10,
    {keep_state_and_data, [{reply, From, ok}, {{timeout, abs}, At, at, [{abs, true}]}]};
handle_event({call, From}, sleep, _, _D) ->
    {keep_state_and_data, [{reply, From, slept}, hibernate]};
handle_event(cast, {note, _}, closed, _D) ->
    {keep_state_and_data, [postpone]};
handle_event(cast, {note, X}, _, #{log := L} = D) ->
    {keep_state, D#{log := [{note, X} | L]}};
handle_event({call, From}, become_door, _, D) ->
    {next_state, locked, D, [{reply, From, ok}, {change_callback_module, tprog_door}]};
handle_event({call, From}, quit, _, _D) ->
    {stop_and_reply, {shutdown, quit}, [{reply, From, quitting}]}.

%% state_functions (mode functions)
off(cast, flip, #{flips := N} = D) -> {next_state, on, D#{flips := N + 1}};
off(EventType, Event, D) -> common(EventType, Event, off, D).

on(cast, flip, #{flips := N} = D) -> {next_state, off, D#{flips := N + 1}};
on(EventType, Event, D) -> common(EventType, Event, on, D).

common({call, From}, get, S, _D) -> {keep_state_and_data, [{reply, From, S}]};
common({call, From}, flips, _S, #{flips := N}) -> {keep_state_and_data, [{reply, From, N}]}.

terminate(Reason, S, #{owner := O}) -> O ! {terminated, Reason, S}.
