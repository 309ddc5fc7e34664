%% @doc A chain of N processes, each spawned by the previous one (issue 18's
%% spawn chain).  Process K spawns process K + 1, then takes one step of its
%% own (`erlang:yield/0', a scheduling point) before it reaches its
%% `receive'.  The steps to the receive are independent of one another, so
%% without partial-order reduction every subset of the processes that have
%% taken theirs is a distinct state: about 2^N states.  The last process
%% tells the root it is there; the root sends `stop' down the chain, each
%% process passing it on to its child, and the last one answers `done'.
%% Every process ends normally: the default check holds.
%%
%% It is an ordinary Erlang program too: `spawn_chain:start(100)' returns
%% `ok' on the real VM.
-module(spawn_chain).
-export([start/1, link/3]).

-spec start(pos_integer()) -> ok.
start(N) ->
    Root = self(),
    First = spawn(?MODULE, link, [1, N, Root]),
    receive ready -> ok end,
    First ! stop,
    receive done -> ok end.

%% Process K of N.
-spec link(pos_integer(), pos_integer(), pid()) -> ok.
link(K, N, Root) when K < N ->
    Child = spawn(?MODULE, link, [K + 1, N, Root]),
    erlang:yield(),
    receive stop -> Child ! stop end,
    ok;
link(N, N, Root) ->
    Root ! ready,
    erlang:yield(),
    receive stop -> Root ! done end,
    ok.
