%% @doc ETS for checked code: tables are part of the checked state.
%%
%% The translator redirects `ets:F(...)' calls in user code here.  A table
%% lives in the C state (`c_src/sys_state.h', `ets_table'): its owner, heir
%% and name (a named table's), which C needs when the owner dies (the table
%% goes to the heir with an 'ETS-TRANSFER' message, or is deleted), and one
%% data term `{Type, Protection, KeyPos, Objects, {Name, DecentralizedCounters,
%% ReadConcurrency, WriteConcurrency, Compressed}}' that this module reads
%% and rewrites (the last element holds what only ets:info/1,2 shows).  Objects are `[{Key, [Object]}]' sorted by key (objects of a
%% bag key in insertion order), so equal tables are equal terms whatever
%% order the program inserted in: the state space does not grow with
%% insertion orders.  first/next and tab2list therefore go in key order for
%% every table type (for set and bag, OTP leaves the order unspecified).
%%
%% Within a step, changed tables are kept in the step's overlay and every
%% change is recorded as an effect; the runtime applies the effects when
%% the step ends.  Match specifications run through OTP's own
%% ets:match_spec_compile/1 and ets:match_spec_run/2.
%%
%% Errors are OTP 25's: class, reason and the stack's top frame, which for
%% a few functions names the internal ets function that fails on the VM
%% (tab2list fails in match_object/2, foldl in safe_fixtable/2).
%%
%% The node's system tables (ac_tab, global_names, logger, ...) are not
%% modelled: their names are taken, as on the VM, and a use of one is
%% refused with {mcerlang, {unsupported_system_table, Name, {ets, F, A},
%% Location}}, except ets:lookup(ac_tab, {env, App, Par}), which
%% application:get_env/2 answers from the model (mce_app).
-module(mce_ets).

-export([new/2, insert/2, insert_new/2, lookup/2, lookup_element/3, member/2,
         delete/1, delete/2, delete_object/2, delete_all_objects/1,
         match/2, match_object/2, select/2, select_delete/2, select_count/2,
         update_counter/3, update_counter/4, update_element/3,
         first/1, last/1, next/2, prev/2, tab2list/1, info/1, info/2,
         give_away/3, setopts/2, all/0, whereis/1, foldl/3, foldr/3, take/2, rename/2,
         match_delete/2, select_reverse/2, select_replace/2]).
%% For mce_symmetry: a table's data with its keys renamed, sorted again.
-export([sorted_data/1]).

-type tab() :: atom() | reference().

%% The named tables of an OTP 25 node (a distributed one for sys_dist).
-define(SYSTEM_TABLES, [ac_tab, logger, code_names, file_io_servers, sys_dist,
                        global_locks, global_names, global_names_ext, global_pid_names,
                        global_pid_ids, global_lost_connections, global_node_resources,
                        inet_db, inet_cache, inet_hosts_byname, inet_hosts_byaddr,
                        inet_hosts_file_byname, inet_hosts_file_byaddr, inet_sockets]).

%%--------------------------------------------------------------------
%% Tables
%%--------------------------------------------------------------------

-spec new(atom(), list()) -> tab().
new(Name, Opts) when is_atom(Name), is_list(Opts) ->
    Init = #{type => set, protection => protected, keypos => 1, named => false,
             heir => 0, heir_data => none, decentralized_counters => default,
             read_concurrency => false, write_concurrency => false, compressed => false},
    is_proper_list(Opts) orelse erlang:error(badarg, [Name, Opts]),
    T = lists:foldl(fun(O, Acc) -> new_option(O, Acc, [Name, Opts]) end, Init, Opts),
    Me = me(),
    Named = maps:get(named, T),
    Named andalso name_taken(Name) andalso erlang:error(badarg, [Name, Opts]),
    Ref = mce_rt_signals:make_ref(),
    {ok, Key} = mce_ref:number(Ref),
    Tab = #{tid => Key, owner => Me, heir => maps:get(heir, T),
            heir_data => maps:get(heir_data, T),
            name => case Named of true -> Name; false -> none end,
            type => maps:get(type, T), protection => maps:get(protection, T),
            keypos => maps:get(keypos, T), objects => [],
            extra => extra(Name, T)},
    store(Tab),
    case Named of
        true -> Name;
        false -> mce_ref:tid_term(Key)
    end;
