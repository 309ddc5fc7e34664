%% Small programs for the translator and runtime tests.  The `diff_*'
%% programs are deterministic and end with exit({result, Value}), so the
%% real VM's exit reason can be compared with the checker's.
-module(tprog).
-compile([export_all, nowarn_export_all, {nowarn_deprecated_function, [{erlang, now, 0}]}]).

%% A receive in a non-tail position, its result used afterwards.
diff_nontail() ->
    Self = self(),
    spawn(fun() -> Self ! {num, 20} end),
    X = receive {num, N} -> N end,
    Y = X + 1,
    exit({result, {X, Y}}).

%% Variables bound in case branches (one of them suspends) used after.
diff_case_export() ->
    Self = self(),
    spawn(fun() -> Self ! {v, 7} end),
    case Self of
        P when is_pid(P) ->
            A = receive {v, V} -> V end,
            B = a;
        _ ->
            A = 0,
            B = b
    end,
    exit({result, {A, B}}).

%% Blocking calls into another module, statement and match positions.
diff_cross_module() ->
    Echo = spawn(tprog_helper, echo_loop, []),
    Echo ! {echo, self(), hello},
    receive {echoed, hello} -> ok end,
    Self = self(),
    spawn(fun() -> Self ! {tag, 5} end),
    V = tprog_helper:wait_for(tag),
    D = tprog_helper:pure_double(V) + 1,
    Echo ! stop,
    exit({result, D}).

%% Selective receive takes the first matching message, not the oldest.
diff_selective() ->
    self() ! first,
    self() ! second,
    receive second -> ok end,
    receive M -> exit({result, M}) end.

%% A bound variable in a receive pattern is matched, not rebound.
diff_bound_pattern() ->
    Self = self(),
    Key = key2,
    spawn(fun() -> Self ! {key1, a}, Self ! {key2, b} end),
    receive {Key, V} -> exit({result, V}) end.

%% `after 0' with nothing to receive.
diff_after_zero() ->
    R = receive never -> got after 0 -> timeout end,
    exit({result, R}).

%% Recursion that suspends at every level, with a non-tail blocking call.
diff_sum(N) ->
    Self = self(),
    spawn(fun() -> [Self ! {n, I} || I <- lists:seq(1, N)] end),
    S = sum(N),
    exit({result, S}).

sum(0) -> 0;
sum(N) ->
    X = receive {n, V} -> V end,
    Rest = sum(N - 1),
    X + Rest.

%% A fun value that blocks, called in a body position.
diff_fun_call() ->
    Self = self(),
    Waiter = fun() -> receive {w, X} -> X end end,
    spawn(fun() -> Self ! {w, 3} end),
    V = Waiter(),
    exit({result, V * 2}).

%% A module known only at run time, called in a body position.
diff_dynamic_call() ->
    M = list_to_atom("tprog_helper"),
    Self = self(),
    spawn(fun() -> Self ! {dyn, 4} end),
    V = M:wait_for(dyn),
    exit({result, V}).

%% Nested blocking inside begin ... end and if.
diff_block_if(Flag) ->
    Self = self(),
    spawn(fun() -> Self ! {b, 1}, Self ! {b, 2} end),
    R = if Flag -> begin X = receive {b, X0} -> X0 end, X + 10 end;
           true -> 0
        end,
    S = receive {b, Y} -> Y end,
    exit({result, {R, S}}).

%% Errors keep their reason; the stack names the original module.
diff_badarith() ->
    Self = self(),
    spawn(fun() -> Self ! {x, zero} end),
    receive {x, Z} -> 1 + Z end.

%% Ping-pong with a timeout that may fire on either side.
timeout_race() ->
    Self = self(),
    spawn(fun() -> Self ! ping end),
    receive
        ping -> ok
    after 100 ->
        exit(timed_out)
    end.

