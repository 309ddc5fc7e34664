%% @doc The runtime calls that translated code makes instead of the
%% process BIFs.
%%
%% Translated code runs inside the executor process (see mce_exec).  It must
%% never touch real processes: every side effect is recorded as an effect of
%% the current step, and the C runtime applies the effects to the successor
%% state.  The step's context lives in the executor's process dictionary
%% under '$mce_*' keys, set up and torn down by mce_exec for each step.
-module(mce_rt).
-compile({no_auto_import, [link/1, unlink/1, exit/2, register/2, unregister/1, whereis/1,
                            registered/0, process_flag/2, is_process_alive/1, put/2,
                            get/0, get/1, erase/0, erase/1, get_keys/0, get_keys/1,
                            self/0, node/0, spawn/1, spawn/3, spawn_link/1, spawn_link/3,
                            apply/2, apply/3, make_ref/0, monitor/2, demonitor/1,
                            demonitor/2, spawn_monitor/1, spawn_monitor/3,
                            spawn/2, spawn/4, spawn_link/2, spawn_link/4, spawn_opt/2,
                            spawn_opt/4, nodes/0, monitor_node/2, spawn_monitor/2,
                            spawn_monitor/4, send/3, monitor/3, alias/0, alias/1, unalias/1,
                            send_after/3, send_after/4, start_timer/3, start_timer/4,
                            cancel_timer/1, cancel_timer/2, read_timer/1, read_timer/2,
                            unique_integer/0, unique_integer/1, process_info/2,
                            group_leader/0, group_leader/2, processes/0, halt/0, halt/1, halt/2,
         monotonic_time/0, monotonic_time/1, system_time/0, system_time/1, timestamp/0, process_info/2]}).

-export([yield/1, yield/2, yield/3, resume/1, prop/1, prop_resume/1, probe/2]).
-export([self/0, node/0, send/2, send/3, spawn/1, spawn/3, spawn_link/1, spawn_link/3,
         suspend/4, apply/2, apply/3, io_user/1, io_record/1, unsupported/3,
         fatal/1, clean_stack/1, erlang_yield/0, send_nosuspend/2, send_nosuspend/3,
         statistics/1]).
%% Process BIFs of the simulated process.
-export([link/1, unlink/1, exit/2, register/2, unregister/1, whereis/1, registered/0,
         process_flag/2, is_process_alive/1, make_ref/0, monitor/2, demonitor/1, demonitor/2,
         spawn_monitor/1, spawn_monitor/3, choice/1, choice/2,
         spawn/2, spawn/4, spawn_link/2, spawn_link/4, spawn_opt/2, spawn_opt/4,
         spawn_monitor/2, spawn_monitor/4, nodes/0, monitor_node/2, ping/1, known_node/1,
         monitor/3, alias/0, alias/1, unalias/1, send_after/3, send_after/4, start_timer/3,
         start_timer/4, cancel_timer/1, cancel_timer/2, read_timer/1, read_timer/2,
         timer_send_after/2, timer_send_after/3, timer_cancel/1,
         unique_integer/0, unique_integer/1, process_info/2,
         monotonic_time/0, monotonic_time/1, system_time/0, system_time/1, timestamp/0,
         hibernate/3, '$mce_hibernated'/5, group_leader/0, group_leader/2, processes/0,
         halt/0, halt/1, halt/2, init_stop/0, init_stop/1, system_info/1,
         put/2, get/0, get/1, erase/0, erase/1, get_keys/0, get_keys/1]).

-type location() :: {module(), atom(), arity(), non_neg_integer()}.
-export_type([location/0]).

-spec self() -> pid().
self() ->
    erlang:get('$mce_self').

-spec node() -> node().
node() ->
    mce_pid:node_of(erlang:get('$mce_pid')).

%% The index of the running process's node.
my_node() ->
    erlang:get('$mce_pid') bsr 24.

%% @doc `To ! Msg'.  Like the BIF it returns Msg; an unregistered name is
%% badarg, but `{Name, node()}' for an unregistered name drops the message
%% (both as on the VM).  `{Name, Node}' for another node is resolved there,
%% when the message arrives; an unknown node cannot be reached, so the
%% message is lost.
-spec send(term(), Msg) -> Msg.
send(To, Msg) when is_atom(To) ->
    case whereis(To) of
        undefined -> erlang:error(badarg, [To, Msg]);
        Pid -> send(Pid, Msg)
    end;
send({Name, Node}, Msg) when is_atom(Name), is_atom(Node) ->
    case Node =:= node() of
        true ->
            case whereis(Name) of
                undefined -> Msg;
                Pid -> send(Pid, Msg)
            end;
        false ->
            case mce_pid:node_index(Node) of
                {ok, I} when Name =:= init; Name =:= user ->
                    {ok, Key} = system_process_key(Name, I),
                    to_system_process(Key, Msg);
                {ok, I} ->
                    remote_name_modelled(Name, I),
                    effect({send_name, mce_pid:by_name(I), Name, Msg});
                error -> ok
            end,
            Msg
    end;
send(To, Msg) when is_reference(To) ->
    %% An alias: delivered only while it is active; any other reference is
    %% silently dropped, as on the VM.
    case mce_ref:number(To) of
        {ok, R} -> effect({send_alias, R, Msg});
        error -> ok
    end,
    Msg;
send(To, Msg) ->
    N = sim_pid(To, [To, Msg]),
    case system_process(N) of
        false -> effect({send, N, Msg});
        _ -> to_system_process(N, Msg)
    end,
    Msg.

%% `init' and `user' ignore messages that are not requests of theirs (seen
%% on OTP 25); a request would need an answer the model does not give.
to_system_process(N, Msg) when element(1, Msg) =:= io_request; element(1, Msg) =:= stop ->
    system_process_refused(N, {send, Msg});
to_system_process(_N, _Msg) ->
    ok.

