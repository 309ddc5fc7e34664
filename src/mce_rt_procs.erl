%% @doc The runtime (see mce_rt) for the process table as the running step
%% sees it: liveness, the registry (register/2, whereis/1, registered/0),
%% the system processes `init' and `user' of every node, is_process_alive/1,
%% processes/0, process_info/2 and system_info/1.
%%
%% Every answer is the stored state (read through mce_nif) changed by this
%% step so far: the overlay holds the names, liveness and group leaders the
%% step changed, and the effect log what it sent, linked and monitored.
%%
%% Invariant: `init' (number 0) and `user' (number 2^24-2, which
%% least-fresh numbering never reaches) exist on every node, are alive and
%% never part of the state; a question or signal about them that the model
%% cannot answer stops the check (system_process_refused/2) instead of
%% answering wrongly.
-module(mce_rt_procs).
-compile({no_auto_import, [register/2, unregister/1, whereis/1, registered/0, is_process_alive/1,
                            process_info/2, processes/0]}).

-export([register/2, unregister/1, whereis/1, registered/0, is_process_alive/1, process_info/2,
         processes/0, system_info/1]).
%% For the other modules of the runtime.
-export([alive/1, overlay_alive/2, overlay_exit/2, system_process/1, system_process_key/2, system_process_refused/2,
         remote_name_modelled/2, default_gl_key/0]).

%% @doc is_process_alive/1: badarg for a process of another node, as on
%% the VM.
-spec is_process_alive(pid()) -> boolean().
is_process_alive(Pid) ->
    N = mce_rt:sim_pid(Pid, [Pid]),
    mce_rt:is_local(N) orelse erlang:error(badarg, [Pid]),
    N =:= erlang:get('$mce_pid') orelse alive(N).

%%--------------------------------------------------------------------
%% Registry
%%--------------------------------------------------------------------

-spec register(atom(), pid()) -> true.
register(Name, Pid) when is_atom(Name), Name =/= undefined, is_pid(Pid) ->
    N = mce_rt:sim_pid(Pid, [Name, Pid]),
    mce_rt:is_local(N) orelse erlang:error(badarg, [Name, Pid]),
    Taken = whereis(Name) =/= undefined,
    HasName = lists:any(fun(Other) -> whereis(Other) =:= Pid end, registered()),
    Alive = N =:= erlang:get('$mce_pid') orelse alive(N),
    case not Taken andalso not HasName andalso Alive of
        true ->
            overlay_name(Name, N),
            mce_rt:effect({register, N, Name}),
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
            mce_rt:effect({unregister, Name}),
            true
    end;
unregister(Name) ->
    erlang:error(badarg, [Name]).

