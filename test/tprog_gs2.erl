%% @doc More gen_server programs for the differential tests
%% (mce_otp_diff_tests): timeouts in callback returns, stop with a reason,
%% terminate on a parent's exit, deferred replies, stop returns from
%% handle_call and handle_cast, local, {Name, Node} and via names, init
%% crashing, continue, hibernate, start options, request ids, abcast and
%% multi_call, an ETS table's heir, a supervised server restarted, and a few
%% programs the checker does not handle yet (mce_otp_diff_tests:known_failing/0).
%% Each scenario ends its root process with exit({result, R}), R free of
%% pids and refs.  The server's state is a map; its owner (the root)
%% receives the reports.  This module is also the registry of via_custom/0.
-module(tprog_gs2).
-behaviour(gen_server).

-export([reply_timeout/0, noreply_timeout/0, timeout_cancelled/0, stop_custom_reason/0,
         terminate_on_parent_exit/0, reply_from_helper/0, call_finite_timeout/0,
         cast_registered/0, plain_info/0, stop_with_reply/0, stop_from_cast/0,
         local_name_whereis/0, already_started/0, init_crash/0, hibernate/0,
         send_request/0, abcast_multi_call/0, via_global/0, call_local_node_name/0,
         continue_from_call/0, init_timeout/0, start_monitor/0, exit_normal_during_call/0,
         via_custom/0, call_timeout_noreply/0, send_interval/0, start_options/0,
         hibernate_after/0, ets_owner/0, supervised_restart/0, spawn_opt_gc/0,
         call_error_stack/0]).
-export([start_supervised/0]).
-export([register_name/2, unregister_name/1, whereis_name/1, send/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2, handle_continue/2, terminate/2]).

%% {reply, R, S, T}: the server gets `timeout` when nothing arrives in time.
reply_timeout() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {arm, reply}),
    B = receive {timed_out, N} -> N end,
    C = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C}}).

%% {noreply, S, T} from handle_cast: the same.
noreply_timeout() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    ok = gen_server:cast(Pid, arm),
    A = receive {timed_out, N} -> N end,
    ok = gen_server:cast(Pid, arm),
    B = receive {timed_out, M} -> M end,
    C = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C}}).

%% A request arriving before the timeout cancels it.
timeout_cancelled() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    armed = gen_server:call(Pid, {arm, long}),
    A = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    B = receive {timed_out, _} -> fired after 0 -> not_fired end,
    exit({result, {A, B}}).

%% gen_server:stop/3 with a custom reason: terminate/2 sees it, stop
%% returns ok once the server is gone.
stop_custom_reason() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:stop(Pid, custom_reason, infinity),
    B = receive {terminated, R} -> R end,
    exit({result, {A, B, is_process_alive(Pid)}}).

%% A server trapping exits terminates with its parent's exit reason.
terminate_on_parent_exit() ->
    Root = self(),
    Parent = spawn(fun() ->
                           {ok, S} = gen_server:start_link(?MODULE, #{owner => Root, trap => true}, []),
                           Root ! {server, S},
                           receive go -> exit({shutdown, parent_gone}) end
                   end),
    Server = receive {server, S} -> S end,
    Ref = monitor(process, Server),
    Parent ! go,
    A = receive {terminated, R} -> R end,
    B = receive {'DOWN', Ref, process, Server, D} -> D end,
    exit({result, {A, B}}).

%% handle_call returns noreply; a helper process answers with reply/2.
reply_from_helper() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {deferred, 7}),
    B = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B}}).

%% call/3 with a finite timeout answered in time.
call_finite_timeout() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {add, 4}, 1000),
    B = gen_server:call(Pid, get, 500),
    ok = gen_server:stop(Pid),
    exit({result, {A, B}}).

