%% @doc A code lock on OTP's gen_statem, after the code_lock of the
%% gen_statem user's guide: users type the code on the keypad and push the
%% door; the door relocks by itself some time after opening (a state
%% timeout) and as soon as someone has passed.
%%
%% A user who typed the right code and saw "open" pushes the door and
%% crashes with `pushed_locked_door' if it is locked again.  Two races make
%% that happen, and the checker finds both:
%%   - the relock timeout fires between "open" and the push.  This run
%%     exists only without a notion of time (the default `timeouts => any');
%%     with `timeouts => when_idle' the timeout waits until nothing else can
%%     happen, and `start(1)' holds.
%%   - with two users, the second one sees the door open (because the first
%%     one opened it), pushes after the first has passed, and finds it
%%     locked: a real bug that no timing assumption removes.
-module(door).
-behaviour(gen_statem).

-export([start/1, user/2, button/1, push/0]).
-export([init/1, callback_mode/0, locked/3, open/3]).

-define(CODE, [1, 2]).
-define(OPEN_TIME, 10000).

%% @doc Starts the door and `Users' users, and waits for them to finish.
-spec start(pos_integer()) -> ok.
start(Users) ->
    {ok, Door} = gen_statem:start({local, door}, ?MODULE, ?CODE, []),
    Watched = [spawn_monitor(?MODULE, user, [I, ?CODE]) || I <- lists:seq(1, Users)],
    [receive {'DOWN', Ref, process, Pid, _} -> ok end || {Pid, Ref} <- Watched],
    gen_statem:stop(Door).

%% @doc A user types the code, then pushes the door.
-spec user(pos_integer(), [integer()]) -> ok.
user(_I, Code) ->
    case lists:last([button(Digit) || Digit <- Code]) of
        open ->
            case push() of
                passed -> ok;
                locked -> exit(pushed_locked_door)
            end;
        locked ->
            %% Someone else's digits were mixed with ours: the door says
            %% locked, so we did not push.  Nothing went wrong.
            ok
    end.

-spec button(integer()) -> open | locked.
button(Digit) ->
    gen_statem:call(door, {button, Digit}).

-spec push() -> passed | locked.
push() ->
    gen_statem:call(door, push).

%%--------------------------------------------------------------------
%% gen_statem callbacks: state functions with state enter calls.
%% Data: #{code := Code, typed := Digits, most recent first}.
%%--------------------------------------------------------------------

-spec init([integer()]) -> {ok, locked, map()}.
init(Code) ->
    {ok, locked, #{code => Code, typed => []}}.

-spec callback_mode() -> [state_functions | state_enter].
callback_mode() ->
    [state_functions, state_enter].

-spec locked(gen_statem:event_type() | enter, term(), map()) -> gen_statem:event_handler_result(atom()).
locked(enter, _Old, Data) ->
    {keep_state, Data#{typed := []}};
locked({call, From}, {button, Digit}, #{code := Code, typed := Typed} = Data) ->
    Now = lists:sublist([Digit | Typed], length(Code)),
    case lists:reverse(Now) =:= Code of
        true -> {next_state, open, Data, [{reply, From, open}]};
        false -> {keep_state, Data#{typed := Now}, [{reply, From, locked}]}
    end;
locked({call, From}, push, _Data) ->
    {keep_state_and_data, [{reply, From, locked}]}.

-spec open(gen_statem:event_type() | enter, term(), map()) -> gen_statem:event_handler_result(atom()).
open(enter, _Old, _Data) ->
    {keep_state_and_data, [{state_timeout, ?OPEN_TIME, lock}]};
open(state_timeout, lock, Data) ->
    {next_state, locked, Data};
open({call, From}, {button, _}, _Data) ->
    {keep_state_and_data, [{reply, From, open}]};
open({call, From}, push, Data) ->
    {next_state, locked, Data, [{reply, From, passed}]}.
