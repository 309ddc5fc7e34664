%% @doc The abstract mode's differential soundness test (issue 21, "Done
%% when"): on programs whose concrete state space is finite, the abstract
%% verdict is never `ok' where the concrete one is a violation.
%%
%% The programs are the ones the reduction tests check
%% (`mce_reduction_tests:programs/0': the translator's differential cases,
%% the OTP and ETS scenarios, the bug hunts, the property and LTL programs,
%% the examples), the issue's abstraction examples with a finite concrete
%% space, and test/tprog_abs_sound.erl, whose violations lie behind something
%% the abstraction cannot decide (a receive match, a guard, a comparison, a
%% key, a prop).  Each is checked once concretely, then under every
%% abstraction of `?ABSTRACTIONS', within `?LIMITS'.  What must hold:
%% <ul>
%% <li>soundness: a concrete `{error, _}' is never an abstract `{ok, _}';</li>
%% <li>the converse: an abstract `{error, Cex}' is a real violation: the
%%     concrete check (when it finished) is a violation too, and
%%     `mcerlang:replay(Cex)' reproduces the counterexample.</li>
%% </ul>
%% A program the interpreter refuses (`{mcerlang, {abstraction_unsupported,
%% Construct, Where}}', or a call it does not model) is sound by default (no
%% verdict is not `ok'); those are counted by construct and printed, and at
%% least ?MIN_RUN programs must run in every abstraction.  The table of
%% verdict pairs (concrete, abstract) is printed per abstraction.
-module(mce_abs_soundness_tests).
-include_lib("eunit/include/eunit.hrl").

-export([programs/0, verdict_pair/3]).

-define(ABSTRACTIONS, [even_odd, sign, [{depth, 2}], [{depth, 1}], [{chain, 1}],
                       [even_odd, {depth, 3}]]).
%% Concrete checks: the programs are finite and small; a concrete check
%% that hits a limit leaves its program out of the soundness comparison.
-define(CONCRETE, #{max_states => 100000, max_time => 2000, progress => false,
                    memory => 500000000}).
%% Abstract checks (their concrete replay gets the same budget): an
%% abstract space can be much larger than the concrete one.
-define(LIMITS, #{max_states => 20000, max_time => 400, progress => false,
                  memory => 500000000}).
-define(MIN_RUN, 30).
%% Problems known: {Abstraction, Label, unsound | abstract_error_concrete_ok
%% | not_replayed}.  The list is exact: a new problem fails the test, and
%% so does a problem fixed, until its entry is taken off.  Every problem
%% this test found when it was written is fixed (mce_abs_eval, the C
%% search): a receive whose message may match is answered maybe and a
%% state with only such receives may be a deadlock; a modelled call whose
%% target, key or code the abstraction lost stops the check instead of
%% raising badarg; apply runs the interpreter; invariants and predicate
%% funs on abstract views are judged by their own code, three-valued;
%% probe and step predicates must match abstract data with '_'.
-define(KNOWN, []).

-type verdict() :: ok | error | possibly_spurious | inconclusive | {refused, term()}.

