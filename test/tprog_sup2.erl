%% @doc More supervisor programs for the differential tests
%% (mce_otp_diff_tests): one_for_all and rest_for_one restarts, transient and
%% temporary children, tuple child specs, shutdown order, check_childspecs
%% and get_childspec.  Each scenario ends its root process with
%% exit({result, R}), R free of pids and refs.
%%
%% Workers are started with proc_lib:start_link and acknowledge only once
%% they trap exits (when asked to), so that a shutdown can never overtake
%% their set-up.  A worker reports its shutdown to the recorder pid given in
%% its start arguments.
-module(tprog_sup2).
-behaviour(supervisor).

-export([one_for_all/0, rest_for_one/0, transient_normal/0, transient_abnormal/0,
         temporary/0, tuple_specs/0, shutdown_order/0, check_childspecs/0,
         get_childspec/0, start_child_error/0, auto_shutdown/0, shutdown_timeout_kill/0,
         nested/0, local_name/0, brutal_kill/0, ignore_child/0, child_api_errors/0]).
-export([init/1, start_worker/2, worker_init/3]).

%% one_for_all: killing one child restarts all of them.
one_for_all() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {three, one_for_all}),
    Old = children(Sup),
    exit(pid_of(w2, Old), kill),
    New = wait_all_new(Sup, Old),
    A = [Id || {Id, P} <- New, is_pid(P), P =/= pid_of(Id, Old)],
    B = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B}}).

%% rest_for_one: killing w2 restarts w2 and w3, not w1.
rest_for_one() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {three, rest_for_one}),
    Old = children(Sup),
    exit(pid_of(w2, Old), kill),
    New = wait_new(Sup, w3, pid_of(w3, Old)),
    A = [{Id, P =:= pid_of(Id, Old)} || {Id, P} <- New],
    shutdown(Sup),
    exit({result, A}).

%% A transient child that exits normally is not restarted.
transient_normal() ->
    {ok, Sup} = supervisor:start_link(?MODULE, transient),
    P = pid_of(t, children(Sup)),
    P ! {exit, normal},
    A = wait_pid(Sup, t, undefined),
    B = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B}}).

%% A transient child that exits abnormally is restarted.
transient_abnormal() ->
    {ok, Sup} = supervisor:start_link(?MODULE, transient),
    P = pid_of(t, children(Sup)),
    P ! {exit, crashed},
    New = wait_new(Sup, t, P),
    A = is_pid(pid_of(t, New)),
    B = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B}}).

%% A temporary child is never restarted and is forgotten when it dies.
temporary() ->
    {ok, Sup} = supervisor:start_link(?MODULE, temporary),
    P = pid_of(tmp, children(Sup)),
    exit(P, kill),
    A = wait_gone(Sup, tmp),
    B = supervisor:count_children(Sup),
    C = supervisor:restart_child(Sup, tmp),
    shutdown(Sup),
    exit({result, {A, B, C}}).

%% Old-style tuple child specs; get_childspec returns them as maps.
tuple_specs() ->
    {ok, Sup} = supervisor:start_link(?MODULE, tuples),
    A = [{Id, is_pid(P), Type, Mods} || {Id, P, Type, Mods} <- lists:sort(supervisor:which_children(Sup))],
    B = supervisor:get_childspec(Sup, tw1),
    C = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B, C}}).

%% Shutting the supervisor down terminates its children in reverse start
%% order, one after the other.
shutdown_order() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {order, self()}),
    shutdown(Sup),
    A = [receive {stopped, Id, R} -> {Id, R} end || _ <- [1, 2, 3]],
    exit({result, A}).

%% check_childspecs/1 (no process involved).
check_childspecs() ->
    M = ?MODULE,
    A = supervisor:check_childspecs([#{id => a, start => {M, start_worker, [a, none]}},
                                     {b, {M, start_worker, [b, none]}, transient, 100, worker, [M]}]),
    B = supervisor:check_childspecs([#{id => a, start => {M, start_worker, [a, none]},
                                       restart => sometimes}]),
    C = supervisor:check_childspecs([{c, {M, start_worker, [c, none]}, permanent, -1, worker, [M]}]),
    D = supervisor:check_childspecs([#{id => d, start => {M, start_worker, [d, none]}},
                                     #{id => d, start => {M, start_worker, [d, none]}}]),
    E = supervisor:check_childspecs([#{start => {M, start_worker, [e, none]}}]),
    exit({result, {A, B, C, D, E}}).

%% get_childspec of a map spec (defaults filled in), and of a missing id.
get_childspec() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {three, one_for_one}),
    A = supervisor:get_childspec(Sup, w1),
    B = supervisor:get_childspec(Sup, nope),
    {ok, _} = supervisor:start_child(Sup, #{id => s, start => {?MODULE, start_worker, [s, none]},
                                            type => supervisor, shutdown => infinity}),
    C = supervisor:get_childspec(Sup, s),
    shutdown(Sup),
    exit({result, {A, B, C}}).

%% start_child whose start function fails, and with a bad spec.
start_child_error() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {three, one_for_one}),
    A = supervisor:start_child(Sup, #{id => bad, start => {?MODULE, start_worker, [bad, refuse]}}),
    B = supervisor:start_child(Sup, #{id => worse, start => {?MODULE, start_worker, [x, none]},
                                      restart => whenever}),
    C = length(supervisor:which_children(Sup)),
    shutdown(Sup),
    exit({result, {A, B, C}}).

%% auto_shutdown => any_significant: a significant transient child exiting
%% normally shuts the supervisor down.
auto_shutdown() ->
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, significant),
    P = pid_of(sig, children(Sup)),
    P ! {exit, normal},
    A = receive {'EXIT', Sup, R} -> R end,
    exit({result, A}).

