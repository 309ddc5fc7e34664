%% @doc The runtime (see mce_rt) for I/O towards group leaders: the group
%% leader of each process (group_leader/0,2) and the output that mce_io
%% records with the step when the leader is a `user'.
%%
%% Output is never printed during the search: the text goes into the
%% step's output ('$mce_output') and is shown in counterexamples.  A group
%% leader that is a program process gets the I/O protocol's io_requests
%% instead (mce_io, translated like user code).
%%
%% Invariant: the state stores a group leader as its key xor the first
%% node's `user' (0 for the default one, which most processes have); a
%% process spawned by this step keeps the leader its spawner had at the
%% spawn, even if the spawner changes its own later in the step.
-module(mce_rt_io).
-compile({no_auto_import, [group_leader/0, group_leader/2]}).

-export([io_user/1, io_record/1, group_leader/0, group_leader/2]).
%% For the other modules of the runtime.
-export([gl_key/1]).

%% @doc group_leader/0: the running process's group leader.
-spec group_leader() -> pid().
group_leader() ->
    mce_pid:term(gl_key(erlang:get('$mce_pid'))).

%% @doc group_leader/2: sets Pid's group leader, an effect of the step.  As
%% on OTP 25, a non-pid or a dead local Pid is badarg and the leader need
%% not be alive.  A remote Pid is not checked (OTP sends a signal); the
%% group leaders of `init' and `user' are not modelled.
-spec group_leader(pid(), pid()) -> true.
group_leader(Leader, Pid) when is_pid(Leader), is_pid(Pid) ->
    L = mce_rt:sim_pid(Leader, [Leader, Pid]),
    N = mce_rt:sim_pid(Pid, [Leader, Pid]),
    mce_rt_procs:system_process(N) =:= false orelse
        mce_rt_procs:system_process_refused(N, group_leader),
    mce_rt:is_local(N) andalso not mce_rt_procs:alive(N) andalso
        erlang:error(badarg, [Leader, Pid]),
    N =:= erlang:get('$mce_pid') andalso keep_children_gl(),
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{{gl, N} => L}),
    mce_rt:effect({group_leader, N, L bxor mce_rt_procs:default_gl_key(), L}),
    true;
group_leader(Leader, Pid) ->
    erlang:error(badarg, [Leader, Pid]).

%% The group leader (a pid key) of live process N as this step has left it.
-spec gl_key(non_neg_integer()) -> non_neg_integer().
gl_key(N) ->
    case erlang:get('$mce_overlay') of
        #{{gl, N} := L} -> L;
        #{} ->
            case mce_nif:group_leader(erlang:get('$mce_search'), N) of
                %% Spawned by this step: its spawner's (see keep_children_gl/0).
                undefined -> gl_key(erlang:get('$mce_pid'));
                Stored -> Stored bxor mce_rt_procs:default_gl_key()
            end
    end.

%% The running process changes its own group leader: the processes it
%% spawned earlier in this step keep the one it had (the C search copies the
%% spawner's leader when it applies each spawn, in order).
keep_children_gl() ->
    Old = gl_key(erlang:get('$mce_pid')),
    Overlay = erlang:get('$mce_overlay'),
    erlang:put('$mce_overlay',
               maps:merge(maps:from_list([{{gl, C}, Old} || {spawn, C, _, _} <- erlang:get('$mce_effects')]),
                          Overlay)).

%% @doc Is io output to Pid recorded with the step (mce_io)?  It is for
%% the `user' process of any node, which is the default group leader;
%% another process gets io_requests.
-spec io_user(pid()) -> boolean().
io_user(Pid) ->
    case mce_pid:number(Pid) of
        {ok, N} -> mce_rt_procs:system_process(N) =:= user;
        error -> mce_rt:fatal({mcerlang, {send_to_real_process, Pid}})
    end.

%% @doc Records the text of an io request (mce_io) with the step: shown in
%% counterexamples instead of being printed during the search.
-spec io_record(term()) -> ok.
io_record({format, Format, Args}) ->
    Text = lists:flatten(io_lib:format(Format, Args)),
    record_text(Text);
io_record({put_chars, _Enc, Chars}) ->
    case unicode:characters_to_list(Chars) of
        Text when is_list(Text) -> record_text(Text);
        _ -> erlang:error(badarg, [Chars])
    end;
io_record(nl) ->
    record_text("\n");
io_record({write, Term}) ->
    record_text(lists:flatten(io_lib:write(Term))).

record_text(Text) ->
    erlang:put('$mce_output', [Text | erlang:get('$mce_output')]),
    ok.