%% cast to a registered name (and to a name nobody holds: still ok).
cast_registered() ->
    {ok, _} = gen_server:start({local, tprog_gs2_reg}, ?MODULE, #{owner => self()}, []),
    A = gen_server:cast(tprog_gs2_reg, {cast_add, 3}),
    B = gen_server:cast(tprog_gs2_nobody, {cast_add, 3}),
    C = gen_server:call(tprog_gs2_reg, get),
    ok = gen_server:stop(tprog_gs2_reg),
    exit({result, {A, B, C}}).

%% Plain messages go to handle_info, in the order one sender sent them.
plain_info() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    Pid ! {note, a},
    Pid ! {note, b},
    A = gen_server:call(Pid, notes),
    ok = gen_server:stop(Pid),
    exit({result, A}).

%% {stop, Reason, Reply, State}: the caller gets the reply, then the server
%% terminates with Reason.
stop_with_reply() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    Ref = monitor(process, Pid),
    A = gen_server:call(Pid, stop_now),
    B = receive {terminated, R} -> R end,
    C = receive {'DOWN', Ref, process, Pid, D} -> D end,
    exit({result, {A, B, C}}).

%% {stop, Reason, State} from handle_cast.
stop_from_cast() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    Ref = monitor(process, Pid),
    ok = gen_server:cast(Pid, stop_now),
    B = receive {terminated, R} -> R end,
    C = receive {'DOWN', Ref, process, Pid, D} -> D end,
    exit({result, {B, C}}).

%% start_link with {local, Name}: whereis finds it; the name is free
%% once stop/1 returns.
local_name_whereis() ->
    {ok, Pid} = gen_server:start_link({local, tprog_gs2_named}, ?MODULE, #{owner => self()}, []),
    A = whereis(tprog_gs2_named) =:= Pid,
    B = lists:member(tprog_gs2_named, registered()),
    ok = gen_server:stop(tprog_gs2_named),
    C = whereis(tprog_gs2_named),
    exit({result, {A, B, C}}).

%% A second start under a taken name: {error, {already_started, Pid}}, and
%% the second server's init never runs.
already_started() ->
    {ok, Pid} = gen_server:start({local, tprog_gs2_taken}, ?MODULE, #{owner => self()}, []),
    A = case gen_server:start({local, tprog_gs2_taken}, ?MODULE, #{owner => self(), tag => second}, []) of
            {error, {already_started, P}} -> {already_started, P =:= Pid};
            Other -> Other
        end,
    B = case gen_server:start_link({local, tprog_gs2_taken}, ?MODULE, #{owner => self()}, []) of
            {error, {already_started, Q}} -> {already_started, Q =:= Pid};
            Other2 -> Other2
        end,
    ok = gen_server:stop(Pid),
    C = receive {init, second} -> ran after 0 -> not_run end,
    exit({result, {A, B, C}}).

%% init exits: start_link returns {error, Reason}; the caller, trapping
%% exits, also gets the 'EXIT' signal.
init_crash() ->
    process_flag(trap_exit, true),
    A = gen_server:start_link(?MODULE, crash_in_init, []),
    B = receive {'EXIT', _, R} -> R end,
    C = gen_server:start(?MODULE, {throw_in_init, oops}, []),
    exit({result, {A, B, C}}).

%% {reply, R, S, hibernate}: the server hibernates and keeps working.
hibernate() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {add, 2}),
    B = gen_server:call(Pid, sleep),
    C = gen_server:call(Pid, {add, 3}),
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C}}).

%% send_request/2 with receive_response/2, wait_response/2 and
%% check_response/2.
send_request() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    R1 = gen_server:send_request(Pid, {add, 1}),
    R2 = gen_server:send_request(Pid, {add, 10}),
    A = gen_server:receive_response(R1, infinity),
    B = gen_server:wait_response(R2, infinity),
    R3 = gen_server:send_request(Pid, get),
    C = receive Msg -> gen_server:check_response(Msg, R3) end,
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C}}).

