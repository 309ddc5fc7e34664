%% @doc The runtime guard of automatic symmetry reduction: the operations
%% whose result depends on the numbers of pids, run on behalf of checked
%% code, tell the search when their operands hold pids.
%%
%% A symmetric search (c_src/symmetry.c) stores one state per orbit under
%% permutations of pids.  A renaming is an automorphism of the program
%% only while the program never observes the numbers of pids: `=:=',
%% matching, sends, links and monitors are blind to them, but the order
%% operators, sorting, ordered and hashed containers, hashing and printing
%% are not.  The translator (mce_translate_order) points every such
%% operation in checked code here; the operation looks at its operands and,
%% if the result can depend on pid numbers (order: two distinct pids or refs
%% among the operands, a ref's number carrying its creator's pid; hash and
%% text: one), reports it (mce_nif:pid_order/1).  A symmetric search that
%% meets a report is void and the check runs again without symmetry
%% (mce_search, stat `symmetry => {off, pid_order}'); without symmetry the
%% report does nothing.  Then the operation runs as on the VM and returns
%% its real result.  Why that is sound: docs/ARCHITECTURE.md, "Symmetry
%% reduction".
%%
%% Invariant: every function here returns exactly what the operation it
%% stands for returns (or raises what it raises) on the same arguments.
-module(mce_rt_order).

-export([observes/3, call/3, compare/3, opaque/0, processes/0, process_record/2, make_fun/3,
         quiet/1, map_keys/1, iterates_map/2, map_iterator_made/2, ets_keys/1,
         tables_listed/1]).