-spec whereis(atom()) -> pid() | undefined.
whereis(Name) when is_atom(Name) ->
    case system_process_key(Name, mce_rt:my_node()) of
        {ok, Key} -> mce_pid:term(Key);
        error ->
            case whereis_program(Name) of
                undefined ->
                    %% A standard name of a real node that the model does
                    %% not have: `undefined' would be a false alarm in a
                    %% program that relies on the process being there.
                    lists:member(Name, unmodelled_system_names()) andalso
                        mce_rt:fatal({mcerlang, {unsupported_system_process, Name,
                                                 caller_location()}}),
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
            #{} -> mce_nif:whereis(erlang:get('$mce_search'), mce_rt:my_node(), Name)
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
    Known = mce_nif:registered(erlang:get('$mce_search'), mce_rt:my_node()),
    Changed = [Name || {name, Name} <- maps:keys(erlang:get('$mce_overlay'))],
    [init, user | [Name || Name <- lists:usort(Known ++ Changed),
                           whereis_program(Name) =/= undefined]].

%% Liveness and names as changed by this step so far (the runtime applies
%% the step's effects only when it ends).
-spec alive(non_neg_integer()) -> boolean().
alive(N) ->
    system_process(N) =/= false orelse alive_program(N).

alive_program(N) ->
    case erlang:get('$mce_overlay') of
        #{{alive, N} := Alive} -> resolve_alive(N, Alive);
        #{} -> mce_nif:alive(erlang:get('$mce_search'), N)
    end.

%% An overlay entry: known, as stored, or alive before an exit signal
%% unless the signal ends the process (overlay_exit/2).
resolve_alive(_N, Alive) when is_boolean(Alive) -> Alive;
resolve_alive(N, stored) -> mce_nif:alive(erlang:get('$mce_search'), N);
resolve_alive(N, {unless_ends, Reason, Before}) ->
    not mce_rt_signals:dies_of(N, Reason) andalso resolve_alive(N, Before).

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

-spec overlay_alive(non_neg_integer(), boolean()) -> term().
overlay_alive(N, Alive) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{alive, N} => Alive}).

%% @doc This step sent an exit signal with Reason to local process N.
%% Whether it ends N depends on N trapping exits, a read of N's record that
%% voids a reduced search (c_src/peek.c), so it is made only if the
%% step asks about N's liveness afterwards (supervisor shutdowns do not).
-spec overlay_exit(non_neg_integer(), term()) -> term().
overlay_exit(_N, normal) ->
    ok;
overlay_exit(N, kill) ->
    overlay_alive(N, false);
overlay_exit(N, Reason) ->
    Overlay = erlang:get('$mce_overlay'),
    case maps:get({alive, N}, Overlay, stored) of
        false -> ok;
        Before -> erlang:put('$mce_overlay', Overlay#{{alive, N} => {unless_ends, Reason, Before}})
    end.

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

-spec system_process_key(atom(), non_neg_integer()) -> {ok, non_neg_integer()} | error.
system_process_key(init, Node) -> {ok, mce_pid:key(Node, ?INIT_NUMBER)};
system_process_key(user, Node) -> {ok, mce_pid:key(Node, ?USER_NUMBER)};
system_process_key(_, _Node) -> error.

%% The name of the system process of key N, or false.
-spec system_process(non_neg_integer()) -> init | user | false.
system_process(N) ->
    case N band 16#ffffff of
        ?INIT_NUMBER -> init;
        ?USER_NUMBER -> user;
        _ -> false
    end.

%% The registered names of a real OTP 25 node that the model refuses
%% (docs/USER_GUIDE.md lists them).  Not pg: kernel starts the default
%% scope only when asked (start_pg), and a program's pg:start_link/0 runs
%% translated.
unmodelled_system_names() ->
    [application_controller, code_server, erl_prim_loader, erl_signal_server,
     erts_code_purger, file_server_2, global_group, global_group_check, global_name_server,
     inet_db, kernel_refc, kernel_safe_sup, kernel_sup, logger, logger_handler_watcher,
     logger_proxy, logger_std_h_default, logger_sup, rex, socket_registry, standard_error,
     standard_error_sup, user_drv, timer_server, net_kernel, auth, erl_epmd, net_sup,
     global_group_sup, sasl_sup, release_handler, alarm_handler, overload].

%% A name on another node is resolved when the signal arrives; a standard
%% name that no program process holds there now is refused, as whereis/1
%% refuses it on this node.
-spec remote_name_modelled(atom(), non_neg_integer()) -> ok.
remote_name_modelled(Name, Node) ->
    case lists:member(Name, unmodelled_system_names()) andalso
         mce_nif:whereis(erlang:get('$mce_search'), Node, Name) =:= undefined of
        true -> mce_rt:fatal({mcerlang, {unsupported_system_process, Name, caller_location()}});
        false -> ok
    end.

%% The program's location that called the runtime, for error reasons.
caller_location() ->
    {current_stacktrace, Raw} = erlang:process_info(erlang:self(), current_stacktrace),
    %% The cleaned stack names the BIF the program called (erlang:'!'/2)
    %% first: the location is the program's frame under it.
    case [F || {M, _, _, _} = F <- mce_exec:caught_stack(Raw),
               not lists:member(M, mce_rt:modules()), M =/= erlang] of
        [{M, F, A, Info} | _] ->
            {M, F, if is_list(A) -> length(A); true -> A end, proplists:get_value(line, Info, 0)};
        [] -> unknown
    end.

%% A system process was the target of something the model cannot show.
-spec system_process_refused(non_neg_integer(), term()) -> no_return().
system_process_refused(N, What) ->
    mce_rt:fatal({mcerlang, {unsupported_system_process, {system_process(N), What},
                             caller_location()}}).


%% The first node's `user': the group leader of the check's first process
%% and so, by inheritance, of every process that nobody gave another one.
-spec default_gl_key() -> non_neg_integer().
default_gl_key() ->
    mce_pid:key(0, ?USER_NUMBER).

