%% @doc Supervisor programs for the differential tests (see tprog_otp).
-module(tprog_sup).
-behaviour(supervisor).

-export([restart/0, gives_up/0, child_api/0, simple/0]).
-export([init/1, start_worker/1, worker/1]).

%% A killed permanent worker is restarted under a new pid.
restart() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {one_for_one, 3}),
    [{w1, P1, worker, [?MODULE]}, {w2, _, worker, [?MODULE]}] = lists:sort(supervisor:which_children(Sup)),
    exit(P1, kill),
    New = wait_new(Sup, w1, P1),
    Counts = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {is_pid(New), Counts}}).

%% More restarts than the intensity allows: the supervisor gives up with
%% reason shutdown.
gives_up() ->
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, {one_for_one, 1}),
    kill_child(Sup, w1),
    kill_child(Sup, w1),
    R = receive {'EXIT', Sup, Reason} -> Reason end,
    exit({result, R}).

kill_child(Sup, Id) ->
    case lists:keyfind(Id, 1, catch supervisor:which_children(Sup)) of
        {Id, Pid, _, _} when is_pid(Pid) -> exit(Pid, kill), wait_dead(Pid);
        _ -> ok
    end.

wait_dead(Pid) ->
    Ref = monitor(process, Pid),
    receive {'DOWN', Ref, process, Pid, _} -> ok end.

%% terminate_child, restart_child, delete_child, start_child.
child_api() ->
    {ok, Sup} = supervisor:start_link(?MODULE, {one_for_one, 3}),
    A = supervisor:terminate_child(Sup, w2),
    B = [{Id, P} || {Id, P, _, _} <- lists:sort(supervisor:which_children(Sup)), not is_pid(P)],
    {ok, P2} = supervisor:restart_child(Sup, w2),
    C = supervisor:delete_child(Sup, w2),
    ok = supervisor:terminate_child(Sup, w2 =:= w2 andalso w1),
    D = supervisor:delete_child(Sup, w1),
    {ok, P3} = supervisor:start_child(Sup, #{id => w3, start => {?MODULE, start_worker, [w3]}}),
    E = supervisor:start_child(Sup, #{id => w3, start => {?MODULE, start_worker, [w3]}}),
    F = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B, is_pid(P2), C, D, is_pid(P3), element(1, E), F}}).

%% simple_one_for_one: children started on demand with extra arguments.
simple() ->
    {ok, Sup} = supervisor:start_link(?MODULE, simple),
    {ok, C1} = supervisor:start_child(Sup, [a]),
    {ok, _C2} = supervisor:start_child(Sup, [b]),
    A = length(supervisor:which_children(Sup)),
    ok = supervisor:terminate_child(Sup, C1),
    B = supervisor:count_children(Sup),
    shutdown(Sup),
    exit({result, {A, B}}).

wait_new(Sup, Id, Old) ->
    case lists:keyfind(Id, 1, supervisor:which_children(Sup)) of
        {Id, New, _, _} when is_pid(New), New =/= Old -> New;
        _ -> wait_new(Sup, Id, Old)
    end.

shutdown(Sup) ->
    unlink(Sup),
    Ref = monitor(process, Sup),
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Sup, _} -> ok end.

init({Strategy, Intensity}) ->
    {ok, {#{strategy => Strategy, intensity => Intensity, period => 3600},
          [#{id => w1, start => {?MODULE, start_worker, [w1]}},
           {w2, {?MODULE, start_worker, [w2]}, permanent, 1000, worker, [?MODULE]}]}};
init(simple) ->
    {ok, {#{strategy => simple_one_for_one},
          [#{id => w, start => {?MODULE, start_worker, []}, restart => temporary}]}}.

start_worker(Name) ->
    {ok, spawn_link(?MODULE, worker, [Name])}.

worker(_Name) ->
    receive stop -> ok end.
