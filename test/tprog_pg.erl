%% OTP's pg, translated as checked code (see mce_pg_tests): scopes, join,
%% leave, members, monitors, a member's death, two nodes.  Results name
%% pids by role, so that the real VM's and the model's compare.
-module(tprog_pg).

-export([basic/0, members/1, monitors/1, member_death/1, two_nodes/2]).

%% The default scope.
basic() ->
    {ok, _} = pg:start_link(),
    Self = self(),
    P = spawn(fun() -> receive stop -> ok end end),
    ok = pg:join(g, Self),
    ok = pg:join(g, [P, Self]),
    A = pg:get_members(g),
    B = pg:get_local_members(g),
    C = pg:which_groups(),
    ok = pg:leave(g, Self),
    D = pg:get_members(g),
    E = pg:leave(h, Self),
    exit({result, named([{Self, self}, {P, p}], {A, B, C, D, E, pg:get_members(none)})}).

%% A scope of its own: orders of members, groups, leaves, bad arguments.
members(Scope) ->
    {ok, _} = pg:start_link(Scope),
    Self = self(),
    [P1, P2] = [spawn(fun() -> receive stop -> ok end end) || _ <- [1, 2]],
    ok = pg:join(Scope, g1, [P1, P2, P1]),
    ok = pg:join(Scope, g2, P2),
    ok = pg:join(Scope, g1, Self),
    R1 = {pg:get_members(Scope, g1), pg:get_local_members(Scope, g1), lists:sort(pg:which_groups(Scope))},
    ok = pg:leave(Scope, g1, [P1]),
    R2 = {pg:get_members(Scope, g1), pg:leave(Scope, g2, [P1]), pg:leave(Scope, g2, [P2, P2])},
    R3 = {pg:get_members(Scope, g2), lists:sort(pg:which_groups(Scope)),
          catch_error(fun() -> pg:join(Scope, g1, not_a_pid) end)},
    exit({result, named([{Self, self}, {P1, p1}, {P2, p2}], [R1, R2, R3])}).

%% pg:monitor/2 and monitor_scope/1: the notifications of joins and leaves.
monitors(Scope) ->
    {ok, _} = pg:start_link(Scope),
    Self = self(),
    P = spawn(fun() -> receive stop -> ok end end),
    ok = pg:join(Scope, g, Self),
    {Ref, Initial} = pg:monitor(Scope, g),
    {SRef, SInitial} = pg:monitor_scope(Scope),
    ok = pg:join(Scope, g, P),
    ok = pg:join(Scope, h, P),
    ok = pg:leave(Scope, g, P),
    Got = [receive {Ref, What, G, Ps} -> {group, What, G, Ps} end || _ <- [1, 2]],
    SGot = [receive {SRef, What, G, Ps} -> {scope, What, G, Ps} end || _ <- [1, 2, 3]],
    D = {pg:demonitor(Scope, Ref), pg:demonitor(Scope, Ref), pg:demonitor(Scope, SRef)},
    ok = pg:join(Scope, g, P),
    Left = receive M -> {unexpected, M} after 0 -> none end,
    exit({result, named([{Self, self}, {P, p}], {Initial, SInitial, Got, SGot, D, Left})}).

%% A member that dies leaves its groups, and monitors hear of it.
member_death(Scope) ->
    {ok, _} = pg:start_link(Scope),
    Self = self(),
    P = spawn(fun() -> receive stop -> ok end end),
    ok = pg:join(Scope, g, [P, Self]),
    {Ref, _} = pg:monitor(Scope, g),
    exit(P, kill),
    Left = receive {Ref, leave, g, Ps} -> Ps end,
    exit({result, named([{Self, self}, {P, p}], {Left, pg:get_members(Scope, g),
                                                  pg:which_groups(Scope)})}).

%% Two nodes: a member on node B is seen from this node; if B crashes
%% (a fault), it leaves.
two_nodes(Scope, B) ->
    {ok, _} = pg:start_link(Scope),
    Self = self(),
    Remote = spawn(B, fun() ->
                              {ok, _} = pg:start(Scope),
                              ok = pg:join(Scope, g, self()),
                              Self ! {joined, self()},
                              receive stop -> ok end
                      end),
    {Ref, Initial} = pg:monitor(Scope, g),
    Seen = case Initial of
               [Remote] -> Remote;
               [] -> receive {Ref, join, g, [P]} -> P end
           end,
    Members = pg:get_members(Scope, g),
    After = receive {Ref, leave, g, Gone} -> {left, Gone} end,
    exit({result, named([{Remote, remote}], {Seen, Members, After, pg:get_members(Scope, g)})}).

catch_error(F) ->
    try F() catch error:E -> {error, E} end.

named(Names, T) when is_pid(T) ->
    case lists:keyfind(T, 1, Names) of
        {_, N} -> N;
        false -> T
    end;
named(Names, T) when is_list(T) -> [named(Names, X) || X <- T];
named(Names, T) when is_tuple(T) -> list_to_tuple(named(Names, tuple_to_list(T)));
named(Names, T) when is_map(T) -> maps:from_list(named(Names, maps:to_list(T)));
named(_Names, T) -> T.