new(Name, Opts) ->
    erlang:error(badarg, [Name, Opts]).

%% The last type wins, but set only ever stands for the default: [bag, set]
%% is a bag on OTP 25.
new_option(set, T, _) -> T;
new_option(Type, T, _) when Type =:= ordered_set; Type =:= bag; Type =:= duplicate_bag ->
    T#{type := Type};
new_option(P, T, _) when P =:= public; P =:= protected; P =:= private -> T#{protection := P};
new_option(named_table, T, _) -> T#{named := true};
new_option({keypos, N}, T, _) when is_integer(N), N >= 1 -> T#{keypos := N};
new_option({heir, none}, T, _) -> T#{heir := 0, heir_data := none};
new_option({heir, Pid, Data}, T, Args) when is_pid(Pid) ->
    heir(Pid, Data, T, {new, Args});
new_option({K, B}, T, _) when (K =:= write_concurrency orelse K =:= read_concurrency orelse
                               K =:= decentralized_counters), is_boolean(B) -> T#{K := B};
new_option({write_concurrency, auto}, T, _) -> T#{write_concurrency := auto};
new_option(compressed, T, _) -> T#{compressed := true};
new_option(_, _, Args) -> badarg({new, Args}).

%% A heir that is not alive when it is set is none, as on OTP 25 (one that
%% dies later stays the heir).
heir(Pid, Data, T, Call) ->
    case mce_pid:number(Pid) of
        {ok, N} ->
            case mce_rt_procs:is_process_alive(Pid) of
                true -> T#{heir := N, heir_data := {Data}};
                false -> T#{heir := 0, heir_data := none}
            end;
        error -> badarg(Call)
    end.

%% What info/1 shows of the options, by OTP 25's rules: a private table
%% has no concurrency, decentralized_counters needs write_concurrency and
%% is on by default for an ordered_set and with {write_concurrency, auto}.
extra(Name, #{protection := private, compressed := C}) ->
    {Name, false, false, false, C};
extra(Name, #{type := Type, read_concurrency := R, write_concurrency := W,
              decentralized_counters := D, compressed := C}) ->
    DC = case {W, D} of
             {false, _} -> false;
             {auto, _} -> true;
             {true, default} -> Type =:= ordered_set;
             {true, _} -> D
         end,
    {Name, DC, R, W, C}.

%% A named table's name is free: no table of the model holds it and it is
%% not one of the node's system tables.
name_taken(Name) ->
    table_named(Name) =/= undefined orelse lists:member(Name, ?SYSTEM_TABLES).

is_proper_list([_ | T]) -> is_proper_list(T);
is_proper_list([]) -> true;
is_proper_list(_) -> false.

-spec delete(tab()) -> true.
delete(Tab) ->
    T = table(Tab, write, [Tab]),
    drop(T),
    true.

-spec all() -> [tab()].
all() ->
    Node = erlang:get('$mce_pid') bsr 24,
    Stored = mce_nif:ets_tables(erlang:get('$mce_search'), Node),
    Overlay = [K || {{ets, K}, _} <- maps:to_list(erlang:get('$mce_overlay')), K bsr 24 =:= Node],
    Keys = lists:usort(Stored ++ Overlay),
    %% In the order of the tids, which carry their creators' pid numbers.
    mce_rt_order:tables_listed([mce_ref:tid_term(K) || K <- Keys]),
    [tab_term(T) || K <- Keys, T <- [lookup_tid(K)], T =/= undefined].

-spec whereis(atom()) -> reference() | undefined.
whereis(Name) when is_atom(Name) ->
    case table_named(Name) of
        undefined -> not_system_table(Name);
        Key -> mce_ref:tid_term(Key)
    end;
whereis(Name) ->
    erlang:error(badarg, [Name]).

%% A named table takes the new name; an unnamed one only shows it in
%% info(T, name), and its tid is returned.
-spec rename(tab(), atom()) -> atom().
rename(Tab, Name) ->
    T = table(Tab, write, [Tab, Name]),
    is_atom(Name) orelse erlang:error(badarg, [Tab, Name]),
    #{name := Old, extra := Extra} = T,
    New = case Old of
              none -> none;
              Name -> Name;
              _ ->
                  name_taken(Name) andalso erlang:error(badarg, [Tab, Name]),
                  Name
          end,
    T1 = T#{name := New, extra := setelement(1, Extra, Name)},
    store(T1),
    tab_term(T1).