%% Blocks forever: `after infinity' never fires.
after_infinity() ->
    receive after infinity -> ok end.

%% Terminates normally with all processes done: not a deadlock.
all_done() ->
    spawn(fun() -> ok end),
    spawn(fun() -> ok end),
    ok.

%% A server left waiting forever after its client finished.
orphan_server() ->
    S = spawn(tprog_helper, echo_loop, []),
    S ! {echo, self(), x},
    receive {echoed, x} -> ok end.

%% Two senders race to one receiver that expects a fixed order.
order_race() ->
    Self = self(),
    spawn(fun() -> Self ! a end),
    spawn(fun() -> Self ! b end),
    receive First -> ok end,
    receive _ -> ok end,
    case First of
        a -> ok;
        b -> exit(wrong_order)
    end.

%% A linked child crashes: the parent dies with it.
link_cascade() ->
    spawn_link(fun() -> exit(child_failed) end),
    receive never -> ok end.

%% Shutdown reasons are normal by default.
shutdown_exit() ->
    exit(shutdown).

%% Unsupported process BIF (timers are not modelled yet).
uses_timer() ->
    erlang:suspend_process(self()),
    ok.




%% Runs a spawned process per philosopher-like worker; many interleavings.
counter(N) ->
    Self = self(),
    [spawn(fun() -> Self ! {inc, I} end) || I <- lists:seq(1, N)],
    collect(N, 0).

collect(0, Acc) -> Acc;
collect(N, Acc) ->
    receive {inc, I} -> collect(N - 1, Acc + I) end.

%% Output is recorded in the trace instead of printed.
prints_then_crashes() ->
    io:format("about to fail ~p~n", [42]),
    exit(on_purpose).

%%--------------------------------------------------------------------
%% Blocking code in expression positions (A-normalisation)
%%--------------------------------------------------------------------

send_later(Msgs) ->
    Self = self(),
    spawn(fun() -> [Self ! M || M <- Msgs] end).

wait(Tag) ->
    receive {Tag, V} -> V end.

diff_nested_args() ->
    send_later([{a, 1}, {b, 2}]),
    exit({result, {wait(a), 1 + wait(b)}}).

diff_receive_in_list() ->
    send_later([x, y]),
    exit({result, [receive X -> X end, receive Y -> Y end]}).

diff_case_head() ->
    send_later([{n, 1}]),
    R = case wait(n) of 1 -> one; _ -> other end,
    exit({result, R}).

diff_andalso(First) ->
    send_later([{a, First}, {b, true}]),
    exit({result, wait(a) andalso wait(b)}).

diff_orelse() ->
    send_later([{a, false}, {b, yes}]),
    exit({result, wait(a) orelse wait(b)}).

diff_andalso_badarg() ->
    send_later([{a, 42}, {b, true}]),
    exit({result, wait(a) andalso wait(b)}).

diff_lc() ->
    send_later([{1, one}, {2, two}, {3, three}]),
    exit({result, [wait(I) || I <- [1, 2, 3]]}).

diff_lc_filter_nested() ->
    send_later([{1, a}, {3, c}, {2, b}]),
    L = [{I, wait(I), J} || I <- [1, 2, 3], I rem 2 =:= 1, J <- [x, y], J =/= y],
    Rest = wait(2),
    exit({result, {L, Rest}}).

diff_lc_bad_generator() ->
    send_later([{g, not_a_list}]),
    exit({result, [X || X <- wait(g)]}).

diff_self_in_receive_guard() ->
    Self = self(),
    self() ! {Self, mine},
    R = receive {From, X} when From =:= self() -> X end,
    exit({result, R}).

diff_self_in_head_guard() ->
    Other = spawn(fun() -> ok end),
    send_later([{p, self()}]),
    exit({result, {whose(wait(p)), whose(Other)}}).

whose(P) when P =:= self() -> me;
whose(P) when is_pid(P) -> other.

diff_eval_order() ->
    send_later([{go, 0}]),
    Log = fun(X) -> self() ! {log, X}, X end,
    _ = {Log(1), wait(go), Log(2)},
    exit({result, collect_log([])}).

collect_log(Acc) ->
    receive {log, X} -> collect_log([X | Acc]) after 0 -> lists:reverse(Acc) end.

diff_map_record() ->
    send_later([{k, key}, {v, 7}]),
    M = #{wait(k) => wait(v)},
    exit({result, M#{other => maps:get(key, M) * 2}}).

diff_binop_chain() ->
    send_later([{a, 1}, {b, 2}, {c, 3}]),
    exit({result, wait(a) * 100 + wait(b) * 10 + wait(c)}).

diff_fun_arg() ->
    send_later([{a, 5}, {a, 6}]),
    F = fun(X) -> X + wait(a) end,
    exit({result, F(F(0) - 5) + 1}).

diff_blocking_in_case_clause_expr() ->
    send_later([{a, 1}, {b, 2}]),
    R = [case I of 1 -> wait(a); 2 -> wait(b) end || I <- [1, 2]],
    exit({result, R}).

%%--------------------------------------------------------------------
%% try / catch / after around code that suspends
%%--------------------------------------------------------------------

log(X) -> self() ! {log, X}, X.

diff_try_catch_after_resume() ->
    send_later([{a, boom}]),
    R = try
            V = wait(a),
            erlang:error(V)
        catch
            error:Reason -> {caught, Reason}
        end,
    exit({result, R}).

diff_try_of() ->
    send_later([{a, 3}]),
    R = try wait(a) of
            3 -> three;
            _ -> other
        catch
            _:_ -> failed
        end,
    exit({result, R}).

diff_try_after_once_normal() ->
    send_later([{a, 1}, {b, 2}]),
    R = try wait(a) + 1
        after
            log(after_ran),
            log(wait(b))
        end,
    exit({result, {R, collect_log([])}}).

diff_try_after_once_exception() ->
    send_later([{a, 1}]),
    R = (catch try
                   _ = wait(a),
                   throw(oops)
               after
                   log(after_ran)
               end),
    exit({result, {R, collect_log([])}}).

diff_try_no_match_reraises() ->
    send_later([{a, 1}]),
    try
        _ = wait(a),
        exit(not_caught)
    catch
        throw:_ -> wrong
    end.

diff_try_exception_in_of_not_caught() ->
    send_later([{a, 1}]),
    R = (catch try wait(a) of
                   1 -> erlang:error(in_of)
               catch
                   error:in_of -> caught_by_same_try
               end),
    exit({result, element(1, R)}).

diff_try_class_and_stack() ->
    send_later([{a, 0}]),
    R = try
            Z = wait(a),
            1 div Z
        catch
            Class:Reason:Stack ->
                [{M, F, A, _} | _] = Stack,
                {Class, Reason, M, F, A}
        end,
    exit({result, R}).

diff_catch_suspending() ->
    send_later([{a, 1}, {b, 2}, {c, 3}]),
    A = catch wait(a),
    B = (catch begin _ = wait(b), throw(thrown) end),
    C = (catch begin _ = wait(c), exit(exited) end),
    exit({result, {A, B, C}}).

diff_nested_try() ->
    send_later([{a, 1}, {b, 2}]),
    R = try
            try
                _ = wait(a),
                throw(inner)
            catch
                throw:inner -> log(inner_caught), wait(b)
            after
                log(inner_after)
            end
        of
            2 -> log(of_ran), ok
        after
            log(outer_after)
        end,
    exit({result, {R, collect_log([])}}).

diff_try_in_loop() ->
    send_later([{n, 1}, {n, bad}, {n, 3}]),
    exit({result, try_loop(3, [])}).

try_loop(0, Acc) -> lists:reverse(Acc);
try_loop(K, Acc) ->
    R = try wait(n) + 0
        catch error:badarith -> bad
        end,
    try_loop(K - 1, [R | Acc]).

%% An unsupported BIF inside a catch-all: the check must still stop.
uses_timer_caught() ->
    try erlang:suspend_process(self()) catch _:_ -> swallowed end.

%%--------------------------------------------------------------------
%% Library higher-order functions with funs that block
%%--------------------------------------------------------------------

diff_lists_hofs() ->
    send_later([{1, a}, {2, b}, {3, c}, {1, a2}, {2, b2}, {3, c2}, {1, x}, {2, y}, {3, z}]),
    Map = lists:map(fun(I) -> wait(I) end, [1, 2, 3]),
    Fold = lists:foldl(fun(I, Acc) -> [wait(I) | Acc] end, [], [1, 2, 3]),
    Self = self(),
    lists:foreach(fun(I) -> Self ! {got, wait(I)} end, [1, 2, 3]),
    Got = [receive {got, G} -> G end || _ <- [1, 2, 3]],
    exit({result, {Map, Fold, Got}}).

diff_lists_filter_sort() ->
    send_later([{k, 2}, {k, 1}, {k, 3}]),
    Keys = [wait(k), wait(k), wait(k)],
    send_later([{f, true}, {f, false}, {f, true}]),
    Kept = lists:filter(fun(_) -> wait(f) end, Keys),
    Sorted = lists:sort(fun(A, B) -> A >= B end, Kept),
    exit({result, {Kept, Sorted}}).

diff_maps_fold() ->
    send_later([{v, 10}, {v, 20}]),
    M = maps:map(fun(_K, V) -> V + wait(v) end, #{a => 1, b => 2}),
    Sum = maps:fold(fun(_K, V, Acc) -> V + Acc end, 0, M),
    exit({result, {M, Sum}}).

diff_dict_fold() ->
    send_later([{w, 1}, {w, 2}]),
    D = dict:from_list([{a, 1}, {b, 2}]),
    R = dict:fold(fun(K, V, Acc) -> [{K, V + wait(w)} | Acc] end, [], D),
    exit({result, lists:sort([K || {K, _} <- R])}).

diff_library_via_variable_fun() ->
    send_later([{1, one}, {2, two}]),
    F = fun(I) -> wait(I) end,
    exit({result, lists:map(F, [1, 2])}).

diff_library_dynamic_module() ->
    send_later([{1, one}]),
    M = list_to_atom("lists"),
    exit({result, M:map(fun(I) -> wait(I) end, [1])}).

diff_library_pure_fun_stays_direct() ->
    send_later([{go, 1}]),
    L = lists:map(fun(X) -> X * 2 end, [1, 2, 3]),
    G = wait(go),
    exit({result, {L, G}}).

%% Calls a fun given in the entry's arguments with a tag it then receives.
apply_to(F, Tag) ->
    Self = self(),
    spawn(fun() -> Self ! {Tag, 5} end),
    exit({result, F(Tag)}).

%% Closures as entry points, capturing a parameter, a constant and a
%% computed value.
closure_param(N) -> fun() -> pingpong:start(N) end.
closure_const() -> N = 2, fun() -> pingpong:start(N) end.
closure_computed(X) ->
    Tag = list_to_atom("t" ++ integer_to_list(X)),
    fun() ->
            Self = self(),
            spawn(fun() -> Self ! {Tag, X} end),
            exit({result, tprog_helper:wait_for(Tag) * 2})
    end.

%% Captures the caller's real pid: the model cannot send to it.
closure_real_pid() ->
    Caller = self(),
    fun() -> Caller ! hello end.

%%--------------------------------------------------------------------
%% Links, trap_exit, exit/2, registry, process dictionary
%%--------------------------------------------------------------------

diff_trap_exit_child_crash() ->
    false = process_flag(trap_exit, true),
    Child = spawn_link(fun() -> exit(boom) end),
    receive {'EXIT', Child, Why} -> exit({result, Why}) end.

diff_link_normal_exit_harmless() ->
    Self = self(),
    spawn_link(fun() -> Self ! {child, done} end),
    receive {child, done} -> ok end,
    exit({result, still_here}).

diff_exit2_kill_trapping_target() ->
    process_flag(trap_exit, true),
    Self = self(),
    Child = spawn_link(fun() -> process_flag(trap_exit, true), Self ! ready,
                                receive never -> ok end end),
    receive ready -> ok end,
    exit(Child, kill),
    receive {'EXIT', Child, Why} -> exit({result, Why}) end.

diff_exit2_normal_ignored() ->
    Self = self(),
    Child = spawn(fun() -> receive ping -> Self ! pong end end),
    exit(Child, normal),
    Child ! ping,
    receive pong -> exit({result, survived}) end.

diff_exit2_trapped_becomes_message() ->
    Self = self(),
    Child = spawn(fun() -> process_flag(trap_exit, true), Self ! ready,
                           receive {'EXIT', From, Why} -> Self ! {got, From =:= Self, Why} end
                  end),
    receive ready -> ok end,
    exit(Child, custom),
    receive {got, FromParent, Why} -> exit({result, {FromParent, Why}}) end.

diff_exit2_kills_untrapping() ->
    process_flag(trap_exit, true),
    Self = self(),
    Child = spawn_link(fun() -> Self ! ready, receive never -> ok end end),
    receive ready -> ok end,
    exit(Child, shutdown_now),
    receive {'EXIT', Child, Why} -> exit({result, Why}) end.

diff_exit_self_normal() ->
    exit(self(), normal),
    exit(not_reached).

diff_exit_self_kill_uncatchable() ->
    _ = (catch exit(self(), kill)),
    exit(survived).

diff_exit_self_reason() ->
    _ = (catch exit(self(), boom)),
    exit(survived).

diff_exit_self_trapping() ->
    process_flag(trap_exit, true),
    Self = self(),
    exit(Self, normal),
    receive {'EXIT', Self, R} -> exit({result, R}) end.

diff_link_to_dead() ->
    process_flag(trap_exit, true),
    Child = spawn_link(fun() -> ok end),
    receive {'EXIT', Child, normal} -> ok end,
    false = is_process_alive(Child),
    link(Child),
    Trapped = receive {'EXIT', Child, noproc} -> noproc_message end,
    process_flag(trap_exit, false),
    Caught = (catch link(Child)),
    exit({result, {Trapped, element(1, element(2, Caught))}}).

diff_unlink_stops_cascade() ->
    Self = self(),
    Child = spawn_link(fun() -> receive go -> exit(boom) end end),
    unlink(Child),
    Child ! go,
    spawn(fun() -> Self ! later end),
    receive later -> exit({result, unlinked}) end.

diff_registry() ->
    Name = tprog_registry_test,
    true = register(Name, self()),
    Me = whereis(Name),
    Name ! hello,
    Got = receive hello -> hello end,
    Listed = lists:member(Name, registered()),
    true = unregister(Name),
    After = whereis(Name),
    Bad = (catch Name ! x),
    exit({result, {Me =:= self(), Got, Listed, After, element(1, element(2, Bad))}}).

diff_register_errors() ->
    Name = tprog_register_errors,
    true = register(Name, self()),
    Twice = (catch register(Name, self())),
    Second = (catch register(tprog_other_name, self())),
    Undef = (catch register(undefined, self())),
    NotReg = (catch unregister(tprog_nobody)),
    Dropped = {tprog_nobody, node()} ! dropped,
    unregister(Name),
    exit({result, [element(1, element(2, E)) || E <- [Twice, Second, Undef, NotReg]] ++ [Dropped]}).

diff_registered_process_dies() ->
    process_flag(trap_exit, true),
    Self = self(),
    Child = spawn_link(fun() -> register(tprog_dying, self()), Self ! registered,
                                receive stop -> ok end end),
    receive registered -> ok end,
    Before = whereis(tprog_dying) =:= Child,
    tprog_dying ! stop,
    receive {'EXIT', Child, normal} -> ok end,
    exit({result, {Before, whereis(tprog_dying)}}).

diff_process_dictionary() ->
    undefined = put(a, 1),
    1 = put(a, 2),
    put(b, 3),
    send_later([{tick, 1}]),
    _ = wait(tick),
    Got = {get(a), get(b), get(c), lists:sort(get_keys()), get_keys(3)},
    2 = erase(a),
    Rest = lists:sort(get()),
    _ = erase(),
    exit({result, {Got, Rest, get()}}).

diff_dictionary_is_per_process() ->
    put(k, parent),
    Self = self(),
    spawn(fun() -> Self ! {child_sees, get(k)} end),
    receive {child_sees, V} -> exit({result, {V, get(k)}}) end.

%% A process that never blocks: the step runs away.
spin() ->
    spawn(fun() -> ok end),
    spin_loop(0).

spin_loop(N) -> spin_loop(N + 1).

%%--------------------------------------------------------------------
%% Monitors and refs
%%--------------------------------------------------------------------

diff_monitor_down_reason() ->
    {Pid, Ref} = spawn_monitor(fun() -> exit(crashed) end),
    receive {'DOWN', Ref, process, Pid, Why} -> exit({result, Why}) end.

diff_monitor_dead_process() ->
    {Pid, Ref0} = spawn_monitor(fun() -> ok end),
    receive {'DOWN', Ref0, process, Pid, normal} -> ok end,
    Ref = monitor(process, Pid),
    receive {'DOWN', Ref, process, Pid, Why} -> exit({result, Why}) end.

diff_monitor_by_name() ->
    Self = self(),
    Pid = spawn(fun() -> register(tprog_monitored, self()), Self ! up,
                         receive stop -> ok end end),
    receive up -> ok end,
    Ref = monitor(process, tprog_monitored),
    Pid ! stop,
    Down = receive {'DOWN', Ref, process, Item, Why} -> {Item, Why} end,
    Ref2 = monitor(process, tprog_nobody_there),
    Down2 = receive {'DOWN', Ref2, process, Item2, Why2} -> {Item2, Why2} end,
    exit({result, {Down, Down2}}).

diff_demonitor_flush() ->
    {Pid, Ref} = spawn_monitor(fun() -> ok end),
    Self = self(),
    spawn(fun() -> Self ! marker end),
    receive marker -> ok end,
    %% By now the child has certainly finished on the VM too?  Not
    %% necessarily: wait for it through a second monitor first.
    Ref2 = monitor(process, Pid),
    receive {'DOWN', Ref2, process, Pid, _} -> ok end,
    Info = demonitor(Ref, [flush, info]),
    Left = receive {'DOWN', Ref, _, _, _} -> still_there after 0 -> flushed end,
    exit({result, {Info, Left}}).

diff_demonitor_active() ->
    Self = self(),
    Pid = spawn(fun() -> receive stop -> Self ! stopped end end),
    Ref = monitor(process, Pid),
    Info = demonitor(Ref, [info]),
    Again = demonitor(Ref, [info]),
    Pid ! stop,
    receive stopped -> ok end,
    Left = receive {'DOWN', Ref, _, _, _} -> got_down after 0 -> none end,
    exit({result, {Info, Again, Left}}).

diff_refs() ->
    R1 = make_ref(),
    R2 = make_ref(),
    Self = self(),
    spawn(fun() -> Self ! {R1, one} end),
    Got = receive {R2, _} -> wrong; {R1, V} -> V end,
    exit({result, {is_reference(R1), R1 =:= R1, R1 =/= R2, Got}}).

%% A server that tags every reply with a fresh ref, N rounds.
ref_rounds(N) ->
    Self = self(),
    Server = spawn(fun() -> ref_server() end),
    [begin
         Ref = make_ref(),
         Server ! {Self, Ref},
         receive {Ref, ok} -> ok end
     end || _ <- lists:seq(1, N)],
    Server ! stop,
    ok.

ref_server() ->
    receive
        {From, Ref} -> From ! {Ref, ok}, ref_server();
        stop -> ok
    end.

diff_timer_sleep() ->
    Self = self(),
    spawn(fun() -> timer:sleep(10), Self ! woke end),
    ok = timer:sleep(1),
    receive woke -> exit({result, slept}) end.

%% Nondeterminism: every alternative is explored.
choose() ->
    R = mcerlang:choice([fun() -> left end, {tprog, choice_right, []}]),
    exit({result, R}).

choice_right() -> right.

%% A choice whose alternatives block, nested in an expression.
choose_and_wait() ->
    Self = self(),
    spawn(fun() -> Self ! {go, 1} end),
    N = 10 + mcerlang:choice([fun() -> wait(go) end, fun() -> 0 end]),
    exit({result, N}).

diff_spawn_variants() ->
    process_flag(trap_exit, true),
    Self = self(),
    P1 = spawn(node(), fun() -> Self ! {p1, node()} end),
    P2 = spawn_link(node(), tprog, child_exit, [two]),
    {P3, R3} = spawn_opt(fun() -> exit(three) end, [monitor]),
    P4 = spawn_opt(tprog, child_exit, [four], [link]),
    A = receive {p1, N} -> N =:= node() end,
    B = receive {'EXIT', P2, two} -> two end,
    C = receive {'DOWN', R3, process, P3, three} -> three end,
    D = receive {'EXIT', P4, four} -> four end,
    exit({result, {is_pid(P1), A, B, C, D}}).

child_exit(Reason) -> exit(Reason).

%%--------------------------------------------------------------------
%% Aliases, timers, unique integers
%%--------------------------------------------------------------------

%% Waits until Pid has ended.
await_end(Pid) ->
    Ref = monitor(process, Pid),
    receive {'DOWN', Ref, process, Pid, _} -> ok end.

drain() ->
    receive X -> [X | drain()] after 0 -> [] end.

diff_alias_send() ->
    A = alias(),
    await_end(spawn(fun() -> A ! first end)),
    R1 = receive first -> got end,
    T1 = unalias(A),
    T2 = unalias(A),
    await_end(spawn(fun() -> A ! second end)),
    exit({result, {R1, T1, T2, drain()}}).

diff_alias_reply() ->
    A = alias([reply]),
    await_end(spawn(fun() -> A ! one, A ! two end)),
    exit({result, {drain(), unalias(A)}}).

%% gen:call's pattern: a monitor that is also an alias, deactivated by
%% demonitor; a late reply is dropped.
diff_monitor_alias() ->
    Srv = spawn(fun() ->
                        receive {call, Alias} ->
                                Alias ! {Alias, reply},
                                receive again -> Alias ! {Alias, late} end
                        end
                end),
    Mref = monitor(process, Srv, [{alias, demonitor}]),
    Srv ! {call, Mref},
    R = receive {Mref, Reply} -> demonitor(Mref, [flush]), Reply end,
    Srv ! again,
    await_end(Srv),
    exit({result, {R, drain()}}).

%% The alias of a monitor goes with its 'DOWN'.
diff_monitor_alias_down() ->
    Srv = spawn(fun() -> receive {go, _} -> ok end end),
    Mref = monitor(process, Srv, [{alias, demonitor}]),
    Srv ! {go, Mref},
    receive {'DOWN', Mref, process, Srv, normal} -> ok end,
    exit({result, unalias(Mref)}).

diff_send_after() ->
    Ref = erlang:send_after(10, self(), ping),
    R = receive ping -> pong end,
    exit({result, {R, erlang:cancel_timer(Ref), erlang:read_timer(Ref)}}).

diff_start_timer() ->
    Ref = erlang:start_timer(10, self(), hi),
    receive {timeout, Ref, Msg} -> exit({result, Msg}) end.

diff_cancel_timer() ->
    Ref = erlang:send_after(1000000, self(), late),
    Left = erlang:cancel_timer(Ref),
    Again = erlang:cancel_timer(Ref),
    exit({result, {is_integer(Left), Again, drain()}}).

diff_cancel_timer_async() ->
    Ref = erlang:send_after(1000000, self(), late),
    ok = erlang:cancel_timer(Ref, [{async, true}, {info, true}]),
    R = receive {cancel_timer, Ref, Left} -> is_integer(Left) end,
    ok = erlang:cancel_timer(Ref, [{info, false}]),
    exit({result, {R, drain()}}).

diff_timer_to_name() ->
    register(me, self()),
    erlang:send_after(5, me, x),
    receive x -> exit({result, named}) end.

diff_timer_to_dead_process() ->
    P = spawn(fun() -> ok end),
    await_end(P),
    Ref = erlang:send_after(100000, P, x),
    exit({result, erlang:read_timer(Ref)}).

diff_timer_module() ->
    {ok, T1} = timer:send_after(5, hello),
    R1 = receive hello -> hello end,
    {ok, T2} = timer:send_after(1000000, self(), never),
    C = timer:cancel(T2),
    {ok, _} = timer:send_after(0, self(), now),
    R2 = receive now -> now end,
    exit({result, {R1, timer:cancel(T1), C, R2, timer:cancel(bad), drain()}}).

diff_unique_integer() ->
    A = erlang:unique_integer([positive, monotonic]),
    B = erlang:unique_integer([positive, monotonic]),
    Self = self(),
    spawn(fun() -> Self ! {c, erlang:unique_integer([positive, monotonic])} end),
    C = receive {c, X} -> X end,
    exit({result, {A > 0, B > A, C > B, is_integer(erlang:unique_integer())}}).

%% Untimed, the timer may fire before the worker's message; with
%% timeouts => when_idle only when nothing else can happen.
timer_race() ->
    erlang:send_after(10, self(), timeout),
    Self = self(),
    spawn(fun() -> Self ! done end),
    receive First -> exit({result, First}) end.

%%--------------------------------------------------------------------
%% process_info/2
%%--------------------------------------------------------------------

diff_process_info_self() ->
    register(me, self()),
    put(k, v),
    Child = spawn_link(fun() -> receive stop -> ok end end),
    Other = spawn(fun() -> receive stop -> ok end end),
    monitor(process, Other),
    self() ! a,
    self() ! b,
    Info = process_info(self(), [registered_name, status, message_queue_len, messages,
                                 trap_exit, dictionary]),
    {links, Links} = process_info(self(), links),
    {monitors, Mons} = process_info(self(), monitors),
    Child ! stop,
    Other ! stop,
    exit({result, {Info, Links =:= [Child], Mons =:= [{process, Other}]}}).

diff_process_info_other() ->
    P = spawn(fun() -> receive stop -> ok end end),
    P ! x,
    P ! y,
    monitor(process, P),
    A = process_info(P, [messages, message_queue_len, registered_name]),
    B = process_info(P, registered_name),
    {monitored_by, By} = process_info(P, monitored_by),
    P ! stop,
    receive {'DOWN', _, process, P, normal} -> ok end,
    exit({result, {A, B, By =:= [self()], process_info(P, messages)}}).

%%--------------------------------------------------------------------
%% ETS
%%--------------------------------------------------------------------

diff_ets_set() ->
    t = ets:new(t, [named_table, public]),
    true = ets:insert(t, {a, 1}),
    true = ets:insert(t, [{b, 2}, {c, 3}]),
    true = ets:insert(t, {a, 10}),
    A = ets:lookup(t, a),
    B = {ets:member(t, b), ets:member(t, zz)},
    C = {ets:insert_new(t, {a, 0}), ets:insert_new(t, {d, 4})},
    true = ets:delete(t, c),
    D = ets:update_counter(t, b, 5),
    E = ets:update_counter(t, b, [{2, 1}, {2, 0}]),
    F = ets:update_counter(t, new, 7, {new, 100}),
    G = ets:update_element(t, d, {2, four}),
    H = ets:update_element(t, nothere, {2, x}),
    I = ets:lookup_element(t, d, 2),
    J = lists:sort(ets:tab2list(t)),
    K = [ets:info(t, X) || X <- [size, type, named_table, protection, keypos]],
    L = ets:take(t, a),
    true = ets:delete(t),
    M = ets:info(t),
    N = catch ets:lookup(t, a),
    exit({result, {A, B, C, D, E, F, G, H, I, J, K, L, M, element(1, element(2, N))}}).

diff_ets_bags() ->
    B = ets:new(b, [bag]),
    ets:insert(B, [{k, 1}, {k, 2}, {k, 1}, {j, 3}]),
    D = ets:new(d, [duplicate_bag]),
    ets:insert(D, [{k, 1}, {k, 2}, {k, 1}]),
    R1 = {ets:lookup(B, k), ets:lookup(D, k), ets:lookup_element(D, k, 2)},
    ets:delete_object(D, {k, 1}),
    ets:delete_object(B, {k, 2}),
    R2 = {ets:lookup(B, k), ets:lookup(D, k), is_reference(B)},
    exit({result, {R1, R2}}).

diff_ets_ordered_set() ->
    T = ets:new(o, [ordered_set]),
    ets:insert(T, [{3, c}, {1, a}, {2, b}, {5, e}]),
    ets:insert(T, {1.0, a_float}),
    Walk = walk(T, ets:first(T)),
    Back = [ets:last(T), ets:prev(T, 3), ets:next(T, 4), ets:next(T, 5)],
    exit({result, {Walk, Back, ets:tab2list(T), ets:lookup(T, 1)}}).

walk(_T, '$end_of_table') -> [];
walk(T, K) -> [K | walk(T, ets:next(T, K))].

diff_ets_match_select() ->
    T = ets:new(m, [set]),
    ets:insert(T, [{alice, 30, x}, {bob, 25, y}, {carol, 35, x}]),
    A = lists:sort(ets:match(T, {'$1', '_', x})),
    B = lists:sort(ets:match_object(T, {'_', '_', y})),
    C = lists:sort(ets:select(T, [{{'$1', '$2', '_'}, [{'>', '$2', 28}], ['$1']}])),
    D = ets:select_count(T, [{{'_', '$1', '_'}, [{'<', '$1', 31}], [true]}]),
    E = ets:select_delete(T, [{{'_', '_', x}, [], [true]}]),
    exit({result, {A, B, C, D, E, ets:tab2list(T)}}).

diff_ets_access() ->
    Prot = ets:new(p, [protected]),
    Priv = ets:new(q, [private]),
    ets:insert(Prot, {k, v}),
    ets:insert(Priv, {k, v}),
    Self = self(),
    spawn(fun() ->
                  R = [catch ets:lookup(Prot, k), catch ets:insert(Prot, {k, w}),
                       catch ets:lookup(Priv, k)],
                  Self ! {r, [case X of {'EXIT', {E, _}} -> E; _ -> X end || X <- R]}
          end),
    receive {r, R} -> exit({result, R}) end.

diff_ets_owner_death() ->
    Self = self(),
    {P, Ref} = spawn_monitor(fun() -> ets:new(gone, [named_table, public]), Self ! made end),
    receive made -> ok end,
    receive {'DOWN', Ref, process, P, normal} -> ok end,
    exit({result, {ets:info(gone), ets:whereis(gone)}}).

diff_ets_heir() ->
    Self = self(),
    P = spawn(fun() ->
                      ets:new(inherited, [named_table, {heir, Self, my_data}]),
                      ets:insert(inherited, {x, 1}),
                      Self ! made
              end),
    receive made -> ok end,
    R = receive {'ETS-TRANSFER', Tab, From, Data} -> {Tab, From =:= P, Data} end,
    exit({result, {R, ets:info(inherited, owner) =:= self(), ets:lookup(inherited, x)}}).

diff_ets_give_away() ->
    Self = self(),
    P = spawn(fun() ->
                      receive {'ETS-TRANSFER', T, From, D} ->
                              Self ! {got, From =:= Self, D, ets:lookup(T, k)}
                      end
              end),
    T = ets:new(g, []),
    ets:insert(T, {k, 1}),
    true = ets:give_away(T, P, gift),
    R = receive {got, A, B, C} -> {A, B, C} end,
    E = try ets:insert(T, {k, 2})
        catch error:Reason:Stack ->
                [{M, F, Args, _} | _] = Stack,
                {Reason, M, F, length(Args)}
        end,
    exit({result, {R, E}}).

%%--------------------------------------------------------------------
%% Granularity: races that only small steps show
%%--------------------------------------------------------------------

%% Two workers increment a shared ETS counter by read-then-write.  As one
%% big step each increment is atomic; with a scheduling point at every
%% ETS access an update can be lost.
ets_counter_race() ->
    T = ets:new(counter, [public]),
    ets:insert(T, {n, 0}),
    Self = self(),
    Inc = fun() ->
                  V = ets:lookup_element(T, n, 2),
                  ets:insert(T, {n, V + 1}),
                  Self ! done
          end,
    spawn(Inc),
    spawn(Inc),
    receive done -> ok end,
    receive done -> ok end,
    2 = ets:lookup_element(T, n, 2),
    ok.

%% Check-then-register: atomic in a big step, a race in small steps.
register_race() ->
    Claim = fun() ->
                    case whereis(leader) of
                        undefined -> register(leader, self()), receive stop -> ok end;
                        _ -> ok
                    end
            end,
    spawn(Claim),
    spawn(Claim),
    ok.

diff_send3() ->
    R = [erlang:send(self(), a, [noconnect]), erlang:send({foo, 'x@y'}, m, [noconnect]),
         erlang:send({foo, 'x@y'}, m, []),
         try erlang:send(nosuch, m, [])
         catch error:E:St -> [{M, F, A, _} | _] = St, {E, M, F, A}
         end],
    receive a -> ok end,
    exit({result, R}).

%% Two ways to fail: far (after six receives) and near (at once).
far_or_near() ->
    case mcerlang:choice([fun() -> far end, fun() -> near end]) of
        far -> tick(6), exit(far);
        near -> exit(near)
    end.

tick(0) -> ok;
tick(N) -> self() ! tick, receive tick -> tick(N - 1) end.

%% `after 0' polls: it fires as soon as no message matches, even when
%% timeouts => when_idle holds other timeouts back.  The message from the
%% child may or may not be there yet.
after_zero_poll() ->
    Self = self(),
    spawn(fun() -> Self ! hi end),
    receive hi -> exit({result, got}) after 0 -> exit({result, missed}) end.

