%% @doc N workers spawned at once that each wait for `go' and answer
%% `done' (issue 18's 16 workers).  The root spawns them all, sends `go' to
%% each, then waits for N `done's.  A worker's first step (from its spawn to
%% its `receive') is independent of every other worker's, so without
%% partial-order reduction the 2^N subsets of workers that have taken it
%% are distinct states; the workers are also interchangeable (same code,
%% same argument), so symmetry reduction applies.  Every process ends
%% normally: the default check holds.
%%
%% It is an ordinary Erlang program too: `go_workers:start(16)' returns
%% `ok' on the real VM.
-module(go_workers).
-export([start/1, worker/1]).

-spec start(pos_integer()) -> ok.
start(N) ->
    Root = self(),
    Workers = [spawn(?MODULE, worker, [Root]) || _ <- lists:seq(1, N)],
    _ = [W ! go || W <- Workers],
    wait(N).

wait(0) -> ok;
wait(N) -> receive done -> wait(N - 1) end.

-spec worker(pid()) -> ok.
worker(Root) ->
    receive go -> Root ! done end,
    ok.
