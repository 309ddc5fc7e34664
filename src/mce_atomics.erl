%% @doc atomics for checked code: the arrays live in the shared term of the
%% state (mce_app:shared/0) under `{atomics, Ref}', so every process sees
%% each write from the step that makes it on and states differ by the
%% values.  An array is named by a simulated ref (mce_rt_signals:make_ref/0); its
%% entry in the shared term keeps that ref from being reused.  Each
%% operation reads and writes the shared term in one step, as the VM does
%% it atomically; under `granularity => small' it is a scheduling point.
%% mce_counters builds counters on the same arrays.
-module(mce_atomics).

-export([new/2, put/3, get/2, add/3, add_get/3, sub/3, sub_get/3, exchange/3,
         compare_exchange/4, info/1]).
-export([array_new/3, array_read/3, array_update/4, array_info/2]).

-define(MIN_SIGNED, (-(1 bsl 63))).
-define(MAX_SIGNED, ((1 bsl 63) - 1)).
-define(MAX_UNSIGNED, ((1 bsl 64) - 1)).

-spec new(pos_integer(), [{signed, boolean()}]) -> reference().
new(Arity, Opts) when is_integer(Arity), Arity >= 1, Arity < 1 bsl 32, is_list(Opts) ->
    Signed = lists:foldl(fun({signed, B}, _) when is_boolean(B) -> B;
                            (_, _) -> erlang:error(badarg, [Arity, Opts])
                         end, true, Opts),
    array_new(Arity, Signed, [Arity, Opts]);
new(Arity, Opts) ->
    erlang:error(badarg, [Arity, Opts]).

-spec put(reference(), pos_integer(), integer()) -> ok.
put(Ref, Ix, Value) ->
    Args = [Ref, Ix, Value],
    array_update(Ref, Ix, fun(_Old, Signed) -> {ok, in_range(Value, Signed, Args)} end, Args).

-spec get(reference(), pos_integer()) -> integer().
get(Ref, Ix) ->
    array_read(Ref, Ix, [Ref, Ix]).

-spec add(reference(), pos_integer(), integer()) -> ok.
add(Ref, Ix, Incr) ->
    _ = add_get(Ref, Ix, Incr, [Ref, Ix, Incr]),
    ok.

-spec add_get(reference(), pos_integer(), integer()) -> integer().
add_get(Ref, Ix, Incr) ->
    add_get(Ref, Ix, Incr, [Ref, Ix, Incr]).

-spec sub(reference(), pos_integer(), integer()) -> ok.
sub(Ref, Ix, Decr) ->
    _ = sub_get(Ref, Ix, Decr),
    ok.

-spec sub_get(reference(), pos_integer(), integer()) -> integer().
sub_get(Ref, Ix, Decr) ->
    is_incr(Decr) orelse erlang:error(badarg, [Ref, Ix, Decr]),
    add_get(Ref, Ix, -Decr, [Ref, Ix, Decr]).

-spec exchange(reference(), pos_integer(), integer()) -> integer().
exchange(Ref, Ix, Desired) ->
    Args = [Ref, Ix, Desired],
    array_update(Ref, Ix, fun(Old, Signed) -> {Old, in_range(Desired, Signed, Args)} end, Args).

-spec compare_exchange(reference(), pos_integer(), integer(), integer()) -> ok | integer().
compare_exchange(Ref, Ix, Expected, Desired) ->
    Args = [Ref, Ix, Expected, Desired],
    array_update(Ref, Ix, fun(Old, Signed) ->
                                  in_range(Expected, Signed, Args),
                                  New = in_range(Desired, Signed, Args),
                                  case Old =:= Expected of
                                      true -> {ok, New};
                                      false -> {Old, Old}
                                  end
                          end, Args).

-spec info(reference()) -> #{size := pos_integer(), max := integer(), min := integer(),
                             memory := pos_integer()}.
info(Ref) ->
    {Size, Signed} = array_info(Ref, [Ref]),
    {Min, Max} = case Signed of
                     true -> {?MIN_SIGNED, ?MAX_SIGNED};
                     false -> {0, ?MAX_UNSIGNED}
                 end,
    %% The VM's layout on OTP 25 (64-bit): a 40-byte header and a word
    %% per element.
    #{size => Size, max => Max, min => Min, memory => 40 + 8 * Size}.

add_get(Ref, Ix, Incr, Args) ->
    is_incr(Incr) orelse erlang:error(badarg, Args),
    array_update(Ref, Ix, fun(Old, Signed) -> V = wrap(Old + Incr, Signed), {V, V} end, Args).

%% Increments are 64-bit words, signed or not, whatever the array holds.
is_incr(I) ->
    is_integer(I) andalso I >= ?MIN_SIGNED andalso I =< ?MAX_UNSIGNED.

in_range(V, true, _Args) when is_integer(V), V >= ?MIN_SIGNED, V =< ?MAX_SIGNED -> V;
in_range(V, false, _Args) when is_integer(V), V >= 0, V =< ?MAX_UNSIGNED -> V;
in_range(_V, _Signed, Args) -> erlang:error(badarg, Args).

wrap(V, Signed) ->
    W = V band ?MAX_UNSIGNED,
    case Signed andalso W > ?MAX_SIGNED of
        true -> W - (1 bsl 64);
        false -> W
    end.

%%--------------------------------------------------------------------
%% The arrays in the shared term (also used by mce_counters)
%%--------------------------------------------------------------------

%% @doc A new array of Size zeros.
-spec array_new(pos_integer(), boolean(), list()) -> reference().
array_new(Size, Signed, _Args) ->
    Ref = mce_rt_signals:make_ref(),
    store(Ref, {Signed, erlang:make_tuple(Size, 0)}),
    Ref.

%% @doc Element Ix of array Ref; badarg with Args for a bad array or index.
-spec array_read(term(), term(), list()) -> integer().
array_read(Ref, Ix, Args) ->
    {_Signed, Values} = lookup(Ref, Args),
    element(index(Ix, Values, Args), Values).

%% @doc Replaces element Ix by Update(Old, Signed) = {Result, New}; returns
%% Result.
-spec array_update(term(), term(), fun((integer(), boolean()) -> {T, integer()}), list()) -> T.
array_update(Ref, Ix, Update, Args) ->
    {Signed, Values} = lookup(Ref, Args),
    I = index(Ix, Values, Args),
    {Result, New} = Update(element(I, Values), Signed),
    New =:= element(I, Values) orelse store(Ref, {Signed, setelement(I, Values, New)}),
    Result.

%% @doc The size and signedness of array Ref.
-spec array_info(term(), list()) -> {pos_integer(), boolean()}.
array_info(Ref, Args) ->
    {Signed, Values} = lookup(Ref, Args),
    {tuple_size(Values), Signed}.

lookup(Ref, Args) ->
    case maps:find({atomics, Ref}, mce_app:shared()) of
        {ok, Array} when is_reference(Ref) -> Array;
        _ -> erlang:error(badarg, Args)
    end.

index(Ix, Values, _Args) when is_integer(Ix), Ix >= 1, Ix =< tuple_size(Values) -> Ix;
index(_Ix, _Values, Args) -> erlang:error(badarg, Args).

store(Ref, Array) ->
    mce_app:store_shared((mce_app:shared())#{{atomics, Ref} => Array}).
