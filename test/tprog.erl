%% Small programs for the translator and runtime tests.  The `diff_*'
%% programs are deterministic and end with exit({result, Value}), so the
%% real VM's exit reason can be compared with the checker's.
-module(tprog).
-compile([export_all, nowarn_export_all]).

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

%% Unsupported process BIF.
uses_register() ->
    register(me, self()),
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
