%% Scenarios of the ETS differential tests (mce_ets_diff_tests): each
%% 0-arity export ends its root process with exit({result, R}).  The sweep
%% scenarios run a generated table of calls (every modelled ets function
%% against every kind of bad table, against other processes' tables, and
%% with bad arguments on a table of its own) and return, per call, its
%% value or its exception (class, reason, the stack's top frame), with
%% tids and pids replaced by names so the real VM and the checker compare.
-module(tprog_ets).

-export([sweep_bad_tables/0, sweep_other_owner/0, sweep_bad_args/0, sweep_info/0,
         sweep_new/0, whereis_tid/0, heir_kept/0, rename/0, undefined_function/0,
         ac_tab_env/0, system_table/0, all_tables/0, rename_across_steps/0,
         ac_tab_other/0]).
-export([arg_ops/0, info_of_refs/0]).

%%--------------------------------------------------------------------
%% The table of calls
%%--------------------------------------------------------------------

%% One call of each modelled ets function taking a table, T standing for
%% the table.  The tables are sets: lists are sorted and keys hidden, as
%% OTP leaves their order unspecified.
table_ops() ->
    [{insert, fun(T) -> ets:insert(T, {k, 1}) end},
     {insert_new, fun(T) -> ets:insert_new(T, {n, 1}) end},
     {lookup, fun(T) -> ets:lookup(T, k) end},
     {lookup_element, fun(T) -> ets:lookup_element(T, k, 2) end},
     {member, fun(T) -> ets:member(T, k) end},
     {delete_key, fun(T) -> ets:delete(T, zz) end},
     {delete_object, fun(T) -> ets:delete_object(T, {zz, 1}) end},
     {match, fun(T) -> lists:sort(ets:match(T, {'$1', '_'})) end},
     {match_object, fun(T) -> lists:sort(ets:match_object(T, {'_', '_'})) end},
     {select, fun(T) -> lists:sort(ets:select(T, [{{'$1', '_'}, [], ['$1']}])) end},
     {select_count, fun(T) -> ets:select_count(T, [{'_', [], [true]}]) end},
     {select_delete, fun(T) -> ets:select_delete(T, [{{zz, '_'}, [], [true]}]) end},
     {select_reverse, fun(T) -> lists:sort(ets:select_reverse(T, [{{'$1', '_'}, [], ['$1']}])) end},
     {match_delete, fun(T) -> ets:match_delete(T, {zz, '_'}) end},
     {select_replace, fun(T) -> ets:select_replace(T, [{{zz, '$1'}, [], [{{zz, '$1'}}]}]) end},
     {update_counter3, fun(T) -> ets:update_counter(T, k, 1) end},
     {update_counter4, fun(T) -> ets:update_counter(T, c, 1, {c, 0}) end},
     {update_element, fun(T) -> ets:update_element(T, k, {2, 7}) end},
     {first, fun(T) -> some_key(ets:first(T)) end},
     {last, fun(T) -> some_key(ets:last(T)) end},
     {next, fun(T) -> some_key(ets:next(T, k)) end},
     {prev, fun(T) -> some_key(ets:prev(T, k)) end},
     {tab2list, fun(T) -> lists:sort(ets:tab2list(T)) end},
     {foldl, fun(T) -> lists:sort(ets:foldl(fun(O, A) -> [O | A] end, [], T)) end},
     {foldr, fun(T) -> lists:sort(ets:foldr(fun(O, A) -> [O | A] end, [], T)) end},
     {take, fun(T) -> ets:take(T, zz) end},
     {info1, fun(T) -> info_without_memory(T) end},
     {info_size, fun(T) -> ets:info(T, size) end},
     {info_bogus, fun(T) -> ets:info(T, bogus) end},
     {setopts, fun(T) -> ets:setopts(T, {heir, none}) end},
     {give_away, fun(T) -> ets:give_away(T, whereis(tprog_ets_helper), gift) end},
     {delete_all_objects, fun(T) -> ets:delete_all_objects(T) end},
     {rename, fun(T) -> ets:rename(T, tprog_ets_renamed) end},
     {delete, fun(T) -> ets:delete(T) end}].

%% Calls with bad arguments other than the table, on a fresh public set
%% holding {k, 1, 2} and {j, a, b}.
arg_ops() ->
    [{insert_int, fun(T) -> ets:insert(T, 1) end},
     {insert_bad_in_list, fun(T) -> ets:insert(T, [{a}, 1]) end},
     {insert_empty_tuple, fun(T) -> ets:insert(T, {}) end},
     {insert_improper, fun(T) -> ets:insert(T, [{a} | b]) end},
     {insert_new_int, fun(T) -> ets:insert_new(T, 1) end},
     {insert_new_present, fun(T) -> ets:insert_new(T, [{x, 1}, {k, 0}]) end},
     {lookup_element_0, fun(T) -> ets:lookup_element(T, k, 0) end},
     {lookup_element_big, fun(T) -> ets:lookup_element(T, k, 9) end},
     {lookup_element_missing, fun(T) -> ets:lookup_element(T, zz, 2) end},
     {lookup_element_atom, fun(T) -> ets:lookup_element(T, k, x) end},
     {delete_object_int, fun(T) -> ets:delete_object(T, 1) end},
     {select_atom, fun(T) -> ets:select(T, bad) end},
     {select_bad_clause, fun(T) -> ets:select(T, [bad]) end},
     {select_count_bad, fun(T) -> ets:select_count(T, [bad]) end},
     {select_delete_bad, fun(T) -> ets:select_delete(T, [bad]) end},
     {match_object_pattern, fun(T) -> ets:match_object(T, {'_', 1, '$1'}) end},
     {select_reverse_bad, fun(T) -> ets:select_reverse(T, [bad]) end},
     {select_reverse, fun(T) -> in_order(T, ets:select_reverse(T, [{{'$1', '_', '_'}, [], ['$1']}])) end},
     {match_delete, fun(T) -> {ets:match_delete(T, {k, '_', '_'}), lists:sort(ets:tab2list(T))} end},
     {match_delete_improper, fun(T) -> ets:match_delete(T, [bad | x]) end},
     {select_replace, fun(T) -> {ets:select_replace(T, [{{'$1', 1, '$2'}, [], [{{'$1', z, '$2'}}]}]),
                                 lists:sort(ets:tab2list(T))} end},
     {select_replace_guard, fun(T) -> {ets:select_replace(T, [{{'$1', '_', '_'}, [{'=/=', '$1', j}],
                                                               [{{'$1', w}}]}]),
                                       lists:sort(ets:tab2list(T))} end},
     {select_replace_same, fun(T) -> ets:select_replace(T, [{{'$1', '_', '_'}, [], ['$_']}]) end},
     {select_replace_new_key, fun(T) -> ets:select_replace(T, [{{'$1', '_', '_'}, [], [{{x, y}}]}]) end},
     {select_replace_no_match_new_key,
      fun(T) -> ets:select_replace(T, [{{'$1', nomatch, '_'}, [], [{{x, y}}]}]) end},
     {select_replace_not_tuple, fun(T) -> ets:select_replace(T, [{{'$1', '_', '_'}, [], [true]}]) end},
     {select_replace_two_bodies,
      fun(T) -> ets:select_replace(T, [{{'$1', '_', '_'}, [], [{{'$1', q}}, {{'$1', r}}]}]) end},
     {select_replace_bad, fun(T) -> ets:select_replace(T, [bad]) end},
     {update_counter_keypos, fun(T) -> ets:update_counter(T, k, {1, 1}) end},
     {update_counter_not_int, fun(T) -> ets:update_counter(T, j, 1) end},
     {update_counter_missing, fun(T) -> ets:update_counter(T, zz, 1) end},
     {update_counter_bad_op, fun(T) -> ets:update_counter(T, k, x) end},
     {update_counter_big_pos, fun(T) -> ets:update_counter(T, k, {9, 1}) end},
     {update_counter_threshold, fun(T) -> ets:update_counter(T, k, {2, 10, 5, 0}) end},
     {update_counter_list, fun(T) -> ets:update_counter(T, k, [{2, 1}, {3, 2}]) end},
     %% Not update_counter(T, zz, 1, {}): it crashes the OTP 25 emulator
     %% (size_object: bad tag).
     {update_counter_default_1, fun(T) -> ets:update_counter(T, zz, 1, {zz}) end},
     {update_counter_default_short, fun(T) -> ets:update_counter(T, zz, {3, 1}, {zz, 0}) end},
     {update_element_keypos, fun(T) -> ets:update_element(T, k, {1, x}) end},
     {update_element_big, fun(T) -> ets:update_element(T, k, {9, x}) end},
     {update_element_missing, fun(T) -> ets:update_element(T, zz, {2, x}) end},
     {update_element_list, fun(T) -> {ets:update_element(T, k, [{2, x}, {3, y}]), ets:lookup(T, k)} end},
     {update_element_bad, fun(T) -> ets:update_element(T, k, bad) end},
     {next_missing, fun(T) -> ets:next(T, zz) end},
     {prev_missing, fun(T) -> ets:prev(T, zz) end},
     {take, fun(T) -> {ets:take(T, k), ets:lookup(T, k)} end},
     {give_away_self, fun(T) -> ets:give_away(T, self(), d) end},
     {give_away_not_pid, fun(T) -> ets:give_away(T, foo, d) end},
     {give_away_dead, fun(T) -> ets:give_away(T, dead_pid(), d) end},
     {setopts_heir_not_pid, fun(T) -> ets:setopts(T, {heir, foo, d}) end},
     {setopts_unknown, fun(T) -> ets:setopts(T, {bogus, 1}) end},
     {setopts_not_tuple, fun(T) -> ets:setopts(T, bogus) end},
     {setopts_heir, fun(T) -> {ets:setopts(T, [{heir, self(), d}]), ets:info(T, heir)} end},
     {setopts_heir_dead, fun(T) -> {ets:setopts(T, {heir, dead_pid(), d}), ets:info(T, heir)} end},
     {setopts_protection, fun(T) -> ets:setopts(T, {protection, private}) end},
     {info_bad_item, fun(T) -> ets:info(T, 1) end},
     {whereis_float, fun(_) -> ets:whereis(1.0) end},
     {whereis_missing, fun(_) -> ets:whereis(tprog_ets_nosuch) end},
     {rename_not_atom, fun(T) -> ets:rename(T, "x") end},
     {delete_twice, fun(T) -> {ets:delete(T), ets:delete(T)} end}].

%%--------------------------------------------------------------------
%% Sweeps
%%--------------------------------------------------------------------

%% Every table op on things that are not tables.
sweep_bad_tables() ->
    start_helper(),
    Gone = ets:new(gone, []),
    ets:delete(Gone),
    GoneNamed = ets:new(tprog_ets_gone, [named_table]),
    ets:delete(GoneNamed),
    Env = [{Gone, gone_tid}],
    R = [{Op, What, outcome(fun() -> F(Bad) end, Env)}
         || {What, Bad} <- [{float, 1.0}, {list, [a]}, {tuple, {t}}, {int, 42},
                            {no_name, tprog_ets_nosuch}, {deleted, Gone},
                            {deleted_named, GoneNamed}],
            {Op, F} <- table_ops()],
    stop_helper(),
    exit({result, R}).

%% Every table op on tables of another process: private, protected and
%% public, named and not.
sweep_other_owner() ->
    Helper = start_helper(),
    Helper ! {tables, self()},
    Tabs = receive {tables, Ts} -> Ts end,
    Env = [{Tab, What} || {What, Tab} <- Tabs, not is_atom(Tab)],
    R = [{Op, What, outcome(fun() -> F(Tab) end, Env)}
         || {What, Tab} <- Tabs, {Op, F} <- table_ops()],
    stop_helper(),
    exit({result, R}).

%% Bad arguments other than the table, on a table of its own, of each type.
sweep_bad_args() ->
    start_helper(),
    R = [{Op, Type, fresh(Type, F)} || Type <- [set, ordered_set, bag], {Op, F} <- arg_ops()],
    stop_helper(),
    exit({result, R}).

%% info/1 (items and their order) and info/2 for every item, on tables of
%% each kind.
sweep_info() ->
    Items = [id, decentralized_counters, read_concurrency, write_concurrency, compressed,
             owner, heir, name, size, node, named_table, type, keypos, protection],
    Tabs = [ets:new(a, []), ets:new(tprog_ets_b, [named_table, ordered_set, public, {keypos, 2}]),
            ets:new(c, [bag, private, {heir, self(), x}, {read_concurrency, true},
                        {write_concurrency, true}, compressed]),
            ets:new(d, [duplicate_bag, {decentralized_counters, true}]),
            ets:new(e, [{write_concurrency, auto}])],
    ets:insert(tprog_ets_b, [{1, a}, {2, b}]),
    Env = lists:zip(Tabs, [tab_a, tab_b, tab_c, tab_d, tab_e]),
    R = [{norm(T, Env), [K || {K, _} <- ets:info(T)], norm(info_without_memory(T), Env),
          [{I, outcome(fun() -> ets:info(T, I) end, Env)} || I <- Items],
          is_integer(ets:info(T, memory))}
         || T <- Tabs],
    exit({result, R}).

%% ets:new/2 with bad arguments.
sweep_new() ->
    Calls = [{not_atom, fun() -> ets:new("x", []) end},
             {opts_not_list, fun() -> ets:new(x, set) end},
             {bad_opt, fun() -> ets:new(x, [bogus]) end},
             {keypos_0, fun() -> ets:new(x, [{keypos, 0}]) end},
             {heir_not_pid, fun() -> ets:new(x, [{heir, foo, d}]) end},
             {heir_bad, fun() -> ets:new(x, [{heir, foo}]) end},
             {improper_opts, fun() -> ets:new(x, [set | bag]) end},
             {named_twice, fun() -> ets:new(tprog_ets_n, [named_table]),
                                    ets:new(tprog_ets_n, [named_table]) end},
             {system_name, fun() -> ets:new(ac_tab, [named_table]) end},
             {system_name_unnamed, fun() -> is_reference(ets:new(ac_tab, [])) end},
             {last_type_wins, fun() -> T = ets:new(x, [bag, set]), ets:info(T, type) end},
             {last_protection_wins, fun() -> T = ets:new(x, [private, public]),
                                             ets:info(T, protection) end},
             {heir_dead, fun() -> T = ets:new(x, [{heir, dead_pid(), d}]), ets:info(T, heir) end},
             {heir_self, fun() -> T = ets:new(x, [{heir, self(), d}]), ets:info(T, heir) end},
             {heir_then_none, fun() -> T = ets:new(x, [{heir, self(), d}, {heir, none}]),
                                       ets:info(T, heir) end},
             {keypos_atom, fun() -> ets:new(x, [{keypos, a}]) end},
             {keypos_2_short, fun() -> T = ets:new(x, [{keypos, 2}]), ets:insert(T, {a}) end},
             {write_concurrency_bad, fun() -> ets:new(x, [{write_concurrency, yes}]) end},
             {compressed_tuple, fun() -> ets:new(x, [{compressed, true}]) end},
             {named_twice_in_opts, fun() -> ets:new(tprog_ets_n2, [named_table, named_table]) end},
             {unnamed_same_name, fun() -> is_reference(ets:new(y, [])) andalso
                                              is_reference(ets:new(y, [])) end},
             {named_then_unnamed, fun() -> ets:new(tprog_ets_n3, [named_table]),
                                           is_reference(ets:new(tprog_ets_n3, [])) end}],
    exit({result, [{C, outcome(F, [])} || {C, F} <- Calls]}).

%%--------------------------------------------------------------------
%% Single behaviours
%%--------------------------------------------------------------------

%% The tid that whereis/1 returns for a named table is a table like the name.
whereis_tid() ->
    tprog_ets_w = ets:new(tprog_ets_w, [named_table, public]),
    W = ets:whereis(tprog_ets_w),
    R = [is_reference(W),
         ets:insert(W, {a, 1}), ets:lookup(W, a), ets:lookup(tprog_ets_w, a),
         ets:info(W, id) =:= W, ets:info(tprog_ets_w, id) =:= W, ets:info(W, name),
         ets:info(W, named_table), lists:member(W, ets:all()),
         lists:member(tprog_ets_w, ets:all()), ets:delete(W, a), ets:tab2list(W),
         ets:delete(W), ets:whereis(tprog_ets_w), ets:info(W), ets:info(tprog_ets_w)],
    exit({result, R}).

%% ets:info/1,2 tell a tid from other refs: a deleted table's tid gives
%% undefined, a ref that was never a table badarg.  The steps in between
%% bring the refs back from the stored state.
info_of_refs() ->
    T = ets:new(t, []),
    Ref = make_ref(),
    self() ! go, receive go -> ok end,
    Live = ets:info(T, size),
    ets:delete(T),
    self() ! go, receive go -> ok end,
    Env = [{T, tab}, {Ref, ref}],
    R = [Live, ets:info(T), ets:info(T, size), T =/= Ref,
         outcome(fun() -> ets:info(Ref) end, Env), outcome(fun() -> ets:info(Ref, size) end, Env),
         outcome(fun() -> ets:info(1.0) end, Env), outcome(fun() -> ets:info([], size) end, Env),
         outcome(fun() -> ets:lookup(Ref, a) end, Env)],
    exit({result, R}).

%% After the heir inherits a table, info(T, heir) still names the heir
%% (OTP keeps it), and a table given away from the heir comes back to it
%% when the new owner dies, with the heir data.
heir_kept() ->
    Me = self(),
    P = spawn(fun() ->
                      ets:new(tprog_ets_h, [named_table, {heir, Me, hd}]),
                      T = ets:new(h2, [{heir, Me, hd2}]),
                      Me ! {t, T},
                      receive stop -> ok end
              end),
    T2 = receive {t, X} -> X end,
    P ! stop,
    M1 = receive {'ETS-TRANSFER', tprog_ets_h, _, _} = A -> A end,
    M2 = receive {'ETS-TRANSFER', T2, _, _} = B -> B end,
    H = [ets:info(tprog_ets_h, heir) =:= Me, ets:info(T2, heir) =:= Me,
         ets:info(tprog_ets_h, owner) =:= Me],
    Q = spawn(fun() -> receive {'ETS-TRANSFER', _, _, _} -> receive stop -> ok end end end),
    true = ets:give_away(tprog_ets_h, Q, gd),
    Q ! stop,
    M3 = receive {'ETS-TRANSFER', tprog_ets_h, _, Data} -> Data end,
    exit({result, {element(4, M1), element(4, M2), H, M3, ets:info(tprog_ets_h, owner) =:= Me}}).

%% ets:rename/2 of a named and of an unnamed table, and to a taken name.
rename() ->
    tprog_ets_r1 = ets:new(tprog_ets_r1, [named_table]),
    ets:insert(tprog_ets_r1, {a, 1}),
    W = ets:whereis(tprog_ets_r1),
    U = ets:new(u, []),
    tprog_ets_r3 = ets:new(tprog_ets_r3, [named_table]),
    R = [ets:rename(tprog_ets_r1, tprog_ets_r2), ets:lookup(tprog_ets_r2, a),
         outcome(fun() -> ets:lookup(tprog_ets_r1, a) end, []), ets:lookup(W, a),
         ets:whereis(tprog_ets_r2) =:= W, ets:whereis(tprog_ets_r1), ets:info(W, name),
         outcome(fun() -> ets:rename(tprog_ets_r2, tprog_ets_r3) end, []),
         ets:rename(U, tprog_ets_r4) =:= U, ets:info(U, name), ets:info(U, named_table),
         ets:whereis(tprog_ets_r4), outcome(fun() -> ets:lookup(tprog_ets_r4, a) end, []),
         ets:rename(W, tprog_ets_r5), ets:info(tprog_ets_r5, size)],
    exit({result, R}).

%% Renaming a table made in an earlier step: the old name is free at once.
rename_across_steps() ->
    tprog_ets_s1 = ets:new(tprog_ets_s1, [named_table, public]),
    ets:insert(tprog_ets_s1, {a, 1}),
    self() ! go,
    receive go -> ok end,
    tprog_ets_s2 = ets:rename(tprog_ets_s1, tprog_ets_s2),
    R = [outcome(fun() -> ets:lookup(tprog_ets_s1, a) end, []), ets:whereis(tprog_ets_s1),
         ets:lookup(tprog_ets_s2, a), is_reference(ets:new(tprog_ets_s1, [named_table]))],
    exit({result, R}).

%% A function ets does not export raises undef, as on the VM.
undefined_function() ->
    N = 3,
    exit({result, [outcome(fun() -> ets:no_such_function(N) end, []),
                   outcome(fun() -> ets:lookup(N) end, [])]}).

%% application environment through the application controller's table.
ac_tab_env() ->
    application:set_env(tprog_ets_app, par, 42),
    exit({result, [ets:lookup(ac_tab, {env, tprog_ets_app, par}),
                   ets:lookup(ac_tab, {env, tprog_ets_app, none}),
                   application:get_env(tprog_ets_app, par)]}).

%% A system table the model does not have (the checker refuses it).
system_table() ->
    exit({result, ets:info(global_names, size)}).

%% A use of ac_tab other than an env lookup (the checker refuses it).
ac_tab_other() ->
    exit({result, ets:lookup(ac_tab, {loaded, kernel}) =/= []}).

%% ets:all/0 holds the tables of this node, by tid for unnamed tables and
%% by name for named ones, without the deleted ones.
all_tables() ->
    Before = ets:all(),
    A = ets:new(a, []),
    tprog_ets_all = ets:new(tprog_ets_all, [named_table]),
    D = ets:new(d, []),
    ets:delete(D),
    New = ets:all() -- Before,
    exit({result, [lists:member(A, New), lists:member(tprog_ets_all, New),
                   lists:member(D, New), length(New)]}).

%%--------------------------------------------------------------------
%% Helpers
%%--------------------------------------------------------------------

%% A helper owning tables of each protection, registered so that ops can
%% give tables to it.
start_helper() ->
    Me = self(),
    P = spawn(fun() ->
                      Tabs = [{private, ets:new(p, [private])},
                              {private_named, ets:new(tprog_ets_priv, [private, named_table])},
                              {protected, ets:new(q, [protected])},
                              {protected_named, ets:new(tprog_ets_prot, [named_table])},
                              {public, ets:new(r, [public])}],
                      [ets:insert(T, [{k, 1}, {j, 2}]) || {W, T} <- Tabs, W =/= private_named],
                      Me ! ready,
                      helper(Tabs)
              end),
    register(tprog_ets_helper, P),
    receive ready -> P end.

helper(Tabs) ->
    receive
        {tables, From} -> From ! {tables, Tabs}, helper(Tabs);
        {stop, From} -> From ! stopped;
        _ -> helper(Tabs)
    end.

stop_helper() ->
    tprog_ets_helper ! {stop, self()},
    receive stopped -> ok end.

dead_pid() ->
    {P, M} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', M, process, P, _} -> P end.

%% F on a fresh public table of type Type holding {k, 1, 2} and {j, a, b}.
fresh(Type, F) ->
    T = ets:new(t, [Type, public]),
    ets:insert(T, [{k, 1, 2}, {j, a, b}]),
    R = outcome(fun() -> F(T) end, [{T, tab}]),
    _ = (catch ets:delete(T)),
    R.

%% A list in the table's order for an ordered_set, sorted for the others
%% (whose order OTP leaves unspecified).
in_order(T, L) ->
    case ets:info(T, type) of
        ordered_set -> L;
        _ -> lists:sort(L)
    end.

%% Which key, or whether any, is unspecified for a set.
some_key(_) -> key.

%% The memory item counts words of the implementation: left out.
info_without_memory(T) ->
    case ets:info(T) of
        undefined -> undefined;
        L -> lists:keydelete(memory, 1, L)
    end.

outcome(F, Env) ->
    try F() of
        V -> {ok, norm(V, Env)}
    catch
        Class:Reason:Stack -> {Class, norm(Reason, Env), norm(top(Stack), Env)}
    end.

top([{M, F, A, _} | _]) -> {M, F, A};
top(_) -> none.

%% Tids and pids by names: the known ones from Env, self, the helper.
norm(X, Env) ->
    case lists:keyfind(X, 1, Env) of
        {_, Name} -> Name;
        false -> norm_term(X, Env)
    end.

norm_term(X, _) when X =:= self() -> self;
norm_term(X, _) when is_pid(X) ->
    case whereis(tprog_ets_helper) of
        X -> helper;
        _ -> pid
    end;
norm_term(X, _) when is_reference(X) -> ref;
norm_term(X, _) when X =:= node() -> node;
norm_term(L, Env) when is_list(L) -> norm_list(L, Env);
norm_term(T, Env) when is_tuple(T) -> list_to_tuple(norm_list(tuple_to_list(T), Env));
norm_term(X, _) -> X.

norm_list([H | T], Env) -> [norm(H, Env) | norm_list(T, Env)];
norm_list([], _) -> [];
norm_list(Tail, Env) -> norm(Tail, Env).