%% The programs: {Label, Entry, Options}.
-spec programs() -> [{string(), mcerlang:entry(), map()}].
programs() ->
    [{Label, Entry, Opts} || {Label, Entry, Opts, _Sym} <- mce_reduction_tests:programs()]
        ++ [{"abs_list(6) <> empty", {abs_list, start, [6]},
             #{ltl => "<> empty", predicates => #{empty => {prop, empty}}}}]
        ++ [{"abs_props:" ++ atom_to_list(F) ++ " <> p42", {abs_props, F, []},
             #{ltl => "<> p42", predicates => #{p42 => {prop, 42}}}}
            || F <- [p42, p84, p21]]
        ++ [{"tprog_abs_sound:" ++ atom_to_list(F), {tprog_abs_sound, F, []}, #{property => [abnormal_exit]}}
            || F <- [past_first, only_one, after_zero, case_value, compare, head_guard, div_zero,
                     caught, equal_values, list_sum, element_index, lc_filter, nested_call,
                     spawned_args, receive_payload, dict_value, repeated_var, bound_in_receive,
                     ets_key, dict_key, list_length, deep_recursion, catch_expr, after_timeout,
                     exit_signal, guard_on_cut, abstract_after, send_after_abstract, float_compare,
                     throw_through_frames]]
        ++ [{"tprog_abs_sound:deadlock_behind", {tprog_abs_sound, deadlock_behind, []}, #{property => [deadlock]}},
            %% the timer's apply must run the model's code, not the real module's
            {"tprog:apply_later abnormal_exit", {tprog, apply_later, []}, #{property => [abnormal_exit]}}]
        ++ [{"tprog_abs_sound:exit_reason", {tprog_abs_sound, exit_reason, []},
             #{property => [abnormal_exit], treat_as_normal => [normal, 1]}},
            {"tprog_abs_sound:count_to(3) invariant", {tprog_abs_sound, count_to, [3]},
             #{invariant => fun(View) -> not lists:member({count, 3}, props(View)) end}},
            {"tprog_abs_sound:count_to(3) [] !three", {tprog_abs_sound, count_to, [3]},
             #{ltl => "[] !three", predicates => #{three => {prop, {count, 3}}}}},
            {"tprog_abs_sound:count_to(3) [] !three (fun)", {tprog_abs_sound, count_to, [3]},
             #{ltl => "[] !three",
               predicates => #{three => fun(View) -> lists:member({count, 3}, props(View)) end}}},
            {"tprog_abs_sound:probe_count(3) [] !three", {tprog_abs_sound, probe_count, [3]},
             #{ltl => "[] !three", predicates => #{three => {probe, count, 3}}}}].

props(#{processes := Ps}) -> [P || #{props := Props} <- Ps, P <- Props].

soundness_test_() ->
    {setup,
     fun() ->
             Tab = ets:new(?MODULE, [public, set]),
             warm_up(),
             Tab
     end,
     fun(Tab) -> ets:delete(Tab) end,
     fun(Tab) ->
             [{"concrete verdicts", {timeout, 120, fun() -> concrete(Tab) end}}]
                 ++ [{lists:flatten(io_lib:format("abstraction ~w", [Abs])),
                      {timeout, 120, fun() -> abstraction(Tab, Abs) end}}
                     || Abs <- ?ABSTRACTIONS]
                 ++ [{"summary", fun() -> summary(Tab) end}]
     end}.

warm_up() ->
    Modules = lists:usort([M || {_, {M, _, _}, _} <- programs()]),
    [mce_translate:ensure(M) || M <- Modules],
    ok.

%% Every program's concrete verdict, once.
concrete(Tab) ->
    [ets:insert(Tab, {{concrete, Label}, check(Entry, maps:merge(Opts, ?CONCRETE))})
     || {Label, Entry, Opts} <- programs()],
    ok.

abstraction(Tab, Abs) ->
    Problems =
        lists:append(
          [begin
               [{_, Concrete}] = ets:lookup(Tab, {concrete, Label}),
               Abstract = check(Entry, maps:merge(Opts, ?LIMITS#{abstraction => Abs})),
               {Pair, Problem} = verdict_pair(Label, Concrete, Abstract),
               ets:insert(Tab, {{pair, Abs, Label}, Pair}),
               Problem
           end || {Label, Entry, Opts} <- programs()]),
    %% a known problem still there; one fixed is taken off ?KNOWN
    Known = [{L, What} || {A, L, What} <- ?KNOWN, A =:= Abs],
    ?assertEqual({Abs, lists:sort(Known)}, {Abs, lists:sort(Problems)}).

%% @doc The two directions for one program: the pair of verdicts
%% (concrete, abstract) and the problems found ([] when sound).
-spec verdict_pair(string(), term(), term()) -> {{verdict(), verdict()}, [{string(), atom()}]}.
verdict_pair(Label, Concrete, Abstract) ->
    C = verdict(Concrete),
    A = verdict(Abstract),
    Problems =
        case {C, Abstract} of
            %% soundness: a real violation is never proved absent
            {error, {ok, _}} -> [{Label, unsound}];
            %% the converse: a violation the abstract mode reports is real
            {ok, {error, _}} -> [{Label, abstract_error_concrete_ok}];
            {_, {error, Cex}} ->
                case mcerlang:replay(Cex) of
                    {ok, _} -> [];
                    _ -> [{Label, not_replayed}]
                end;
            _ -> []
        end,
    {{C, A}, Problems}.

verdict({ok, _}) -> ok;
verdict({error, #{violation := _}}) -> error;
verdict({inconclusive, {possibly_spurious, _}, _}) -> possibly_spurious;
verdict({inconclusive, _, _}) -> inconclusive;
verdict({refused, Why}) -> {refused, Why}.

%% A check; the interpreter's refusals and its own failures (both end the
%% check with an error, never with ok) as {refused, Why}.
check(Entry, Opts) ->
    try mcerlang:check(Entry, Opts)
    catch error:{mcerlang, {abstraction_unsupported, Construct, _Where}} ->
            {refused, Construct};
          error:{mcerlang, {unsupported_call, MFA, _Where, _Why}} ->
            {refused, {unsupported_call, MFA}};
          error:{mcerlang, {runaway_step, _Pid, _Where, Limit}} ->
            {refused, {runaway_step, Limit}};
          error:{mcerlang, Reason} when is_tuple(Reason) ->
            {refused, {element(1, Reason), element(2, Reason)}}
    end.

%% The table: per abstraction, how many programs per verdict pair, and
%% what the interpreter refused.
summary(Tab) ->
    Pairs = [{Abs, Pair} || {{pair, Abs, _Label}, Pair} <- ets:tab2list(Tab)],
    [begin
         Mine = [P || {A, P} <- Pairs, A =:= Abs],
         Counts = count([case P of {C, {refused, _}} -> {C, refused}; _ -> P end || P <- Mine]),
         Refused = count([Why || {_, {refused, Why}} <- Mine]),
         Run = length([P || {_, A} = P <- Mine, not is_tuple(A)]),
         %% One line per abstraction (the refusals by kind only).
         Kinds = count([element(1, Why) || {Why, N} <- Refused, is_tuple(Why), _ <- lists:seq(1, N)]
                       ++ [Why || {Why, N} <- Refused, is_atom(Why), _ <- lists:seq(1, N)]),
         ?debugFmt("~w: ~b run, pairs (concrete, abstract) ~0p; refused by kind ~0p",
                   [Abs, Run, Counts, Kinds]),
         ?assert(Run >= ?MIN_RUN)
     end || Abs <- ?ABSTRACTIONS],
    ok.

count(Xs) ->
    lists:sort(maps:to_list(lists:foldl(fun(X, M) -> maps:update_with(X, fun(N) -> N + 1 end, 1, M) end,
                                        #{}, Xs))).
