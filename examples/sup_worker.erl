%% @doc A supervised worker that may crash on each job (a choice the
%% checker explores both ways), restarted by OTP's own supervisor until
%% the supervisor gives up.  `start(Jobs, Intensity)': the client sends
%% Jobs jobs to the registered worker; a job either succeeds or crashes
%% the worker (with reason {shutdown, _}: expected, not a failure), and is
%% then retried on the restarted worker.  When the crashes can exceed
%% Intensity the supervisor gives up and the client exits with
%% supervisor_gave_up: the checker reports that run.  With Intensity >=
%% Jobs every run ends well.  Run with timeouts => when_idle, so that the
%% client's polling timeout fires only once the supervisor has acted.
-module(sup_worker).
-behaviour(gen_server).

-export([start/2, start_worker/0]).
-export([init/1, handle_call/3, handle_cast/2]).

-spec start(pos_integer(), non_neg_integer()) -> ok.
start(Jobs, Intensity) ->
    {ok, Sup} = supervisor:start_link(sup_worker_sup, Intensity),
    unlink(Sup),
    Ref = monitor(process, Sup),
    [ok = job(I, Ref) || I <- lists:seq(1, Jobs)],
    exit(Sup, shutdown),
    receive {'DOWN', Ref, process, Sup, _} -> ok end.

%% A job, retried once the supervisor has restarted a worker that crashed
%% doing it; if the supervisor gave up instead, so does the client.
job(I, Ref) ->
    try gen_server:call(sup_worker, {job, I}, infinity)
    catch exit:{{shutdown, {crashed, I}}, _} -> retry(I, Ref)
    end.

retry(I, Ref) ->
    receive
        {'DOWN', Ref, process, _, _} -> exit(supervisor_gave_up)
    after 10 ->
            case whereis(sup_worker) of
                undefined -> retry(I, Ref);
                _ -> gen_server:call(sup_worker, {retry, I}, infinity)
            end
    end.

-spec start_worker() -> {ok, pid()}.
start_worker() ->
    gen_server:start_link({local, sup_worker}, ?MODULE, [], []).

-spec init([]) -> {ok, []}.
init([]) -> {ok, []}.

-spec handle_call({job | retry, integer()}, term(), []) -> {reply, ok, []}.
handle_call({job, I}, _From, S) ->
    mcerlang:choice([fun() -> ok end, fun() -> exit({shutdown, {crashed, I}}) end]),
    {reply, ok, S};
handle_call({retry, _I}, _From, S) ->
    {reply, ok, S}.

-spec handle_cast(term(), []) -> {noreply, []}.
handle_cast(_, S) -> {noreply, S}.
