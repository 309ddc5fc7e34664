%% @doc Soundness evidence for the reductions of issue 18 (partial-order
%% reduction, `reduction', and symmetry reduction, `symmetry'): every
%% differential test program and every example is checked with the
%% reductions off and on, and must get the same verdicts; a violation found
%% with a reduction on must be a real run of the program, which
%% `mcerlang:replay/1,2' replays both with the counterexample's own options
%% and with the reductions off.
%%
%% The modes: `off' (`reduction => false, symmetry => false', the full
%% state space), `por' (`reduction => true, symmetry => false'), `auto'
%% (`reduction => true, symmetry => auto', the default: symmetry until the
%% program observes pid order, every program) and, for the programs marked
%% `sym' in `programs/0', `sym' (`reduction => true, symmetry => true').  A program is marked `sym' when it never orders pids
%% (no comparison, sort or ordered key of pids, no map keyed by pids whose
%% iteration order would show their order): symmetry reduction renames
%% pids, which is only exact for programs whose behaviour does not depend
%% on which pid is which beyond equality.
%%
%% What is compared (the observations of a program in one mode):
%% <ul>
%% <li>`deadlock': the verdict of `property => [deadlock]' (ok or deadlock);</li>
%% <li>`exits': every abnormal exit reason reachable, over all interleavings:
%%     `property => [abnormal_exit]', each reason found added to
%%     `treat_as_normal' and the check run again until it holds (the way
%%     the differential harnesses collect a program's results).  Each
%%     round asks a safety question ("an abnormal exit not among these"),
%%     which a sound reduction answers as the full search does, so the
%%     sets must be equal.  Under `sym' the pids in reasons are erased
%%     first: the representative of an orbit may be another permutation of
%%     the same exits;</li>
%% <li>for programs checked with monitors, invariants or LTL, `verdict':
%%     the check's verdict with the program's options (ok, or the
%%     violation's kind).</li>
%% </ul>
%% Every check gets small limits (`?LIMITS'); a program with an observation
%% inconclusive in some mode is skipped (printed, and not counted as
%% compared); `coverage' requires that most programs were compared.
-module(mce_reduction_tests).
-include_lib("eunit/include/eunit.hrl").

-export([programs/0, same_verdicts/1, same_verdicts/2, same_verdicts_in/2, observe/3]).
-export_type([program/0]).

-define(LIMITS, #{max_states => 100000, max_time => 10000, progress => false}).
-define(MODES, #{off => #{reduction => false, symmetry => false},
                 por => #{reduction => true, symmetry => false},
                 auto => #{reduction => true, symmetry => auto},
                 sym => #{reduction => true, symmetry => true},
                 %% the parallel search's own cycle proviso (mce_workers_tests)
                 par => #{reduction => true, symmetry => auto, workers => 2}}).
%% At most this many distinct abnormal exits are collected per program.
-define(MAX_EXITS, 16).
%% The share of programs that must be compared (not skipped).
-define(MIN_COMPARED, 0.9).

-type mode() :: off | por | auto | sym | par | {cluster, [node()]}.
-type program() :: {string(), mcerlang:entry(), map(), sym | no_sym}.

warm_up_test_() ->
    {timeout, 300,
     fun() ->
             [mce_translate:ensure(M)
              || M <- [tprog, tprog_helper, tprog_ets, tprog_otp, tprog_sup, tprog_door,
                       tprog_event, tprog_gs_names, tprog_gs2, tprog_statem, tprog_sup2,
                       tprog_event2, tprog_plib, tprog_hunt1, tprog_hunt2, tprog_hunt3,
                       tprog_hunt4, tprog_hunt5, tprog_hunt6, tprog_hunt7, tprog_hunt8,
                       tprog_hunt9, tprog_hunt_kv, tprog_hunt_otp, tprog_props, tprog_ltl,
                       client_server, counter_server, locker, door, sup_worker, pingpong,
                       dining, racy_child, world_hello, spawn_chain, go_workers,
                       gen_server, gen_statem, supervisor, gen_event]],
             [mce_translate:ensure_library(L) || L <- [lists, maps, dict]]
     end}.

same_verdicts_test_() ->
    {setup,
     fun() -> ets:new(?MODULE, [public, set]) end,
     fun(Tab) -> ets:delete(Tab) end,
     fun(Tab) ->
             [{Label, {timeout, 120, fun() -> compare(Tab, P) end}}
              || {Label, _, _, _} = P <- programs()]
                 ++ [{"coverage", fun() -> coverage(Tab) end}]
     end}.

%% The issue's two new models (examples/spawn_chain.erl, go_workers.erl)
%% are ordinary Erlang programs that end with `ok' on the real VM; the full
%% search of the chain has 2^(N+2) states (each of the N processes before
%% or after its step to its receive, and the root's two), and a reduced
%% search never more than the full one.
new_models_test_() ->
    {timeout, 120,
     fun() ->
             ?assertEqual(ok, real(spawn_chain, start, [100])),
             ?assertEqual(ok, real(go_workers, start, [16])),
             Off = maps:merge(maps:get(off, ?MODES), ?LIMITS),
             [?assertMatch({N, {ok, #{states := S}}} when S =:= 1 bsl (N + 2),
                           {N, mcerlang:check({spawn_chain, start, [N]}, Off)})
              || N <- [1, 4, 8]],
             [begin
                  {ok, #{states := Full}} = mcerlang:check(Entry, Off),
                  {ok, #{states := Reduced}} = mcerlang:check(Entry, maps:merge(?LIMITS, Mode)),
                  ?assert(Reduced =< Full)
              end || Entry <- [{spawn_chain, start, [8]}, {go_workers, start, [6]},
                               {client_server, start, [3, 2]}],
                     Mode <- [maps:get(por, ?MODES), maps:get(auto, ?MODES), maps:get(sym, ?MODES)]]
     end}.

real(M, F, A) ->
    {Pid, Ref} = spawn_monitor(fun() -> exit({result, apply(M, F, A)}) end),
    receive {'DOWN', Ref, process, Pid, {result, R}} -> R
    after 10000 -> timeout
    end.

%%--------------------------------------------------------------------
%% The comparison
%%--------------------------------------------------------------------

compare(Tab, {Label, _, _, _} = Program) ->
    Status = same_verdicts(Program),
    ets:insert(Tab, {Label, Status}),
    case Status of
        compared -> ok;
        {skipped, Inconclusive} -> ?debugFmt("~s skipped: inconclusive in ~p", [Label, Inconclusive])
    end.

%% @doc Checks one program in every mode and asserts that the verdicts
%% agree and that the counterexamples of the reduced modes replay;
%% `{skipped, [{Mode, Why}]}' when a check was inconclusive.
-spec same_verdicts(program()) -> compared | {skipped, [{mode(), term()}]}.
same_verdicts(Program) ->
    same_verdicts(Program, []).

%% @doc The same, in these modes too.
-spec same_verdicts(program(), [mode()]) -> compared | {skipped, [{mode(), term()}]}.
same_verdicts({_, _, _, Sym} = Program, Extra) ->
    same_verdicts_in(Program, case Sym of
                                  sym -> [por, auto, sym];
                                  no_sym -> [por, auto]
                              end ++ Extra).

%% @doc The same, in these modes only (and `off', the reference).
-spec same_verdicts_in(program(), [mode()]) -> compared | {skipped, [{mode(), term()}]}.
same_verdicts_in({Label, Entry, Opts, _Sym}, Modes0) ->
    Modes = [off | Modes0],
    Observed = [{Mode, observe(Entry, Opts, Mode)} || Mode <- Modes],
    case [{Mode, Why} || {Mode, {inconclusive, Why}} <- Observed] of
        [] ->
            {off, Off} = lists:keyfind(off, 1, Observed),
            %% {Label, Mode} on both sides, so that a failure names them
            [?assertEqual({Label, Mode, comparable(Mode, Off)}, {Label, Mode, comparable(Mode, Obs)})
             || {Mode, Obs} <- Observed, Mode =/= off],
            [replays(Label, Mode, Cex) || {Mode, Obs} <- Observed, Mode =/= off,
                                          Cex <- counterexamples(Obs)],
            compared;
        Inconclusive ->
            {skipped, Inconclusive}
    end.

coverage(Tab) ->
    All = ets:tab2list(Tab),
    Skipped = [{L, Why} || {L, {skipped, Why}} <- All],
    Compared = length(All) - length(Skipped),
    ?debugFmt("~b programs compared, ~b skipped: ~p", [Compared, length(Skipped), Skipped]),
    %% a program whose comparison failed is not in the table: it counts
    %% against the skipped, not here
    ?assert(length(Skipped) =< (1 - ?MIN_COMPARED) * length(programs())).

%% @doc What `Entry' shows in one mode: `{inconclusive, Why}' if a check
%% hit a limit, else a map of observations.  Each observation keeps the
%% counterexamples it met (dropped by comparable/2 before comparing).
-spec observe(mcerlang:entry(), map(), mode()) -> {inconclusive, term()} | map().
observe(Entry, Opts, Mode) ->
    Run = maps:merge(maps:merge(Opts, ?LIMITS), mode_options(Mode)),
    try
        case has_property_options(Opts) of
            true -> #{verdict => verdict(Entry, Run)};
            false -> #{deadlock => verdict(Entry, Run#{property => [deadlock]}),
                       exits => exits(Entry, Run#{property => [abnormal_exit]})}
        end
    catch throw:{inconclusive, Why} -> {inconclusive, Why}
    end.

%% A distributed search (mce_cluster_tests): the reductions on, over
%% these nodes.
mode_options({cluster, Nodes}) -> #{reduction => true, symmetry => auto, cluster => Nodes};
mode_options(Mode) -> maps:get(Mode, ?MODES).

has_property_options(Opts) ->
    maps:is_key(ltl, Opts) orelse maps:is_key(monitor, Opts) orelse maps:is_key(invariant, Opts).

verdict(Entry, Run) ->
    case mcerlang:check(Entry, Run) of
        {ok, _} -> {ok, []};
        {error, #{violation := V} = Cex} -> {kind(V), [Cex]};
        {inconclusive, Why, _} -> throw({inconclusive, short(Why)})
    end.

kind({monitor, Module, _}) -> {monitor, Module};
kind(V) when is_tuple(V) -> element(1, V);
kind(V) -> V.

%% Every abnormal exit reason, as a sorted list, with the counterexamples.
exits(Entry, Run) ->
    Normal = maps:get(treat_as_normal, Run, [normal, shutdown]),
    exits(Entry, Run, Normal, [], []).

exits(Entry, Run, Normal, Reasons, Cexs) when length(Reasons) < ?MAX_EXITS ->
    case mcerlang:check(Entry, Run#{treat_as_normal => Normal ++ Reasons}) of
        {ok, _} -> {lists:sort(Reasons), Cexs};
        {error, #{violation := {abnormal_exit, _Pid, Reason}} = Cex} ->
            exits(Entry, Run, Normal, [Reason | Reasons], [Cex | Cexs]);
        {inconclusive, Why, _} -> throw({inconclusive, short(Why)})
    end;
exits(_Entry, _Run, _Normal, _Reasons, _Cexs) ->
    throw({inconclusive, {more_than, ?MAX_EXITS, abnormal_exits}}).

counterexamples(Obs) ->
    lists:append([Cexs || {_, Cexs} <- maps:values(Obs)]).

%% The observations without their counterexamples; under symmetry the
%% exit reasons with their pids erased.
comparable(Mode, Obs) ->
    Renamed = lists:member(Mode, [sym, auto, par]) orelse is_tuple(Mode),
    maps:map(fun(exits, {Reasons, _}) when Renamed ->
                     lists:usort([erase_pids(R) || R <- Reasons]);
                (_, {Value, _}) -> Value
             end, Obs).

erase_pids(P) when is_pid(P) -> pid;
erase_pids(T) when is_tuple(T) -> list_to_tuple(erase_pids(tuple_to_list(T)));
erase_pids([H | T]) -> [erase_pids(H) | erase_pids(T)];
erase_pids(M) when is_map(M) -> maps:from_list(erase_pids(maps:to_list(M)));
erase_pids(X) -> X.

%% A counterexample found with a reduction on is a real run: it replays
%% with its own options and with the reductions off.
replays(Label, Mode, Cex) ->
    ?assertMatch({Label, Mode, {ok, _}}, {Label, Mode, mcerlang:replay(Cex)}),
    ?assertMatch({Label, Mode, {ok, _}}, {Label, Mode, mcerlang:replay(Cex, maps:get(off, ?MODES))}).

short(Term) ->
    case Term of
        {deadlock_not_checked, _} -> deadlock_not_checked;
        _ -> Term
    end.

%%--------------------------------------------------------------------
%% The programs
%%--------------------------------------------------------------------

%% @doc Every program compared: {Label, Entry, Options, sym | no_sym}.
-spec programs() -> [program()].
programs() ->
    translate_diffs() ++ otp_diffs() ++ ets_diffs() ++ hunts() ++ hunt_bugs()
        ++ properties() ++ examples().

%% test/mce_translate_tests.erl: deterministic programs of tprog.
translate_diffs() ->
    [{lists:flatten(io_lib:format("tprog:~s~p", [F, A])), {tprog, F, A}, #{}, no_sym}
     || {F, A} <- mce_translate_tests:diff_cases()].

%% test/mce_otp_tests.erl and mce_otp_diff_tests.erl (OTP behaviours).
otp_diffs() ->
    [{label(M, F), {M, F, []}, #{timeouts => when_idle}, no_sym}
     || {M, F} <- mce_otp_tests:scenarios()
            ++ [{M, F} || {M, F, _} <- mce_otp_diff_tests:scenarios()]].

%% test/mce_ets_diff_tests.erl.
ets_diffs() ->
    [{label(tprog_ets, F), {tprog_ets, F, []}, #{timeouts => when_idle}, no_sym}
     || F <- mce_ets_diff_tests:sweeps() ++ mce_ets_diff_tests:scenarios()].

%% test/mce_hunt_tests.erl: programs compared with the real VM.
hunts() ->
    [{label(M, F), {M, F, []}, #{timeouts => T}, no_sym}
     || {M, Fs, T} <- mce_hunt_tests:same_as_vm(), F <- Fs].

%% test/mce_hunt_tests.erl: the programs with real bugs, with the options
%% their tests use.
hunt_bugs() ->
    [{label(M, F), {M, F, []}, Opts, no_sym}
     || {M, F, Opts} <- [{tprog_hunt1, lost_update_bug, #{}},
                         {tprog_hunt1, bank, #{}},
                         {tprog_hunt1, late_message_bug, #{}},
                         {tprog_hunt1, philosophers_bug, #{}},
                         {tprog_hunt1, link_crash_bug, #{}},
                         {tprog_hunt1, register_race_bug, #{}},
                         {tprog_hunt1, whereis_race_bug, #{}},
                         {tprog_hunt3, link_chain_bug, #{}},
                         {tprog_hunt3, ets_lost_update_bug, #{}},
                         {tprog_hunt3, ets_lost_update_slow, #{}},
                         {tprog_hunt3, counters_race, #{}},
                         {tprog_hunt_kv, racy_incr, #{timeouts => when_idle}},
                         {tprog_hunt5, split_request_bug, #{granularity => small}},
                         {tprog_hunt9, call_cycle_bug, #{timeouts => when_idle}},
                         {tprog_hunt9, typo_bug, #{}},
                         {tprog_hunt9, whereis_then_send_bug, #{timeouts => when_idle}}]]
    ++ [{label(tprog_hunt8, F) ++ " two nodes", {tprog_hunt8, F, []},
         #{nodes => [a@h, b@h], timeouts => when_idle}, no_sym}
        || F <- [registered_remote, ping_pong_nodes, remote_monitor, remote_link_trap]].

%% test/mce_property_tests.erl and mce_ltl_check_tests.erl: monitors,
%% invariants and LTL (the reduction must keep the verdict of a
%% stutter-invariant formula, or not be used).
properties() ->
    Final = fun(#{processes := Ps}) -> [V || #{props := Props} <- Ps, {final, V} <- Props] end,
    Done = #{done => {prop, done}},
    PingPong = #{pong => {probe, pong}, stopped => {prop, stopped}},
    [{"props:mutex(true) monitor", {tprog_props, mutex, [true]}, #{monitor => {tprog_props, 10}}, no_sym},
     {"props:mutex(false) monitor", {tprog_props, mutex, [false]}, #{monitor => {tprog_props, 10}}, no_sym},
     {"props:mutex(true) monitor counts", {tprog_props, mutex, [true]}, #{monitor => {tprog_props, 1}},
      no_sym},
     {"props:counter_race invariant", {tprog_props, counter_race, []},
      #{invariant => fun(V) -> lists:all(fun(X) -> X =:= 2 end, Final(V)) end}, no_sym},
     {"ltl:spin <> done weak", {tprog_ltl, spin_and_work, []}, #{ltl => "<> done", predicates => Done},
      no_sym},
     {"ltl:spin <> done unfair", {tprog_ltl, spin_and_work, []},
      #{ltl => "<> done", predicates => Done, fairness => none}, no_sym},
     {"ltl:never_done <> done", {tprog_ltl, never_done, []}, #{ltl => "<> done", predicates => Done},
      no_sym},
     {"ltl:ping_pong [](pong -> !stopped)", {tprog_ltl, ping_pong, [2]},
      #{ltl => "[] (pong -> !stopped)", predicates => PingPong}, no_sym},
     {"ltl:ping_pong [] !pong", {tprog_ltl, ping_pong, [2]},
      #{ltl => "[] !pong", predicates => PingPong}, no_sym},
     {"ltl:locker(aEaS,forever)", {locker, start, [[{a, exclusive}, {a, shared}], forever]},
      #{ltl => "forall C: [](requested(C) -> <> holding(C))",
        predicates => #{requested => fun(C) -> {probe, request, {C, '_', '_'}} end,
                        holding => fun(C) -> {prop, {holding, C, '_', '_'}} end}}, no_sym}].

%% examples/: the bench models at small sizes, the demo's and tutorial's.
%% Marked sym: client_server's clients, counter_server's clients (funs of
%% one closure) and go_workers' workers; the rest number or order their
%% processes (locker keys maps by pid, dining numbers forks, the chain's
%% processes carry their index).
examples() ->
    [{"client_server(3,2)", {client_server, start, [3, 2]}, #{}, sym},
     {"client_server(2,3)", {client_server, start, [2, 3]}, #{}, sym},
     {"client_server(3,2) small", {client_server, start, [3, 2]}, #{granularity => small}, sym},
     {"counter_server(2,2)", {counter_server, start, [2, 2]}, #{timeouts => when_idle}, sym},
     {"counter_server(3,2)", {counter_server, start, [3, 2]}, #{timeouts => when_idle}, sym},
     {"tprog_dead:dropped(3,1)", {tprog_dead, dropped, [3, 1]}, #{}, sym},
     {"tprog_dead:lost_total(2,2)", {tprog_dead, lost_total, [2, 2]}, #{timeouts => when_idle}, sym},
     {"tprog_dead:used(2,2)", {tprog_dead, used, [2, 2]}, #{timeouts => when_idle}, sym},
     {"tprog_dead:selective(1)", {tprog_dead, selective, [1]}, #{}, no_sym},
     {"counter_server(3,1) small", {counter_server, start, [3, 1]},
      #{timeouts => when_idle, granularity => small}, sym},
     {"counter_server:start_racy(2,1)", {counter_server, start_racy, [2, 1]}, #{timeouts => when_idle},
      sym},
     {"counter_server:start_racy(3,1)", {counter_server, start_racy, [3, 1]}, #{timeouts => when_idle},
      sym},
     {"go_workers(4)", {go_workers, start, [4]}, #{}, sym},
     {"go_workers(3) small", {go_workers, start, [3]}, #{granularity => small}, sym},
     {"spawn_chain(6)", {spawn_chain, start, [6]}, #{}, no_sym},
     {"spawn_chain(4) small", {spawn_chain, start, [4]}, #{granularity => small}, no_sym},
     {"locker(aEaS,1)", {locker, start, [[{a, exclusive}, {a, shared}], 1]},
      #{timeouts => when_idle}, no_sym},
     {"locker(aEaEaS,1)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
      #{timeouts => when_idle}, no_sym},
     {"locker_buggy(aEaEaS,1)", {locker, start_buggy, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
      #{timeouts => when_idle}, no_sym},
     {"door(2)", {door, start, [2]}, #{treat_as_normal => [normal, pushed_locked_door]}, no_sym},
     {"sup_worker(2,2)", {sup_worker, start, [2, 2]}, #{timeouts => when_idle}, no_sym},
     {"pingpong(3)", {pingpong, start, [3]}, #{}, no_sym},
     {"dining(3)", {dining, start, [3]}, #{}, no_sym},
     {"dining(2) small", {dining, start, [2]}, #{granularity => small}, no_sym},
     {"racy_child", {racy_child, start, []}, #{}, no_sym},
     {"racy_child small", {racy_child, start, []}, #{granularity => small}, no_sym},
     {"world_hello one node", {world_hello, worldhello, [n1@h, n1@h, n1@h]}, #{nodes => [n1@h]}, no_sym},
     {"world_hello three nodes", {world_hello, worldhello, [n1@h, n2@h, n3@h]},
      #{nodes => [n1@h, n2@h, n3@h]}, no_sym}].

label(M, F) ->
    atom_to_list(M) ++ ":" ++ atom_to_list(F).