%% @doc erlang:send/3: as send/2, returning ok; with `noconnect' a send to
%% a node that cannot be reached returns noconnect.
-spec send(term(), term(), [nosuspend | noconnect]) -> ok | noconnect.
send(To, Msg, Opts) when is_list(Opts) ->
    lists:all(fun(O) -> O =:= nosuspend orelse O =:= noconnect end, Opts)
        orelse erlang:error(badarg, [To, Msg, Opts]),
    Node = case To of
               {_, N} when is_atom(N) -> N;
               _ when is_pid(To) -> erlang:node(To);
               _ -> node()
           end,
    case lists:member(noconnect, Opts) andalso Node =/= node() andalso ping(Node) =:= pang of
        true -> noconnect;
        false ->
            try send(To, Msg) catch error:badarg -> erlang:error(badarg, [To, Msg, Opts]) end,
            ok
    end;
send(To, Msg, Opts) ->
    erlang:error(badarg, [To, Msg, Opts]).

%%--------------------------------------------------------------------
%% Nodes
%%--------------------------------------------------------------------

%% @doc Is Node one of the check's simulated nodes?
-spec known_node(atom()) -> boolean().
known_node(Node) ->
    mce_pid:node_index(Node) =/= error.

%% @doc The other simulated nodes that are up and connected to this one.
-spec nodes() -> [node()].
nodes() ->
    Me = my_node(),
    S = erlang:get('$mce_search'),
    [N || N <- mce_pid:nodes(), {ok, I} <- [mce_pid:node_index(N)], I =/= Me,
          mce_nif:node_status(S, Me, I) =:= up].

%% @doc net_adm:ping/1: pong for this node and the nodes it can reach; a
%% node that is not distributed (nonode@nohost) answers pang, even for
%% itself, as on the VM.
-spec ping(atom()) -> pong | pang.
ping(Node) when is_atom(Node) ->
    Distributed = node() =/= 'nonode@nohost',
    case mce_pid:node_index(Node) of
        _ when not Distributed -> pang;
        {ok, I} ->
            case mce_nif:node_status(erlang:get('$mce_search'), my_node(), I) of
                up -> pong;
                _ -> pang
            end;
        error -> pang
    end;
ping(Node) ->
    erlang:error(function_clause, [Node]).

%% @doc monitor_node/2: {nodedown, Node} when Node crashes or is
%% disconnected from this node; at once when it cannot be reached now.
-spec monitor_node(atom(), boolean()) -> true.
monitor_node(Node, Flag) when is_atom(Node), is_boolean(Flag) ->
    case mce_pid:node_index(Node) of
        {ok, I} -> effect({monitor_node, I, Flag});
        error when Flag -> effect({send, erlang:get('$mce_pid'), {nodedown, Node}});
        error -> ok
    end,
    true;
monitor_node(Node, Flag) ->
    erlang:error(badarg, [Node, Flag]).

is_local(N) ->
    N bsr 24 =:= my_node().

%% The number of a simulated pid; badarg for a non-pid, a stop for a real
%% process (the model cannot reach it).
sim_pid(Pid, Args) ->
    case mce_pid:number(Pid) of
        {ok, N} -> N;
        error when is_pid(Pid) -> fatal({mcerlang, {send_to_real_process, Pid}});
        error -> erlang:error(badarg, Args)
    end.

%%--------------------------------------------------------------------
%% Links, exit signals, trap_exit
%%--------------------------------------------------------------------

-spec link(pid()) -> true.
link(Pid) ->
    N = sim_pid(Pid, [Pid]),
    Self = erlang:get('$mce_pid'),
    case N =:= Self orelse system_process(N) =/= false of
        %% System processes trap exits and never die: a link to one never
        %% carries a signal either way.
        true -> true;
        false when N bsr 24 =/= Self bsr 24 ->
            %% A remote process: the answer (noproc, noconnection) comes
            %% back as an exit signal.
            effect({link, N}),
            true;
        false ->
            case alive(N) of
                true ->
                    effect({link, N}),
                    true;
                false ->
                    case erlang:get('$mce_trap_exit') of
                        true ->
                            effect({send, erlang:get('$mce_pid'), {'EXIT', Pid, noproc}}),
                            true;
                        false ->
                            erlang:error(noproc, [Pid])
                    end
            end
    end.

-spec unlink(pid()) -> true.
unlink(Pid) ->
    N = sim_pid(Pid, [Pid]),
    system_process(N) =:= false andalso effect({unlink, N}),
    true.

%% @doc exit/2.  To another process: an exit signal, delivered by the
%% runtime.  To itself: the signal acts at once and cannot be caught; only
%% when trapping exits does it become a message ('kill' cannot be trapped).
-spec exit(pid(), term()) -> true.
exit(Pid, Reason) ->
    N = sim_pid(Pid, [Pid, Reason]),
    System = system_process(N) =/= false,
    case N =:= erlang:get('$mce_pid') of
        %% init and user trap exits (OTP 25): only kill would end them,
        %% and with them the node.
        false when System, Reason =/= kill -> true;
        false when System -> system_process_refused(N, {exit, kill});
        false ->
            %% The signal acts before anything the caller does next can
            %% observe the target (is_process_alive/1, link/1).
            is_local(N) andalso dies_of(N, Reason) andalso overlay_alive(N, false),
            effect({exit, N, Reason}),
            true;
        true ->
            case {Reason, erlang:get('$mce_trap_exit')} of
                {kill, _} -> die(killed);
                {_, true} ->
                    effect({send, N, {'EXIT', Pid, Reason}}),
                    true;
                {_, false} -> die(Reason)
            end
    end.

%% Does an exit signal with Reason end process N?  kill always; normal
%% never (from another process); any other reason unless N traps exits.
dies_of(_N, kill) -> true;
dies_of(_N, normal) -> false;
dies_of(N, _Reason) ->
    case mce_nif:process(erlang:get('$mce_search'), N) of
        {_St, _Msgs, _Links, _Mons, _MonBy, _Name, Trap, _Dict} -> not Trap;
        %% Not in the stored state: spawned by this very step (it has not
        %% run, so it does not trap exits yet), or gone already.
        undefined -> true;
        {error, Where, Why} -> fatal({mcerlang_internal, Where, Why})
    end.

%% The process ends with Reason: recorded so that no catch can keep it
%% alive, then raised to stop its code.
die(Reason) ->
    erlang:put('$mce_killed', Reason),
    erlang:exit(Reason).

-spec process_flag(atom(), term()) -> term().
process_flag(trap_exit, Bool) when is_boolean(Bool) ->
    Old = erlang:get('$mce_trap_exit'),
    erlang:put('$mce_trap_exit', Bool),
    effect({trap_exit, Bool}),
    Old;
process_flag(trap_exit, Other) ->
    erlang:error(badarg, [trap_exit, Other]);
process_flag(Flag, Value) when Flag =:= priority; Flag =:= message_queue_data;
                               Flag =:= min_heap_size; Flag =:= min_bin_vheap_size;
                               Flag =:= fullsweep_after; Flag =:= max_heap_size;
                               Flag =:= sensitive ->
    %% Memory and scheduling hints: the checker explores every schedule
    %% anyway, and memory is not modelled.  The VM's defaults are returned
    %% as the old values.
    scheduling_flag(Flag, Value);
process_flag(Flag, Value) ->
    fatal({mcerlang, {unsupported_bif, {erlang, process_flag, 2},
                      {flag, Flag, Value, "only trap_exit and the memory and scheduling "
                                          "hints are modelled"}}}).

scheduling_flag(priority, P) when P =:= low; P =:= normal; P =:= high; P =:= max -> normal;
scheduling_flag(message_queue_data, D) when D =:= off_heap; D =:= on_heap -> on_heap;
scheduling_flag(min_heap_size, N) when is_integer(N), N >= 0 -> 233;
scheduling_flag(min_bin_vheap_size, N) when is_integer(N), N >= 0 -> 46422;
scheduling_flag(fullsweep_after, N) when is_integer(N), N >= 0 -> 65535;
scheduling_flag(max_heap_size, _) -> #{size => 0, kill => true, error_logger => true};
scheduling_flag(sensitive, B) when is_boolean(B) -> false;
scheduling_flag(Flag, Value) -> erlang:error(badarg, [Flag, Value]).

%% @doc is_process_alive/1: badarg for a process of another node, as on
%% the VM.
-spec is_process_alive(pid()) -> boolean().
is_process_alive(Pid) ->
    N = sim_pid(Pid, [Pid]),
    is_local(N) orelse erlang:error(badarg, [Pid]),
    N =:= erlang:get('$mce_pid') orelse alive(N).

%%--------------------------------------------------------------------
%% Nondeterminism
%%--------------------------------------------------------------------

%% @doc mcerlang:choice/1 in checked code: the process suspends, and the
%% search takes every alternative as a separate transition.
-spec choice([function() | {module(), atom(), [term()]}]) -> tuple().
choice(Alternatives) ->
    choice(Alternatives, undefined).

%% @doc choice/1 with the source location of the call, `{M, F, A, Line}',
%% named by the error when the suspension is lost on its way out.
-spec choice([function() | {module(), atom(), [term()]}],
             {module(), atom(), arity(), integer()} | undefined) -> tuple().
choice(Alternatives, Where) when is_list(Alternatives), Alternatives =/= [],
                                 length(Alternatives) =< 65535 ->
    Alts = [case A of
                F when is_function(F, 0) -> mce_sandbox:init_fun(F);
                {M, F, Args} when is_atom(M), is_atom(F), is_list(Args) ->
                    mce_sandbox:init_mfa(M, F, Args);
                _ -> erlang:error(badarg, [Alternatives])
            end || A <- Alternatives],
    erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
    {'$mce_suspend', {'$mce_choice', Alts}, []};
choice(Other, _Where) ->
    erlang:error(badarg, [Other]).

%% @doc A scheduling point after a side effect (see
%% mce_translate:yield_points/1): with `granularity => small' the process
%% suspends here and resumes with Value as a transition of its own; in the
%% default big-step mode it just returns Value.
-spec yield(T) -> T | {'$mce_suspend', tuple(), []}.
yield(Value) ->
    yield(Value, undefined).

%% @doc yield/1 with the source location of the call, `{M, F, A, Line}',
%% named by the error when the suspension is lost on its way out.
-spec yield(T, {module(), atom(), arity(), integer()} | undefined) ->
          T | {'$mce_suspend', tuple(), []}.
yield(Value, Where) ->
    case erlang:get('$mce_granularity') of
        small ->
            erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
            {'$mce_suspend', {'$mce_choice', [{mce_rt, resume, [Value]}]}, []};
        _ ->
            Value
    end.

