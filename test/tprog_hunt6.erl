%% Receives in the odd places people put them (mce_hunt_tests).
-module(tprog_hunt6).
-compile([export_all, nowarn_export_all]).

named_fun_loop() ->
    P = self(),
    [spawn(fun() -> P ! {n, I} end) || I <- [1, 2, 3]],
    Sum = (fun Loop(0, Acc) -> Acc;
               Loop(K, Acc) -> receive {n, I} -> Loop(K - 1, Acc + I) end
           end)(3, 0),
    exit({result, Sum}).

tuple_of_receives() ->
    self() ! a, self() ! b,
    T = {receive X -> X end, receive Y -> Y end},
    exit({result, T}).

andalso_receive() ->
    self() ! ok,
    R = is_atom(x) andalso (receive ok -> true end) orelse (receive never -> false end),
    exit({result, R}).

catch_receive() ->
    P = self(),
    spawn(fun() -> P ! {v, 0} end),
    R = (catch receive {v, V} -> 10 div V end),
    exit({result, element(1, element(2, R))}).

try_of_receive() ->
    P = self(),
    spawn(fun() -> P ! {v, 2} end),
    R = try receive {v, V} -> V end of
            2 -> receive after 10 -> two end;
            _ -> other
        catch _:_ -> caught
        after P ! finished
        end,
    F = receive finished -> yes after 0 -> no end,
    exit({result, {R, F}}).

receive_in_after() ->
    P = self(),
    spawn(fun() -> P ! cleanup_ack end),
    R = try throw(oops)
        catch throw:oops -> caught
        after receive cleanup_ack -> ok end
        end,
    exit({result, R}).

comprehension_filter() ->
    P = self(),
    spawn(fun() -> [P ! {i, I} || I <- lists:seq(1, 4)] end),
    L = [X || _ <- lists:seq(1, 4), X <- [receive {i, I} -> I end], X rem 2 =:= 0],
    exit({result, L}).

binary_comprehension() ->
    P = self(),
    spawn(fun() -> [P ! {b, B} || B <- [1, 2, 3]] end),
    Bin = << <<(receive {b, B} -> B end):8>> || _ <- [x, y, z] >>,
    exit({result, Bin}).

arg_receive() ->
    P = self(),
    spawn(fun() -> P ! {l, [1, 2, 3]} end),
    R = lists:reverse(receive {l, L} -> L end),
    exit({result, R}).

case_of_receive() ->
    self() ! {x, 1},
    R = case receive {x, N} -> N end of
            1 -> receive after 0 -> one end;
            _ -> many
        end,
    exit({result, R}).

closure_captures() ->
    P = self(),
    Make = fun(Tag) -> fun() -> receive {Tag, V} -> P ! {Tag, V * 2} end end end,
    A = spawn(Make(a)), B = spawn(Make(b)),
    A ! {a, 1}, B ! {b, 2},
    R = lists:sort([receive M -> M end || _ <- [1, 2]]),
    exit({result, R}).

receive_guard_bif() ->
    self() ! {data, <<"abc">>}, self() ! {data, [1]},
    R1 = receive {data, D} when is_list(D), length(D) > 0 -> D end,
    R2 = receive {data, D2} when byte_size(D2) =:= 3 -> D2 end,
    exit({result, {R1, R2}}).

receive_map_pattern() ->
    Key = k,
    self() ! #{k => 1, other => 2},
    R = receive #{Key := V} -> V end,
    exit({result, R}).

bound_var_receive() ->
    Ref = make_ref(),
    self() ! {other, 1}, self() ! {Ref, 2},
    R = receive {Ref, V} -> V end,
    R2 = receive {other, O} -> O end,
    exit({result, {R, R2}}).

deep_recursion_receive() ->
    P = self(),
    spawn(fun() -> [P ! I || I <- lists:seq(1, 5)] end),
    exit({result, collect(5)}).

collect(0) -> [];
collect(N) -> X = receive I -> I end, [X | collect(N - 1)].

if_receive() ->
    self() ! yes,
    R = if is_pid(self()) -> receive yes -> 1 end; true -> 0 end,
    exit({result, R}).
