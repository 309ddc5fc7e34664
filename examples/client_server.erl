%% A fixed benchmark model: one server, N clients, K request/reply rounds
%% per client.  Each client sends `{req, self(), I}' and waits for
%% `{reply, I}'; the server answers anyone, in whatever order requests
%% arrive.  The starting process is the coordinator: it waits for a
%% `{done, Client}' from every client, then tells the server to stop.
%% Every process ends normally, so the default check (deadlock and
%% abnormal_exit) holds.  The state space grows with both N and K, which
%% is what makes it useful as a benchmark.
%%
%% It is an ordinary Erlang program too: `client_server:start(3, 2)'
%% returns `ok' on the real VM.
-module(client_server).
-export([start/2, server/0, client/3]).

-spec start(non_neg_integer(), non_neg_integer()) -> ok.
start(N, K) ->
    Server = spawn(?MODULE, server, []),
    Coord = self(),
    _ = [spawn(?MODULE, client, [Server, Coord, K]) || _ <- lists:seq(1, N)],
    wait_done(N),
    Server ! stop,
    ok.

wait_done(0) ->
    ok;
wait_done(N) ->
    receive
        {done, _Client} -> wait_done(N - 1)
    end.

-spec server() -> ok.
server() ->
    receive
        {req, From, I} ->
            From ! {reply, I},
            server();
        stop ->
            ok
    end.

-spec client(pid(), pid(), non_neg_integer()) -> ok.
client(Server, Coord, K) ->
    rounds(Server, 1, K),
    Coord ! {done, self()},
    ok.

rounds(_Server, I, K) when I > K ->
    ok;
rounds(Server, I, K) ->
    Server ! {req, self(), I},
    receive
        {reply, I} -> ok
    end,
    rounds(Server, I + 1, K).
