%% Variables bound in the arguments of calls that may block (issue 14 item 4);
%% see mce_translate_bind_tests.  Each program ends with exit({result, V})
%% or an error, the same on the real VM and under the checker.
-module(tprog_bind).

-export([send_bind/0, notify_abort/0, remote_bind/0, nested_bind/0, bind_badmatch/0,
         bind_order/0, same_var_twice/0, same_var_clash/0, local_bind_tail/0]).

%% Item 4: variables bound inside the arguments of calls that may block.

send_bind() ->
    Echo = spawn(fun echo/0),
    Echo ! {req, Ref = make_ref(), self()},
    receive {Ref, Answer} -> exit({result, Answer}) end.

notify_abort() ->
    P = spawn(fun acker/0),
    X = 7,
    notify(P, {abort, Reason = {deadlock, X}}),
    error(Reason).

remote_bind() ->
    Self = self(),
    spawn(fun() -> Self ! {item, 5} end),
    V = tprog_helper:wait_for(Tag = item),
    exit({result, {Tag, V}}).

nested_bind() ->
    V = pass({A, B} = C = make_pair()),
    exit({result, {A, B, C, V}}).

%% Non-blocking arguments that bind, before and after one that fails to
%% match: the first has run when the badmatch is raised.
bind_badmatch() ->
    R = try bad_pair() catch error:E -> E end,
    exit({result, {R, get(k)}}).

bad_pair() ->
    P = pass2(Y = put(k, one), {ok, V} = id({error, x})),
    {P, Y, V}.

%% Left to right: each put returns the value the previous one stored.
bind_order() ->
    V = pass3(put(k, a), W = put(k, b), put(k, c)),
    exit({result, {V, W, get(k)}}).

same_var_twice() ->
    pass2(X = id(1), X = 1),
    exit({result, X}).

same_var_clash() ->
    pass2(X = id(1), X = id(2)),
    exit({result, X}).

%% The binding call last in the body: its value is the function's.
local_bind_tail() ->
    exit({result, {tail_bind(), get(t)}}).

tail_bind() ->
    pass(Y = put(t, y)),
    pass2(Y, _Z = put(t, z)).

echo() ->
    receive {req, Ref, From} -> From ! {Ref, pong} end.

acker() ->
    receive {From, _Msg} -> From ! ack end.

notify(P, Msg) ->
    P ! {self(), Msg},
    receive ack -> ok end.

make_pair() -> {1, 2}.

id(X) -> X.

pass(X) ->
    receive after 0 -> X end.

pass2(X, Y) ->
    receive after 0 -> {X, Y} end.

pass3(X, Y, Z) ->
    receive after 0 -> {X, Y, Z} end.
