%% @doc A counter in an ETS table, for the PropEr example (examples/proper/
%% racy_counter_statem.erl).  incr/1 returns the counter's new value.  In
%% `racy' mode it reads the value and writes back its successor (a lookup,
%% then an insert), so two processes incrementing at once may both read
%% the same value and return the same result.  The window is a few
%% instructions wide: on the VM a parallel test shows it rarely, under
%% mcerlang (where a second ETS access is a scheduling point) every
%% interleaving is tried.  In `fixed' mode ets:update_counter/3 increments
%% atomically.
-module(racy_counter).

-export([start_link/1, incr/1, read/1]).

-type counter() :: {racy | fixed, ets:tid()}.

%% The table belongs to the caller (public: any process may increment).
-spec start_link(racy | fixed) -> counter().
start_link(Mode) when Mode =:= racy; Mode =:= fixed ->
    T = ets:new(racy_counter, [public, set]),
    true = ets:insert(T, {n, 0}),
    {Mode, T}.

-spec incr(counter()) -> pos_integer().
incr({racy, T}) ->
    [{n, V}] = ets:lookup(T, n),
    true = ets:insert(T, {n, V + 1}),
    V + 1;
incr({fixed, T}) ->
    ets:update_counter(T, n, 1).

-spec read(counter()) -> non_neg_integer().
read({_, T}) ->
    [{n, V}] = ets:lookup(T, n),
    V.
