%% @doc gen_server programs for the differential tests (see tprog_otp):
%% {via, Module, Name} names with global and with a registry of the
%% program's own, hibernation (gen_server's `hibernate' return and a bare
%% erlang:hibernate/3), enter_loop, multi_call and abcast.
-module(tprog_gs_names).
-behaviour(gen_server).
-export([via_global/0, via_own/0, hib/0, bare_hibernate/0, enter/0, multi/0, abcast/0]).
-export([enter_init/1, bare_body/1, woke/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export([register_name/2, unregister_name/1, whereis_name/1, send/2]).

%% A registry for {via, ?MODULE, Name}: a public ETS table that the root
%% process creates.
register_name(Name, Pid) ->
    case ets:insert_new(tprog_gs_reg, {Name, Pid}) of true -> yes; false -> no end.

unregister_name(Name) ->
    ets:delete(tprog_gs_reg, Name),
    ok.

whereis_name(Name) ->
    case ets:lookup(tprog_gs_reg, Name) of
        [{_, Pid}] -> Pid;
        [] -> undefined
    end.

send(Name, Msg) ->
    case whereis_name(Name) of
        undefined -> exit({badarg, {Name, Msg}});
        Pid -> Pid ! Msg, Pid
    end.

via_global() ->
    {ok, P} = gen_server:start({via, global, srv}, ?MODULE, 0, []),
    A = gen_server:call({via, global, srv}, inc),
    B = gen_server:start({via, global, srv}, ?MODULE, 0, []),
    ok = gen_server:stop({via, global, srv}),
    exit({result, {A, element(1, B), P =:= element(2, element(2, B)), global:whereis_name(srv)}}).

via_own() ->
    ets:new(tprog_gs_reg, [named_table, public]),
    {ok, _P} = gen_server:start({via, ?MODULE, srv}, ?MODULE, 0, []),
    A = gen_server:call({via, ?MODULE, srv}, inc),
    gen_server:cast({via, ?MODULE, srv}, inc),
    B = gen_server:call({via, ?MODULE, srv}, inc),
    ok = gen_server:stop({via, ?MODULE, srv}),
    C = (catch gen_server:call({via, ?MODULE, srv}, inc)),
    exit({result, {A, B, C}}).

hib() ->
    {ok, P} = gen_server:start(?MODULE, 0, []),
    A = gen_server:call(P, hib),
    B = gen_server:call(P, inc),
    ok = gen_server:stop(P),
    exit({result, {A, B}}).

enter() ->
    P = proc_lib:spawn(?MODULE, enter_init, [self()]),
    receive entered -> ok end,
    A = gen_server:call(P, inc),
    ok = gen_server:stop(P),
    exit({result, A}).
enter_init(Parent) ->
    Parent ! entered,
    gen_server:enter_loop(?MODULE, [], 10).

multi() ->
    {ok, _} = gen_server:start({local, msrv}, ?MODULE, 0, []),
    R = gen_server:multi_call(msrv, inc),
    R2 = gen_server:multi_call([node()], msrv, inc),
    ok = gen_server:stop(msrv),
    exit({result, {R, R2}}).
abcast() ->
    {ok, _} = gen_server:start({local, msrv}, ?MODULE, 0, []),
    abcast = gen_server:abcast(msrv, inc),
    abcast = gen_server:abcast([node()], msrv, inc),
    R = gen_server:call(msrv, get),
    ok = gen_server:stop(msrv),
    exit({result, R}).

init(N) -> {ok, N}.
%% erlang:hibernate/3 wakes on a message without taking it; the stack
%% (and the catch in it) is gone.
bare_hibernate() ->
    P = spawn(?MODULE, bare_body, [self()]),
    receive ready -> ok end,
    P ! hello,
    receive {woke, X} -> exit({result, X}) end.
bare_body(Parent) ->
    Parent ! ready,
    _ = (catch erlang:hibernate(?MODULE, woke, [Parent, before])),
    Parent ! not_reached.
woke(Parent, Tag) ->
    receive M -> Parent ! {woke, {Tag, M}} end.

handle_call(hib, _, S) -> {reply, hibernating, S, hibernate};
handle_call(get, _, S) -> {reply, S, S};
handle_call(inc, _, S) -> {reply, S + 1, S + 1}.
handle_cast(inc, S) -> {noreply, S + 1}.
handle_info(_, S) -> {noreply, S}.
