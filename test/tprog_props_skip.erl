%% @doc A monitor that prunes every path once a prop {final, _} is reached
%% (for mce_property_tests).
-module(tprog_props_skip).
-behaviour(mcerlang_monitor).
-export([init/1, state_change/3]).

init([]) -> {ok, none};
init(Other) -> {error, Other}.

state_change(#{processes := Ps}, S, _Step) ->
    case [x || #{props := [{final, _}]} <- Ps] of
        [] -> {ok, S};
        _ -> skip
    end.