%% A child that ignores the shutdown signal is killed when its shutdown time
%% is up (the timeout fires when nothing else can happen).
shutdown_timeout_kill() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {stubborn, self()}),
    P = pid_of(stubborn, children(Sup)),
    Ref = monitor(process, P),
    shutdown(Sup),
    A = receive {ignored, stubborn, R} -> R end,
    B = receive {'DOWN', Ref, process, P, D} -> D end,
    exit({result, {A, B}}).

%% brutal_kill: the child is killed without a shutdown signal.
brutal_kill() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {brutal, self()}),
    P = pid_of(b, children(Sup)),
    Ref = monitor(process, P),
    ok = supervisor:terminate_child(Sup, b),
    A = receive {'DOWN', Ref, process, P, D} -> D end,
    B = receive {stopped, b, _} = M -> M after 0 -> no_shutdown_seen end,
    shutdown(Sup),
    exit({result, {A, B}}).

%% A supervisor under a supervisor: killing the inner one restarts it with
%% its own children.
nested() ->
    {ok, Top} = supervisor:start_link(?MODULE, nested),
    [{inner, Inner, supervisor, Mods}] = supervisor:which_children(Top),
    A = [{Id, Type} || {Id, _, Type, _} <- lists:sort(supervisor:which_children(Inner))],
    exit(Inner, kill),
    New = wait_new(Top, inner, Inner),
    NewInner = pid_of(inner, New),
    B = [{Id, is_pid(P)} || {Id, P} <- children(NewInner)],
    C = supervisor:count_children(Top),
    shutdown(Top),
    exit({result, {Mods, A, B, C}}).

%% A supervisor registered with {local, Name}: the API by name.
local_name() ->
    {ok, Sup} = supervisor:start_link({local, tprog_sup2_named}, ?MODULE, {three, one_for_one}),
    A = whereis(tprog_sup2_named) =:= Sup,
    B = length(supervisor:which_children(tprog_sup2_named)),
    C = case supervisor:start_link({local, tprog_sup2_named}, ?MODULE, {three, one_for_one}) of
            {error, {already_started, P}} -> P =:= Sup;
            Other -> Other
        end,
    ok = supervisor:terminate_child(tprog_sup2_named, w1),
    D = supervisor:count_children(tprog_sup2_named),
    shutdown(Sup),
    E = whereis(tprog_sup2_named),
    exit({result, {A, B, C, D, E}}).

%% A start function returning ignore: the child is kept with pid undefined
%% (a static child); restart_child and start_child give {ok, undefined}.
ignore_child() ->
    {ok, Sup} = supervisor:start_link(?MODULE, ignoring),
    A = [{Id, is_pid(P)} || {Id, P} <- children(Sup)],
    B = supervisor:count_children(Sup),
    C = supervisor:restart_child(Sup, ig),
    D = supervisor:start_child(Sup, #{id => ig2, start => {?MODULE, start_worker, [ig2, ignore]}}),
    E = [{Id, is_pid(P)} || {Id, P} <- children(Sup)],
    shutdown(Sup),
    exit({result, {A, B, C, D, E}}).

%% The child API's errors: restart or delete a running child, terminate or
%% restart an unknown one, start_child with an id in use.
child_api_errors() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {three, one_for_one}),
    A = supervisor:restart_child(Sup, w1),
    B = supervisor:delete_child(Sup, w1),
    C = supervisor:terminate_child(Sup, nope),
    D = supervisor:restart_child(Sup, nope),
    E = case supervisor:start_child(Sup, #{id => w2, start => {?MODULE, start_worker, [w2, none]}}) of
            {error, {already_started, P}} -> {already_started, is_pid(P)};
            Other -> Other
        end,
    F = supervisor:delete_child(Sup, nope),
    shutdown(Sup),
    exit({result, {A, B, C, D, E, F}}).

%% --- helpers ---

children(Sup) ->
    lists:sort([{Id, P} || {Id, P, _, _} <- supervisor:which_children(Sup)]).

pid_of(Id, Children) ->
    {Id, P} = lists:keyfind(Id, 1, Children),
    P.

%% Polls which_children until every child runs under a new pid.
wait_all_new(Sup, Old) ->
    New = children(Sup),
    case lists:all(fun({Id, P}) -> is_pid(P) andalso P =/= pid_of(Id, Old) end, New) of
        true -> New;
        false -> wait_all_new(Sup, Old)
    end.

%% Polls until child Id runs under a pid other than Old.
wait_new(Sup, Id, Old) ->
    New = children(Sup),
    case pid_of(Id, New) of
        P when is_pid(P), P =/= Old -> New;
        _ -> wait_new(Sup, Id, Old)
    end.

wait_pid(Sup, Id, Want) ->
    case pid_of(Id, children(Sup)) of
        Want -> Want;
        _ -> wait_pid(Sup, Id, Want)
    end.

wait_gone(Sup, Id) ->
    case lists:keymember(Id, 1, children(Sup)) of
        false -> gone;
        true -> wait_gone(Sup, Id)
    end.

shutdown(Sup) ->
    unlink(Sup),
    Ref = monitor(process, Sup),
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Sup, _} -> ok end.