-spec give_away(tab(), pid(), term()) -> true.
give_away(Tab, Pid, Data) ->
    T = table(Tab, owner, [Tab, Pid, Data]),
    N = case mce_pid:number(Pid) of
            {ok, K} -> K;
            error -> erlang:error(badarg, [Tab, Pid, Data])
        end,
    (N =/= me() andalso mce_rt_procs:is_process_alive(Pid)) orelse erlang:error(badarg, [Tab, Pid, Data]),
    store(T#{owner := N}),
    mce_rt:send(Pid, {'ETS-TRANSFER', tab_term(T), mce_rt:self(), Data}),
    true.

%% OTP 25 also takes {protection, P}, though only heir is documented.
-spec setopts(tab(), tuple() | [tuple()]) -> true.
setopts(Tab, Opts) ->
    T = table(Tab, owner, [Tab, Opts]),
    List = case Opts of
               _ when is_list(Opts) ->
                   is_proper_list(Opts) orelse erlang:error(badarg, [Tab, Opts]),
                   Opts;
               _ -> [Opts]
           end,
    store(lists:foldl(fun({heir, none}, Acc) -> Acc#{heir := 0, heir_data := none};
                         ({heir, Pid, Data}, Acc) when is_pid(Pid) ->
                              heir(Pid, Data, Acc, {setopts, [Tab, Opts]});
                         ({protection, P}, Acc) when P =:= public; P =:= protected;
                                                     P =:= private ->
                              Acc#{protection := P};
                         (_, _) -> badarg({setopts, [Tab, Opts]})
                      end, T, List)),
    true.

%%--------------------------------------------------------------------
%% Objects
%%--------------------------------------------------------------------

-spec insert(tab(), tuple() | [tuple()]) -> true.
insert(Tab, Objs) ->
    T = table(Tab, write, [Tab, Objs]),
    store(lists:foldl(fun(O, Acc) -> put_object(O, Acc) end, T, objects_arg(T, Objs, [Tab, Objs]))),
    true.

-spec insert_new(tab(), tuple() | [tuple()]) -> boolean().
insert_new(Tab, Objs) ->
    T = table(Tab, write, [Tab, Objs]),
    List = objects_arg(T, Objs, [Tab, Objs]),
    case lists:any(fun(O) -> find(key(T, O), T) =/= [] end, List) of
        true -> false;
        false ->
            store(lists:foldl(fun(O, Acc) -> put_object(O, Acc) end, T, List)),
            true
    end.

-spec lookup(tab(), term()) -> [tuple()].
lookup(ac_tab, {env, App, Par} = Key) ->
    %% No table of the model can be named ac_tab (name_taken/1).
    case mce_app:get_env(App, Par) of
        {ok, V} -> [{Key, V}];
        undefined -> []
    end;
lookup(Tab, Key) ->
    find(Key, table(Tab, read, [Tab, Key])).

-spec take(tab(), term()) -> [tuple()].
take(Tab, Key) ->
    T = table(Tab, write, [Tab, Key]),
    Objs = find(Key, T),
    store(remove_key(Key, T)),
    Objs.

-spec lookup_element(tab(), term(), pos_integer()) -> term().
lookup_element(Tab, Key, Pos) ->
    T = table(Tab, read, [Tab, Key, Pos]),
    case find(Key, T) of
        [] -> erlang:error(badarg, [Tab, Key, Pos]);
        Objs ->
            lists:all(fun(O) -> is_integer(Pos) andalso Pos >= 1 andalso Pos =< tuple_size(O) end, Objs)
                orelse erlang:error(badarg, [Tab, Key, Pos]),
            case maps:get(type, T) of
                Bag when Bag =:= bag; Bag =:= duplicate_bag -> [element(Pos, O) || O <- Objs];
                _ -> element(Pos, hd(Objs))
            end
    end.

-spec member(tab(), term()) -> boolean().
member(Tab, Key) ->
    find(Key, table(Tab, read, [Tab, Key])) =/= [].

-spec delete(tab(), term()) -> true.
delete(Tab, Key) ->
    T = table(Tab, write, [Tab, Key]),
    store(remove_key(Key, T)),
    true.

-spec delete_object(tab(), tuple()) -> true.
delete_object(Tab, Obj) ->
    T = table(Tab, write, [Tab, Obj]),
    [_] = objects_arg(T, [Obj], [Tab, Obj]),
    K = key(T, Obj),
    Kept = [O || O <- find(K, T), O =/= Obj],
    store(set_key(K, Kept, T)),
    true.

-spec delete_all_objects(tab()) -> true.
delete_all_objects(Tab) ->
    T = table(Tab, write, {internal_delete_all, [Tab, undefined]}),
    store(T#{objects := []}),
    true.

-spec tab2list(tab()) -> [tuple()].
tab2list(Tab) ->
    all_objects(in_key_order(table(Tab, read, {match_object, [Tab, '_']}))).

-spec match_object(tab(), term()) -> [tuple()].
match_object(Tab, Pattern) ->
    select(Tab, [{Pattern, [], ['$_']}], {match_object, [Tab, Pattern]}).

-spec match(tab(), term()) -> [[term()]].
match(Tab, Pattern) ->
    select(Tab, [{Pattern, [], ['$$']}], {match, [Tab, Pattern]}).

-spec select(tab(), list()) -> [term()].
select(Tab, MS) ->
    select(Tab, MS, {select, [Tab, MS]}).

select(Tab, MS, Call) ->
    T = table(Tab, read, Call),
    case ets:match_spec_run(all_objects(T), compile(MS, Call)) of
        [_, _ | _] = R -> _ = in_key_order(T), R;
        R -> R
    end.

%% The VM's own select_replace/2 runs on a scratch copy of the table, so
%% that its checks of the match specification (which must keep each key)
%% and its count are OTP's.
-spec select_replace(tab(), list()) -> non_neg_integer().
select_replace(Tab, MS) ->
    Call = {select_replace, [Tab, MS]},
    #{type := Type, keypos := KP} = T = table(Tab, write, Call),
    Scratch = ets:new(mce_ets_scratch, [Type, {keypos, KP}, private]),
    try
        true = ets:insert(Scratch, all_objects(T)),
        N = try ets:select_replace(Scratch, MS)
            catch error:badarg -> badarg(Call)
            end,
        store(lists:foldl(fun put_object/2, T#{objects := []}, ets:tab2list(Scratch))),
        N
    after
        ets:delete(Scratch)
    end.

%% Backwards for an ordered_set; for the other types like select/2, as OTP
%% documents.
-spec select_reverse(tab(), list()) -> [term()].
select_reverse(Tab, MS) ->
    R = select(Tab, MS, {select_reverse, [Tab, MS]}),
    case resolve(Tab) of
        #{type := ordered_set} -> lists:reverse(R);
        _ -> R
    end.

-spec select_count(tab(), list()) -> non_neg_integer().
select_count(Tab, MS) ->
    T = table(Tab, read, [Tab, MS]),
    C = compile(MS, [Tab, MS]),
    length([O || O <- all_objects(T), ets:match_spec_run([O], C) =:= [true]]).

-spec select_delete(tab(), list()) -> non_neg_integer().
select_delete(Tab, MS) ->
    select_delete(Tab, MS, {internal_select_delete, [Tab, MS]}).

-spec match_delete(tab(), term()) -> true.
match_delete(Tab, Pattern) ->
    MS = [{Pattern, [], [true]}],
    _ = select_delete(Tab, MS, {internal_select_delete, [Tab, MS]}),
    true.

select_delete(Tab, MS, Call) ->
    T = table(Tab, write, Call),
    C = compile(MS, Call),
    {Gone, Kept} = lists:partition(fun(O) -> ets:match_spec_run([O], C) =:= [true] end,
                                   all_objects(T)),
    store(lists:foldl(fun(O, Acc) -> put_object(O, Acc) end, T#{objects := []}, Kept)),
    length(Gone).

-spec update_counter(tab(), term(), term()) -> integer() | [integer()].
update_counter(Tab, Key, Op) ->
    update_counter(Tab, Key, Op, none).

-spec update_counter(tab(), term(), term(), tuple() | none) -> integer() | [integer()].
update_counter(Tab, Key, Op, Default) ->
    Args = {update_counter, case Default of
                                none -> [Tab, Key, Op];
                                _ -> [Tab, Key, Op, Default]
                            end},
    T = table(Tab, write, Args),
    lists:member(maps:get(type, T), [set, ordered_set]) orelse badarg(Args),
    Obj0 = case find(Key, T) of
               [O] -> O;
               [] when is_tuple(Default), tuple_size(Default) >= map_get(keypos, T) ->
                   setelement(maps:get(keypos, T), Default, Key);
               [] -> badarg(Args)
           end,
    Ops = case Op of
              L when is_list(L) -> L;
              _ -> [Op]
          end,
    {Obj, Results} = lists:foldl(fun(O, {Acc, Rs}) ->
                                         {Acc1, R} = counter_op(O, Acc, maps:get(keypos, T), Args),
                                         {Acc1, [R | Rs]}
                                 end, {Obj0, []}, Ops),
    store(put_object(Obj, T)),
    case Op of
        L2 when is_list(L2) -> lists:reverse(Results);
        _ -> hd(Results)
    end.

counter_op(Incr, Obj, KeyPos, Args) when is_integer(Incr) ->
    counter_op({KeyPos + 1, Incr}, Obj, KeyPos, Args);
counter_op({Pos, Incr}, Obj, KeyPos, Args) ->
    counter_op({Pos, Incr, none, none}, Obj, KeyPos, Args);
counter_op({Pos, Incr, Threshold, SetValue}, Obj, KeyPos, Args)
  when is_integer(Pos), Pos >= 1, Pos =< tuple_size(Obj), Pos =/= KeyPos, is_integer(Incr) ->
    Old = element(Pos, Obj),
    is_integer(Old) orelse badarg(Args),
    New0 = Old + Incr,
    New = case Threshold of
              none -> New0;
              _ when Incr >= 0, New0 > Threshold -> SetValue;
              _ when Incr < 0, New0 < Threshold -> SetValue;
              _ -> New0
          end,
    {setelement(Pos, Obj, New), New};
counter_op(_, _, _, Args) ->
    badarg(Args).

-spec update_element(tab(), term(), {pos_integer(), term()} | [{pos_integer(), term()}]) -> boolean().
update_element(Tab, Key, Updates) ->
    T = table(Tab, write, [Tab, Key, Updates]),
    lists:member(maps:get(type, T), [set, ordered_set]) orelse erlang:error(badarg, [Tab, Key, Updates]),
    List = case Updates of
               L when is_list(L) -> L;
               U -> [U]
           end,
    case find(Key, T) of
        [] -> false;
        [Obj] ->
            New = lists:foldl(fun({Pos, V}, O) when is_integer(Pos), Pos >= 1, Pos =< tuple_size(O),
                                                   Pos =/= map_get(keypos, T) ->
                                      setelement(Pos, O, V);
                                 (_, _) -> badarg({update_element, [Tab, Key, Updates]})
                              end, Obj, List),
            store(put_object(New, T)),
            true
    end.

-spec first(tab()) -> term().
first(Tab) ->
    case keys(in_key_order(table(Tab, read, [Tab]))) of
        [] -> '$end_of_table';
        [K | _] -> K
    end.

-spec last(tab()) -> term().
last(Tab) ->
    case in_key_order(table(Tab, read, [Tab])) of
        #{type := ordered_set} = T ->
            case keys(T) of
                [] -> '$end_of_table';
                Ks -> lists:last(Ks)
            end;
        T ->
            case keys(T) of
                [] -> '$end_of_table';
                [K | _] -> K
            end
    end.

-spec next(tab(), term()) -> term().
next(Tab, Key) ->
    T = in_key_order(table(Tab, read, [Tab, Key])),
    step(Key, keys(T), T, {next, [Tab, Key]}).

%% For set, bag and duplicate_bag, OTP's prev/2 and last/1 work like
%% next/2 and first/1.
-spec prev(tab(), term()) -> term().
prev(Tab, Key) ->
    T = in_key_order(table(Tab, read, [Tab, Key])),
    case T of
        #{type := ordered_set} -> step(Key, lists:reverse(keys(T)), T, {prev, [Tab, Key]});
        _ -> step(Key, keys(T), T, {prev, [Tab, Key]})
    end.

%% The key after Key in Keys.  For an ordered_set a key not in the table
%% still has a next one; for the other types it is badarg, as on the VM.
step(Key, Keys, T, Args) ->
    case lists:dropwhile(fun(K) -> not same_key(T, K, Key) end, Keys) of
        [_, Next | _] -> Next;
        [_] -> '$end_of_table';
        [] when map_get(type, T) =:= ordered_set ->
            Rest = case Keys =:= keys(T) of
                       true -> [K || K <- Keys, K > Key];
                       false -> [K || K <- Keys, K < Key]
                   end,
            case Rest of
                [] -> '$end_of_table';
                [N | _] -> N
            end;
        [] -> badarg(Args)
    end.

-spec foldl(fun((tuple(), A) -> A), A, tab()) -> A.
foldl(F, Acc, Tab) ->
    lists:foldl(F, Acc, all_objects(in_key_order(table(Tab, read, {safe_fixtable, [Tab, true]})))).

-spec foldr(fun((tuple(), A) -> A), A, tab()) -> A.
foldr(F, Acc, Tab) ->
    lists:foldr(F, Acc, all_objects(in_key_order(table(Tab, read, {safe_fixtable, [Tab, true]})))).

%% As in OTP, the tid of a deleted table gives undefined, any other
%% reference badarg.
-spec info(tab()) -> [{atom(), term()}] | undefined.
info(Tab) when is_atom(Tab); is_reference(Tab) ->
    is_tab(Tab) orelse erlang:error(badarg, [Tab]),
    case resolve(Tab) of
        undefined -> undefined;
        T -> [{I, info_item(I, T, [Tab])}
              || I <- [id, decentralized_counters, read_concurrency, write_concurrency,
                       compressed, memory, owner, heir, name, size, node, named_table,
                       type, keypos, protection]]
    end;
info(Tab) ->
    erlang:error(badarg, [Tab]).

-spec info(tab(), atom()) -> term().
info(Tab, Item) when is_atom(Tab); is_reference(Tab) ->
    is_tab(Tab) orelse erlang:error(badarg, [Tab, Item]),
    case resolve(Tab) of
        undefined -> undefined;
        T -> info_item(Item, T, [Tab, Item])
    end;
info(Tab, Item) ->
    erlang:error(badarg, [Tab, Item]).

info_item(id, #{tid := K}, _) -> mce_ref:tid_term(K);
info_item(name, #{extra := Extra}, _) -> element(1, Extra);
info_item(decentralized_counters, #{extra := Extra}, _) -> element(2, Extra);
info_item(read_concurrency, #{extra := Extra}, _) -> element(3, Extra);
info_item(write_concurrency, #{extra := Extra}, _) -> element(4, Extra);
info_item(compressed, #{extra := Extra}, _) -> element(5, Extra);
%% Words of the implementation: an estimate, from the objects' sizes.
info_item(memory, T, _) -> 305 + lists:sum([erts_debug:flat_size(O) + 3 || O <- all_objects(T)]);
info_item(Fixed, _, _) when Fixed =:= fixed; Fixed =:= safe_fixed;
                            Fixed =:= safe_fixed_monotonic_time -> false;
info_item(named_table, #{name := N}, _) -> N =/= none;
info_item(type, #{type := Ty}, _) -> Ty;
info_item(keypos, #{keypos := K}, _) -> K;
info_item(protection, #{protection := P}, _) -> P;
info_item(owner, #{owner := O}, _) -> mce_pid:term(O);
info_item(heir, #{heir := 0}, _) -> none;
info_item(heir, #{heir := H}, _) -> mce_pid:term(H);
info_item(size, T, _) -> length(all_objects(T));
info_item(node, _T, _) -> mce_rt:node();
info_item(Item, _T, _) when Item =:= stats; Item =:= binary ->
    mce_rt:fatal({mcerlang, {unsupported_bif, {ets, info, 2},
                             {item, Item, "the items of the implementation's memory and "
                                          "statistics are not modelled"}}});
info_item(_, _T, Args) ->
    badarg({info, Args}).

%%--------------------------------------------------------------------
%% The table store: state, step overlay and effects
%%--------------------------------------------------------------------

me() -> erlang:get('$mce_pid').

%% The table Tab, checked for an access of kind Need (read, write, owner).
%% Args are the failing call's arguments, or {F, Args} where the VM fails
%% in another ets function F.
table(Tab, Need, Args) ->
    case resolve(Tab) of
        undefined -> badarg(Args);
        #{owner := Owner, protection := P} = T ->
            Mine = Owner =:= me(),
            Ok = case Need of
                     owner -> Mine;
                     write -> Mine orelse P =:= public;
                     read -> Mine orelse P =/= private
                 end,
            Ok orelse badarg(Args),
            T
    end.

%% badarg with the top frame {ets, F, Args}: the executor names mce_ets
%% frames after the outermost one (mce_exec:clean_stack/1), so a frame
%% naming another function is built here, above the caller's frames.
badarg({F, Args}) ->
    {current_stacktrace, Stack} = erlang:process_info(self(), current_stacktrace),
    Caller = lists:dropwhile(fun({M, _, _, _}) -> M =:= mce_ets orelse M =:= erlang end, Stack),
    erlang:raise(error, badarg, [{ets, F, Args, []} | Caller]);
badarg(Args) ->
    erlang:error(badarg, Args).

is_tab(Tab) ->
    is_atom(Tab) orelse mce_ref:tid_number(Tab) =/= error.

resolve(Name) when is_atom(Name) ->
    case table_named(Name) of
        undefined -> not_system_table(Name);
        Key -> lookup_tid(Key)
    end;
resolve(Ref) when is_reference(Ref) ->
    case mce_ref:tid_number(Ref) of
        {ok, Key} -> lookup_tid(Key);
        error -> undefined
    end;
resolve(_) ->
    undefined.

not_system_table(Name) ->
    case lists:member(Name, ?SYSTEM_TABLES) of
        true -> system_table(Name);
        false -> undefined
    end.

%% The program touched a system table of the node, which the model does
%% not hold: refused, naming the table, the ets call and its caller.
-spec system_table(atom()) -> no_return().
system_table(Name) ->
    {current_stacktrace, Stack} = erlang:process_info(self(), current_stacktrace),
    {Ets, Rest} = lists:splitwith(fun({M, _, _, _}) -> M =:= mce_ets orelse M =:= erlang end,
                                  Stack),
    {mce_ets, F, A, _} = lists:last([Fr || {mce_ets, _, _, _} = Fr <- Ets]),
    Location = case mce_exec:clean_stack(Rest) of
                   [{CM, CF, CA, Info} | _] ->
                       {CM, CF, CA, proplists:get_value(line, Info, 0)};
                   [] -> undefined
               end,
    mce_rt:fatal({mcerlang, {unsupported_system_table, Name, {ets, F, A}, Location}}).

table_named(Name) ->
    Overlay = erlang:get('$mce_overlay'),
    Mine = [K || {{ets, K}, #{name := N}} <- maps:to_list(Overlay), N =:= Name],
    case Mine of
        [K | _] -> K;
        [] ->
            Node = me() bsr 24,
            case mce_nif:ets_named(erlang:get('$mce_search'), Node, Name) of
                undefined -> undefined;
                K ->
                    case maps:get({ets, K}, Overlay, stored) of
                        stored -> K;
                        #{name := Name} -> K;
                        _ -> undefined          % deleted or renamed in this step
                    end
            end
    end.

lookup_tid(Key) ->
    case maps:get({ets, Key}, erlang:get('$mce_overlay'), stored) of
        deleted -> undefined;
        stored ->
            case mce_nif:ets_table(erlang:get('$mce_search'), Key) of
                undefined -> undefined;
                {error, Where, Why} -> mce_rt:fatal({mcerlang_internal, Where, Why});
                {Owner, Heir, HeirData, Name, {Type, Prot, KeyPos, Objects, Extra}} ->
                    #{tid => Key, owner => Owner, heir => Heir,
                      heir_data => case HeirData of none -> none; D -> {D} end,
                      name => Name, type => Type, protection => Prot, keypos => KeyPos,
                      objects => Objects, extra => Extra}
            end;
        T -> T
    end.

store(#{tid := Key, owner := Owner, heir := Heir, heir_data := HD, name := Name,
        type := Type, protection := P, keypos := KP, objects := Objs, extra := Extra} = T) ->
    overlay({ets, Key}, T),
    effect({ets_put, Key, Owner, Heir, Name,
            {Type, P, KP, Objs, Extra}, case HD of none -> undefined; {D} -> D end}).

drop(#{tid := Key}) ->
    overlay({ets, Key}, deleted),
    effect({ets_delete, Key}).

overlay(K, V) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{K => V}).

effect(E) ->
    erlang:put('$mce_effects', [E | erlang:get('$mce_effects')]).

tab_term(#{name := none, tid := K}) -> mce_ref:tid_term(K);
tab_term(#{name := N}) -> N.

%%--------------------------------------------------------------------
%% Objects, kept as [{Key, [Object]}] sorted by key
%%--------------------------------------------------------------------

objects_arg(T, Obj, Args) when is_tuple(Obj) ->
    objects_arg(T, [Obj], Args);
objects_arg(#{keypos := KP}, Objs, Args) when is_list(Objs) ->
    is_proper_list(Objs) andalso
        lists:all(fun(O) -> is_tuple(O) andalso tuple_size(O) >= KP end, Objs)
        orelse erlang:error(badarg, Args),
    Objs;
objects_arg(_, _, Args) ->
    erlang:error(badarg, Args).

key(#{keypos := KP}, Obj) -> element(KP, Obj).

%% ordered_set compares keys with ==, the others match them exactly.
same_key(#{type := ordered_set}, A, B) -> A == B;
same_key(_, A, B) -> A =:= B.

find(Key, #{objects := Objs} = T) ->
    case [Os || {K, Os} <- Objs, same_key(T, K, Key)] of
        [Os] -> Os;
        [] -> []
    end.

keys(#{objects := Objs}) -> [K || {K, _} <- Objs].

all_objects(#{objects := Objs}) -> lists:append([Os || {_, Os} <- Objs]).

%% T is about to be read in the order of its keys (first/next, tab2list,
%% a match or select with more than one answer, a fold): symmetry
%% reduction renames pids in keys and sorts the objects again, so that
%% order is no image of the original's when the keys name two processes
%% (mce_rt_order:ets_keys/1 tells the search).  Returns T.
in_key_order(#{objects := Objs} = T) ->
    mce_rt_order:ets_keys([K || {K, _} <- Objs]),
    T.

put_object(Obj, #{type := Type} = T) ->
    K = key(T, Obj),
    Old = find(K, T),
    New = case Type of
              bag -> case lists:member(Obj, Old) of
                         true -> Old;
                         false -> Old ++ [Obj]
                     end;
              duplicate_bag -> Old ++ [Obj];
              _ -> [Obj]
          end,
    set_key(K, New, T).

remove_key(Key, T) -> set_key(Key, [], T).

%% Replaces the objects of Key (none: the key goes), keeping the list
%% sorted by key; an ordered_set keeps the key it had.
set_key(Key, Objs, #{objects := All} = T) ->
    Others = [E || {K, _} = E <- All, not same_key(T, K, Key)],
    New = case Objs of
              [] -> Others;
              %% An ordered_set object replaces the old one, key and all
              %% (1.0 replaces 1).
              [Obj | _] -> lists:sort(fun key_le/2, [{key(T, Obj), Objs} | Others])
          end,
    T#{objects := New}.

%% @doc A table's data term (as stored, see the module doc) with its
%% objects put back into the order of their keys: symmetry reduction's
%% counterexamples rename the pids in keys (mce_symmetry), as the C side
%% does (c_src/sym_rename.c).
-spec sorted_data(tuple()) -> tuple().
sorted_data(Data) when tuple_size(Data) >= 4, is_list(element(4, Data)) ->
    setelement(4, Data, lists:sort(fun key_le/2, element(4, Data)));
sorted_data(Data) ->
    Data.

%% A total order on keys: term order, and 1 before 1.0 (equal in term
%% order but different keys in a set).
key_le({A, _}, {B, _}) ->
    A < B orelse (A == B andalso erlang:term_to_binary(A) =< erlang:term_to_binary(B)).

compile(MS, Args) ->
    try ets:match_spec_compile(MS)
    catch error:badarg -> badarg(Args)
    end.
