%% @doc A counter gen_server (OTP's own gen_server, run by the checker)
%% and N clients doing K increments each; the last client to finish checks
%% that no increment was lost.  `start_racy/2' uses a read-then-write
%% protocol (get, then set) that loses updates under some interleavings.
-module(counter_server).
-behaviour(gen_server).

-export([start/2, start_racy/2]).
-export([init/1, handle_call/3, handle_cast/2]).

-spec start(pos_integer(), pos_integer()) -> ok.
start(N, K) -> run(N, K, fun(S) -> gen_server:call(S, incr) end).

-spec start_racy(pos_integer(), pos_integer()) -> ok.
start_racy(N, K) ->
    run(N, K, fun(S) -> V = gen_server:call(S, get), gen_server:call(S, {set, V + 1}) end).

run(N, K, Incr) ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    Self = self(),
    [spawn(fun() -> [Incr(S) || _ <- lists:seq(1, K)], Self ! done end) || _ <- lists:seq(1, N)],
    [receive done -> ok end || _ <- lists:seq(1, N)],
    Total = N * K,
    Total = gen_server:call(S, get),
    gen_server:stop(S).

-spec init(integer()) -> {ok, integer()}.
init(N) -> {ok, N}.

-spec handle_call(incr | get | {set, integer()}, term(), integer()) -> {reply, term(), integer()}.
handle_call(incr, _From, N) -> {reply, N + 1, N + 1};
handle_call(get, _From, N) -> {reply, N, N};
handle_call({set, V}, _From, _N) -> {reply, V, V}.

-spec handle_cast(term(), integer()) -> {noreply, integer()}.
handle_cast(_, N) -> {noreply, N}.
