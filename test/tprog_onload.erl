%% @doc A module with an on_load function, whose running in the checker's
%% VM would be checked code reaching the host
%% (mce_sandbox_tests:on_load_never_runs_test/0): it marks the VM it runs
%% in, which the test looks at.
-module(tprog_onload).
-on_load(mark/0).
-export([start/0, mark/0]).

mark() ->
    persistent_term:put(tprog_onload_ran, true),
    ok.

start() -> ok.
