%% Programs for the ether tests (test/mce_ether_tests.erl).
-module(tprog_ether).
-export([flood/2, burst/1]).

%% NSenders processes each send K messages that the receiver never takes:
%% under delivery => ether every interleaving of the deliveries is a state
%% ((K + 1)^NSenders of them), all computed in C without running Erlang.
flood(NSenders, K) ->
    Me = self(),
    [spawn(fun() -> [Me ! {noise, I} || I <- lists:seq(1, K)] end)
     || _ <- lists:seq(1, NSenders)],
    receive never -> ok end.

%% One step sends N messages to one process, which takes the last.
burst(N) ->
    Me = self(),
    spawn(fun() -> [Me ! {m, I} || I <- lists:seq(1, N)] end),
    receive {m, N} -> ok end.
