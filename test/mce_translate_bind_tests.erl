%% Translator fidelity (issue 14, items 2, 4 and 4b): scheduling points
%% inside funs run by helpers, variables bound in the arguments of calls
%% that may block, record defaults that run process code, closure entries
%% with comprehensions.  Differential: each program (test/tprog_helper_funs.erl, tprog_bind.erl, tprog_bind_bif.erl,
%% tprog_recdef.erl, tprog_fun_entry.erl)
%% runs on the real VM and under the checker, in both granularities, and
%% every interleaving must end the way the VM's run does.
-module(mce_translate_bind_tests).
-include_lib("eunit/include/eunit.hrl").

warm_up_test_() ->
    {timeout, 120,
     fun() ->
             [mce_translate:ensure(M) || M <- [tprog_helper_funs, tprog_bind, tprog_recdef,
                                               tprog_fun_entry, tprog_helper]]
     end}.

differential_test_() ->
    Cases = [{tprog_helper_funs, [helper_foreach, helper_sets_fold, helper_assert,
                                  helper_assert_fails, helper_immediate_fun, helper_passed_fun]},
             {tprog_bind, [send_bind, notify_abort, remote_bind, nested_bind, bind_badmatch,
                           bind_order, same_var_twice, same_var_clash, local_bind_tail]},
             {tprog_recdef, [rec_default, rec_order, rec_wildcard]},
             {tprog_bind_bif, [other]},
             {tprog_lcdrop, [effects_in_order, nested_and_filters, bad_generator, template_crash,
                             template_binds, last_is_kept]}],
    [{atom_to_list(F) ++ " " ++ atom_to_list(G), fun() -> same_result({M, F, []}, G) end}
     || {M, Fs} <- Cases, F <- Fs, G <- [big, small]].