%% Calls of ordinary programs that only print, read a clock or hint the
%% scheduler: modelled, recorded or ignored as the VM would have them.
misc_bifs() ->
    normal = process_flag(priority, high),
    on_heap = process_flag(message_queue_data, off_heap),
    true = erlang:yield(),
    {_, _, _} = os:timestamp(),
    {_, _, _} = erlang:now(),
    true = is_integer(os:system_time(millisecond)),
    io:put_chars("chars "),
    io:put_chars(standard_io, <<"bin">>),
    io:nl(),
    io:write({a, 1}),
    io:nl(standard_io),
    exit({result, done}).

%% rand draws: each process has its own generator state, part of the
%% checked state; two processes seeded alike draw alike.
rand_seeded() ->
    Self = self(),
    Draw = fun(I) -> spawn(fun() ->
                                   rand:seed(exsss, {I, I, I}),
                                   receive go -> ok end,
                                   Self ! {I, rand:uniform(1000000)}
                           end)
           end,
    Ps = [Draw(1), Draw(1)],
    [P ! go || P <- Ps],
    [X, Y] = [receive {1, V} -> V end || _ <- Ps],
    exit({result, X =:= Y}).

rand_unseeded() ->
    Self = self(),
    spawn(fun() -> Self ! {draw, rand:uniform(2)} end),
    receive {draw, V} -> exit({result, V}) end.

