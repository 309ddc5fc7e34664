%% @doc More gen_event programs for the differential tests
%% (mce_otp_diff_tests): adding handlers (plain and supervised), deleting and
%% swapping them, calls, sync_notify, crashing handlers and stop.  Each
%% scenario ends its root process with exit({result, R}), R free of pids and
%% refs.
%%
%% The handler is this module, installed as {tprog_event2, Id}; its state is
%% a map with its id, the owner (told of events and of terminate/2) and a
%% count of events.
-module(tprog_event2).
-behaviour(gen_event).

-export([add_handler/0, add_sup_handler_crash/0, sup_handler_owner_exit/0,
         delete_handler/0, swap_handler/0, which_handlers/0, call_handler/0,
         sync_notify/0, handler_crash_removed/0, stop_terminates_all/0,
         init_crash_stack/0, remove_from_event/0, info_to_handlers/0, swap_sup_handler/0,
         named_manager/0, send_request/0]).
-export([init/1, handle_event/2, handle_call/2, handle_info/2, terminate/2]).

-define(H(Id), {?MODULE, Id}).

%% add_handler: ok, init's other return values, a crashing init, and a
%% handler already present.
add_handler() ->
    {ok, M} = gen_event:start(),
    A = gen_event:add_handler(M, ?H(a), args(a)),
    B = gen_event:add_handler(M, ?H(b), {error, nope}),
    C = gen_event:add_handler(M, ?H(c), {exit, init_boom}),
    D = gen_event:add_handler(M, ?H(a), args(a)),
    E = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    exit({result, {A, B, C, D, E}}).

%% A supervised handler crashing in handle_event is removed, and its owner
%% gets {gen_event_EXIT, Handler, Reason}.
add_sup_handler_crash() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_sup_handler(M, ?H(s), args(s)),
    ok = gen_event:add_handler(M, ?H(p), args(p)),
    ok = gen_event:notify(M, {crash, s}),
    A = receive {gen_event_EXIT, H, {'EXIT', R}} -> {H, exit_reason(R)} end,
    B = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    exit({result, {A, B}}).

%% When a supervised handler's owner exits, the handler is removed with
%% terminate({stop, Reason}, State).
sup_handler_owner_exit() ->
    {ok, M} = gen_event:start(),
    Root = self(),
    {Owner, Ref} = spawn_monitor(fun() ->
                                         ok = gen_event:add_sup_handler(M, ?H(o), #{owner => Root, id => o}),
                                         Root ! added,
                                         receive go -> exit({shutdown, owner_gone}) end
                                 end),
    receive added -> ok end,
    A = gen_event:which_handlers(M),
    Owner ! go,
    B = receive {terminated, o, Arg} -> Arg end,
    C = receive {'DOWN', Ref, process, Owner, D} -> D end,
    E = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    exit({result, {A, B, C, E}}).

%% delete_handler returns terminate/2's value; a missing handler gives
%% {error, module_not_found}.
delete_handler() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_sup_handler(M, ?H(b), args(b)),
    ok = gen_event:notify(M, tick),
    A = gen_event:delete_handler(M, ?H(a), please),
    B = gen_event:delete_handler(M, ?H(a), please),
    C = gen_event:delete_handler(M, ?H(b), sup_too),
    D = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    E = lists:sort(drain()),
    exit({result, {A, B, C, D, E}}).

%% swap_handler: the old handler's terminate value reaches the new one's
%% init as {Args2, Term}; Term is error when the old one is missing.
swap_handler() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(old), args(old)),
    ok = gen_event:notify(M, tick),
    ok = gen_event:notify(M, tick),
    A = gen_event:swap_handler(M, {?H(old), swap}, {?H(new), args(new)}),
    B = gen_event:which_handlers(M),
    C = gen_event:call(M, ?H(new), get),
    D = gen_event:swap_handler(M, {?H(missing), swap}, {?H(other), args(other)}),
    E = lists:sort(gen_event:which_handlers(M)),
    F = gen_event:call(M, ?H(other), get),
    ok = gen_event:stop(M),
    exit({result, {A, B, C, D, E, F}}).

%% A handler whose init crashes: add_handler returns {'EXIT', {Reason,
%% Stack}}, the stack running down through gen_event into proc_lib.
init_crash_stack() ->
    {ok, M} = gen_event:start(),
    {'EXIT', {R, Stack}} = gen_event:add_handler(M, ?H(a), no_such_init_arg),
    ok = gen_event:stop(M),
    exit({result, {R, [{Mod, F, A} || {Mod, F, A, _} <- Stack]}}).

%% which_handlers through additions and deletions.
which_handlers() ->
    {ok, M} = gen_event:start(),
    A = gen_event:which_handlers(M),
    ok = gen_event:add_handler(M, ?H(x), args(x)),
    ok = gen_event:add_handler(M, ?H(y), args(y)),
    ok = gen_event:add_handler(M, ?MODULE, args(plain)),
    B = lists:sort(gen_event:which_handlers(M)),
    _ = gen_event:delete_handler(M, ?H(x), bye),
    C = lists:sort(gen_event:which_handlers(M)),
    ok = gen_event:stop(M),
    exit({result, {A, B, C}}).

%% gen_event:call to a handler: a reply, a missing handler, and a handler
%% that removes itself with its reply.
call_handler() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:notify(M, tick),
    A = gen_event:call(M, ?H(a), get),
    B = gen_event:call(M, ?H(zz), get),
    C = gen_event:call(M, ?H(a), leave),
    D = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    exit({result, {A, B, C, D}}).

