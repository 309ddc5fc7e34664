%% A poolboy-like pool (test/mce_symmetry_maps_tests.erl): a gen_server
%% whose state map holds the idle workers (a list) and a queue of waiting
%% callers, with a private ETS table of the checked-out workers keyed by
%% worker pid ({Worker, MRef}); the workers are gen_servers under a
%% simple_one_for_one supervisor (#{Pid => []}).  N identical clients each
%% check a worker out, call it and check it in.  The buggy pool forgets to
%% delete a worker's entry at check-in and crashes when the worker is
%% checked out again (ets:insert_new/2 fails).
-module(tprog_sym_pool).
-behaviour(gen_server).
-export([start/3, client/2, worker_start/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-spec start(pos_integer(), pos_integer(), boolean()) -> ok.
start(NWorkers, NClients, Bug) ->
    {ok, Sup} = supervisor:start_link(?MODULE, {sup}),
    {ok, Pool} = gen_server:start_link({local, pool}, ?MODULE, {pool, Sup, NWorkers, Bug}, []),
    Me = self(),
    [spawn_link(?MODULE, client, [Pool, Me]) || _ <- lists:seq(1, NClients)],
    [receive {done, _} -> ok end || _ <- lists:seq(1, NClients)],
    ok.

-spec client(pid(), pid()) -> {done, pid()}.
client(Pool, Entry) ->
    W = gen_server:call(Pool, checkout, infinity),
    pong = gen_server:call(W, ping, infinity),
    gen_server:cast(Pool, {checkin, W}),
    Entry ! {done, self()}.

-spec worker_start() -> {ok, pid()}.
worker_start() -> gen_server:start_link(?MODULE, worker, []).

init({sup}) ->
    {ok, {#{strategy => simple_one_for_one},
          [#{id => worker, start => {?MODULE, worker_start, []}, restart => temporary}]}};
init({pool, Sup, N, Bug}) ->
    Ws = [begin {ok, W} = supervisor:start_child(Sup, []), W end || _ <- lists:seq(1, N)],
    {ok, #{sup => Sup, workers => Ws, waiting => queue:new(), bug => Bug,
           monitors => ets:new(monitors, [private])}};
init(worker) ->
    {ok, idle}.

handle_call(checkout, {C, _} = From, #{workers := Ws, waiting := Q, monitors := M} = S) ->
    case Ws of
        [W | Rest] ->
            MRef = monitor(process, C),
            true = ets:insert_new(M, {W, MRef}),
            {reply, W, S#{workers := Rest}};
        [] ->
            {noreply, S#{waiting := queue:in(From, Q)}}
    end;
handle_call(ping, _From, idle) ->
    {reply, pong, idle}.

handle_cast({checkin, W}, #{workers := Ws, waiting := Q, monitors := M, bug := Bug} = S) ->
    [{W, MRef}] = ets:lookup(M, W),
    demonitor(MRef, [flush]),
    Bug orelse ets:delete(M, W),
    case queue:out(Q) of
        {{value, {C, _} = From}, Q2} ->
            MRef2 = monitor(process, C),
            true = ets:insert(M, {W, MRef2}),
            gen_server:reply(From, W),
            {noreply, S#{waiting := Q2}};
        {empty, _} ->
            {noreply, S#{workers := [W | Ws]}}
    end.

handle_info(_, S) -> {noreply, S}.
