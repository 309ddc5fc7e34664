%% @doc A resource locker after the AXD 301 locker of the McErlang paper
%% (../shared/papers/004_2999ceb9aa2f1435.txt, section 6.1, Table 1),
%% built on OTP's own gen_server and supervisor.
%%
%% Clients ask for exclusive or shared access to resources; the locker
%% grants what is compatible and queues the rest, replying later with
%% gen_server:reply/2; it monitors a client while it holds or waits for a
%% lock and releases the locks of one that dies.  Each client, on being granted access, marks its use in
%% a public ETS table and crashes with `{mutex_violation, ...}' if another
%% client's use conflicts: mutual exclusion is an abnormal exit away.
%%
%% `start(Config, Rounds)' builds the paper's supervision tree: a top
%% supervisor starting the locker and a client supervisor with one client
%% per element of Config (`[{a, exclusive}, {a, shared}, ...]`, the paper's
%% `aEaS...'), each doing Rounds acquire/release rounds (`forever' makes
%% the clients loop, as in the paper).
%% `start_buggy(Config, Rounds)' plants a bug: a shared request is granted
%% even when an exclusive lock is held.
%% `start_pool(Config, Rounds)' (and `start_pool_buggy/2') is the same
%% locker with its clients under a `simple_one_for_one' supervisor, which
%% keeps them by pid instead of numbering them with child ids: identical
%% clients are then interchangeable, and symmetry reduction merges the
%% states that differ only in which client is which (docs/ARCHITECTURE.md,
%% "Symmetry reduction": with child ids the supervisor tells them apart).
-module(locker).
-behaviour(gen_server).
%% Also the supervisor callback module (init/1 dispatches on its argument).

-export([start/2, start_buggy/2, start_pool/2, start_pool_buggy/2, start_client/3, client/3]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-spec start([{atom(), exclusive | shared}], pos_integer() | forever) -> ok.
start(Config, Rounds) -> run(Config, Rounds, false).

-spec start_buggy([{atom(), exclusive | shared}], pos_integer() | forever) -> ok.
start_buggy(Config, Rounds) -> run(Config, Rounds, true).

-spec start_pool([{atom(), exclusive | shared}], pos_integer() | forever) -> ok.
start_pool(Config, Rounds) -> run_pool(Config, Rounds, false).

-spec start_pool_buggy([{atom(), exclusive | shared}], pos_integer() | forever) -> ok.
start_pool_buggy(Config, Rounds) -> run_pool(Config, Rounds, true).

run(Config, Rounds, Bug) ->
    ets:new(locker_usage, [named_table, public, bag]),
    {ok, _Top} = supervisor:start_link(?MODULE, {top, Config, Rounds, Bug}),
    %% The entry process owns the usage table, so it stays.
    receive stop -> ok end.

run_pool(Config, Rounds, Bug) ->
    ets:new(locker_usage, [named_table, public, bag]),
    {ok, _Top} = supervisor:start_link(?MODULE, {top_pool, Bug}),
    [{ok, _} = supervisor:start_child(locker_clients, [Res, Kind, Rounds]) || {Res, Kind} <- Config],
    receive stop -> ok end.

%%--------------------------------------------------------------------
%% Supervisors
%%--------------------------------------------------------------------

init({top, Config, Rounds, Bug}) ->
    {ok, {#{strategy => rest_for_one, intensity => 1, period => 5},
          [#{id => locker, start => {gen_server, start_link, [{local, locker}, ?MODULE, {locker, Bug}, []]}},
           #{id => clients, type => supervisor,
             start => {supervisor, start_link, [?MODULE, {clients, Config, Rounds}]}}]}};
init({top_pool, Bug}) ->
    {ok, {#{strategy => rest_for_one, intensity => 1, period => 5},
          [#{id => locker, start => {gen_server, start_link, [{local, locker}, ?MODULE, {locker, Bug}, []]}},
           #{id => clients, type => supervisor,
             start => {supervisor, start_link, [{local, locker_clients}, ?MODULE, pool]}}]}};
init(pool) ->
    {ok, {#{strategy => simple_one_for_one, intensity => 1, period => 5},
          [#{id => client, start => {?MODULE, start_client, []}, restart => temporary}]}};
init({clients, Config, Rounds}) ->
    {ok, {#{strategy => one_for_one, intensity => 1, period => 5},
          [#{id => {client, I}, start => {?MODULE, start_client, [Res, Kind, Rounds]},
             restart => temporary}
           || {I, {Res, Kind}} <- lists:zip(lists:seq(1, length(Config)), Config)]}};
%%--------------------------------------------------------------------
%% The locker: #{Resource => {Holders, Waiting}}
%%--------------------------------------------------------------------
init({locker, Bug}) ->
    {ok, #{bug => Bug, locks => #{}, monitors => #{}}}.

handle_call({request, Res, Kind}, {Pid, _} = From, #{locks := Locks} = S0) ->
    S = watch(Pid, S0),
    {Holders, Waiting} = maps:get(Res, Locks, {[], []}),
    case Waiting =:= [] andalso compatible(Kind, Holders, maps:get(bug, S)) of
        true ->
            {reply, granted, S#{locks := Locks#{Res => {[{Pid, Kind} | Holders], Waiting}}}};
        false ->
            {noreply, S#{locks := Locks#{Res => {Holders, Waiting ++ [{From, Kind}]}}}}
    end;
handle_call({release, Res}, {Pid, _}, S) ->
    {reply, ok, unwatch_idle(Pid, release(Pid, Res, S))}.

handle_cast(_, S) -> {noreply, S}.

%% A client died: it holds and waits for nothing any more.
handle_info({'DOWN', _, process, Pid, _}, #{locks := Locks, monitors := Mons} = S0) ->
    S = S0#{monitors := maps:remove(Pid, Mons)},
    S1 = lists:foldl(fun(Res, Acc) -> release(Pid, Res, Acc) end, S, maps:keys(Locks)),
    {noreply, S1#{locks := maps:map(fun(_, {H, W}) -> {H, [X || {{P, _}, _} = X <- W, P =/= Pid]} end,
                                   maps:get(locks, S1))}}.

%% A client is monitored while it holds or waits for a lock, so that a
%% crash releases its locks; the monitor goes with its last lock, which
%% keeps the locker's state finite for clients that loop forever.
watch(Pid, #{monitors := Mons} = S) ->
    case Mons of
        #{Pid := _} -> S;
        #{} -> S#{monitors := Mons#{Pid => monitor(process, Pid)}}
    end.

unwatch_idle(Pid, #{locks := Locks, monitors := Mons} = S) ->
    Involved = [R || {R, {H, W}} <- maps:to_list(Locks),
                     lists:keymember(Pid, 1, H) orelse [x || {{P, _}, _} <- W, P =:= Pid] =/= []],
    case {Involved, Mons} of
        {[], #{Pid := Ref}} ->
            demonitor(Ref, [flush]),
            S#{monitors := maps:remove(Pid, Mons)};
        _ ->
            S
    end.

release(Pid, Res, #{locks := Locks} = S) ->
    {Holders, Waiting} = maps:get(Res, Locks, {[], []}),
    grant(Res, [H || {P, _} = H <- Holders, P =/= Pid], Waiting, S).

%% Grants the waiting requests at the head of the queue that fit.
grant(Res, Holders, [{{Pid, _} = From, Kind} | Rest] = Waiting, #{locks := Locks} = S) ->
    case compatible(Kind, Holders, maps:get(bug, S)) of
        true ->
            gen_server:reply(From, granted),
            grant(Res, [{Pid, Kind} | Holders], Rest, S);
        false ->
            S#{locks := Locks#{Res => {Holders, Waiting}}}
    end;
grant(Res, Holders, [], #{locks := Locks} = S) ->
    S#{locks := Locks#{Res => {Holders, []}}}.

compatible(_, [], _Bug) -> true;
compatible(shared, Holders, Bug) -> Bug orelse lists:all(fun({_, K}) -> K =:= shared end, Holders);
compatible(exclusive, _Holders, _Bug) -> false.

%%--------------------------------------------------------------------
%% Clients
%%--------------------------------------------------------------------

-spec start_client(atom(), exclusive | shared, pos_integer() | forever) -> {ok, pid()}.
start_client(Res, Kind, Rounds) ->
    {ok, spawn_link(?MODULE, client, [Res, Kind, Rounds])}.

-spec client(atom(), exclusive | shared, non_neg_integer() | forever) -> ok.
client(_Res, _Kind, 0) ->
    ok;
client(Res, Kind, Rounds) ->
    %% The probe marks the step that sends the request, and the prop the
    %% states where the client holds the lock: an LTL property can say
    %% "every request is eventually granted" (see test/mce_ltl_check_tests).
    mcerlang:probe(request, {self(), Res, Kind}),
    granted = gen_server:call(locker, {request, Res, Kind}, infinity),
    in_use(Res, Kind),
    %% Holding the lock is a state of its own: other processes may run
    %% before the client lets go (mcerlang:prop/1 is a scheduling point).
    mcerlang:prop({holding, self(), Res, Kind}),
    ets:delete_object(locker_usage, {Res, self(), Kind}),
    ok = gen_server:call(locker, {release, Res}, infinity),
    client(Res, Kind, next_round(Rounds)).

next_round(forever) -> forever;
next_round(N) -> N - 1.

%% The client thinks it has access: check nobody else's use conflicts.
in_use(Res, Kind) ->
    Others = ets:lookup(locker_usage, Res),
    Conflict = [O || {_, _, K} = O <- Others, Kind =:= exclusive orelse K =:= exclusive],
    Conflict =:= [] orelse exit({mutex_violation, Res, Kind, Conflict}),
    ets:insert(locker_usage, {Res, self(), Kind}).