%% sync_notify returns after every handler has handled the event, so the
%% handlers' messages to the owner are already there.
sync_notify() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_handler(M, ?H(b), args(b)),
    ok = gen_event:sync_notify(M, {echo, hi}),
    A = lists:sort(drain()),
    ok = gen_event:stop(M),
    exit({result, A}).

%% A plain handler crashing in handle_event is removed; the others keep
%% receiving events.
handler_crash_removed() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_handler(M, ?H(b), args(b)),
    ok = gen_event:notify(M, {crash, a}),
    A = gen_event:which_handlers(M),
    ok = gen_event:notify(M, tick),
    B = gen_event:call(M, ?H(b), get),
    ok = gen_event:stop(M),
    exit({result, {A, B}}).

%% gen_event:stop/1 calls terminate(stop, State) for every handler.
stop_terminates_all() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_sup_handler(M, ?H(b), args(b)),
    ok = gen_event:stop(M),
    A = lists:sort(drain()),
    exit({result, {A, is_process_alive(M)}}).

args(Id) -> #{owner => self(), id => Id}.

%% A handler returning remove_handler from handle_event is removed with
%% terminate(remove_handler, _); a supervised one's owner gets
%% {gen_event_EXIT, H, normal}.
remove_from_event() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_sup_handler(M, ?H(b), args(b)),
    ok = gen_event:sync_notify(M, {leave, a}),
    ok = gen_event:sync_notify(M, {leave, b}),
    A = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    B = lists:sort(drain()),
    exit({result, {A, B}}).

%% A plain message to the manager goes to every handler's handle_info.
info_to_handlers() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:add_handler(M, ?H(b), args(b)),
    M ! {info_echo, hello},
    _ = gen_event:which_handlers(M),
    A = lists:sort(drain()),
    ok = gen_event:stop(M),
    exit({result, A}).

%% swap_sup_handler: the new handler is supervised by the caller.
swap_sup_handler() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_sup_handler(M, ?H(old), args(old)),
    ok = gen_event:notify(M, tick),
    A = gen_event:swap_sup_handler(M, {?H(old), swap}, {?H(new), args(new)}),
    B = gen_event:call(M, ?H(new), get),
    ok = gen_event:notify(M, {crash, new}),
    C = receive {gen_event_EXIT, H, {'EXIT', R}} -> {H, exit_reason(R)} end,
    D = gen_event:which_handlers(M),
    ok = gen_event:stop(M),
    exit({result, {A, B, C, D}}).

%% A manager started with start_link({local, Name}), used by name.
named_manager() ->
    {ok, M} = gen_event:start_link({local, tprog_event2_mgr}),
    A = whereis(tprog_event2_mgr) =:= M,
    ok = gen_event:add_handler(tprog_event2_mgr, ?H(a), args(a)),
    ok = gen_event:notify(tprog_event2_mgr, tick),
    ok = gen_event:sync_notify(tprog_event2_mgr, tick),
    B = gen_event:call(tprog_event2_mgr, ?H(a), get),
    C = case gen_event:start({local, tprog_event2_mgr}) of
            {error, {already_started, P}} -> P =:= M;
            Other -> Other
        end,
    ok = gen_event:stop(tprog_event2_mgr),
    D = whereis(tprog_event2_mgr),
    exit({result, {A, B, C, D}}).

%% gen_event:send_request/3 and receive_response/2.
send_request() ->
    {ok, M} = gen_event:start(),
    ok = gen_event:add_handler(M, ?H(a), args(a)),
    ok = gen_event:notify(M, tick),
    R1 = gen_event:send_request(M, ?H(a), get),
    R2 = gen_event:send_request(M, ?H(zz), get),
    A = gen_event:receive_response(R1, infinity),
    B = gen_event:receive_response(R2, infinity),
    ok = gen_event:stop(M),
    exit({result, {A, B}}).

%% The messages already in the mailbox.
drain() ->
    receive X -> [X | drain()] after 0 -> [] end.

exit_reason({R, Stack}) when is_list(Stack) -> R;
exit_reason(R) -> R.

%% --- handler callbacks ---

init({error, E}) -> {error, E};
init({exit, R}) -> exit(R);
init({#{owner := _} = S, {_Owner, Count}}) -> {ok, S#{n => Count}};
init({#{owner := _} = S, error}) -> {ok, S#{n => none}};
init(#{owner := _} = S) -> {ok, S#{n => 0}}.

handle_event({crash, Id}, #{id := Id}) -> exit(handler_crashed);
handle_event({echo, X}, #{owner := O, id := Id} = S) ->
    O ! {echo, Id, X},
    {ok, S};
handle_event({leave, Id}, #{id := Id}) -> remove_handler;
handle_event(_, #{n := N} = S) -> {ok, S#{n := N + 1}}.

handle_call(get, #{n := N} = S) -> {ok, N, S};
handle_call(leave, #{n := N}) -> {remove_handler, {left, N}}.

handle_info({info_echo, X}, #{owner := O, id := Id} = S) ->
    O ! {info, Id, X},
    {ok, S};
handle_info(_, S) -> {ok, S}.

terminate(swap, #{owner := O, n := N}) -> {O, N};
terminate(Arg, #{owner := O, id := Id, n := N}) ->
    O ! {terminated, Id, Arg},
    {terminated, Id, N}.