%% abcast/2 and multi_call/2 to a locally registered name.
abcast_multi_call() ->
    {ok, _} = gen_server:start({local, tprog_gs2_multi}, ?MODULE, #{owner => self()}, []),
    A = gen_server:abcast(tprog_gs2_multi, {cast_add, 5}),
    B = gen_server:multi_call(tprog_gs2_multi, get),
    C = gen_server:multi_call([node()], tprog_gs2_nobody, get),
    ok = gen_server:stop(tprog_gs2_multi),
    exit({result, {A, B, C}}).

%% {via, global, Name}: start, call and cast through the via module.
via_global() ->
    Name = {via, global, tprog_gs2_via},
    {ok, Pid} = gen_server:start(Name, ?MODULE, #{owner => self()}, []),
    A = gen_server:call(Name, {add, 2}),
    ok = gen_server:cast(Name, {cast_add, 1}),
    B = gen_server:call(Name, get),
    C = global:whereis_name(tprog_gs2_via) =:= Pid,
    ok = gen_server:stop(Name),
    exit({result, {A, B, C}}).

%% call/cast to {Name, node()}.
call_local_node_name() ->
    {ok, _} = gen_server:start({local, tprog_gs2_node}, ?MODULE, #{owner => self()}, []),
    A = gen_server:call({tprog_gs2_node, node()}, {add, 2}),
    ok = gen_server:cast({tprog_gs2_node, node()}, {cast_add, 1}),
    B = gen_server:call({tprog_gs2_node, node()}, get),
    ok = gen_server:stop({tprog_gs2_node, node()}),
    exit({result, {A, B}}).

%% {reply, R, S, {continue, C}}: handle_continue runs before the next
%% request.
continue_from_call() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {add_later, 6}),
    B = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B}}).

%% init returning {ok, S, Timeout}: a timeout message if nothing arrives.
init_timeout() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self(), init_timeout => 10}, []),
    A = receive {timed_out, N} -> N end,
    B = gen_server:call(Pid, get),
    ok = gen_server:stop(Pid),
    exit({result, {A, B}}).

