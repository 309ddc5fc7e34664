%% @doc persistent_term for checked code: one table of terms per node, kept
%% in the shared term of the state (mce_app:shared/0) under
%% `{persistent_term, NodeIndex}', so that every process of the node sees
%% each change from the step that makes it on, and states differ by it.
%% Calls of persistent_term in user code are redirected here.
-module(mce_pterm).

-export([put/2, get/0, get/1, get/2, erase/1, info/0]).

-spec put(term(), term()) -> ok.
put(Key, Value) ->
    store((table())#{Key => Value}).

-spec get() -> [{term(), term()}].
get() ->
    maps:to_list(table()).

-spec get(term()) -> term().
get(Key) ->
    case table() of
        #{Key := Value} -> Value;
        #{} -> erlang:error(badarg, [Key])
    end.

-spec get(term(), term()) -> term().
get(Key, Default) ->
    maps:get(Key, table(), Default).

-spec erase(term()) -> boolean().
erase(Key) ->
    Table = table(),
    case maps:is_key(Key, Table) of
        true -> store(maps:remove(Key, Table)), true;
        false -> false
    end.

%% Sizes are not modelled: the count is, the memory is a fixed 0.
-spec info() -> #{count := non_neg_integer(), memory := 0}.
info() ->
    #{count => map_size(table()), memory => 0}.

table() ->
    maps:get(key(), mce_app:shared(), #{}).

store(Table) ->
    mce_app:store_shared((mce_app:shared())#{key() => Table}).

key() ->
    {persistent_term, erlang:get('$mce_pid') bsr 24}.
