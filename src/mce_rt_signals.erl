%% @doc The runtime (see mce_rt) for signals between processes other than
%% messages: links, exit signals and trap_exit, refs and monitors, aliases.
%%
%% Each call records its signal as an effect of the step; the C runtime
%% delivers it (directly or through the ether) and runs the exit cascades.  What the caller may observe before the step ends (an
%% exit(Pid, kill) followed by is_process_alive(Pid), a demonitor's `info')
%% is read from the step's overlay first.
%%
%% Invariant: a signal aimed at a system process (init, user) is dropped or
%% refused here and never reaches the state (they trap exits and never
%% die); an exit signal a process sends itself that ends it acts within
%% the step (die/1), so no catch in the program can keep it alive.
-module(mce_rt_signals).
-compile({no_auto_import, [link/1, unlink/1, exit/2, process_flag/2, make_ref/0, monitor/2,
                            demonitor/1, demonitor/2, monitor/3, alias/0, alias/1, unalias/1]}).

-export([link/1, unlink/1, exit/2, process_flag/2, make_ref/0, monitor/2, demonitor/1, demonitor/2,
         monitor/3, alias/0, alias/1, unalias/1]).
%% For the other modules of the runtime.
-export([die/1, monitor_spawned/1, dies_of/2]).

%%--------------------------------------------------------------------
%% Links, exit signals, trap_exit
%%--------------------------------------------------------------------

-spec link(pid()) -> true.
link(Pid) ->
    N = mce_rt:sim_pid(Pid, [Pid]),
    Self = erlang:get('$mce_pid'),
    case N =:= Self orelse mce_rt_procs:system_process(N) =/= false of
        %% System processes trap exits and never die: a link to one never
        %% carries a signal either way.
        true -> true;
        false when N bsr 24 =/= Self bsr 24 ->
            %% A remote process: the answer (noproc, noconnection) comes
            %% back as an exit signal.
            mce_rt:effect({link, N}),
            true;
        false ->
            case mce_rt_procs:alive(N) of
                true ->
                    mce_rt:effect({link, N}),
                    true;
                false ->
                    case erlang:get('$mce_trap_exit') of
                        true ->
                            mce_rt:effect({send, erlang:get('$mce_pid'), {'EXIT', Pid, noproc}}),
                            true;
                        false ->
                            erlang:error(noproc, [Pid])
                    end
            end
    end.

-spec unlink(pid()) -> true.
unlink(Pid) ->
    N = mce_rt:sim_pid(Pid, [Pid]),
    mce_rt_procs:system_process(N) =:= false andalso mce_rt:effect({unlink, N}),
    true.

%% @doc exit/2.  To another process: an exit signal, delivered by the
%% runtime.  To itself: the signal acts at once and cannot be caught; only
%% when trapping exits does it become a message ('kill' cannot be trapped).
-spec exit(pid(), term()) -> true.
exit(Pid, Reason) ->
    N = mce_rt:sim_pid(Pid, [Pid, Reason]),
    System = mce_rt_procs:system_process(N) =/= false,
    case N =:= erlang:get('$mce_pid') of
        %% init and user trap exits (OTP 25): only kill would end them,
        %% and with them the node.
        false when System, Reason =/= kill -> true;
        false when System -> mce_rt_procs:system_process_refused(N, {exit, kill});
        false ->
            %% The signal acts before anything the caller does next can
            %% observe the target (is_process_alive/1, link/1); whether it
            %% ends the target is asked only then (mce_rt_procs).
            mce_rt:is_local(N) andalso mce_rt_procs:overlay_exit(N, Reason),
            mce_rt:effect({exit, N, Reason}),
            true;
        true ->
            case {Reason, erlang:get('$mce_trap_exit')} of
                {kill, _} -> die(killed);
                {_, true} ->
                    mce_rt:effect({send, N, {'EXIT', Pid, Reason}}),
                    true;
                {_, false} -> die(Reason)
            end
    end.

%% @doc Does an exit signal with Reason end process N?  kill always;
%% normal never (from another process); any other reason unless N traps
%% exits (a read of N's record: a reduced search is void, c_src/peek.c).
-spec dies_of(non_neg_integer(), term()) -> boolean().
dies_of(_N, kill) -> true;
dies_of(_N, normal) -> false;
dies_of(N, _Reason) ->
    case mce_nif:process(erlang:get('$mce_search'), N) of
        {_St, _Msgs, _Links, _Mons, _MonBy, _Name, Trap, _Dict} -> not Trap;
        %% Not in the stored state: spawned by this very step (it has not
        %% run, so it does not trap exits yet), or gone already.
        undefined -> true;
        {error, Where, Why} -> mce_rt:fatal({mcerlang_internal, Where, Why})
    end.

%% The process ends with Reason: recorded so that no catch can keep it
%% alive, then raised to stop its code.
-spec die(term()) -> no_return().
die(Reason) ->
    erlang:put('$mce_killed', Reason),
    erlang:exit(Reason).

-spec process_flag(atom(), term()) -> term().
process_flag(trap_exit, Bool) when is_boolean(Bool) ->
    Old = erlang:get('$mce_trap_exit'),
    erlang:put('$mce_trap_exit', Bool),
    mce_rt:effect({trap_exit, Bool}),
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
    mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, process_flag, 2},
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

