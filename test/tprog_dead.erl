%% @doc Programs whose messages carry payloads no run observes (dead
%% payloads, mce_payload): replies to gen_server calls whose results are
%% dropped, next to replies that are used.
-module(tprog_dead).
-behaviour(gen_server).

-export([dropped/2, used/2, lost_total/2, selective/1]).
-export([init/1, handle_call/3, handle_cast/2]).

%% N clients each make K calls and drop the replies; the entry checks the
%% total.
-spec dropped(pos_integer(), pos_integer()) -> ok.
dropped(N, K) -> run(N, K, N * K).

%% As dropped/2, but the entry expects one increment too many: an abnormal
%% exit whose run goes through dropped replies.
-spec lost_total(pos_integer(), pos_integer()) -> ok.
lost_total(N, K) -> run(N, K, N * K + 1).

%% Each client sums its replies and reports the sum: no reply is dead.
-spec used(pos_integer(), pos_integer()) -> ok.
used(N, K) ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    Self = self(),
    [spawn(fun() -> Self ! {sum, lists:sum([gen_server:call(S, incr) || _ <- lists:seq(1, K)])} end)
     || _ <- lists:seq(1, N)],
    Sums = [receive {sum, X} -> X end || _ <- lists:seq(1, N)],
    %% The sums of the values handed out, whoever got which.
    Total = lists:sum(Sums),
    Total = lists:sum(lists:seq(1, N * K)),
    gen_server:stop(S).

%% A receive that takes a later message first: the earlier one (whose
%% payload the second receive looks at) must stay as it is.
-spec selective(pos_integer()) -> ok.
selective(V) ->
    Self = self(),
    spawn(fun() -> Self ! {value, V}, Self ! {go, V + 1} end),
    receive {go, _Dropped} -> ok end,
    receive {value, W} -> W = V end,
    ok.

run(N, K, Expected) ->
    {ok, S} = gen_server:start(?MODULE, 0, []),
    Self = self(),
    [spawn(fun() -> [gen_server:call(S, incr) || _ <- lists:seq(1, K)], Self ! done end)
     || _ <- lists:seq(1, N)],
    [receive done -> ok end || _ <- lists:seq(1, N)],
    Expected = gen_server:call(S, get),
    gen_server:stop(S).

-spec init(integer()) -> {ok, integer()}.
init(N) -> {ok, N}.

-spec handle_call(incr | get, term(), integer()) -> {reply, integer(), integer()}.
handle_call(incr, _From, N) -> {reply, N + 1, N + 1};
handle_call(get, _From, N) -> {reply, N, N}.

-spec handle_cast(term(), integer()) -> {noreply, integer()}.
handle_cast(_, N) -> {noreply, N}.
