%% Comprehensions whose value is dropped and whose template blocks: the
%% translator lowers them into loops that keep no results (mce_anf's
%% lower_discarded).  Each program ends with exit({result, V}) or an
%% error, the same on the real VM and under the checker (see
%% mce_translate_bind_tests).  The log server is linked, so it ends with
%% the program.
-module(tprog_lcdrop).

-export([effects_in_order/0, nested_and_filters/0, bad_generator/0, template_crash/0,
         template_binds/0, last_is_kept/0, clients/1]).

%% A server echoes; the loop's calls happen in order, and what the
%% template returns is dropped.
effects_in_order() ->
    Log = spawn_link(fun() -> log([]) end),
    [call(Log, {add, X}) || X <- [1, 2, 3]],
    exit({result, call(Log, get)}).

%% Two generators and filters (a guard test and a call), the template
%% blocking in the inner loop.
nested_and_filters() ->
    Log = spawn_link(fun() -> log([]) end),
    [call(Log, {add, {X, Y}}) || X <- [1, 2, 3], X =/= 2, Y <- [a, b], keep(Y)],
    exit({result, call(Log, get)}).

%% A generator that is not a list raises as the VM does, after the
%% elements before it were done.
bad_generator() ->
    Log = spawn_link(fun() -> log([]) end),
    [call(Log, {add, X}) || X <- [1 | improper]],
    exit({result, unreachable}).

%% The template fails on the third element: the first two calls are done.
template_crash() ->
    Log = spawn_link(fun() -> log([]) end),
    try
        [{ok, _} = call(Log, {check, X}) || X <- [1, 2, 3, 4]],
        exit({result, unreachable})
    catch error:{badmatch, Bad} -> exit({result, {Bad, call(Log, get)}})
    end.

%% The template binds a variable the body also uses afterwards: the
%% bindings of a comprehension's template stay inside it.
template_binds() ->
    Log = spawn_link(fun() -> log([]) end),
    R = outer,
    [R = element(1, {outer, call(Log, {add, X})}) || X <- [1, 2]],
    [begin V = call(Log, {add, X}), V end || X <- [3]],
    exit({result, {R, call(Log, get)}}).

%% As the last expression of a body the value is the body's: kept.
last_is_kept() ->
    Log = spawn_link(fun() -> log([]) end),
    exit({result, collect(Log)}).

collect(Log) ->
    [call(Log, {add, X}) || X <- [1, 2]].

%% Two clients each make two calls to a counter whose replies differ by
%% interleaving, in a comprehension whose value is dropped (lc) or in
%% lists:foreach/2: the replies are never read, so the two take the same
%% states (mce_translate_bind_tests).
clients(Style) ->
    Server = spawn_link(fun() -> counter(0) end),
    Self = self(),
    Calls = case Style of
                lc -> fun() -> [call(Server, incr) || _ <- [1, 2]], Self ! done end;
                foreach -> fun() -> lists:foreach(fun(_) -> call(Server, incr) end, [1, 2]),
                                    Self ! done
                           end
            end,
    _ = [spawn(Calls) || _ <- [1, 2]],
    receive done -> ok end,
    receive done -> ok end,
    Server ! stop.

counter(N) ->
    receive
        {From, incr} -> From ! {self(), N + 1}, counter(N + 1);
        stop -> ok
    end.

keep(b) -> true;
keep(_) -> false.

call(Server, Req) ->
    Server ! {self(), Req},
    receive {Server, Reply} -> Reply end.

log(Items) ->
    receive
        {From, {add, X}} -> From ! {self(), {added, length(Items) + 1}}, log([X | Items]);
        {From, {check, X}} when X < 3 -> From ! {self(), {ok, X}}, log([X | Items]);
        {From, {check, X}} -> From ! {self(), {refused, X}}, log(Items);
        {From, get} -> From ! {self(), lists:reverse(Items)}, log(Items)
    end.
