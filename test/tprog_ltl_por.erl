%% @doc Programs for the partial-order reduction of the LTL check
%% (test/mce_ltl_por_tests.erl): local steps that the reduction may order
%% one way, props that make some of them visible, and a spinner whose
%% cycle of local steps would hide another process's step without the
%% cycle proviso.
-module(tprog_ltl_por).
-export([yielders/2, order/0, ignoring/0, ignoring_crash/0, spin_then_done/0, peeker/0]).
-export([flip_then_done/0, flip_and_wait/0, ignoring_crash_two/0]).

%% N workers, each taking K local steps (polls) and then waiting forever;
%% the entry marks `done' once it has spawned them all.  The workers' polls
%% commute with everything: the reduction orders them one way.
-spec yielders(non_neg_integer(), non_neg_integer()) -> no_return().
yielders(N, K) ->
    [spawn(fun() -> polls(K), wait() end) || _ <- lists:seq(1, N)],
    mcerlang:prop(done),
    wait().

polls(0) -> ok;
polls(K) -> erlang:yield(), polls(K - 1).

wait() ->
    receive never -> ok end.

%% Two processes, each standing once at a prop, then leaving it (a
%% resume: a safe step, visible to a formula over the prop).  Once both
%% stand at theirs, `[] ((a && b) -> [] !(a && !b))' fails only if b's
%% process leaves first: a reduction that took a's resume as invisible
%% would order a first and miss it.
-spec order() -> no_return().
order() ->
    spawn(fun() -> mcerlang:prop(a), wait() end),
    spawn(fun() -> mcerlang:prop(b), wait() end),
    wait().

%% A spinner whose polls return to the same state, and a process that
%% stands at `bad' once it starts.  Reducing the spinner's state to its
%% poll (a safe, invisible step back to itself) would never let the other
%% process start: the cycle proviso forbids it.
-spec ignoring() -> no_return().
ignoring() ->
    spawn(fun spin/0),
    spawn(fun() -> mcerlang:prop(bad), wait() end),
    wait().

spin() ->
    erlang:yield(),
    spin().

%% The same spinner beside a process that crashes once it runs: a search
%% that took the spinner's poll alone at every state (a step back to a
%% state already seen) would never run the other process, and miss the
%% crash (the cycle proviso of the parallel search: mce_workers_tests).
-spec ignoring_crash() -> no_return().
ignoring_crash() ->
    spawn(fun spin/0),
    spawn(fun() -> erlang:yield(), exit(crashed) end),
    wait().

%% The same with a spinner whose polls go round two states: the step from
%% the second back to the first meets a state already expanded, whose
%% expansion took the spinner's poll alone.  A parallel search that cut
%% toward a state once its own expansion ended (rather than once its
%% children's ended too) would go round the two forever without the other
%% process (mce_workers_tests).
-spec ignoring_crash_two() -> no_return().
ignoring_crash_two() ->
    spawn(fun spin_a/0),
    spawn(fun() -> erlang:yield(), exit(crashed) end),
    wait().

spin_a() ->
    erlang:yield(),
    spin_b().

spin_b() ->
    erlang:yield(),
    spin_a().

%% A spinner beside a worker that takes local steps and then stands at
%% `done': without fairness the spinner may run forever.
-spec spin_then_done() -> no_return().
spin_then_done() ->
    spawn(fun spin/0),
    spawn(fun() -> polls(3), mcerlang:prop(done), wait() end),
    wait().

%% The entry reads another process's record (process_info/2): that read
%% could tell whether a safe step was taken, so the reduced search is void
%% and the check runs again without the reduction.
-spec peeker() -> no_return().
peeker() ->
    W = spawn(fun() -> polls(2), wait() end),
    _ = process_info(W, status),
    mcerlang:prop(done),
    wait().

%% Weak fairness (mce_ltl_por_tests:weak_fairness_test_): a spinner that
%% flips between two states (so its first poll leads to a state its own
%% expansion discovers, and the reduction may keep that poll alone) beside
%% a worker that polls and then stands at `done'.  Under weak fairness the
%% worker, enabled throughout, must run: `<> done' holds.  A fairness test
%% that took the enabled processes from the reduced graph would see the
%% worker disabled where only the spinner's poll is kept, and pass the
%% spinner's cycle as fair.
-spec flip_then_done() -> no_return().
flip_then_done() ->
    spawn(fun() -> flip(a) end),
    spawn(fun() -> polls(2), mcerlang:prop(done), wait() end),
    wait().

flip(a) -> erlang:yield(), flip(b);
flip(b) -> erlang:yield(), flip(a).

%% The same spinner beside a worker that waits for a message nobody sends:
%% `<> done' fails under weak fairness too (the worker is never enabled),
%% and the lasso is the spinner's cycle.
-spec flip_and_wait() -> no_return().
flip_and_wait() ->
    spawn(fun() -> flip(a) end),
    spawn(fun() -> polls(2), wait(), mcerlang:prop(done) end),
    wait().
