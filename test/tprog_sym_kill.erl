%% Test program of symmetry reduction (test/mce_symmetry_tests.erl,
%% regression of issue 18's randomised test): a process killed by another
%% one's exit signal, and the victim itself ending abnormally later.
-module(tprog_sym_kill).
-export([kill_race/0, killer/0, victim/1]).

%% The killer is spawned first (the smaller pid), so an expansion of the
%% state where both can move lists the kill first and stops there (a
%% process killed is an abnormal exit); the victim's own run to its
%% abnormal exit is a real run too, which a search on representatives may
%% find first when the renaming puts the victim before the killer.
kill_race() ->
    K = spawn(?MODULE, killer, []),
    V = spawn(?MODULE, victim, [self()]),
    K ! {victim, V},
    receive done -> ok end.

killer() ->
    receive {victim, V} -> exit(V, kill) end.

victim(Root) ->
    Root ! done,
    exit(bad).