%% @doc The scheduling point before an access to shared memory (ETS,
%% atomics, counters; see mce_translate:shared_yield/3) in big steps: it
%% suspends when the step already accessed shared memory, so another
%% process may run between the two accesses.  Under small granularity the
%% yield after each access does that.  A fun called by code the checker
%% does not translate (ets:foldl/3, sofs) cannot suspend: there, as when
%% the stack is too deep to tell, the step goes on (the big step of old).
-spec yield(T, {module(), atom(), arity(), integer()}, shared) -> T | {'$mce_suspend', tuple(), []}.
yield(Value, Where, shared) ->
    case {erlang:get('$mce_granularity'), erlang:get('$mce_shared_touched')} of
        {small, _} ->
            Value;
        {_, true} ->
            {current_stacktrace, [_This | Callers]} = erlang:process_info(erlang:self(), current_stacktrace),
            case translated_up_to_step(Callers) of
                true ->
                    erlang:put('$mce_suspensions', [{at, Where} | erlang:get('$mce_suspensions')]),
                    {'$mce_suspend', {'$mce_choice', [{mce_rt, resume, [Value]}]}, []};
                false ->
                    Value
            end;
        _ ->
            erlang:put('$mce_shared_touched', true),
            Value
    end.

%% Every caller, up to the executor's start of the step, is translated code
%% (modules 'mce$...'), which passes a suspension on.
translated_up_to_step([{mce_exec, invoke, 4, _} | _]) ->
    true;
translated_up_to_step([{M, _, _, _} | Callers]) ->
    case atom_to_list(M) of
        "mce$" ++ _ -> translated_up_to_step(Callers);
        _ -> false
    end;
translated_up_to_step([]) ->
    false.

%% @doc mcerlang:prop(Term) in checked code (paper 003, section 4): the
%% state in which the process is about to evaluate prop(Term) has Term as a
%% proposition.  So the process stops there, a one-way choice like a small
%% step, and the state view lists Term among its props; the next step
%% returns Term.
-spec prop(T) -> {'$mce_suspend', tuple(), []} | T.
prop(Term) ->
    {'$mce_suspend', {'$mce_choice', [{mce_rt, prop_resume, [Term]}]}, []}.

%% @doc The continuation of a prop: its argument.
-spec prop_resume(T) -> T.
prop_resume(Term) ->
    Term.

%% @doc mcerlang:probe(Label, Term) in checked code: marks the step that
%% runs it; monitors and invariants see it in the view's `probes'.
-spec probe(term(), term()) -> ok.
probe(Label, Term) ->
    erlang:put('$mce_probes', [{Label, Term} | erlang:get('$mce_probes')]),
    ok.

%% @doc The continuation of a yield: the side effect's value.
-spec resume(T) -> T.
resume(Value) ->
    %% In big steps only a shared-memory point suspends here, right before
    %% its access.
    erlang:put('$mce_shared_touched', true),
    Value.

%%--------------------------------------------------------------------
%% Refs and monitors
%%--------------------------------------------------------------------

-spec make_ref() -> reference().
make_ref() ->
    case mce_nif:fresh_ref(erlang:get('$mce_search'), my_node()) of
        N when is_integer(N) -> mce_ref:term(N);
        {error, Where, Why} -> fatal({mcerlang_internal, Where, Why})
    end.

%% The monitor of spawn_monitor (and spawn_opt's monitor option): OTP
%% sends it with the spawn request, so it cannot miss the new process, on
%% any node; a monitor after a plain spawn is a signal of its own.
monitor_spawned(Pid) ->
    Ref = make_ref(),
    {ok, R} = mce_ref:number(Ref),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{monitor, R} => true}),
    {N, Item} = monitor_target(Pid),
    effect({spawn_monitor, N, R, Item}),
    Ref.

%% @doc monitor(process, Pid | Name | {Name, node()}).  A monitor of a
%% process that does not exist delivers {'DOWN', Ref, process, Item,
%% noproc} at once, as on the VM.
-spec monitor(process, pid() | atom() | {atom(), node()}) -> reference().
monitor(process, Target) ->
    Ref = make_ref(),
    {ok, R} = mce_ref:number(Ref),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{monitor, R} => true}),
    case monitor_target(Target) of
        {by_name, N, Name, Item} -> effect({monitor, N, R, Item, Name});
        {unknown_node, Item} ->
            effect({send, erlang:get('$mce_pid'), {'DOWN', Ref, process, Item, noconnection}});
        {unregistered, N, Item} -> effect({monitor, N, R, Item});
        {N, Item} ->
            %% A system process never dies: its monitor never fires.
            system_process(N) =:= false andalso effect({monitor, N, R, Item})
    end,
    Ref;
monitor(Type, Item) when Type =:= port; Type =:= time_offset ->
    fatal({mcerlang, {unsupported_bif, {erlang, monitor, 2},
                      {monitor_type, Type, Item, "only process monitors are modelled"}}});
monitor(Type, Item) ->
    erlang:error(badarg, [Type, Item]).

monitor_target(Name) when is_atom(Name) ->
    case whereis(Name) of
        %% Number 0 is init's, which the model never monitors: the C
        %% runtime finds no process there and answers noproc.
        undefined -> {unregistered, mce_pid:key(my_node(), 0), {Name, node()}};
        Pid -> {sim_pid(Pid, [process, Name]), {Name, node()}}
    end;
monitor_target({Name, Node} = Target) when is_atom(Name), is_atom(Node) ->
    case Node =:= node() of
        true -> monitor_target(Name);
        false ->
            case mce_pid:node_index(Node) of
                {ok, I} when Name =:= init; Name =:= user ->
                    {ok, Key} = system_process_key(Name, I),
                    {Key, Target};
                {ok, I} ->
                    remote_name_modelled(Name, I),
                    {by_name, mce_pid:by_name(I), Name, Target};
                error -> {unknown_node, Target}
            end
    end;
monitor_target(Pid) ->
    {sim_pid(Pid, [process, Pid]), none}.

-spec demonitor(reference()) -> true.
demonitor(Ref) ->
    demonitor(Ref, []).