%% @doc erlang:processes/0: the live processes of this node in pid order,
%% `init' first and `user' last, as this step has changed them so far.
-spec processes() -> [pid()].
processes() ->
    Node = mce_rt:my_node(),
    Stored = case mce_nif:processes(erlang:get('$mce_search'), Node) of
                 L when is_list(L) -> L;
                 {error, Where, Why} -> mce_rt:fatal({mcerlang_internal, Where, Why})
             end,
    Spawned = [N || {{alive, N}, Alive} <- maps:to_list(erlang:get('$mce_overlay')),
                    Alive =/= false, N bsr 24 =:= Node],
    Live = [N || N <- lists:usort([erlang:get('$mce_pid') | Stored ++ Spawned]),
                 N =:= erlang:get('$mce_pid') orelse alive(N)],
    [mce_pid:term(K) || K <- [mce_pid:key(Node, ?INIT_NUMBER) | Live] ++
                            [mce_pid:key(Node, ?USER_NUMBER)]].

%% @doc erlang:system_info/1: the number of processes is the node's in the
%% model (as processes/0 lists them); other items describe the VM the
%% checker runs on and do not change during a check.
-spec system_info(term()) -> term().
system_info(process_count) ->
    length(processes());
system_info(Item) ->
    erlang:system_info(Item).

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
    lists:member(monitored_by, Items) andalso own_watchers_read(Pid),
    case info_record(Pid, [Pid, Items]) of
        undefined -> undefined;
        Rec -> [case {I, Rec} of
                    {registered_name, #{name := undefined}} -> {registered_name, []};
                    _ -> info_item(I, Rec)
                end || I <- Items]
    end;
process_info(Pid, Item) when is_pid(Pid), is_atom(Item) ->
    check_info_item(Item, [Pid, Item]),
    Item =:= monitored_by andalso own_watchers_read(Pid),
    case info_record(Pid, [Pid, Item]) of
        undefined -> undefined;
        #{name := undefined} when Item =:= registered_name -> [];
        Rec -> info_item(Item, Rec)
    end;
process_info(Pid, Item) ->
    erlang:error(badarg, [Pid, Item]).

%% A process that asks who monitors it sees what other processes' monitors
%% and demonitors did, which the reduction takes as unseen (c_src/por.h,
%% rules 10 and 11): the search is told.  Another process's record voids
%% the reduction anyway (c_src/peek.c).
own_watchers_read(Pid) ->
    Own = mce_rt:sim_pid(Pid, [Pid, monitored_by]) =:= erlang:get('$mce_pid'),
    case erlang:get('$mce_search') of
        Search when Own, Search =/= undefined -> mce_nif:monby_read(Search);
        _ -> ok
    end.

check_info_item(Item, Args) when is_atom(Item) ->
    lists:member(Item, ?INFO_ITEMS) orelse
        mce_rt:fatal({mcerlang, {unsupported_bif, {erlang, process_info, 2},
                          {item, Item, "modelled items: " ++
                               lists:flatten(io_lib:format("~p", [?INFO_ITEMS]))}}}),
    Args;
check_info_item(_Item, Args) ->
    erlang:error(badarg, Args).

info_record(Pid, Args) ->
    N = mce_rt:sim_pid(Pid, Args),
    mce_rt:is_local(N) orelse erlang:error(badarg, Args),
    case system_process(N) of
        false -> info_record_program(N, Pid);
        Name -> #{system => N, name => Name}
    end.

info_record_program(N, Pid) ->
    Me = erlang:get('$mce_pid'),
    Stored = mce_nif:process(erlang:get('$mce_search'), N),
    Base = case Stored of
               {error, Where, Why} -> mce_rt:fatal({mcerlang_internal, Where, Why});
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
        true -> info_record_alive(N, Pid, Me, Base#{gl => mce_rt_io:gl_key(N)});
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
