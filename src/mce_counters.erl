%% @doc counters for checked code, on the arrays of mce_atomics (as OTP
%% builds them on atomics): signed 64-bit words that wrap.  Both kinds are
%% modelled alike; the ref keeps the tag the VM gives it.
-module(mce_counters).

-export([new/2, get/2, add/3, sub/3, put/3, info/1]).

-type counters_ref() :: {atomics | write_concurrency, reference()}.

-spec new(pos_integer(), [atomics | write_concurrency]) -> counters_ref().
new(Size, Opts) when is_integer(Size), Size >= 1, Size < 1 bsl 32, is_list(Opts) ->
    Kind = case Opts of
               [] -> atomics;
               [atomics] -> atomics;
               [write_concurrency] -> write_concurrency;
               _ -> erlang:error(badarg, [Size, Opts])
           end,
    {Kind, mce_atomics:array_new(Size, true, [Size, Opts])};
new(Size, Opts) ->
    erlang:error(badarg, [Size, Opts]).

-spec get(counters_ref(), pos_integer()) -> integer().
get(Counters, Ix) ->
    mce_atomics:array_read(ref(Counters, [Counters, Ix]), Ix, [Counters, Ix]).

-spec add(counters_ref(), pos_integer(), integer()) -> ok.
add(Counters, Ix, Incr) ->
    Args = [Counters, Ix, Incr],
    _ = mce_atomics:add_get(ref(Counters, Args), Ix, Incr),
    ok.

-spec sub(counters_ref(), pos_integer(), integer()) -> ok.
sub(Counters, Ix, Decr) ->
    Args = [Counters, Ix, Decr],
    _ = mce_atomics:sub_get(ref(Counters, Args), Ix, Decr),
    ok.

-spec put(counters_ref(), pos_integer(), integer()) -> ok.
put(Counters, Ix, Value) ->
    mce_atomics:put(ref(Counters, [Counters, Ix, Value]), Ix, Value).

-spec info(counters_ref()) -> #{size := pos_integer(), memory := pos_integer()}.
info(Counters) ->
    {Size, _} = mce_atomics:array_info(ref(Counters, [Counters]), [Counters]),
    #{size => Size, memory => 40 + 8 * Size}.

ref({Kind, Ref}, _Args) when Kind =:= atomics; Kind =:= write_concurrency -> Ref;
ref(_, Args) -> erlang:error(badarg, Args).