%% @doc demonitor/2 with the options flush and info.
-spec demonitor(reference(), [flush | info]) -> boolean().
demonitor(Ref, Opts) when is_reference(Ref), is_list(Opts) ->
    lists:all(fun(O) -> O =:= flush orelse O =:= info end, Opts)
        orelse erlang:error(badarg, [Ref, Opts]),
    case mce_ref:number(Ref) of
        {ok, R} ->
            Overlay = erlang:get('$mce_overlay'),
            Active = case Overlay of
                         #{{monitor, R} := A} -> A;
                         #{} -> mce_nif:monitor_active(erlang:get('$mce_search'),
                                                       erlang:get('$mce_pid'), R)
                     end,
            erlang:put('$mce_overlay', Overlay#{{monitor, R} => false}),
            effect({demonitor, R, lists:member(flush, Opts)}),
            not lists:member(info, Opts) orelse Active;
        error ->
            %% A ref that was never a monitor of this process.
            not lists:member(info, Opts) orelse false
    end;
demonitor(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).

%% @doc spawn/2,4 and spawn_link/2,4 on a simulated node.  The process is
%% created at once (a spawn request and its reply are one step); on a node
%% that cannot be reached it does not exist, and spawn_link then gives a
%% noconnection exit signal.
-spec spawn(node(), function()) -> pid().
spawn(Node, Fun) when is_function(Fun, 0) ->
    new_process(spawn_node(Node, [Node, Fun]), init(Fun), false);
spawn(Node, Fun) -> erlang:error(badarg, [Node, Fun]).

-spec spawn(node(), module(), atom(), [term()]) -> pid().
spawn(Node, M, F, A) ->
    new_process(spawn_node(Node, [Node, M, F, A]), init_mfa(M, F, A, [Node, M, F, A]), false).

-spec spawn_link(node(), function()) -> pid().
spawn_link(Node, Fun) when is_function(Fun, 0) ->
    new_process(spawn_node(Node, [Node, Fun]), init(Fun), true);
spawn_link(Node, Fun) -> erlang:error(badarg, [Node, Fun]).

-spec spawn_link(node(), module(), atom(), [term()]) -> pid().
spawn_link(Node, M, F, A) ->
    new_process(spawn_node(Node, [Node, M, F, A]), init_mfa(M, F, A, [Node, M, F, A]), true).

-spec spawn_monitor(node(), function()) -> {pid(), reference()}.
spawn_monitor(Node, Fun) ->
    Pid = spawn(Node, Fun),
    {Pid, monitor_spawned(Pid)}.

-spec spawn_monitor(node(), module(), atom(), [term()]) -> {pid(), reference()}.
spawn_monitor(Node, M, F, A) ->
    Pid = spawn(Node, M, F, A),
    {Pid, monitor_spawned(Pid)}.

spawn_node(Node, Args) when is_atom(Node) ->
    case mce_pid:node_index(Node) of
        {ok, I} -> I;
        error -> fatal({mcerlang, {unknown_node, Node, {erlang, spawn, length(Args)},
                                   "declare every node a program uses in the nodes option"}})
    end;
spawn_node(_Node, Args) ->
    erlang:error(badarg, Args).

init(Fun) ->
    mce_sandbox:init_fun(Fun).

init_mfa(M, F, A, _Args) when is_atom(M), is_atom(F), is_list(A) ->
    mce_sandbox:init_mfa(M, F, A);
init_mfa(_M, _F, _A, Args) ->
    erlang:error(badarg, Args).

%% @doc spawn_opt/2,4 with the options link and monitor; the options that
%% tune memory and scheduling only (heap sizes, fullsweep_after,
%% message_queue_data, priority) change nothing in the model, which
%% explores every schedule anyway, and are accepted.
-spec spawn_opt(function(), [term()]) -> pid() | {pid(), reference()}.
spawn_opt(Fun, Opts) ->
    spawn_with_opts(fun() -> spawn(Fun) end, Opts, [Fun, Opts]).

-spec spawn_opt(module(), atom(), [term()], [term()]) -> pid() | {pid(), reference()}.
spawn_opt(M, F, A, Opts) ->
    spawn_with_opts(fun() -> spawn(M, F, A) end, Opts, [M, F, A, Opts]).

spawn_with_opts(Spawn, Opts, Args) when is_list(Opts) ->
    lists:foreach(fun(link) -> ok;
                     (monitor) -> ok;
                     ({K, _}) when K =:= fullsweep_after; K =:= min_heap_size;
                                   K =:= min_bin_vheap_size; K =:= message_queue_data;
                                   K =:= priority -> ok;
                     (Opt) -> fatal({mcerlang, {unsupported_bif, {erlang, spawn_opt, length(Args)},
                                                {option, Opt, "only link, monitor and the memory and priority options are modelled"}}})
                  end, Opts),
    Pid = Spawn(),
    lists:member(link, Opts) andalso link(Pid),
    case lists:member(monitor, Opts) of
        true -> {Pid, monitor_spawned(Pid)};
        false -> Pid
    end;
spawn_with_opts(_Spawn, _Opts, Args) ->
    erlang:error(badarg, Args).

-spec spawn_monitor(function()) -> {pid(), reference()}.
spawn_monitor(Fun) ->
    Pid = spawn(Fun),
    {Pid, monitor_spawned(Pid)}.

-spec spawn_monitor(module(), atom(), [term()]) -> {pid(), reference()}.
spawn_monitor(M, F, A) ->
    Pid = spawn(M, F, A),
    {Pid, monitor_spawned(Pid)}.

%% @doc monitor/3 with the option {alias, explicit_unalias | demonitor |
%% reply_demonitor}: the monitor's ref is also an alias of the caller (as
%% gen:call uses it).
-spec monitor(process, term(), [{alias, atom()}]) -> reference().
monitor(process, Target, Opts) when is_list(Opts) ->
    Mode = lists:foldl(fun({alias, M}, _) when M =:= explicit_unalias; M =:= demonitor;
                                               M =:= reply_demonitor -> M;
                          ({tag, _} = O, _) ->
                               fatal({mcerlang, {unsupported_bif, {erlang, monitor, 3},
                                                 {option, O, "only {alias, _} is modelled"}}});
                          (_, _) -> erlang:error(badarg, [process, Target, Opts])
                       end, none, Opts),
    Ref = monitor(process, Target),
    Mode =:= none orelse add_alias(Ref, Mode),
    Ref;
monitor(Type, Target, Opts) ->
    erlang:error(badarg, [Type, Target, Opts]).

%%--------------------------------------------------------------------
%% Aliases
%%--------------------------------------------------------------------

-spec alias() -> reference().
alias() ->
    alias([]).

%% @doc alias/1 with the options explicit_unalias (default) and reply.
-spec alias([explicit_unalias | reply]) -> reference().
alias(Opts) when is_list(Opts) ->
    Mode = lists:foldl(fun(explicit_unalias, M) -> M;
                          (reply, _) -> reply;
                          (_, _) -> erlang:error(badarg, [Opts])
                       end, explicit_unalias, Opts),
    Ref = make_ref(),
    add_alias(Ref, Mode),
    Ref;
alias(Opts) ->
    erlang:error(badarg, [Opts]).

add_alias(Ref, Mode) ->
    {ok, R} = mce_ref:number(Ref),
    Code = case Mode of
               explicit_unalias -> 1;
               demonitor -> 2;
               reply_demonitor -> 3;
               reply -> 4
           end,
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{alias, R} => true}),
    effect({alias, R, Code}).

%% @doc unalias/1: true if the alias was active.
-spec unalias(reference()) -> boolean().
unalias(Alias) when is_reference(Alias) ->
    case mce_ref:number(Alias) of
        {ok, R} ->
            Overlay = erlang:get('$mce_overlay'),
            Active = case Overlay of
                         #{{alias, R} := A} -> A;
                         #{} -> mce_nif:alias_active(erlang:get('$mce_search'),
                                                     erlang:get('$mce_pid'), R)
                     end,
            erlang:put('$mce_overlay', Overlay#{{alias, R} => false}),
            effect({unalias, R}),
            Active;
        error -> false
    end;
unalias(Alias) ->
    erlang:error(badarg, [Alias]).

%%--------------------------------------------------------------------
%% Timers (untimed: a timer may fire at any moment; with
%% timeouts => when_idle only when nothing else can happen)
%%--------------------------------------------------------------------

-spec send_after(non_neg_integer(), pid() | atom(), term()) -> reference().
send_after(Time, Dest, Msg) ->
    send_after(Time, Dest, Msg, []).

-spec send_after(non_neg_integer(), pid() | atom(), term(), list()) -> reference().
send_after(Time, Dest, Msg, Opts) ->
    timer_start(Time, Dest, Opts, fun(_Ref) -> Msg end, [Time, Dest, Msg, Opts]).

-spec start_timer(non_neg_integer(), pid() | atom(), term()) -> reference().
start_timer(Time, Dest, Msg) ->
    start_timer(Time, Dest, Msg, []).

-spec start_timer(non_neg_integer(), pid() | atom(), term(), list()) -> reference().
start_timer(Time, Dest, Msg, Opts) ->
    timer_start(Time, Dest, Opts, fun(Ref) -> {timeout, Ref, Msg} end, [Time, Dest, Msg, Opts]).

timer_start(Time, Dest, Opts, Build, Args) when is_integer(Time), Time >= 0, Time < 1 bsl 31,
                                                 is_list(Opts) ->
    lists:all(fun({abs, B}) -> is_boolean(B); (_) -> false end, Opts)
        orelse erlang:error(badarg, Args),
    {Key, Name} = case Dest of
                      _ when is_atom(Dest) -> {mce_pid:by_name(my_node()), Dest};
                      _ when is_pid(Dest) ->
                          N = sim_pid(Dest, Args),
                          is_local(N) orelse erlang:error(badarg, Args),
                          {N, none};
                      _ -> erlang:error(badarg, Args)
                  end,
    Ref = make_ref(),
    {ok, R} = mce_ref:number(Ref),
    %% A timer aimed at a pid that is not alive is cancelled at once.
    Live = Name =/= none orelse Key =:= erlang:get('$mce_pid') orelse alive(Key),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{timer, R} => Live andalso Time}),
    Live andalso effect({timer, R, Key, Name, Build(Ref), Time}),
    Ref;
timer_start(_Time, _Dest, _Opts, _Build, Args) ->
    erlang:error(badarg, Args).

-spec cancel_timer(reference()) -> non_neg_integer() | false.
cancel_timer(Ref) ->
    cancel_timer(Ref, []).

%% @doc cancel_timer/2: the time left is the timer's whole time (untimed,
%% none has passed), false for a timer that fired or never was.
-spec cancel_timer(reference(), list()) -> non_neg_integer() | false | ok.
cancel_timer(Ref, Opts) when is_reference(Ref), is_list(Opts) ->
    Async = proplists:get_value(async, Opts, false),
    Info = proplists:get_value(info, Opts, true),
    Left = timer_left(Ref),
    case mce_ref:number(Ref) of
        {ok, R} when Left =/= false ->
            erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{timer, R} => false}),
            effect({cancel_timer, R});
        _ -> ok
    end,
    case {Async, Info} of
        {false, true} -> Left;
        {true, true} -> send(self(), {cancel_timer, Ref, Left}), ok;
        {_, false} -> ok
    end;
