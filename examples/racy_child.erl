%% A parent starts a worker and a configurer.  The worker expects its
%% configuration before any job; on the interleaving where the job arrives
%% first it crashes with a function_clause, and takes the linked parent
%% with it.  Most test runs never see it.
-module(racy_child).
-export([start/0, worker/0, configurer/1]).

start() ->
    Worker = spawn_link(?MODULE, worker, []),
    spawn(?MODULE, configurer, [Worker]),
    Worker ! {job, 21},
    receive
        {result, R} -> R
    end.

configurer(Worker) ->
    Worker ! {config, 2}.

worker() ->
    receive
        Msg -> handle_first(Msg)
    end.

handle_first({config, Factor}) ->
    receive
        {job, X} -> report(X * Factor)
    end.

report(Value) ->
    receive after 0 -> ok end,
    Value.
