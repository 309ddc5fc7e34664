%% @doc ETS for checked code: tables are part of the checked state.
%%
%% The translator redirects `ets:F(...)' calls in user code here.  A table
%% lives in the C state (`c_src/sys_state.h', `ets_table'): its owner, heir
%% and name, which C needs when the owner dies (the table goes to the heir
%% with an 'ETS-TRANSFER' message, or is deleted), and one data term
%% `{Type, Protection, KeyPos, Objects}' that this module reads and
%% rewrites.  Objects are `[{Key, [Object]}]' sorted by key (objects of a
%% bag key in insertion order), so equal tables are equal terms whatever
%% order the program inserted in: the state space does not grow with
%% insertion orders.  first/next and tab2list therefore go in key order for
%% every table type (for set and bag, OTP leaves the order unspecified).
%%
%% Within a step, changed tables are kept in the step's overlay and every
%% change is recorded as an effect; the runtime applies the effects when
%% the step ends.  Match specifications run through OTP's own
%% ets:match_spec_compile/1 and ets:match_spec_run/2.
-module(mce_ets).

-export([new/2, insert/2, insert_new/2, lookup/2, lookup_element/3, member/2,
         delete/1, delete/2, delete_object/2, delete_all_objects/1,
         match/2, match_object/2, select/2, select_delete/2, select_count/2,
         update_counter/3, update_counter/4, update_element/3,
         first/1, last/1, next/2, prev/2, tab2list/1, info/1, info/2,
         give_away/3, setopts/2, all/0, whereis/1, foldl/3, foldr/3, take/2]).

-type tab() :: atom() | reference().

-define(TYPES, [set, ordered_set, bag, duplicate_bag]).

%%--------------------------------------------------------------------
%% Tables
%%--------------------------------------------------------------------

-spec new(atom(), list()) -> tab().
new(Name, Opts) when is_atom(Name), is_list(Opts) ->
    Init = #{type => set, protection => protected, keypos => 1, named => false,
             heir => 0, heir_data => none},
    T = lists:foldl(fun(O, Acc) -> new_option(O, Acc, [Name, Opts]) end, Init, Opts),
    Me = me(),
    Named = maps:get(named, T),
    Named andalso table_named(Name) =/= undefined andalso erlang:error(badarg, [Name, Opts]),
    Ref = mce_rt:make_ref(),
    {ok, Key} = mce_ref:number(Ref),
    Tab = #{tid => Key, owner => Me, heir => maps:get(heir, T),
            heir_data => maps:get(heir_data, T),
            name => case Named of true -> Name; false -> none end,
            type => maps:get(type, T), protection => maps:get(protection, T),
            keypos => maps:get(keypos, T), objects => []},
    store(Tab),
    case Named of
        true -> Name;
        false -> Ref
    end;
new(Name, Opts) ->
    erlang:error(badarg, [Name, Opts]).

new_option(Type, T, _) when Type =:= set; Type =:= ordered_set; Type =:= bag;
                            Type =:= duplicate_bag ->
    T#{type := Type};
new_option(P, T, _) when P =:= public; P =:= protected; P =:= private -> T#{protection := P};
new_option(named_table, T, _) -> T#{named := true};
new_option({keypos, N}, T, _) when is_integer(N), N >= 1 -> T#{keypos := N};
new_option({heir, none}, T, _) -> T#{heir := 0, heir_data := none};
new_option({heir, Pid, Data}, T, Args) when is_pid(Pid) ->
    case mce_pid:number(Pid) of
        {ok, N} -> T#{heir := N, heir_data := {Data}};
        error -> erlang:error(badarg, Args)
    end;
new_option({K, B}, T, _) when (K =:= write_concurrency orelse K =:= read_concurrency orelse
                               K =:= decentralized_counters), is_boolean(B) -> T;
new_option({write_concurrency, auto}, T, _) -> T;
new_option(compressed, T, _) -> T;
new_option(_, _, Args) -> erlang:error(badarg, Args).

-spec delete(tab()) -> true.
delete(Tab) ->
    T = table(Tab, owner, [Tab]),
    drop(T),
    true.

-spec all() -> [tab()].
all() ->
    Node = erlang:get('$mce_pid') bsr 24,
    Stored = mce_nif:ets_tables(erlang:get('$mce_search'), Node),
    Overlay = [K || {{ets, K}, _} <- maps:to_list(erlang:get('$mce_overlay')), K bsr 24 =:= Node],
    [tab_term(T) || K <- lists:usort(Stored ++ Overlay), T <- [lookup_tid(K)], T =/= undefined].

-spec whereis(atom()) -> reference() | undefined.
whereis(Name) when is_atom(Name) ->
    case table_named(Name) of
        undefined -> undefined;
        Key -> mce_ref:term(Key)
    end.