cancel_timer(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).

-spec read_timer(reference()) -> non_neg_integer() | false.
read_timer(Ref) ->
    read_timer(Ref, []).

-spec read_timer(reference(), list()) -> non_neg_integer() | false | ok.
read_timer(Ref, Opts) when is_reference(Ref), is_list(Opts) ->
    Left = timer_left(Ref),
    case proplists:get_value(async, Opts, false) of
        false -> Left;
        true -> send(self(), {read_timer, Ref, Left}), ok
    end;
read_timer(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).

timer_left(Ref) ->
    case mce_ref:number(Ref) of
        {ok, R} ->
            case erlang:get('$mce_overlay') of
                #{{timer, R} := T} -> T;
                #{} -> mce_nif:timer(erlang:get('$mce_search'), R)
            end;
        error -> false
    end.

%% @doc timer:send_after/2,3 as in OTP 25: erlang:send_after for a local
%% pid ({send_local, Ref}); a name is resolved when the timer fires.
-spec timer_send_after(non_neg_integer(), term()) -> {ok, term()} | {error, badarg}.
timer_send_after(Time, Msg) ->
    timer_send_after(Time, self(), Msg).

-spec timer_send_after(non_neg_integer(), term(), term()) -> {ok, term()} | {error, badarg}.
timer_send_after(0, Dest, Msg) when is_pid(Dest); is_atom(Dest); is_tuple(Dest) ->
    try send(Dest, Msg) catch error:badarg -> ok end,
    {ok, {instant, make_ref()}};
timer_send_after(Time, Dest, Msg) when is_integer(Time), Time > 0, is_pid(Dest) ->
    case mce_pid:number(Dest) of
        {ok, N} ->
            case is_local(N) of
                true -> {ok, {send_local, send_after(Time, Dest, Msg)}};
                false -> {error, badarg}
            end;
        error -> {error, badarg}
    end;
timer_send_after(Time, Dest, Msg) when is_integer(Time), Time > 0, is_atom(Dest) ->
    {ok, {once, send_after(Time, Dest, Msg)}};
timer_send_after(_Time, _Dest, _Msg) ->
    {error, badarg}.

-spec timer_cancel(term()) -> {ok, cancel} | {error, badarg}.
timer_cancel({instant, Ref}) when is_reference(Ref) -> {ok, cancel};
timer_cancel({mce_timer, Pid}) when is_pid(Pid) ->
    %% An interval or apply timer (mce_timer): its process ends at once.
    %% On the real VM no process dies (the timer server forgets the
    %% timer): the reason is one that abnormal_exit does not judge
    %% (mce_search:normal_reason/2), and mce_timer's processes do not trap
    %% exits.
    _ = exit(Pid, '$mce_timer_cancelled'),
    {ok, cancel};
timer_cancel({Kind, Ref}) when (Kind =:= send_local orelse Kind =:= once), is_reference(Ref) ->
    _ = cancel_timer(Ref),
    {ok, cancel};
timer_cancel(_) ->
    {error, badarg}.