%% A comprehension whose value is dropped keeps no results while its
%% template blocks (mce_anf's lower_discarded): states that differ only
%% in replies nobody reads are one state, as with lists:foreach/2.
dropped_comprehension_results_test_() ->
    {timeout, 120,
     fun() ->
             States = fun(Style) ->
                              {ok, #{states := S}} =
                                  mcerlang:check({tprog_lcdrop, clients, [Style]},
                                                 #{progress => false, reduction => false}),
                              S
                      end,
             ?assertEqual(States(foreach), States(lc))
     end}.

%% Closures compiled into a module (tprog_fun_entry, compiled like any test
%% program) as entries: comprehensions, nested funs and `fun f/A' in the
%% body or before it shift the compiler's fun numbers.
fun_entry_test_() ->
    Entries = [{lc_entry, tprog_fun_entry:lc_entry([1, 2, 3])},
               {nested_fun_entry, tprog_fun_entry:nested_fun_entry([1, 2])},
               {fun_ref_entry, tprog_fun_entry:fun_ref_entry([3, 4])},
               {filter_entry, tprog_fun_entry:filter_entry([1, 2, 3, 4])},
               {arity1_entry, tprog_fun_entry:arity1_entry(7)},
               {arity2_entry, tprog_fun_entry:arity2_entry(5)},
               {clause_error_entry, tprog_fun_entry:clause_error_entry(1)},
               {blocking_entry, tprog_fun_entry:blocking_entry(4)},
               {named_fun_entry, tprog_fun_entry:named_fun_entry(6)}],
    [{atom_to_list(Name) ++ " " ++ atom_to_list(G), fun() -> same_result(Fun, G) end}
     || {Name, Fun} <- Entries, G <- [big, small]].

%% The same written in this EUnit module, compiled by rebar3.
eunit_fun_entry_test_() ->
    L = [1, 2, 3],
    Tag = hd(L) + 10,
    Entries = [fun() -> exit({result, [X * 2 || X <- L]}) end,
               fun() ->
                       Me = self(),
                       _ = [spawn(fun() -> Me ! {got, X} end) || X <- L],
                       exit({result, lists:sort([receive {got, X} -> X end || _ <- L])})
               end,
               fun() -> exit({result, [{X, Y} || X <- L, Y <- [Tag], X > 1]}) end],
    [fun() -> same_result(Fun, G) end || Fun <- Entries, G <- [big, small]].

%% Funs with arguments written in this EUnit module: captured by a closure
%% entry, and passed in an entry's arguments (captured values nested in
%% them included).
eunit_captured_fun_test_() ->
    K = 3,
    Add = fun(X) -> X + K end,
    Pair = fun(X, Y) when X < Y -> {X, Y}; (X, Y) -> {Y, X} end,
    Twice = fun(X) -> Add(Add(X)) end,
    Entries = [fun() -> exit({result, {lists:map(Add, [1, 2]), Pair(5, 1), Pair(1, 5)}}) end,
               {tprog_fun_entry, map_entry, [Twice, [10, 20]]},
               {tprog_fun_entry, map_entry, [fun(X) -> {X, K} end, [a]]}],
    [fun() -> same_result(Entry, G) end || Entry <- Entries, G <- [big, small]].

%% Shell (erl_eval) funs with arguments in an entry's arguments run
%% translated: made by a generated module from their clauses and bindings.
shell_fun_argument_test_() ->
    Funs = [shell_fun("K = 3, fun(X) when X > 0 -> X * K; (_) -> neg end."),
            shell_fun("fun(X) -> self() ! {v, X}, receive {v, V} -> {got, V} end end.")],
    [fun() -> same_result({tprog_fun_entry, map_entry, [F, [1, -1]]}, G) end
     || F <- Funs, G <- [big, small]].

shell_fun(Text) ->
    {ok, Tokens, _} = erl_scan:string(Text),
    {ok, Exprs} = erl_parse:parse_exprs(Tokens),
    {value, Fun, _} = erl_eval:exprs(Exprs, []),
    Fun.

%% A scheduling point or a choice inside a fun that untranslated library
%% code (sofs) calls: the suspension is lost, and the error names where it was made.
lost_yield_has_location_test() ->
    {ok, Src} = file:read_file(proplists:get_value(source, tprog_helper_funs:module_info(compile))),
    Line = line_of(<<"sofs:specification(">>, Src),
    ?assertError({mcerlang, {receive_reached_through_untranslated_code,
                             {tprog_helper_funs, lost_yield, 0, Line}, _, _}},
                 mcerlang:check({tprog_helper_funs, lost_yield, []},
                                #{granularity => small, progress => false})),
    ?assertEqual([{result, done}], checked_exits({tprog_helper_funs, lost_yield, []}, big)),
    ChoiceLine = line_of(<<"sofs:specification(fun(_) -> mcerlang:choice(">>, Src),
    ?assertError({mcerlang, {receive_reached_through_untranslated_code,
                             {tprog_helper_funs, '-lost_choice/0-fun-1-', 1, ChoiceLine}, _, _}},
                 mcerlang:check({tprog_helper_funs, lost_choice, []}, #{progress => false})).

%% A match in the arguments of an unsupported BIF: the module translates
%% (differential_test_ runs its other function) and reaching the call stops
%% the check with the call and its location.
unsupported_call_with_binding_test() ->
    {ok, Src} = file:read_file(proplists:get_value(source, tprog_bind_bif:module_info(compile))),
    Line = line_of(<<"check_process_code(S = self()">>, Src),
    ?assertError({mcerlang, {unsupported_bif, {erlang, check_process_code, 2},
                             {tprog_bind_bif, unsupported_bind, 0, Line}, _}},
                 mcerlang:check({tprog_bind_bif, unsupported_bind, []}, #{progress => false})).

%% A record whose default spawns through a helper no longer makes the
%% module untranslatable: the translation compiles.
record_default_translates_test() ->
    ?assertMatch({ok, _}, mcerlang:translate(tprog_recdef)).

line_of(Needle, Src) ->
    {Pos, _} = binary:match(Src, Needle),
    1 + length(binary:matches(binary:part(Src, 0, Pos), <<"\n">>)).

same_result(Entry, Granularity) ->
    Real = real_exit(Entry),
    ?assertEqual([Real], checked_exits(Entry, Granularity)).

real_exit(Entry) ->
    {Pid, Ref} = case Entry of
                     {M, F, A} -> spawn_monitor(M, F, A);
                     Fun -> spawn_monitor(Fun)
                 end,
    receive {'DOWN', Ref, process, Pid, Reason} -> strip_location(Reason) end.

%% Every exit reason of the root process over all interleavings (as in
%% mce_translate_tests): each one found is treated as normal and the
%% program checked again.
checked_exits(Entry, Granularity) ->
    checked_exits(Entry, Granularity, [], []).

checked_exits(Entry, G, Seen, Others) when length(Seen) + length(Others) < 8 ->
    Root = mce_pid:term(1),
    Opts = #{treat_as_normal => [normal | Seen ++ Others], granularity => G,
             progress => false},
    case mcerlang:check(Entry, Opts) of
        {ok, _} when Seen =:= [] -> [normal];
        {ok, _} -> [strip_location(R) || R <- lists:reverse(Seen)];
        {error, #{violation := {abnormal_exit, Root, Reason}}} ->
            checked_exits(Entry, G, [Reason | Seen], Others);
        {error, #{violation := {abnormal_exit, _Other, Reason}}} ->
            checked_exits(Entry, G, Seen, [Reason | Others])
    end.

%% Pids differ between the runs: a result names them by count only where
%% the programs return them.  Stacks differ in file paths: compared as
%% mce_translate_tests does (reason and the top frame's enclosing function).
strip_location(Reason) ->
    mce_translate_tests:strip_location(Reason).
