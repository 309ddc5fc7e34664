%% A parent starts a worker, then a configurer, then a client.  The worker
%% expects its configuration before any job.  On the real VM the run queue
%% usually runs the configurer before the client and the result is 42; on
%% the interleaving where the client's job arrives first the worker crashes
%% with a function_clause and takes the linked parent with it.
-module(racy_child).
-export([start/0, worker/0, configurer/1, client/2]).

start() ->
    Worker = spawn_link(?MODULE, worker, []),
    spawn(?MODULE, configurer, [Worker]),
    spawn(?MODULE, client, [Worker, self()]),
    receive
        {result, R} -> R
    end.

configurer(Worker) ->
    Worker ! {config, 2}.

client(Worker, ReplyTo) ->
    Worker ! {job, 21, ReplyTo}.

worker() ->
    receive
        Msg -> handle_first(Msg)
    end.

handle_first({config, Factor}) ->
    receive
        {job, X, ReplyTo} -> ReplyTo ! {result, X * Factor}
    end.