%%--------------------------------------------------------------------
%% Clocks.  Time does not pass under the checker (untimed semantics, as
%% for `after' and timers): every clock reads one fixed instant, so a
%% deadline computed from them is never shortened, and states do not
%% differ by the time they were reached in.
%%--------------------------------------------------------------------

-define(EPOCH_SECONDS, 1700000000).

-spec monotonic_time() -> integer().
monotonic_time() -> 0.

-spec monotonic_time(erlang:time_unit()) -> integer().
monotonic_time(Unit) -> erlang:convert_time_unit(0, native, Unit).

-spec system_time() -> integer().
system_time() -> erlang:convert_time_unit(?EPOCH_SECONDS, second, native).

-spec system_time(erlang:time_unit()) -> integer().
system_time(Unit) -> erlang:convert_time_unit(?EPOCH_SECONDS, second, Unit).

-spec timestamp() -> erlang:timestamp().
timestamp() -> {?EPOCH_SECONDS div 1000000, ?EPOCH_SECONDS rem 1000000, 0}.

%%--------------------------------------------------------------------
%% erlang:unique_integer/0,1: a counter kept in the state, so values are
%% unique and increasing along every path.
%%--------------------------------------------------------------------

-spec unique_integer() -> pos_integer().
unique_integer() ->
    unique_integer([]).

-spec unique_integer([positive | monotonic]) -> pos_integer().
unique_integer(Opts) when is_list(Opts) ->
    lists:all(fun(O) -> O =:= positive orelse O =:= monotonic end, Opts)
        orelse erlang:error(badarg, [Opts]),
    Overlay = erlang:get('$mce_overlay'),
    Last = case Overlay of
               #{unique := U} -> U;
               #{} -> mce_nif:unique(erlang:get('$mce_search'))
           end,
    N = Last + 1,
    erlang:put('$mce_overlay', Overlay#{unique => N}),
    effect({unique, N}),
    N;
unique_integer(Opts) ->
    erlang:error(badarg, [Opts]).

%%--------------------------------------------------------------------
%% process_info/2: the items that describe the simulated process
%%--------------------------------------------------------------------

-define(INFO_ITEMS, [registered_name, group_leader, status, message_queue_len, messages, links, monitors,
                     monitored_by, trap_exit, dictionary, current_stacktrace, current_function,
                     initial_call, heap_size, stack_size, total_heap_size, reductions, memory]).

%% @doc process_info/2 for the items registered_name, status,
%% message_queue_len, messages, links, monitors, monitored_by, trap_exit
%% and dictionary, as the process is at this point of the step.
-spec process_info(pid(), atom() | [atom()]) -> term().
process_info(Pid, Items) when is_pid(Pid), is_list(Items) ->
    [check_info_item(I, [Pid, Items]) || I <- Items],
    case info_record(Pid, [Pid, Items]) of
        undefined -> undefined;
        Rec -> [case {I, Rec} of
                    {registered_name, #{name := undefined}} -> {registered_name, []};
                    _ -> info_item(I, Rec)
                end || I <- Items]
    end;
process_info(Pid, Item) when is_pid(Pid), is_atom(Item) ->
    check_info_item(Item, [Pid, Item]),
    case info_record(Pid, [Pid, Item]) of
        undefined -> undefined;
        #{name := undefined} when Item =:= registered_name -> [];
        Rec -> info_item(Item, Rec)
    end;
process_info(Pid, Item) ->
    erlang:error(badarg, [Pid, Item]).

check_info_item(Item, Args) when is_atom(Item) ->
    lists:member(Item, ?INFO_ITEMS) orelse
        fatal({mcerlang, {unsupported_bif, {erlang, process_info, 2},
                          {item, Item, "modelled items: " ++
                               lists:flatten(io_lib:format("~p", [?INFO_ITEMS]))}}}),
    Args;
check_info_item(_Item, Args) ->
    erlang:error(badarg, Args).

info_record(Pid, Args) ->
    N = sim_pid(Pid, Args),
    is_local(N) orelse erlang:error(badarg, Args),
    case system_process(N) of
        false -> info_record_program(N, Pid);
        Name -> #{system => N, name => Name}
    end.

info_record_program(N, Pid) ->
    Me = erlang:get('$mce_pid'),
    Stored = mce_nif:process(erlang:get('$mce_search'), N),
    Base = case Stored of
               {error, Where, Why} -> fatal({mcerlang_internal, Where, Why});
               {St, Msgs, Links, Mons, MonBy, Name, Trap, Dict} ->
                   #{status => St, messages => Msgs, links => Links, stack => [],
                     monitors => [{R, P, I} || {R, P, I} <- Mons],
                     monitored_by => [{R, P} || {R, P, _} <- MonBy], name => Name,
                     trap_exit => Trap, dictionary => Dict};
               undefined ->
                   #{status => init, messages => [], links => [], monitors => [], stack => [],
                     monitored_by => [], name => undefined, trap_exit => false,
                     dictionary => []}
           end,
    Alive = N =:= Me orelse alive(N),
    case Alive of
        true -> info_record_alive(N, Pid, Me, Base#{gl => gl_key(N)});
        false -> undefined
    end.

info_record_alive(N, Pid, Me, Base) ->
    case N =:= Me of
        true ->
            Own = own_changes(Base, lists:reverse(erlang:get('$mce_effects')), Me),
            {current_stacktrace, Raw} = erlang:process_info(erlang:self(), current_stacktrace),
            Own#{status := running, trap_exit := erlang:get('$mce_trap_exit'),
                 stack => tl(mce_exec:clean_stack(Raw)),
                 dictionary := lists:sort(maps:to_list(erlang:get('$mce_dict'))),
                 name := own_name(Pid)};
        false ->
            Effects = lists:reverse(erlang:get('$mce_effects')),
            Sent = [M || {send, To, M} <- Effects, To =:= N],
            By = [{element(3, E), Me} || E <- Effects, element(1, E) =:= monitor,
                                         element(2, E) =:= N],
            Unby = [R || {demonitor, R, _} <- Effects],
            Linked = [Me || {link, To} <- Effects, To =:= N] ++
                [Me || {spawn, To, _, true} <- Effects, To =:= N],
            Base#{messages := maps:get(messages, Base) ++ Sent,
                  name := overlay_name_of(N, maps:get(name, Base)),
                  monitored_by := [RP || {R, _} = RP <- maps:get(monitored_by, Base) ++ By,
                                         not lists:member(R, Unby)],
                  links := lists:usort(maps:get(links, Base) ++ Linked),
                  status := case maps:get(status, Base) of
                                init -> runnable;
                                S -> S
                            end}
    end.

%% The running process's own record: the stored one changed by this step's
%% effects so far.
own_changes(Rec, [], _Me) -> Rec;
own_changes(#{messages := Ms} = Rec, [{send, Me, M} | Es], Me) ->
    own_changes(Rec#{messages := Ms ++ [M]}, Es, Me);
own_changes(#{links := Ls} = Rec, [{link, N} | Es], Me) ->
    own_changes(Rec#{links := lists:usort([N | Ls])}, Es, Me);
own_changes(#{links := Ls} = Rec, [{spawn, N, _, true} | Es], Me) ->
    own_changes(Rec#{links := lists:usort([N | Ls])}, Es, Me);
own_changes(#{links := Ls} = Rec, [{unlink, N} | Es], Me) ->
    own_changes(Rec#{links := Ls -- [N]}, Es, Me);
own_changes(#{monitors := Ms} = Rec, [{monitor, N, R, Item} | Es], Me) ->
    own_changes(Rec#{monitors := Ms ++ [{R, N, Item}]}, Es, Me);
own_changes(#{monitors := Ms} = Rec, [{spawn_monitor, N, R, Item} | Es], Me) ->
    own_changes(Rec#{monitors := Ms ++ [{R, N, Item}]}, Es, Me);
own_changes(#{monitors := Ms} = Rec, [{monitor, N, R, Item, _Name} | Es], Me) ->
    own_changes(Rec#{monitors := Ms ++ [{R, N, Item}]}, Es, Me);
own_changes(#{monitors := Ms} = Rec, [{demonitor, R, _} | Es], Me) ->
    own_changes(Rec#{monitors := [M || {R1, _, _} = M <- Ms, R1 =/= R]}, Es, Me);
own_changes(Rec, [_ | Es], Me) ->
    own_changes(Rec, Es, Me).

own_name(Pid) ->
    case [Name || Name <- registered(), whereis(Name) =:= Pid] of
        [Name] -> Name;
        [] -> undefined
    end.

info_item(registered_name, #{name := Name}) -> {registered_name, Name};
info_item(group_leader, #{system := N, name := init}) -> {group_leader, mce_pid:term(N)};
info_item(group_leader, #{gl := L}) -> {group_leader, mce_pid:term(L)};
info_item(group_leader, #{system := _}) -> {group_leader, mce_pid:term(default_gl_key())};
info_item(trap_exit, #{system := _}) -> {trap_exit, true};
info_item(status, #{system := _}) -> {status, waiting};
info_item(Item, #{system := N}) -> system_process_refused(N, {process_info, Item});
info_item(status, #{status := S}) -> {status, S};
info_item(message_queue_len, #{messages := Ms}) -> {message_queue_len, length(Ms)};
info_item(messages, #{messages := Ms}) -> {messages, Ms};
info_item(links, #{links := Ls}) -> {links, [mce_pid:term(L) || L <- Ls]};
info_item(monitors, #{monitors := Ms}) ->
    {monitors, [{process, case I of
                              none -> mce_pid:term(P);
                              _ -> I
                          end} || {_R, P, I} <- Ms]};
info_item(monitored_by, #{monitored_by := Ps}) -> {monitored_by, [mce_pid:term(P) || {_, P} <- Ps]};
info_item(trap_exit, #{trap_exit := T}) -> {trap_exit, T};
info_item(dictionary, #{dictionary := D}) -> {dictionary, D};
info_item(current_stacktrace, #{stack := S}) -> {current_stacktrace, S};
info_item(current_function, #{stack := [{M, F, A, _} | _]}) ->
    {current_function, {M, F, if is_list(A) -> length(A); true -> A end}};
info_item(current_function, #{}) -> {current_function, undefined};
%% Informational items with no meaning in the model report fixed values.
info_item(initial_call, #{}) -> {initial_call, {erlang, apply, 2}};
info_item(Size, #{}) -> {Size, 0}.

%%--------------------------------------------------------------------
%% Registry
%%--------------------------------------------------------------------

-spec register(atom(), pid()) -> true.
register(Name, Pid) when is_atom(Name), Name =/= undefined, is_pid(Pid) ->
    N = sim_pid(Pid, [Name, Pid]),
    is_local(N) orelse erlang:error(badarg, [Name, Pid]),
    Taken = whereis(Name) =/= undefined,
    HasName = lists:any(fun(Other) -> whereis(Other) =:= Pid end, registered()),
    Alive = N =:= erlang:get('$mce_pid') orelse alive(N),
    case not Taken andalso not HasName andalso Alive of
        true ->
            overlay_name(Name, N),
            effect({register, N, Name}),
            true;
        false ->
            erlang:error(badarg, [Name, Pid])
    end;
register(Name, Pid) ->
    erlang:error(badarg, [Name, Pid]).

-spec unregister(atom()) -> true.
unregister(Name) when is_atom(Name) ->
    case whereis(Name) of
        undefined -> erlang:error(badarg, [Name]);
        _ ->
            overlay_name(Name, undefined),
            effect({unregister, Name}),
            true
    end;
unregister(Name) ->
    erlang:error(badarg, [Name]).

-spec whereis(atom()) -> pid() | undefined.
whereis(Name) when is_atom(Name) ->
    case system_process_key(Name, my_node()) of
        {ok, Key} -> mce_pid:term(Key);
        error ->
            case whereis_program(Name) of
                undefined ->
                    %% A standard name of a real node that the model does
                    %% not have: `undefined' would be a false alarm in a
                    %% program that relies on the process being there.
                    lists:member(Name, unmodelled_system_names()) andalso
                        fatal({mcerlang, {unsupported_system_process, Name, caller_location()}}),
                    undefined;
                Pid -> Pid
            end
    end;
whereis(Name) ->
    erlang:error(badarg, [Name]).

whereis_program(Name) ->
    Overlay = erlang:get('$mce_overlay'),
    N = case Overlay of
            #{{name, Name} := Known} -> Known;
            #{} -> mce_nif:whereis(erlang:get('$mce_search'), my_node(), Name)
        end,
    case N of
        undefined -> undefined;
        _ ->
            case alive(N) orelse N =:= erlang:get('$mce_pid') of
                true -> mce_pid:term(N);
                false -> undefined
            end
    end.

%% @doc registered/0: the program's names and the modelled system
%% processes `init' and `user'.
-spec registered() -> [atom()].
registered() ->
    Known = mce_nif:registered(erlang:get('$mce_search'), my_node()),
    Changed = [Name || {name, Name} <- maps:keys(erlang:get('$mce_overlay'))],
    [init, user | [Name || Name <- lists:usort(Known ++ Changed),
                           whereis_program(Name) =/= undefined]].

%% Liveness and names as changed by this step so far (the runtime applies
%% the step's effects only when it ends).
alive(N) ->
    system_process(N) =/= false orelse alive_program(N).

alive_program(N) ->
    case erlang:get('$mce_overlay') of
        #{{alive, N} := Alive} -> Alive;
        #{} -> mce_nif:alive(erlang:get('$mce_search'), N)
    end.

%% The registered name of process N after this step's register and
%% unregister calls so far.
overlay_name_of(N, Stored) ->
    Overlay = erlang:get('$mce_overlay'),
    case [Name || {{name, Name}, M} <- maps:to_list(Overlay), M =:= N] of
        [Name | _] -> Name;
        [] ->
            case Overlay of
                #{{name, Stored} := Other} when Other =/= N -> undefined;
                #{} -> Stored
            end
    end.

overlay_alive(N, Alive) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{alive, N} => Alive}).