%%--------------------------------------------------------------------
%% Refs and monitors
%%--------------------------------------------------------------------

-spec make_ref() -> reference().
make_ref() ->
    case mce_nif:fresh_ref(erlang:get('$mce_search'), mce_rt:my_node()) of
        N when is_integer(N) -> mce_ref:term(N);
        {error, Where, Why} -> mce_rt:fatal({mcerlang_internal, Where, Why})
    end.

%% The monitor of spawn_monitor (and spawn_opt's monitor option): OTP
%% sends it with the spawn request, so it cannot miss the new process, on
%% any node; a monitor after a plain spawn is a signal of its own.
-spec monitor_spawned(pid()) -> reference().
monitor_spawned(Pid) ->
    Ref = make_ref(),
    {ok, R} = mce_ref:number(Ref),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{monitor, R} => true}),
    {N, Item} = monitor_target(Pid),
    mce_rt:effect({spawn_monitor, N, R, Item}),
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
        {by_name, N, Name, Item} -> mce_rt:effect({monitor, N, R, Item, Name});
        {unknown_node, Item} ->
            mce_rt:effect({send, erlang:get('$mce_pid'),
                           {'DOWN', Ref, process, Item, noconnection}});
        {unregistered, N, Item} -> mce_rt:effect({monitor, N, R, Item});
        {N, Item} ->
            %% A system process never dies: its monitor never fires.
            mce_rt_procs:system_process(N) =:= false andalso mce_rt:effect({monitor, N, R, Item})
    end,
    Ref;
monitor(Type, Item) when Type =:= port; Type =:= time_offset ->
    mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, monitor, 2},
                      {monitor_type, Type, Item, "only process monitors are modelled"}}});
monitor(Type, Item) ->
    erlang:error(badarg, [Type, Item]).

monitor_target(Name) when is_atom(Name) ->
    case mce_rt_procs:whereis(Name) of
        %% Number 0 is init's, which the model never monitors: the C
        %% runtime finds no process there and answers noproc.
        undefined -> {unregistered, mce_pid:key(mce_rt:my_node(), 0), {Name, mce_rt:node()}};
        Pid -> {mce_rt:sim_pid(Pid, [process, Name]), {Name, mce_rt:node()}}
    end;
monitor_target({Name, Node} = Target) when is_atom(Name), is_atom(Node) ->
    case Node =:= mce_rt:node() of
        true -> monitor_target(Name);
        false ->
            case mce_pid:node_index(Node) of
                {ok, I} when Name =:= init; Name =:= user ->
                    {ok, Key} = mce_rt_procs:system_process_key(Name, I),
                    {Key, Target};
                {ok, I} ->
                    mce_rt_procs:remote_name_modelled(Name, I),
                    {by_name, mce_pid:by_name(I), Name, Target};
                error -> {unknown_node, Target}
            end
    end;
monitor_target(Pid) ->
    {mce_rt:sim_pid(Pid, [process, Pid]), none}.

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
            %% Whether the monitor was still active is asked only for
            %% `info': the answer depends on when its target died, so
            %% asking it is a read of shared state (no safe step, por.h).
            Info = lists:member(info, Opts),
            Active = case Overlay of
                         #{{monitor, R} := A} -> A;
                         #{} when Info -> mce_nif:monitor_active(erlang:get('$mce_search'),
                                                                 erlang:get('$mce_pid'), R);
                         #{} -> unasked
                     end,
            erlang:put('$mce_overlay', Overlay#{{monitor, R} => false}),
            mce_rt:effect({demonitor, R, lists:member(flush, Opts)}),
            not Info orelse Active;
        error ->
            %% A ref that was never a monitor of this process.
            not lists:member(info, Opts) orelse false
    end;
demonitor(Ref, Opts) ->
    erlang:error(badarg, [Ref, Opts]).


%% @doc monitor/3 with the option {alias, explicit_unalias | demonitor |
%% reply_demonitor}: the monitor's ref is also an alias of the caller (as
%% gen:call uses it).
-spec monitor(process, term(), [{alias, atom()}]) -> reference().
monitor(process, Target, Opts) when is_list(Opts) ->
    Mode = lists:foldl(fun({alias, M}, _) when M =:= explicit_unalias; M =:= demonitor;
                                               M =:= reply_demonitor -> M;
                          ({tag, _} = O, _) ->
                               mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, monitor, 3},
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
    mce_rt:effect({alias, R, Code}).

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
            mce_rt:effect({unalias, R}),
            Active;
        error -> false
    end;
unalias(Alias) ->
    erlang:error(badarg, [Alias]).
