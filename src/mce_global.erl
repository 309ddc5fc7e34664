%% @doc The global name registry for checked code.
%%
%% The translator redirects global:register_name/2,3, re_register_name/2,3,
%% unregister_name/1, whereis_name/1, send/2 and registered_names/0 here.
%% The registry is one cluster-wide map Name => pid, kept in the checked
%% state (beside the application environments, in the C world's shared
%% term).  A name whose process has died is free again: entries are
%% checked for liveness when read, which is what a program can observe of
%% global's clean-up on process exit.  Names are not released when nodes
%% disconnect (global's partition handling is not modelled).
-module(mce_global).

-export([register_name/2, register_name/3, re_register_name/2, re_register_name/3,
         unregister_name/1, whereis_name/1, send/2, registered_names/0]).

-spec register_name(term(), pid()) -> yes | no.
register_name(Name, Pid) when is_pid(Pid) ->
    Reg = live(),
    Taken = maps:is_key(Name, Reg) orelse lists:member(Pid, maps:values(Reg)),
    case Taken of
        true -> no;
        false -> store(Reg#{Name => Pid}), yes
    end;
register_name(Name, Pid) ->
    erlang:error(badarg, [Name, Pid]).

-spec register_name(term(), pid(), term()) -> yes | no.
register_name(Name, Pid, _Resolve) ->
    register_name(Name, Pid).

-spec re_register_name(term(), pid()) -> yes.
re_register_name(Name, Pid) when is_pid(Pid) ->
    store((live())#{Name => Pid}),
    yes.

-spec re_register_name(term(), pid(), term()) -> yes.
re_register_name(Name, Pid, _Resolve) ->
    re_register_name(Name, Pid).

-spec unregister_name(term()) -> ok.
unregister_name(Name) ->
    store(maps:remove(Name, live())),
    ok.

-spec whereis_name(term()) -> pid() | undefined.
whereis_name(Name) ->
    maps:get(Name, live(), undefined).

%% @doc global:send/2: exits {badarg, {Name, Msg}} for an unregistered name.
-spec send(term(), term()) -> pid().
send(Name, Msg) ->
    case whereis_name(Name) of
        undefined -> exit({badarg, {Name, Msg}});
        Pid -> mce_rt:send(Pid, Msg), Pid
    end.

-spec registered_names() -> [term()].
registered_names() ->
    maps:keys(live()).

%% The registry without the names of dead processes.
live() ->
    maps:filter(fun(_Name, Pid) -> alive(Pid) end, maps:get(global, mce_app:shared(), #{})).

alive(Pid) ->
    case mce_pid:number(Pid) of
        {ok, N} ->
            N =:= erlang:get('$mce_pid') orelse mce_rt_procs:alive(N);
        error -> false
    end.

store(Reg) ->
    mce_app:store_shared((mce_app:shared())#{global => Reg}).
