-module(tprog_bad_self_in_guard).
-export([self_in_guard/0]).
%% self() in a receive guard.
self_in_guard() ->
    receive {From, X} when From =:= self() -> X end.

