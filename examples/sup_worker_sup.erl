%% @doc The supervisor of examples/sup_worker.erl.
-module(sup_worker_sup).
-behaviour(supervisor).
-export([init/1]).

-spec init(non_neg_integer()) -> {ok, {map(), [map()]}}.
init(Intensity) ->
    {ok, {#{strategy => one_for_one, intensity => Intensity, period => 3600},
          [#{id => worker, start => {sup_worker, start_worker, []}}]}}.
