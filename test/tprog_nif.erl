-module(tprog_nif).
-on_load(init/0).
-export([init/0, start/0]).
%% Stands for a module with native code: its functions cannot be modelled.
init() -> ok.
start() -> ok.
