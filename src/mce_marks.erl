%% @doc The marks a step's outcome carries for the C search (issue 19):
%% `idle' (the process waits in an idle loop: blocked there is normal
%% termination, not a deadlock; PF_IDLE in c_src/sys_state.h) and
%% `target' (a `kill' fault may hit the process; PF_TARGET).  Also the
%% option values that say which processes are meant: the `idle' option and
%% the targets of `faults => #{kill => {N, Targets}}'.
%%
%% Invariants.  `idle' is a function of the continuation the process
%% waits in (an OTP behaviour's main loop), or, for a process the user
%% names, of the continuation and the process's registered name as the
%% step ends: it adds no state.  `target' is judged when a step of the
%% process ends (a wait or a choice) and, once set, is kept for the
%% process's life (transition.c): a process that has not run yet is no
%% target.  With `idle => none' and no kill targets nothing is computed;
%% the default `idle => otp' costs a wait step one look-up of where its
%% receive stands (mce_exec:location/1, the translation's '$mce_info'), and
%% a step the step cache applies costs nothing.
-module(mce_marks).

-export([idle_option/1, targets_option/2, marks/3, otp_loops/0]).

-type target() :: atom() | {name, atom()} | {module, module()}
                | {predicate, fun((info()) -> boolean())}.
-type info() :: #{pid := pid(), name := atom(), initial_call := mfa() | undefined,
                  node := node()}.
-type idle() :: otp | none | {otp, [target()]}.
-export_type([target/0, info/0, idle/0]).

%% The receives of OTP behaviours' main loops, by original module and
%% function (OTP 25/26 stdlib): gen_server:loop/7 (and wake_hib/6 after
%% hibernation), gen_statem:loop_receive/3, gen_event:fetch_msg/6.  A
%% supervisor is a gen_server.  A server blocked in any other receive
%% (a handle_call waiting for a reply in gen:do_call) is not idle.
-define(OTP_LOOPS, [{gen_server, loop, 7}, {gen_server, wake_hib, 6},
                    {gen_statem, loop_receive, 3}, {gen_event, fetch_msg, 6}]).
%% What a hibernated behaviour wakes into (proc_lib:hibernate/3).
-define(OTP_WAKE, [{gen_server, wake_hib}, {gen_statem, wakeup_from_hibernate},
                   {gen_event, wake_hib}]).

%% @doc The functions whose receive is an OTP behaviour's main loop (for
%% the test that the installed OTP still has them).
-spec otp_loops() -> [mfa()].
otp_loops() -> ?OTP_LOOPS.

%% @doc Validates the `idle' option.
-spec idle_option(term()) -> idle().
idle_option(I) when I =:= otp; I =:= none -> I;
idle_option({otp, Targets} = I) ->
    _ = targets_option(idle, Targets),
    I;
idle_option(I) ->
    erlang:error({mcerlang, {bad_option_value, idle, I,
                             "expected otp, none or {otp, [Target]}"}}).

%% @doc Validates a list of process targets; `Option' names the option in
%% the error.
-spec targets_option(atom(), term()) -> [target()].
targets_option(Option, Targets) when is_list(Targets) ->
    [target(Option, T) || T <- Targets];
targets_option(Option, Targets) ->
    erlang:error({mcerlang, {bad_option_value, Option, Targets, "expected a list of targets"}}).

target(_, Name) when is_atom(Name) -> Name;
target(_, {name, Name} = T) when is_atom(Name) -> T;
target(_, {module, M} = T) when is_atom(M) -> T;
target(_, {predicate, F} = T) when is_function(F, 1) -> T;
target(Option, T) ->
    erlang:error({mcerlang, {bad_option_value, Option, T,
                             "a target is a registered name, {name, Atom}, {module, M} or "
                             "{predicate, fun(#{pid, name, initial_call, node}) -> boolean()}"}}).

%% @doc The marks of a step that ends waiting in `Recv' (`choice' for a
%% step that ends in mcerlang:choice/1), the step having run as `How'
%% from `Cont'.  Runs in the executor before its dictionary is cleaned.
-spec marks(tuple() | choice, mce_exec:how(), term()) -> [idle | target].
marks(Recv, How, Cont) ->
    Info = fun() -> info(How, Cont) end,
    Idle = case {Recv, get('$mce_idle')} of
               {choice, _} -> false;
               {_, otp} -> otp_loop(Recv);
               {_, {otp, Ts}} -> otp_loop(Recv) orelse matches(idle, Ts, Info());
               {_, _} -> false
           end,
    Target = case get('$mce_kill_targets') of
                 Ks when is_list(Ks) -> matches(faults, Ks, Info());
                 _ -> false
             end,
    [idle || Idle] ++ [target || Target].

otp_loop({mce_rt, '$mce_hibernated', [M, F, A], _}) ->
    case {mce_exec:original_module(M), F, A} of
        %% proc_lib:hibernate(M2, F2, A2) hibernates into proc_lib:wake_up/3.
        {proc_lib, wake_up, [M2, F2, _]} when is_atom(M2) ->
            lists:member({mce_exec:original_module(M2), F2}, ?OTP_WAKE);
        {Orig, _, _} -> lists:member({Orig, F}, ?OTP_WAKE)
    end;
otp_loop(Recv) ->
    case mce_exec:location({Recv, []}) of
        {M, F, A, _, _} -> lists:member({M, F, A}, ?OTP_LOOPS);
        undefined -> false
    end.

matches(Option, Targets, Info) ->
    lists:any(fun(T) -> match(Option, T, Info) end, Targets).

match(_, Name, #{name := N}) when is_atom(Name) -> Name =:= N;
match(_, {name, Name}, #{name := N}) -> Name =:= N;
match(_, {module, M}, #{initial_call := {IM, _, _}}) -> M =:= IM;
match(_, {module, _}, #{}) -> false;
match(Option, {predicate, F} = T, Info) ->
    %% The user's fun: a crash in it is reported as the option's error,
    %% not as the checker's.
    try F(Info) of
        B when is_boolean(B) -> B;
        Other -> erlang:error({mcerlang, {bad_option_value, Option, T,
                                          {returned, Other, "a predicate returns a boolean"}}})
    catch
        error:{mcerlang, _} = E -> erlang:error(E);
        Class:Reason -> erlang:error({mcerlang, {bad_option_value, Option, T,
                                                 {Class, Reason, "the predicate crashed"}}})
    end.

%% The process as the targets see it: its pid, registered name (undefined:
%% none), initial call (proc_lib's '$initial_call', else the call it was
%% spawned with when this is its first step) and node.
info(How, Cont) ->
    Self = mce_rt:self(),
    Name = case mce_rt_procs:process_info(Self, registered_name) of
               {registered_name, N} -> N;
               _ -> undefined
           end,
    Initial = case maps:find('$initial_call', get('$mce_dict')) of
                  {ok, {_, _, _} = MFA} -> MFA;
                  _ -> started_as(How, Cont)
              end,
    #{pid => Self, name => Name, initial_call => Initial,
      node => mce_pid:node_of(get('$mce_pid'))}.

started_as(start, {M, F, Args}) when is_atom(M), is_list(Args) ->
    {mce_exec:original_module(M), F, length(Args)};
started_as(start, Fun) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, F} = erlang:fun_info(Fun, name),
    {mce_exec:original_module(M), F, 0};
started_as(_, _) -> undefined.