overlay_name(Name, N) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{name, Name} => N}).

%%--------------------------------------------------------------------
%% System processes.  Every simulated node has `init' (<N.0.0>, as on the
%% VM) and `user' (a fixed high number that least-fresh numbering never
%% reaches): they exist, never die and never run, so they add no
%% transitions and no states.  Every process's group leader is the `user'
%% of the first node: processes descend from the check's first process, and
%% a spawn, remote or local, inherits the spawner's group leader.
%%--------------------------------------------------------------------

-define(INIT_NUMBER, 0).
-define(USER_NUMBER, 16#fffffe).

system_process_key(init, Node) -> {ok, mce_pid:key(Node, ?INIT_NUMBER)};
system_process_key(user, Node) -> {ok, mce_pid:key(Node, ?USER_NUMBER)};
system_process_key(_, _Node) -> error.

%% The name of the system process of key N, or false.
system_process(N) ->
    case N band 16#ffffff of
        ?INIT_NUMBER -> init;
        ?USER_NUMBER -> user;
        _ -> false
    end.

%% The registered names of a real OTP 25 node that the model refuses
%% (docs/USER_GUIDE.md lists them).
unmodelled_system_names() ->
    [application_controller, code_server, erl_prim_loader, erl_signal_server,
     erts_code_purger, file_server_2, global_group, global_group_check, global_name_server,
     inet_db, kernel_refc, kernel_safe_sup, kernel_sup, logger, logger_handler_watcher,
     logger_proxy, logger_std_h_default, logger_sup, rex, socket_registry, standard_error,
     standard_error_sup, user_drv, timer_server, net_kernel, auth, erl_epmd, net_sup,
     global_group_sup, pg, sasl_sup, release_handler, alarm_handler, overload].

%% A name on another node is resolved when the signal arrives; a standard
%% name that no program process holds there now is refused, as whereis/1
%% refuses it on this node.
remote_name_modelled(Name, Node) ->
    case lists:member(Name, unmodelled_system_names()) andalso
         mce_nif:whereis(erlang:get('$mce_search'), Node, Name) =:= undefined of
        true -> fatal({mcerlang, {unsupported_system_process, Name, caller_location()}});
        false -> ok
    end.

%% The program's location that called the runtime, for error reasons.
caller_location() ->
    {current_stacktrace, Raw} = erlang:process_info(erlang:self(), current_stacktrace),
    %% The cleaned stack names the BIF the program called (erlang:'!'/2)
    %% first: the location is the program's frame under it.
    case [F || {M, _, _, _} = F <- mce_exec:caught_stack(Raw), M =/= ?MODULE, M =/= erlang] of
        [{M, F, A, Info} | _] ->
            {M, F, if is_list(A) -> length(A); true -> A end, proplists:get_value(line, Info, 0)};
        [] -> unknown
    end.

%% A system process was the target of something the model cannot show.
-spec system_process_refused(non_neg_integer(), term()) -> no_return().
system_process_refused(N, What) ->
    fatal({mcerlang, {unsupported_system_process, {system_process(N), What}, caller_location()}}).

%% @doc group_leader/0: the running process's group leader.
-spec group_leader() -> pid().
group_leader() ->
    mce_pid:term(gl_key(erlang:get('$mce_pid'))).

%% @doc group_leader/2: sets Pid's group leader, an effect of the step.  As
%% on OTP 25, a non-pid or a dead local Pid is badarg and the leader need
%% not be alive.  A remote Pid is not checked (OTP sends a signal); the
%% group leaders of `init' and `user' are not modelled.
-spec group_leader(pid(), pid()) -> true.
group_leader(Leader, Pid) when is_pid(Leader), is_pid(Pid) ->
    L = sim_pid(Leader, [Leader, Pid]),
    N = sim_pid(Pid, [Leader, Pid]),
    system_process(N) =:= false orelse system_process_refused(N, group_leader),
    is_local(N) andalso not alive(N) andalso erlang:error(badarg, [Leader, Pid]),
    N =:= erlang:get('$mce_pid') andalso keep_children_gl(),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{gl, N} => L}),
    effect({group_leader, N, L bxor default_gl_key(), L}),
    true;
group_leader(Leader, Pid) ->
    erlang:error(badarg, [Leader, Pid]).

%% The first node's `user': the group leader of the check's first process
%% and so, by inheritance, of every process that nobody gave another one.
default_gl_key() ->
    mce_pid:key(0, ?USER_NUMBER).

%% The group leader (a pid key) of live process N as this step has left it.
gl_key(N) ->
    case erlang:get('$mce_overlay') of
        #{{gl, N} := L} -> L;
        #{} ->
            case mce_nif:group_leader(erlang:get('$mce_search'), N) of
                %% Spawned by this step: its spawner's (see keep_children_gl/0).
                undefined -> gl_key(erlang:get('$mce_pid'));
                Stored -> Stored bxor default_gl_key()
            end
    end.