%% What an operation observes: the relative order of pids (two are needed
%% to observe it), their numbers as hashes or text (one is enough), or
%% pid numbers whatever its arguments (`list_to_pid/1').
%% `keys': the order of a map's keys (its iteration: two distinct pids or
%% refs among the keys are needed).
-type kind() :: order | hash | always | keys.

%% @doc Whether `M:F/A' observes pid numbers, and how; `none' for the
%% operations a renaming of pids leaves alone.  The higher-order functions
%% of the library modules are not listed: they are translated, and the fun
%% they are given (user code, or a redirected `fun erlang:'<'/2') compares.
-spec observes(module(), atom(), arity()) -> kind() | none.
observes(erlang, F, 2) when F =:= '<'; F =:= '>'; F =:= '=<'; F =:= '>='; F =:= max; F =:= min ->
    order;
observes(erlang, F, A) when (F =:= phash andalso A =:= 2); (F =:= phash2 andalso A =< 2);
                            (F =:= term_to_binary andalso A =< 2);
                            (F =:= term_to_iovec andalso A =< 2);
                            (F =:= pid_to_list andalso A =:= 1);
                            (F =:= ref_to_list andalso A =:= 1) ->
    hash;
observes(erlang, F, 1) when F =:= list_to_pid; F =:= list_to_ref ->
    always;
observes(lists, F, 1) when F =:= sort; F =:= usort; F =:= merge; F =:= umerge; F =:= max;
                           F =:= min ->
    order;
observes(lists, F, 2) when F =:= keysort; F =:= ukeysort; F =:= merge; F =:= umerge ->
    order;
observes(lists, F, 3) when F =:= merge3; F =:= umerge3; F =:= keymerge; F =:= ukeymerge ->
    order;
observes(M, F, A) when M =:= ordsets; M =:= orddict; M =:= gb_sets; M =:= gb_trees; M =:= sofs ->
    container(M, F, A, order);
observes(M, F, A) when M =:= sets; M =:= dict ->
    container(M, F, A, hash);
observes(proplists, F, A) when (F =:= get_keys andalso A =:= 1); (F =:= compact andalso A =:= 1);
                               (F =:= normalize andalso A =:= 2) ->
    hash;
observes(maps, F, 1) when F =:= keys; F =:= values; F =:= to_list; F =:= iterator ->
    keys;
%% A library function that iterates a map inside, untranslated.
observes(proplists, from_map, 1) ->
    keys;
observes(io_lib, F, A) when F =:= format; F =:= fwrite; F =:= write; F =:= print;
                            F =:= build_text ->
    _ = code:ensure_loaded(io_lib),
    case erlang:function_exported(io_lib, F, A) of
        true -> hash;
        false -> none
    end;
observes(_, _, _) ->
    none.

%% An ordered or hashed container keeps its elements by their order or
%% hash: each of its functions that is not a higher-order one (translated,
%% see above) observes them.
container(M, F, A, Kind) ->
    _ = code:ensure_loaded(M),
    case erlang:function_exported(M, F, A) andalso
         mce_translate:classify_call(M, F, A) =/= library_hof of
        true -> Kind;
        false -> none
    end.

%% @doc `M:F(Args)' for an operation that observes/3 lists: reports it
%% when its arguments make the result depend on pid numbers, then runs it.
-spec call(module(), atom(), [term()]) -> term().
call(M, F, Args) ->
    case observes(M, F, length(Args)) of
        none -> ok;
        Kind -> observe(Kind, Args)
    end,
    erlang:apply(M, F, Args).

%% @doc The arguments (1-based positions) of `maps:F/A' that are maps it
%% iterates in key order, calling a fun per pair (its higher-order
%% functions, which run translated: mce_translate_order leaves the call and
%% passes those arguments through map_keys/1 instead), or those of the
%% functions observes/3 gives `keys'.
-spec iterates_map(atom(), arity()) -> [pos_integer()].
iterates_map(F, 1) when F =:= keys; F =:= values; F =:= to_list; F =:= iterator -> [1];
iterates_map(fold, 3) -> [3];
iterates_map(F, 2) when F =:= foreach; F =:= map; F =:= filter; F =:= filtermap -> [2];
iterates_map(F, 3) when F =:= merge_with; F =:= intersect_with -> [2, 3];
iterates_map(_, _) -> [].

%% @doc A map about to be iterated in key order (a higher-order function of
%% maps, see iterates_map/2): reports when its keys name two distinct
%% processes (a pid, or a ref's creator), whose order a renaming of pids
%% may change (symmetry reduction renames pids in map keys and re-sorts the
%% pairs, so the iteration order would be no image of the original's).
%% Refs made by one process keep their order (by their counter) when it is
%% renamed: `#{MRef => Pid}' of a server's monitors does not report.
%% Returns M.
%% Two refs of one creator do tell a renaming of its ref counters, which
%% the reduction may make (c_src/por.h): reported apart (report_refs/0).
-spec map_keys(T) -> T.
map_keys(M) when is_map(M) ->
    case map_size(M) >= 2 of
        true -> ordered_keys(maps:keys(M));
        false -> ok
    end,
    M;
map_keys(T) ->
    T.

%% @doc The keys of an ETS table about to be read in their order (mce_ets:
%% first/next, tab2list, fold, a match or select with several answers):
%% reports when they name two distinct processes, as map_keys/1 does for a
%% map (mce_ets keeps the objects sorted by key, and symmetry reduction
%% renames pids in keys and sorts them again).
-spec ets_keys([term()]) -> ok.
ets_keys(Keys) ->
    ordered_keys(Keys).

%% Keys read in their order: two processes among them are reported as for
%% symmetry, else two refs as for the reduction.
ordered_keys(Keys) ->
    case two_owners(Keys) of
        true -> report_keys();
        false -> refs_in_order(Keys)
    end.

refs_in_order(Terms) ->
    case two_refs(Terms) of
        true -> report_refs();
        false -> ok
    end.

%% @doc ets:all/0's tables, listed in the order of their tids, which carry
%% their creators' pid numbers: when two processes made them, a renaming
%% changes that order whatever keys are pinned, so the report voids the
%% symmetric search (as an order comparison does).
-spec tables_listed([reference()]) -> ok.
tables_listed(Tids) ->
    case two_owners(Tids) of
        true -> report();
        false -> refs_in_order(Tids)
    end.

%% @doc A fun of `maps:F/A' made at run time (erlang:make_fun/3, or `fun
%% M:F/A' with computed parts), which runs translated: when F iterates the
%% maps it is given, the maps it will meet are not known here, so a search
%% that renames pids in map keys runs again with them pinned (the same as
%% an iteration of such a map: conservative, and rare).
-spec map_iterator_made(atom(), arity()) -> ok.
map_iterator_made(F, A) ->
    case iterates_map(F, A) of
        [] -> ok;
        _ -> report_keys()
    end.

%% Whether Terms hold two distinct refs (a tid is one).
two_refs(Terms) ->
    length(numbered(Terms, [], 2, refs)) >= 2.

%% Whether the pids and refs in Terms stand for two distinct processes
%% (owners/2); stops at the second, since ets:next/2 asks at every call.
two_owners(Terms) ->
    two_owners(Terms, none).

two_owners([T | Ts], Seen) ->
    case owners(numbered(T, [], infinity), []) of
        [] -> two_owners(Ts, Seen);
        [O] when Seen =:= none; Seen =:= O -> two_owners(Ts, O);
        _ -> true
    end;
two_owners([], _) ->
    false.

%% The distinct processes that the pids and refs Ids stand for (a ref's
%% number carries its creator's, mce_ref); an id that is not simulated
%% stands for itself.
owners([], Acc) ->
    Acc;
owners([Id | Ids], Acc) ->
    O = case is_pid(Id) of
            true -> Id;
            false ->
                case mce_ref:number(Id) of
                    {ok, K} -> {creator, K bsr 24, (K band 16#ffffff) bsr 10};
                    error ->
                        case mce_ref:tid_number(Id) of
                            {ok, K} -> {creator, K bsr 24, (K band 16#ffffff) bsr 10};
                            error -> Id
                        end
                end
        end,
    owners(Ids, lists:usort([O | Acc])).

%% @doc `A Op B' for an order operator of checked code's bodies (`<',
%% `>', `=<', `>=', and erlang:max/2, erlang:min/2): the cheap test first,
%% an atom or a number never holds a pid.
-spec compare(atom(), term(), term()) -> term().
compare(Op, A, B) ->
    case is_number(A) orelse is_atom(A) orelse is_number(B) orelse is_atom(B) of
        true -> ok;
        false -> observe(order, [A, B])
    end,
    erlang:Op(A, B).

%% @doc Code whose order observations cannot be checked on the values (an
%% order comparison in the guards of a `receive') is about to run: a
%% symmetric search is void whatever the values.
-spec opaque() -> ok.
opaque() ->
    report().

%% @doc erlang:processes/0: the list is in pid order.
-spec processes() -> [pid()].
processes() ->
    Pids = mce_rt_procs:processes(),
    observe(order, [Pids]),
    Pids.

%% @doc erlang:process_info/2: its lists of pids (links, monitors,
%% monitored_by) are in pid order.
-spec process_record(pid(), term()) -> term().
process_record(Pid, Item) ->
    Info = mce_rt_procs:process_info(Pid, Item),
    observe(order, [Info]),
    Info.

%% @doc `fun M:F/A' (made at run time, or written in checked code) for an
%% operation that observes/3 lists: a fun that calls call/3.
-spec make_fun(module(), atom(), arity()) -> function().
make_fun(M, F, 0) -> fun() -> call(M, F, []) end;
make_fun(M, F, 1) -> fun(A) -> call(M, F, [A]) end;
make_fun(M, F, 2) -> fun(A, B) -> call(M, F, [A, B]) end;
make_fun(M, F, 3) -> fun(A, B, C) -> call(M, F, [A, B, C]) end;
make_fun(M, F, 4) -> fun(A, B, C, D) -> call(M, F, [A, B, C, D]) end.

%% @doc Runs Fun, whose result only goes to the output (a log event's
%% text, mce_logger), without reporting what it observes.
-spec quiet(fun(() -> T)) -> T.
quiet(Fun) ->
    Old = erlang:put('$mce_order_quiet', true),
    try Fun()
    after
        erlang:put('$mce_order_quiet', Old)
    end.

%%--------------------------------------------------------------------
%% The operands
%%--------------------------------------------------------------------

-spec observe(kind(), [term()]) -> ok.
observe(always, _Args) ->
    report();
observe(keys, [M]) ->
    _ = map_keys(M),
    ok;
observe(Kind, Args) ->
    Need = case Kind of
               order -> 2;
               hash -> 1
           end,
    case length(numbered(Args, [], Need)) >= Need of
        true -> report();
        false -> ok
    end.

%% The distinct pids and refs in T (as far as Need of them), prepended to
%% Acc.  Ports are the checker's own and never renamed; a fun's
%% environment is part of its value (and of its order).
numbered(T, Acc, Need) ->
    numbered(T, Acc, Need, all).

%% ... the refs only, with `refs'.
numbered(_T, Acc, Need, _Which) when length(Acc) >= Need ->
    Acc;
numbered(T, Acc, _Need, Which) when is_reference(T); is_pid(T), Which =:= all ->
    case lists:member(T, Acc) of
        true -> Acc;
        false -> [T | Acc]
    end;
numbered([H | T], Acc, Need, Which) ->
    numbered(T, numbered(H, Acc, Need, Which), Need, Which);
numbered(T, Acc, Need, Which) when is_tuple(T) ->
    numbered(tuple_to_list(T), Acc, Need, Which);
numbered(T, Acc, Need, Which) when is_map(T) ->
    numbered(maps:to_list(T), Acc, Need, Which);
numbered(T, Acc, Need, Which) when is_function(T) ->
    {env, Env} = erlang:fun_info(T, env),
    numbered(Env, Acc, Need, Which);
numbered(_T, Acc, _Need, _Which) ->
    Acc.

%% Tells the search of the running step (none outside one: a term built
%% by the checker itself; nothing while quiet/1 runs).
report() ->
    tell_search(fun mce_nif:pid_order/1).

%% The order of pids in a map's keys was observed: a symmetric search that
%% renamed pids in map keys runs again with them pinned (mce_nif:key_order/1).
report_keys() ->
    tell_search(fun mce_nif:key_order/1).

%% The order of two refs of one creator was observed: a search reduced up
%% to a renaming of ref counters runs again with the exact rules
%% (mce_nif:ref_order/1); symmetry keeps such refs in order.
report_refs() ->
    tell_search(fun mce_nif:ref_order/1).

tell_search(Tell) ->
    case erlang:get('$mce_order_quiet') =:= true orelse erlang:get('$mce_search') of
        true -> ok;
        undefined -> ok;
        Search -> Tell(Search)
    end.