%% What a process observes of another right after signalling it, in the
%% same step: OTP orders the signal before the observation.
exit_then_alive() ->
    P = spawn(fun() -> receive _ -> ok end end),
    exit(P, foo),
    exit({result, is_process_alive(P)}).

%% P waits for `stop' only: had it taken any message, the 'EXIT' message
%% could end it before is_process_alive/1 when the root is preempted
%% between its two calls (the real VM did so under ASan's slowness).
exit_trapping_then_alive() ->
    Self = self(),
    P = spawn(fun() -> process_flag(trap_exit, true), Self ! ready, receive stop -> ok end end),
    receive ready -> ok end,
    exit(P, foo),
    Alive = is_process_alive(P),
    P ! stop,
    exit({result, Alive}).

register_then_info() ->
    P = spawn(fun() -> receive _ -> ok end end),
    register(tprog_srv, P),
    R = process_info(P, registered_name),
    P ! stop,
    exit({result, R}).

exit_then_link_trapping() ->
    process_flag(trap_exit, true),
    P = spawn(fun() -> receive _ -> ok end end),
    exit(P, foo),
    link(P),
    receive {'EXIT', P, R} -> exit({result, R}) end.

%% timer's interval and apply timers (modelled by mce_timer).
interval_ticks() ->
    {ok, T} = timer:send_interval(10, tick),
    R = count_ticks(3),
    {ok, cancel} = timer:cancel(T),
    exit({result, R}).

count_ticks(0) -> done;
count_ticks(N) -> receive tick -> count_ticks(N - 1) end.

apply_later() ->
    {ok, _} = timer:apply_after(5, tprog, send_to, [self(), later]),
    receive later -> exit({result, later}) end.

apply_every() ->
    {ok, T} = timer:apply_interval(5, tprog, send_to, [self(), beat]),
    receive beat -> ok end,
    receive beat -> ok end,
    timer:cancel(T),
    exit({result, two_beats}).

send_to(Pid, Msg) -> Pid ! Msg.

%% timer:tc of a function that blocks.
tc_blocking() ->
    Self = self(),
    spawn(fun() -> Self ! ping end),
    {T, Got} = timer:tc(fun() -> receive ping -> got end end),
    {_, 6} = timer:tc(erlang, '*', [2, 3]),
    {_, 5} = timer:tc(fun erlang:'+'/2, [2, 3]),
    exit({result, {is_integer(T), Got}}).

%% persistent_term: one table per node, seen by every process.
pterm() ->
    persistent_term:put({tprog, limit}, 3),
    Self = self(),
    spawn(fun() -> Self ! {seen, persistent_term:get({tprog, limit})},
                   persistent_term:put({tprog, limit}, 4),
                   Self ! changed end),
    receive {seen, 3} -> ok end,
    receive changed -> ok end,
    4 = persistent_term:get({tprog, limit}),
    none = persistent_term:get({tprog, other}, none),
    true = persistent_term:erase({tprog, limit}),
    false = persistent_term:erase({tprog, limit}),
    Missing = try persistent_term:get({tprog, limit}) catch error:badarg -> badarg end,
    exit({result, Missing}).

%% A producer that may run ahead of its consumer: up to four messages wait.
producer_consumer() ->
    C = spawn(fun() -> consume(4) end),
    [C ! {item, I} || I <- lists:seq(1, 4)],
    exit({result, sent}).

consume(0) -> ok;
consume(N) -> receive {item, _} -> consume(N - 1) end.

%% A fun made by erlang:make_fun/3 names the original, untranslated module:
%% its receive would block the checker itself.
make_fun_receive() ->
    F = erlang:make_fun(tprog, wait_for_go, 0),
    self() ! go,
    F().

wait_for_go() ->
    receive go_never -> ok end.

%% digraph keeps a graph in ETS tables: under the checker they are the
%% model's, so an edge added on one branch is not seen on another.
digraph_race() ->
    G = digraph:new(),
    digraph:add_vertex(G, a),
    digraph:add_vertex(G, b),
    Self = self(),
    spawn(fun() -> Self ! a end),
    spawn(fun() -> Self ! b end),
    X = receive M1 -> M1 end,
    Y = receive M2 -> M2 end,
    _ = digraph:add_edge(G, X, Y),
    Edges = digraph:no_edges(G),
    Path = digraph:get_path(G, a, b),
    Reach = lists:sort(digraph_utils:reachable([a], G)),
    digraph:delete(G),
    exit({result, {Edges, Path =/= false, Reach}}).

%% Calls of ordinary programs that read the environment or measure
%% themselves, and the timer, rpc and send variants built on modelled ones.
misc_calls() ->
    _ = timer:now_diff(os:timestamp(), os:timestamp()),
    _ = os:getenv("HOME"),
    {module, lists} = code:ensure_loaded(lists),
    {_, _} = statistics(wall_clock),
    {_, _} = statistics(runtime),
    Self = self(),
    true = erlang:send_nosuspend(Self, one),
    receive one -> ok end,
    P = spawn(fun() -> receive never -> ok end end),
    {ok, _} = timer:kill_after(5, P),
    Ref = monitor(process, P),
    receive {'DOWN', Ref, process, P, Why} -> ok end,
    {Results, Bad} = rpc:multicall([node()], erlang, abs, [-3]),
    exit({result, {Why, Results, Bad}}).

%% A server that works (sleeps) 10 ms before replying to a call with the
%% default 5 s timeout: with timeouts => when_idle the shorter wait ends
%% first, so the call never times out, as on the real VM.
slow_server_call() ->
    Server = spawn(fun() -> receive {call, From} -> timer:sleep(10), From ! {reply, ok} end end),
    Server ! {call, self()},
    R = receive {reply, X} -> X after 5000 -> timeout end,
    exit({result, R}).

%% Two waits started together: the 20 ms one ends before the 50 ms one;
%% the 50 ms one then has 30 ms left, less than a new 40 ms wait.
ordered_waits() ->
    Self = self(),
    spawn(fun() -> receive after 50 -> Self ! fifty end end),
    spawn(fun() -> receive after 20 -> Self ! twenty end,
                   receive after 40 -> Self ! sixty end end),
    R = [receive M -> M end || _ <- [1, 2, 3]],
    exit({result, R}).

%% A root whose continuation grows by one element at each of N polls:
%% under `step_cache => false' every step decodes it, and the NIF's cache of
%% decoded terms (c_src/nif_term_cache.c, 4 MB of external format) fills
%% and is emptied several times for N = 2000 (about 10 MB in all).
growing_continuation(N) ->
    growing_continuation(N, []).

growing_continuation(0, Acc) ->
    exit({sum, lists:sum(Acc), length(Acc)});
growing_continuation(N, Acc) ->
    erlang:yield(),
    growing_continuation(N - 1, [N * 1000 | Acc]).
