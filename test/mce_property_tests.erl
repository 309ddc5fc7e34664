%% Properties beyond the built-in ones (issue 6, item 3): props, probes,
%% safety monitors (mcerlang_monitor) and invariants over the state view.
-module(mce_property_tests).
-include_lib("eunit/include/eunit.hrl").

%% A monitor sees the props: mutual exclusion holds with the lock server
%% and fails without it, with the prop in the counterexample's last state.
monitor_mutex_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_props, mutex, [true]},
                                         #{monitor => {tprog_props, 10}})),
    {error, Cex} = mcerlang:check({tprog_props, mutex, [false]}, #{monitor => {tprog_props, 10}}),
    ?assertMatch(#{violation := {monitor, tprog_props, {mutex_violated, [_, _]}}}, Cex),
    #{trace := Trace} = Cex,
    ?assertMatch(#{outcome := {prop, {in_cs, _}}}, lists:last(Trace)).

%% The monitor's state is part of the checked state: it counts probes.
monitor_state_counts_probes_test() ->
    ?assertMatch({ok, _}, mcerlang:check({tprog_props, mutex, [true]},
                                         #{monitor => {tprog_props, 2}})),
    ?assertMatch({error, #{violation := {monitor, tprog_props, {too_many_exits, 2}}}},
                 mcerlang:check({tprog_props, mutex, [true]}, #{monitor => {tprog_props, 1}})).

%% Invariants are funs over the view; a false one is a violation.
invariant_test() ->
    Final = fun(#{processes := Ps}) -> [V || #{props := Props} <- Ps, {final, V} <- Props] end,
    Two = fun(View) -> lists:all(fun(V) -> V =:= 2 end, Final(View)) end,
    {error, Cex} = mcerlang:check({tprog_props, counter_race, []}, #{invariant => Two}),
    ?assertMatch(#{violation := {invariant, _}}, Cex),
    ?assertMatch({ok, _}, mcerlang:check({tprog_props, counter_race, []},
                                         #{invariant => fun(V) -> Final(V) -- [1, 2] =:= [] end})),
    %% The view has the documented shape; the initial state is judged too,
    %% with step none.
    Shape = fun(#{processes := Ps, ether := [], nodes := [#{name := nonode@nohost, up := true}],
                  step := Step, probes := []}) ->
                    (Step =:= none orelse maps:get(kind, Step) =:= run) andalso
                    lists:all(fun(#{pid := P, node := nonode@nohost, name := undefined,
                                    status := S, mailbox := M, where := _, props := _}) ->
                                      is_pid(P) andalso is_list(M) andalso
                                          lists:member(S, [init, waiting, choosing]);
                                 (_) -> false
                              end, Ps);
               (_) -> false
            end,
    ?assertMatch({ok, _}, mcerlang:check({tprog_props, counter_race, []}, #{invariant => Shape})).

%% A monitor that returns skip prunes the path: fewer states than the whole
%% state space (monitors turn partial-order and symmetry reduction off, so
%% compare with the check without them).
skip_prunes_test() ->
    {ok, #{states := All}} = mcerlang:check({tprog_props, counter_race, []},
                                            #{reduction => false, symmetry => false}),
    {ok, #{states := Pruned}} = mcerlang:check({tprog_props, counter_race, []},
                                               #{monitor => {tprog_props_skip, []}}),
    ?assert(Pruned < All).

%% prop/1 and probe/2 run normally are the identity and ok.
outside_the_checker_test() ->
    ?assertEqual(7, mcerlang:prop(7)),
    ?assertEqual(ok, mcerlang:probe(a, b)),
    ?assertEqual(ok, tprog_props:mutex(true)).

%% A property that raises stops the check with an error naming it.
crashing_property_test() ->
    ?assertError({mcerlang, {property_crashed, {invariant, _}, {error, badarith, _}}},
                 mcerlang:check({tprog_props, counter_race, []},
                                #{invariant => fun(#{processes := Ps}) -> length(Ps) / 0 end})).

bad_options_test() ->
    ?assertError({mcerlang, {bad_option_value, monitor, _, _}},
                 mcerlang:check({tprog_props, mutex, [true]}, #{monitor => {lists, []}})),
    ?assertError({mcerlang, {bad_option_value, invariant, _, _}},
                 mcerlang:check({tprog_props, mutex, [true]}, #{invariant => [fun() -> true end]})),
    ?assertError({mcerlang, {bad_monitor_init, tprog_props_skip, _, _}},
                 mcerlang:check({tprog_props, mutex, [true]}, #{monitor => {tprog_props_skip, bad}})).
