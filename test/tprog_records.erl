%% Record defaults that call process BIFs or ETS: evaluated where the
%% record is built, by the process that builds it.
-module(tprog_records).
-export([main/0, table/0]).

-record(s, {owner = self(), ref = make_ref(), n = 0 :: integer()}).
-record(e, {tab = ets:new(tprog_records, [public])}).

main() ->
    S = #s{},
    S#s.owner ! hello,
    receive hello -> ok end,
    true = S#s.owner =:= self(),
    true = is_reference(S#s.ref),
    exit({result, S#s.n}).

table() ->
    #e{tab = T} = #e{},
    Self = self(),
    spawn(fun() -> ets:insert(T, {k, 1}), Self ! done end),
    receive done -> ok end,
    exit({result, ets:lookup(T, k)}).