%% The running process changes its own group leader: the processes it
%% spawned earlier in this step keep the one it had (the C search copies the
%% spawner's leader when it applies each spawn, in order).
keep_children_gl() ->
    Old = gl_key(erlang:get('$mce_pid')),
    Overlay = erlang:get('$mce_overlay'),
    erlang:put('$mce_overlay',
               maps:merge(maps:from_list([{{gl, C}, Old} || {spawn, C, _, _} <- erlang:get('$mce_effects')]),
                          Overlay)).

%% @doc erlang:system_info/1: the number of processes is the node's in the
%% model (as processes/0 lists them); other items describe the VM the
%% checker runs on and do not change during a check.
-spec system_info(term()) -> term().
system_info(process_count) ->
    length(processes());
system_info(Item) ->
    erlang:system_info(Item).

%% @doc erlang:halt/0,1,2 and init:stop/0,1 in checked code: the
%% simulated node stops, as if it crashed (its processes, tables and
%% channels vanish; other nodes see noconnection and nodedown), as a step
%% of the running process.  The real VM is never halted.
-spec halt() -> no_return().
halt() -> halt(0, []).

-spec halt(non_neg_integer() | abort | string()) -> no_return().
halt(Status) -> halt(Status, []).

-spec halt(non_neg_integer() | abort | string(), list()) -> no_return().
halt(Status, Opts) when is_list(Opts), (is_integer(Status) andalso Status >= 0) orelse
                                       Status =:= abort orelse is_list(Status) ->
    effect({halt, Status}),
    %% The process goes with the node; its exit reason is never seen.
    die(normal);
halt(Status, Opts) ->
    erlang:error(badarg, [Status, Opts]).

%% @doc init:stop/0,1: the node stops (see halt/2).
-spec init_stop() -> no_return().
init_stop() -> halt(0, []).

-spec init_stop(non_neg_integer() | string()) -> no_return().
init_stop(Status) -> halt(Status, []).

%% @doc erlang:processes/0: the live processes of this node in pid order,
%% `init' first and `user' last, as this step has changed them so far.
-spec processes() -> [pid()].
processes() ->
    Node = my_node(),
    Stored = case mce_nif:processes(erlang:get('$mce_search'), Node) of
                 L when is_list(L) -> L;
                 {error, Where, Why} -> fatal({mcerlang_internal, Where, Why})
             end,
    Spawned = [N || {{alive, N}, true} <- maps:to_list(erlang:get('$mce_overlay')),
                    N bsr 24 =:= Node],
    Live = [N || N <- lists:usort([erlang:get('$mce_pid') | Stored ++ Spawned]),
                 N =:= erlang:get('$mce_pid') orelse alive(N)],
    [mce_pid:term(K) || K <- [mce_pid:key(Node, ?INIT_NUMBER) | Live] ++
                            [mce_pid:key(Node, ?USER_NUMBER)]].

%%--------------------------------------------------------------------
%% Process dictionary (part of the simulated process's state)
%%--------------------------------------------------------------------

-spec put(term(), term()) -> term().
put(Key, Value) ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', Dict#{Key => Value}),
    maps:get(Key, Dict, undefined).

-spec get(term()) -> term().
get(Key) ->
    maps:get(Key, erlang:get('$mce_dict'), undefined).

-spec get() -> [{term(), term()}].
get() ->
    maps:to_list(erlang:get('$mce_dict')).

-spec erase(term()) -> term().
erase(Key) ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', maps:remove(Key, Dict)),
    maps:get(Key, Dict, undefined).

-spec erase() -> [{term(), term()}].
erase() ->
    Dict = erlang:get('$mce_dict'),
    erlang:put('$mce_dict', #{}),
    maps:to_list(Dict).

-spec get_keys() -> [term()].
get_keys() ->
    maps:keys(erlang:get('$mce_dict')).

-spec get_keys(term()) -> [term()].
get_keys(Value) ->
    [K || {K, V} <- maps:to_list(erlang:get('$mce_dict')), V =:= Value].

-spec spawn(function()) -> pid().
spawn(Fun) -> spawn_fun(Fun, false).

-spec spawn_link(function()) -> pid().
spawn_link(Fun) -> spawn_fun(Fun, true).

-spec spawn(module(), atom(), [term()]) -> pid().
spawn(M, F, A) -> spawn_mfa(M, F, A, false).

-spec spawn_link(module(), atom(), [term()]) -> pid().
spawn_link(M, F, A) -> spawn_mfa(M, F, A, true).

spawn_fun(Fun, Link) when is_function(Fun, 0) ->
    new_process(my_node(), init(Fun), Link);
spawn_fun(Fun, _Link) ->
    erlang:error(badarg, [Fun]).

spawn_mfa(M, F, A, Link) ->
    new_process(my_node(), init_mfa(M, F, A, [M, F, A]), Link).

new_process(Node, InitCall, Link) ->
    case mce_nif:fresh_pid(erlang:get('$mce_search'), Node) of
        N when is_integer(N) ->
            effect({spawn, N, InitCall, Link}),
            Node =:= my_node() andalso overlay_alive(N, true),
            mce_pid:term(N);
        {error, Where, Why} ->
            fatal({mcerlang_internal, Where, Why})
    end.

%% @doc A `receive' was reached: return the suspension that the translated
%% callers extend with their continuation frames on the way out.
-spec suspend(module(), atom(), [term()], timeout()) -> {'$mce_suspend', tuple(), []}.
suspend(Mod, Name, FreeVars, Timeout)
  when Timeout =:= infinity; is_integer(Timeout), Timeout >= 0 ->
    erlang:put('$mce_suspensions', [{Mod, Name} | erlang:get('$mce_suspensions')]),
    {'$mce_suspend', {Mod, Name, FreeVars, Timeout}, []};
suspend(_Mod, _Name, _FreeVars, _Timeout) ->
    erlang:error(timeout_value).

%% @doc erlang:hibernate/3: the process sleeps, its stack discarded, until
%% a message arrives; the message stays in the mailbox and the process goes
%% on as M:F(A).  The suspension is a receive that matches anything; the
%% executor drops the caller's frames when it wakes (mce_exec:step/2).
-spec hibernate(module(), atom(), [term()]) -> {'$mce_suspend', tuple(), []}.
hibernate(M, F, A) when is_atom(M), is_atom(F), is_list(A) ->
    suspend(?MODULE, '$mce_hibernated', [M, F, A], infinity);
hibernate(M, F, A) ->
    erlang:error(badarg, [M, F, A]).

%% @doc The receive of a hibernating process (see hibernate/3).
-spec '$mce_hibernated'(match | body, term(), module(), atom(), [term()]) -> term().
'$mce_hibernated'(match, _Msg, _M, _F, _A) ->
    true;
'$mce_hibernated'(body, _Msg, M, F, A) ->
    effect({keep_message, true}),
    apply(M, F, A).

%% @doc `apply(Fun, Args)' and `Fun(Args...)' from translated code.
-spec apply(function(), [term()]) -> term().
apply(Fun, Args) ->
    erlang:apply(mce_sandbox:checked_fun(Fun, dynamic_call), Args).

%% @doc `M:F(Args)' with M or F computed at run time, and `apply/3'.
-spec apply(module(), atom(), [term()]) -> term().
apply(M, F, Args) when is_atom(M), is_atom(F), is_list(Args) ->
    case mce_translate:classify_call(M, F, length(Args)) of
        {redirect, RM, RF} -> erlang:apply(RM, RF, Args);
        {model, MM, MF} -> erlang:apply(checker_call(fun() -> mce_translate:ensure(MM) end), MF, Args);
        {unsupported, Why} -> fatal({mcerlang, {Why, {M, F, length(Args)}, dynamic_call}});
        pure -> erlang:apply(M, F, Args);
        library_hof -> erlang:apply(checker_call(fun() -> mce_translate:ensure_library(M) end), F, Args);
        translate -> erlang:apply(checker_call(fun() -> mce_translate:ensure(M) end), F, Args)
    end;
apply(M, F, Args) ->
    erlang:apply(M, F, Args).

%% @doc Is io output to Pid recorded with the step (mce_io)?  It is for
%% the `user' process of any node, which is the default group leader;
%% another process gets io_requests.
-spec io_user(pid()) -> boolean().
io_user(Pid) ->
    case mce_pid:number(Pid) of
        {ok, N} -> system_process(N) =:= user;
        error -> fatal({mcerlang, {send_to_real_process, Pid}})
    end.

%% @doc Records the text of an io request (mce_io) with the step: shown in
%% counterexamples instead of being printed during the search.
-spec io_record(term()) -> ok.
io_record({format, Format, Args}) ->
    Text = lists:flatten(io_lib:format(Format, Args)),
    record_text(Text);
io_record({put_chars, _Enc, Chars}) ->
    case unicode:characters_to_list(Chars) of
        Text when is_list(Text) -> record_text(Text);
        _ -> erlang:error(badarg, [Chars])
    end;
io_record(nl) ->
    record_text("\n");
io_record({write, Term}) ->
    record_text(lists:flatten(io_lib:write(Term))).

record_text(Text) ->
    erlang:put('$mce_output', [Text | erlang:get('$mce_output')]),
    ok.

%% @doc erlang:send_nosuspend/2,3: a send that never suspends; the model's
%% sends never do, so it is a send that succeeds.
-spec send_nosuspend(term(), term()) -> true.
send_nosuspend(Dest, Msg) ->
    _ = send(Dest, Msg),
    true.

-spec send_nosuspend(term(), term(), [atom()]) -> true.
send_nosuspend(Dest, Msg, Opts) ->
    _ = send(Dest, Msg, Opts),
    true.

%% @doc erlang:statistics/1 for the clocks and counters programs read to
%% measure themselves: time does not pass under the checker, so they read
%% zero.
-spec statistics(atom()) -> term().
statistics(Item) when Item =:= wall_clock; Item =:= runtime; Item =:= reductions;
                      Item =:= exact_reductions ->
    {0, 0};
statistics(Item) when Item =:= run_queue; Item =:= total_run_queue_lengths;
                      Item =:= total_active_tasks; Item =:= context_switches ->
    case Item of
        context_switches -> {0, 0};
        _ -> 0
    end;
statistics(Item) ->
    fatal({mcerlang, {unsupported_bif, {erlang, statistics, 1},
                      {item, Item, "modelled: wall_clock, runtime, reductions, run_queue, "
                                   "context_switches"}}}).

%% @doc erlang:yield/0: a hint to the scheduler; every schedule is
%% explored anyway.
-spec erlang_yield() -> true.
erlang_yield() -> true.

%% @doc A call the checker cannot model yet was reached.
-spec unsupported(mfa(), location(), atom()) -> no_return().
unsupported(MFA, Location, Why) ->
    fatal({mcerlang, {Why, MFA, Location}}).

%% @doc Stops the check: the program reached something the checker cannot
%% model.  The reason is recorded before it is raised, so a `catch' in the
%% program cannot hide it: the executor stops the check after the step.
-spec fatal(term()) -> no_return().
fatal(Reason) ->
    case erlang:get('$mce_fatal') of
        undefined -> erlang:put('$mce_fatal', Reason);
        _ -> ok
    end,
    erlang:error(Reason).

%% @doc A stack trace as the program would see it on the real VM: original
%% module and function names, without the checker's frames.
-spec clean_stack([tuple()]) -> [tuple()].
clean_stack(Stack) ->
    mce_exec:caught_stack(Stack).

%% Errors of the checker itself (a module that cannot be translated, say)
%% raised while running program code.
checker_call(Fun) ->
    try Fun()
    catch error:{mcerlang, _} = E -> fatal(E)
    end.

effect(E) ->
    erlang:put('$mce_effects', [E | erlang:get('$mce_effects')]).