%% --- callbacks ---

init({three, Strategy}) ->
    {ok, {#{strategy => Strategy, intensity => 5, period => 3600},
          [#{id => Id, start => {?MODULE, start_worker, [Id, none]}} || Id <- [w1, w2, w3]]}};
init(transient) ->
    {ok, {#{strategy => one_for_one},
          [#{id => t, start => {?MODULE, start_worker, [t, none]}, restart => transient}]}};
init(temporary) ->
    {ok, {#{strategy => one_for_one},
          [#{id => tmp, start => {?MODULE, start_worker, [tmp, none]}, restart => temporary},
           #{id => perm, start => {?MODULE, start_worker, [perm, none]}}]}};
init(tuples) ->
    {ok, {{one_for_one, 2, 10},
          [{tw1, {?MODULE, start_worker, [tw1, none]}, permanent, 5000, worker, [?MODULE]},
           {tw2, {?MODULE, start_worker, [tw2, none]}, transient, brutal_kill, worker, dynamic}]}};
init(ignoring) ->
    {ok, {#{strategy => one_for_one},
          [#{id => ig, start => {?MODULE, start_worker, [ig, ignore]}},
           #{id => ok, start => {?MODULE, start_worker, [ok, none]}}]}};
init(significant) ->
    {ok, {#{strategy => one_for_one, auto_shutdown => any_significant},
          [#{id => sig, start => {?MODULE, start_worker, [sig, none]}, restart => transient,
             significant => true},
           #{id => other, start => {?MODULE, start_worker, [other, none]}}]}};
init({stubborn, Recorder}) ->
    {ok, {#{strategy => one_for_one},
          [#{id => stubborn, start => {?MODULE, start_worker, [stubborn, {ignore, Recorder}]},
             shutdown => 50}]}};
init({brutal, Recorder}) ->
    {ok, {#{strategy => one_for_one},
          [#{id => b, start => {?MODULE, start_worker, [b, Recorder]}, shutdown => brutal_kill}]}};
init(nested) ->
    {ok, {#{strategy => one_for_one},
          [#{id => inner, start => {supervisor, start_link, [?MODULE, {three, one_for_all}]},
             type => supervisor}]}};
init({order, Recorder}) ->
    {ok, {#{strategy => one_for_one},
          [#{id => Id, start => {?MODULE, start_worker, [Id, Recorder]}} || Id <- [o1, o2, o3]]}}.

%% Recorder: none, refuse (the start fails), ignore, a pid told of the shutdown, or
%% {ignore, Pid}: Pid is told of the shutdown signal, which is then ignored.
start_worker(_Id, refuse) ->
    {error, refused};
start_worker(_Id, ignore) ->
    ignore;
start_worker(Id, Recorder) ->
    proc_lib:start_link(?MODULE, worker_init, [Id, Recorder, self()]).

worker_init(Id, Recorder, Parent) ->
    (is_pid(Recorder) orelse is_tuple(Recorder)) andalso process_flag(trap_exit, true),
    proc_lib:init_ack({ok, self()}),
    worker_loop(Id, Recorder, Parent).

worker_loop(Id, Recorder, Parent) ->
    receive
        {exit, Reason} -> exit(Reason);
        {'EXIT', Parent, Reason} when is_pid(Recorder) ->
            Recorder ! {stopped, Id, Reason},
            exit(Reason);
        {'EXIT', Parent, Reason} ->
            {ignore, Root} = Recorder,
            Root ! {ignored, Id, Reason},
            worker_loop(Id, Recorder, Parent)
    end.
