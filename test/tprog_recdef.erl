%% Record defaults that run process code, record field order (issue 14 item
%% 4b); see mce_translate_bind_tests.
-module(tprog_recdef).

-export([rec_default/0, rec_order/0, rec_wildcard/0]).

-record(st, {helper = start_helper(), n = 0}).
-record(ord, {a = log(def_a), b, c = log(def_c)}).

rec_default() ->
    S = #st{n = 1},
    S#st.helper ! {ping, self()},
    receive pong -> exit({result, S#st.n}) end.

rec_order() ->
    R = #ord{b = log(b), a = log(a)},
    exit({result, {R, drain()}}).

rec_wildcard() ->
    R = #ord{_ = log(w)},
    exit({result, {R, drain()}}).

start_helper() ->
    spawn(fun() -> receive {ping, From} -> From ! pong end end).


log(X) ->
    self() ! {log, X},
    X.

drain() ->
    receive {log, X} -> [X | drain()] after 0 -> [] end.