%% gen_server:start_monitor/3: a monitor comes with the pid.
start_monitor() ->
    {ok, {Pid, Ref}} = gen_server:start_monitor(?MODULE, #{owner => self()}, []),
    A = gen_server:call(Pid, {add, 1}),
    ok = gen_server:cast(Pid, stop_now),
    B = receive {'DOWN', Ref, process, Pid, R} -> R end,
    C = gen_server:start_monitor(?MODULE, {throw_in_init, nope}, []),
    exit({result, {A, B, C}}).

%% A server that exits normally while handling a call: the caller exits
%% with {normal, {gen_server, call, ...}}.
exit_normal_during_call() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = try gen_server:call(Pid, exit_normal)
        catch exit:{Reason, {gen_server, call, [_, Req]}} -> {Reason, Req}
        end,
    exit({result, {A, is_process_alive(Pid)}}).

%% {via, tprog_gs2, Name}: this module as the registry (names registered
%% locally as {via, Name} atoms).
via_custom() ->
    Name = {via, ?MODULE, v1},
    {ok, Pid} = gen_server:start(Name, ?MODULE, #{owner => self()}, []),
    A = gen_server:call(Name, {add, 2}),
    ok = gen_server:cast(Name, {cast_add, 1}),
    B = gen_server:call(Name, get),
    C = case gen_server:start(Name, ?MODULE, #{owner => self()}, []) of
            {error, {already_started, P}} -> P =:= Pid;
            Other -> Other
        end,
    ok = gen_server:stop(Name),
    D = whereis_name(v1),
    exit({result, {A, B, C, D}}).

%% A call the server never answers, with a finite timeout: the caller
%% exits with timeout (it fires when nothing else can happen).
call_timeout_noreply() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = try gen_server:call(Pid, ignore_me, 100)
        catch exit:{Reason, {gen_server, call, [_, Req, T]}} -> {Reason, Req, T}
        end,
    B = gen_server:call(Pid, get),
    C = receive Late -> {late, Late} after 0 -> no_late_message end,
    ok = gen_server:stop(Pid),
    exit({result, {A, B, C}}).

%% timer:send_interval/2 in the server: ticks until cancelled.
send_interval() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    ok = gen_server:call(Pid, start_ticks),
    A = [receive {tick, N} -> N end || _ <- [1, 2, 3]],
    ok = gen_server:call(Pid, stop_ticks),
    ok = gen_server:stop(Pid),
    exit({result, A}).

%% Start options: a start timeout and debug options.
start_options() ->
    {ok, P1} = gen_server:start(?MODULE, #{owner => self()}, [{timeout, 1000}]),
    {ok, P2} = gen_server:start(?MODULE, #{owner => self()}, [{debug, [log]}]),
    A = [gen_server:call(P, {add, 1}) || P <- [P1, P2]],
    {ok, Log} = sys:log(P2, get),
    [ok = gen_server:stop(P) || P <- [P1, P2]],
    exit({result, {A, length(Log)}}).

%% A garbage-collection spawn option ({spawn_opt, [{fullsweep_after, N}]}),
%% which has no effect on behaviour.
spawn_opt_gc() ->
    {ok, P} = gen_server:start(?MODULE, #{owner => self()}, [{spawn_opt, [{fullsweep_after, 10}]}]),
    A = gen_server:call(P, {add, 1}),
    ok = gen_server:stop(P),
    exit({result, A}).

%% The hibernate_after start option: the server hibernates when idle and
%% still answers.
hibernate_after() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, [{hibernate_after, 10}]),
    A = gen_server:call(Pid, {add, 1}),
    timer:sleep(50),
    B = gen_server:call(Pid, {add, 1}),
    ok = gen_server:stop(Pid),
    exit({result, {A, B}}).

%% An ETS table owned by the server, given to its heir (the root) when the
%% server stops.
ets_owner() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    ok = gen_server:call(Pid, {make_table, self()}),
    A = ets:lookup(tprog_gs2_tab, k),
    ok = gen_server:stop(Pid),
    B = receive {'ETS-TRANSFER', _, _, heir_data} -> transferred end,
    C = ets:info(tprog_gs2_tab, owner) =:= self(),
    ets:delete(tprog_gs2_tab),
    exit({result, {A, B, C}}).

%% A registered server under a supervisor crashes during a call: the caller
%% exits with the crash reason, and the restarted server answers by name.
supervised_restart() ->
    {ok, Sup} = supervisor:start_link(?MODULE, sup),
    Old = whereis(tprog_gs2_sup_child),
    A = try gen_server:call(tprog_gs2_sup_child, crash_call)
        catch exit:{Reason, {gen_server, call, [_, Req]}} -> {Reason, Req}
        end,
    B = wait_restarted(Sup, Old),
    C = gen_server:call(tprog_gs2_sup_child, get),
    unlink(Sup),
    Ref = monitor(process, Sup),
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Sup, _} -> ok end,
    exit({result, {A, B, C}}).

%% Polls the supervisor (a call, so the poll blocks between rounds).
wait_restarted(Sup, Old) ->
    case supervisor:which_children(Sup) of
        [{child, P, worker, _}] when is_pid(P), P =/= Old -> whereis(tprog_gs2_sup_child) =:= P;
        _ -> wait_restarted(Sup, Old)
    end.

start_supervised() ->
    gen_server:start_link({local, tprog_gs2_sup_child}, ?MODULE, #{owner => none}, []).

%% A server raising an error in handle_call: the caller exits with
%% {{Reason, Stack}, {gen_server, call, _}}, the stack running down through
%% gen_server into proc_lib.
call_error_stack() ->
    {ok, Pid} = gen_server:start(?MODULE, #{owner => self()}, []),
    A = try gen_server:call(Pid, error_call)
        catch exit:{{R, Stack}, {gen_server, call, _}} -> {R, [{M, F, arity(Ar)} || {M, F, Ar, _} <- Stack]}
        end,
    exit({result, A}).

arity(Args) when is_list(Args) -> length(Args);
arity(N) -> N.

%% --- via registry callbacks ---

via_atom(Name) -> list_to_atom("tprog_gs2_via_" ++ atom_to_list(Name)).

register_name(Name, Pid) ->
    try register(via_atom(Name), Pid) of true -> yes
    catch error:badarg -> no
    end.

unregister_name(Name) ->
    catch unregister(via_atom(Name)),
    ok.

whereis_name(Name) ->
    case whereis(via_atom(Name)) of
        undefined -> undefined;
        Pid -> Pid
    end.

send(Name, Msg) ->
    case whereis_name(Name) of
        undefined -> exit({badarg, {Name, Msg}});
        Pid -> Pid ! Msg, Pid
    end.

%% --- callbacks ---

init(sup) ->
    {ok, {#{strategy => one_for_one},
          [#{id => child, start => {?MODULE, start_supervised, []}}]}};
init(crash_in_init) -> exit(init_failed);
init({throw_in_init, T}) -> throw({stop, T});
init(#{owner := Owner} = Opts) ->
    maps:get(trap, Opts, false) andalso process_flag(trap_exit, true),
    case maps:find(tag, Opts) of
        {ok, Tag} -> Owner ! {init, Tag};
        error -> ok
    end,
    S = #{owner => Owner, n => 0, notes => [], timeouts => 0},
    case maps:find(init_timeout, Opts) of
        {ok, T} -> {ok, S, T};
        error -> {ok, S}
    end.

handle_call({arm, reply}, _From, S) -> {reply, armed, S, 10};
handle_call({arm, long}, _From, S) -> {reply, armed, S, 5000};
handle_call(get, _From, #{n := N, timeouts := T} = S) -> {reply, {N, T}, S};
handle_call({add, K}, _From, #{n := N} = S) -> {reply, N + K, S#{n := N + K}};
handle_call({deferred, K}, From, #{n := N} = S) ->
    spawn(fun() -> gen_server:reply(From, {helper, K}) end),
    {noreply, S#{n := N + K}};
handle_call(notes, _From, #{notes := L} = S) -> {reply, lists:reverse(L), S};
handle_call(stop_now, _From, S) -> {stop, {shutdown, by_call}, bye, S};
handle_call(sleep, _From, S) -> {reply, slept, S, hibernate};
handle_call({add_later, K}, _From, S) -> {reply, later, S, {continue, {add, K}}};
handle_call(exit_normal, _From, _S) -> exit(normal);
handle_call(ignore_me, _From, S) -> {noreply, S};
handle_call(start_ticks, _From, S) ->
    {ok, T} = timer:send_interval(10, tick),
    {reply, ok, S#{ticker => T}};
handle_call(stop_ticks, _From, #{ticker := T} = S) ->
    {ok, cancel} = timer:cancel(T),
    {reply, ok, S};
handle_call({make_table, Heir}, _From, S) ->
    tprog_gs2_tab = ets:new(tprog_gs2_tab, [named_table, public, {heir, Heir, heir_data}]),
    true = ets:insert(tprog_gs2_tab, {k, v}),
    {reply, ok, S};
handle_call(crash_call, _From, _S) -> exit(crashed_in_call);
handle_call(error_call, _From, S) -> {reply, maps:get(no_such_key, S), S}.

handle_cast(arm, S) -> {noreply, S, 10};
handle_cast({cast_add, K}, #{n := N} = S) -> {noreply, S#{n := N + K}};
handle_cast(stop_now, S) -> {stop, {shutdown, by_cast}, S}.

handle_info(timeout, #{owner := Owner, timeouts := T} = S) ->
    Owner ! {timed_out, T + 1},
    {noreply, S#{timeouts := T + 1}};
handle_info({note, X}, #{notes := L} = S) -> {noreply, S#{notes := [X | L]}};
handle_info(tick, #{owner := Owner, n := N} = S) ->
    Owner ! {tick, N + 1},
    {noreply, S#{n := N + 1}}.

handle_continue({add, K}, #{n := N} = S) -> {noreply, S#{n := N + K}}.

terminate(_Reason, #{owner := none}) -> ok;
terminate(Reason, #{owner := Owner}) -> Owner ! {terminated, Reason}.