-spec give_away(tab(), pid(), term()) -> true.
give_away(Tab, Pid, Data) ->
    T = table(Tab, owner, [Tab, Pid, Data]),
    N = case mce_pid:number(Pid) of
            {ok, K} -> K;
            error -> erlang:error(badarg, [Tab, Pid, Data])
        end,
    (N =/= me() andalso mce_rt:is_process_alive(Pid)) orelse erlang:error(badarg, [Tab, Pid, Data]),
    store(T#{owner := N}),
    mce_rt:send(Pid, {'ETS-TRANSFER', tab_term(T), mce_rt:self(), Data}),
    true.

-spec setopts(tab(), tuple() | [tuple()]) -> true.
setopts(Tab, Opts) when is_list(Opts) ->
    T = table(Tab, owner, [Tab, Opts]),
    store(lists:foldl(fun({heir, none}, Acc) -> Acc#{heir := 0, heir_data := none};
                         ({heir, Pid, Data}, Acc) when is_pid(Pid) ->
                              case mce_pid:number(Pid) of
                                  {ok, N} -> Acc#{heir := N, heir_data := {Data}};
                                  error -> erlang:error(badarg, [Tab, Opts])
                              end;
                         (_, _) -> erlang:error(badarg, [Tab, Opts])
                      end, T, Opts)),
    true;
setopts(Tab, Opt) ->
    setopts(Tab, [Opt]).

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
    T = table(Tab, write, [Tab]),
    store(T#{objects := []}),
    true.

-spec tab2list(tab()) -> [tuple()].
tab2list(Tab) ->
    all_objects(table(Tab, read, [Tab])).

-spec match_object(tab(), term()) -> [tuple()].
match_object(Tab, Pattern) ->
    select(Tab, [{Pattern, [], ['$_']}]).

-spec match(tab(), term()) -> [[term()]].
match(Tab, Pattern) ->
    select(Tab, [{Pattern, [], ['$$']}]).

-spec select(tab(), list()) -> [term()].
select(Tab, MS) ->
    T = table(Tab, read, [Tab, MS]),
    ets:match_spec_run(all_objects(T), compile(MS, [Tab, MS])).

-spec select_count(tab(), list()) -> non_neg_integer().
select_count(Tab, MS) ->
    T = table(Tab, read, [Tab, MS]),
    C = compile(MS, [Tab, MS]),
    length([O || O <- all_objects(T), ets:match_spec_run([O], C) =:= [true]]).

-spec select_delete(tab(), list()) -> non_neg_integer().
select_delete(Tab, MS) ->
    T = table(Tab, write, [Tab, MS]),
    C = compile(MS, [Tab, MS]),
    {Gone, Kept} = lists:partition(fun(O) -> ets:match_spec_run([O], C) =:= [true] end,
                                   all_objects(T)),
    store(lists:foldl(fun(O, Acc) -> put_object(O, Acc) end, T#{objects := []}, Kept)),
    length(Gone).

-spec update_counter(tab(), term(), term()) -> integer() | [integer()].
update_counter(Tab, Key, Op) ->
    update_counter(Tab, Key, Op, none).

-spec update_counter(tab(), term(), term(), tuple() | none) -> integer() | [integer()].
update_counter(Tab, Key, Op, Default) ->
    Args = case Default of none -> [Tab, Key, Op]; _ -> [Tab, Key, Op, Default] end,
    T = table(Tab, write, Args),
    lists:member(maps:get(type, T), [set, ordered_set]) orelse erlang:error(badarg, Args),
    Obj0 = case find(Key, T) of
               [O] -> O;
               [] when is_tuple(Default), tuple_size(Default) >= 1 ->
                   setelement(maps:get(keypos, T), Default, Key);
               [] -> erlang:error(badarg, Args)
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
    is_integer(Old) orelse erlang:error(badarg, Args),
    New0 = Old + Incr,
    New = case Threshold of
              none -> New0;
              _ when Incr >= 0, New0 > Threshold -> SetValue;
              _ when Incr < 0, New0 < Threshold -> SetValue;
              _ -> New0
          end,
    {setelement(Pos, Obj, New), New};
counter_op(_, _, _, Args) ->
    erlang:error(badarg, Args).

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
                                 (_, _) -> erlang:error(badarg, [Tab, Key, Updates])
                              end, Obj, List),
            store(put_object(New, T)),
            true
    end.

-spec first(tab()) -> term().
first(Tab) ->
    case keys(table(Tab, read, [Tab])) of
        [] -> '$end_of_table';
        [K | _] -> K
    end.

-spec last(tab()) -> term().
last(Tab) ->
    case keys(table(Tab, read, [Tab])) of
        [] -> '$end_of_table';
        Ks -> lists:last(Ks)
    end.

-spec next(tab(), term()) -> term().
next(Tab, Key) ->
    T = table(Tab, read, [Tab, Key]),
    step(Key, keys(T), T, [Tab, Key]).

-spec prev(tab(), term()) -> term().
prev(Tab, Key) ->
    T = table(Tab, read, [Tab, Key]),
    step(Key, lists:reverse(keys(T)), T, [Tab, Key]).

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
        [] -> erlang:error(badarg, Args)
    end.

-spec foldl(fun((tuple(), A) -> A), A, tab()) -> A.
foldl(F, Acc, Tab) ->
    lists:foldl(F, Acc, all_objects(table(Tab, read, [F, Acc, Tab]))).

-spec foldr(fun((tuple(), A) -> A), A, tab()) -> A.
foldr(F, Acc, Tab) ->
    lists:foldr(F, Acc, all_objects(table(Tab, read, [F, Acc, Tab]))).

-spec info(tab()) -> [{atom(), term()}] | undefined.
info(Tab) ->
    case resolve(Tab) of
        undefined -> undefined;
        T -> [{I, info_item(I, T)} || I <- [id, name, named_table, type, keypos, protection,
                                              owner, heir, size, node]]
    end.

-spec info(tab(), atom()) -> term().
info(Tab, Item) ->
    case resolve(Tab) of
        undefined -> undefined;
        T -> info_item(Item, T)
    end.

info_item(id, T) -> tab_term(T);
info_item(name, #{name := none, tid := K}) -> mce_ref:term(K);
info_item(name, #{name := N}) -> N;
info_item(named_table, #{name := N}) -> N =/= none;
info_item(type, #{type := Ty}) -> Ty;
info_item(keypos, #{keypos := K}) -> K;
info_item(protection, #{protection := P}) -> P;
info_item(owner, #{owner := O}) -> mce_pid:term(O);
info_item(heir, #{heir := 0}) -> none;
info_item(heir, #{heir := H}) -> mce_pid:term(H);
info_item(size, T) -> length(all_objects(T));
info_item(node, _T) -> mce_rt:node();
info_item(Item, _T) ->
    mce_rt:fatal({mcerlang, {unsupported_bif, {ets, info, 2},
                             {item, Item, "modelled items: id, name, named_table, type, keypos, "
                                          "protection, owner, heir, size, node"}}}).

%%--------------------------------------------------------------------
%% The table store: state, step overlay and effects
%%--------------------------------------------------------------------

me() -> erlang:get('$mce_pid').

%% The table Tab, checked for an access of kind Need (read, write, owner).
table(Tab, Need, Args) ->
    case resolve(Tab) of
        undefined -> erlang:error(badarg, Args);
        #{owner := Owner, protection := P} = T ->
            Mine = Owner =:= me(),
            Ok = case Need of
                     owner -> Mine;
                     write -> Mine orelse P =:= public;
                     read -> Mine orelse P =/= private
                 end,
            Ok orelse erlang:error(badarg, Args),
            T
    end.

resolve(Name) when is_atom(Name) ->
    case table_named(Name) of
        undefined -> undefined;
        Key -> lookup_tid(Key)
    end;
resolve(Ref) when is_reference(Ref) ->
    case mce_ref:number(Ref) of
        {ok, Key} ->
            case lookup_tid(Key) of
                #{name := none} = T -> T;
                _ -> undefined          % a named table is used by its name
            end;
        error -> undefined
    end;
resolve(_) ->
    undefined.

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
                        deleted -> undefined;
                        _ -> K
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
                {Owner, Heir, HeirData, Name, {Type, Prot, KeyPos, Objects}} ->
                    #{tid => Key, owner => Owner, heir => Heir,
                      heir_data => case HeirData of none -> none; D -> {D} end,
                      name => Name, type => Type, protection => Prot, keypos => KeyPos,
                      objects => Objects}
            end;
        T -> T
    end.

store(#{tid := Key, owner := Owner, heir := Heir, heir_data := HD, name := Name,
        type := Type, protection := P, keypos := KP, objects := Objs} = T) ->
    overlay({ets, Key}, T),
    effect({ets_put, Key, Owner, Heir, Name,
            {Type, P, KP, Objs}, case HD of none -> undefined; {D} -> D end}).

drop(#{tid := Key}) ->
    overlay({ets, Key}, deleted),
    effect({ets_delete, Key}).

overlay(K, V) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{K => V}).

effect(E) ->
    erlang:put('$mce_effects', [E | erlang:get('$mce_effects')]).

tab_term(#{name := none, tid := K}) -> mce_ref:term(K);
tab_term(#{name := N}) -> N.

%%--------------------------------------------------------------------
%% Objects, kept as [{Key, [Object]}] sorted by key
%%--------------------------------------------------------------------

objects_arg(T, Obj, Args) when is_tuple(Obj) ->
    objects_arg(T, [Obj], Args);
objects_arg(#{keypos := KP}, Objs, Args) when is_list(Objs) ->
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

%% A total order on keys: term order, and 1 before 1.0 (equal in term
%% order but different keys in a set).
key_le({A, _}, {B, _}) ->
    A < B orelse (A == B andalso erlang:term_to_binary(A) =< erlang:term_to_binary(B)).

compile(MS, Args) ->
    try ets:match_spec_compile(MS)
    catch error:badarg -> erlang:error(badarg, Args)
    end.
