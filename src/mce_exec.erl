%% @doc The executor: runs one step of one simulated process on the real
%% BEAM and reports what it did.
%%
%% A step starts from a continuation handed over by the C search (an initial
%% call, or a suspended receive plus its frames) and runs until the process
%% suspends in its next receive or ends.  The side effects it performs are
%% collected by mce_rt in this process's dictionary and returned, in order,
%% for the C runtime to apply.  The step also produces a label describing
%% itself, which the search keeps on its stack for counterexamples.
-module(mce_exec).

-export([run/6, matches/2, location/1, clean_stack/1, caught_stack/1, fun_origin/1,
         original_module/1]).

%% The VM's default depth of stack traces (erlang:system_flag(backtrace_depth, _)).
-define(BACKTRACE_DEPTH, 8).

-type how() :: start | timeout | {'receive', term()} | {choice, non_neg_integer()}.
-type outcome() :: {wait, false | zero | poll | pos_integer(), term(), [{term(), term()}]}
                 | {wait, false | zero | poll | pos_integer(), term(), [{term(), term()}], marks()}
                 | {choice, pos_integer(), term(), [{term(), term()}]}
                 | {choice, pos_integer(), term(), [{term(), term()}], marks()}
                 | {exit, term()}.
%% mce_marks: idle (PF_IDLE), target (PF_TARGET); the 4-tuple when none.
-type marks() :: [idle | target | {payload, binary()}, ...].
-type label() :: #{pid := pos_integer(), action := term(), effects := list(),
                   output := [string()], outcome := term()}.
-export_type([how/0, outcome/0, label/0]).

%% @doc Runs process `Pid' from `Cont' with its process dictionary and
%% trap_exit flag.  Returns the outcome for the C runtime, the effects
%% (oldest first) and the step's label.
-spec run(mce_nif:search(), pos_integer(), how(), term(), [{term(), term()}], boolean()) ->
          {outcome(), list(), label()}.
run(Search, Pid, How, Cont, Dict, TrapExit) ->
    put('$mce_self', mce_pid:term(Pid)),
    put('$mce_pid', Pid),
    put('$mce_search', Search),
    put('$mce_effects', []),
    put('$mce_output', []),
    put('$mce_suspensions', []),
    put('$mce_dict', maps:from_list(Dict)),
    RandStart = lend_rand(Pid, Dict),
    put('$mce_trap_exit', TrapExit),
    put('$mce_overlay', #{}),
    put('$mce_probes', []),
    put('$mce_shared_touched', false),
    Watch = get('$mce_watch'),
    mce_watchdog:step_started(Watch, Pid),
    mce_sandbox:step_atoms_start(),
    Result0 = step(How, Cont),
    mce_watchdog:step_ended(Watch),
    case mce_sandbox:step_atoms_end() of
        ok -> ok;
        {error, Over} -> get('$mce_fatal') =:= undefined andalso put('$mce_fatal', Over)
    end,
    %% A signal the process sent itself (exit(self(), kill)) ends it
    %% whatever its code did afterwards: signals cannot be caught.
    Killed = erase('$mce_killed'),
    Result = case Killed of
                 undefined -> Result0;
                 Reason -> {exit, Reason}
             end,
    case erase('$mce_fatal') of
        undefined -> ok;
        Fatal -> cleanup(), erlang:error(Fatal)
    end,
    %% Before the step's record is taken apart: the marks may read the
    %% process as the step leaves it (its name, its dictionary).
    Marks = case Result of
                {wait, {'$mce_choice', _}, _} -> mce_marks:marks(choice, How, Cont);
                {wait, Recv, Frames} -> mce_marks:marks(Recv, How, Cont) ++ payload(Recv, Frames);
                _ -> []
            end,
    Suspensions = erase('$mce_suspensions'),
    Killed =:= undefined andalso check_suspensions(Result, Suspensions),
    Effects = lists:reverse(erase('$mce_effects')),
    Output = lists:reverse(erase('$mce_output')),
    Probes = lists:reverse(erase('$mce_probes')),
    FinalDict = lists:sort(maps:to_list(return_rand(RandStart, get('$mce_dict')))),
    cleanup(),
    Outcome0 = case Result of
                   {wait, {'$mce_choice', Alts}, _} = W ->
                       {choice, length(Alts), cont(W), FinalDict};
                   {wait, {Mod, Name, _, Timeout}, _} = W ->
                       {wait, timeout_kind(Timeout, Mod, Name), cont(W), FinalDict};
                   {done, _Value} -> {exit, normal};
                   {exit, _} = E -> E
               end,
    Outcome = case Marks of
                  [] -> Outcome0;
                  _ -> erlang:append_element(Outcome0, Marks)
              end,
    Label0 = #{pid => Pid, action => action(How, Cont), effects => Effects,
               output => Output, outcome => label_outcome(Outcome0)},
    Label = case Probes of
                [] -> Label0;
                _ -> Label0#{probes => Probes}
            end,
    {Outcome, Effects, Label}.

%% rand keeps its state in the process dictionary but runs untranslated,
%% in the executor: the simulated process's state is lent to the
%% executor's own dictionary for the step and taken back after it, so that
%% draws are part of the checked state (the same in every run of the
%% check, and not shared between processes).  A process that has not
%% seeded draws from a fixed seed of its own, as if seeded at spawn.
lend_rand(Pid, Dict) ->
    Start = case lists:keyfind(rand_seed, 1, Dict) of
                {_, Seed} -> Seed;
                false -> fresh_seed(Pid)
            end,
    put(rand_seed, Start),
    Start.

return_rand(Start, SimDict) ->
    case erase(rand_seed) of
        Start -> SimDict;
        undefined -> maps:remove(rand_seed, SimDict);
        Drawn -> SimDict#{rand_seed => Drawn}
    end.

%% Seeding costs microseconds, more than many steps: once per process
%% number and check.
fresh_seed(Pid) ->
    Fresh = case get('$mce_rand_fresh') of
                undefined -> #{};
                F -> F
            end,
    case Fresh of
        #{Pid := Seed} -> Seed;
        _ ->
            Seed = rand:seed_s(exsss, {Pid, 16#5eed, 16#cafe}),
            put('$mce_rand_fresh', Fresh#{Pid => Seed}),
            Seed
    end.

cleanup() ->
    [erase(K) || K <- ['$mce_self', '$mce_search', '$mce_effects', '$mce_output', '$mce_probes',
                       '$mce_pending',
                       '$mce_suspensions', '$mce_fatal', '$mce_killed', '$mce_dict',
                       '$mce_trap_exit', '$mce_overlay', '$mce_pid', '$mce_shared_touched']],
    ok.

cont({wait, Recv, Frames}) -> {Recv, Frames}.

%% The dead-payload descriptor of the receive the step ends in, when the
%% check uses them (mce_payload).
payload(Recv, Frames) ->
    case get('$mce_dead_payload') =:= true andalso mce_payload:descriptor(Recv, Frames) of
        Bin when is_binary(Bin) -> [{payload, Bin}];
        _ -> []
    end.

%% `after 0' fires as soon as no message matches, whatever the timeouts
%% option says: it is a poll, not the passing of time.  A finite time is
%% passed on: with timeouts => when_idle the shortest fires first.
%% Under timeouts => {infinite_above, Ms} an `after' of Ms or more is
%% `false', as `after infinity'; `after 0' stays a poll whatever Ms is.
%% `poll' is the `after 0' of a receive without clauses (`erlang:yield()',
%% `timer:sleep(0)'), which the translator lists in '$mce_info'({poll,
%% Name}): no message can match it, so no send disables its timeout.
timeout_kind(infinity, _, _) -> false;
timeout_kind(0, Mod, Name) ->
    case info(Mod, {poll, Name}) of
        undefined -> zero;
        _ -> poll
    end;
timeout_kind(T, _, _) ->
    %% timeouts => {infinite_above, Ms}: an `after' of at least Ms never
    %% fires, so the process waits as in `after infinity' (blocked, for
    %% the deadlock check).  The atom infinity compares above any integer.
    case get('$mce_infinite_above') of
        Ms when is_integer(Ms), T >= Ms -> false;
        _ -> T
    end.

%% @doc Does `Msg' match the receive that `Cont' is suspended in?
-spec matches(term(), term()) -> boolean() | maybe.
matches({{Mod, Name, FreeVars, _Timeout}, _Frames}, Msg) ->
    erlang:apply(Mod, Name, [match, Msg | FreeVars]).

%% @doc Source location of a translated receive or frame, if known.
-spec location(term()) -> {module(), atom(), arity(), string(), non_neg_integer()} | undefined.
location({{'$mce_choice', _}, _Frames}) -> undefined;
location({{mce_rt, '$mce_hibernated', _, _}, _Frames}) -> {erlang, hibernate, 3, "", 0};
location({{mce_abs_eval, '$recv', [Machine], _}, _Frames}) -> mce_abs_eval:location(Machine);
location({{Mod, Name, _, _}, _Frames}) -> info(Mod, Name);
location({Mod, F, Args}) when is_atom(Mod), is_list(Args) ->
    {original_module(Mod), F, length(Args), "", 0};
location(_) -> undefined.

%% @doc Where a fun of checked code was written: its original module, the
%% name the compiler gives it there (`'-main/0-fun-1-'': a fun in main/0),
%% and its source file and line.  Translation moves funs into generated
%% functions, so the translated fun's own name can say less.
-spec fun_origin(function()) -> {module(), atom(), string(), non_neg_integer()} | undefined.
fun_origin(Fun) when is_function(Fun) ->
    case erlang:fun_info(Fun, type) of
        {type, local} ->
            {module, M} = erlang:fun_info(Fun, module),
            {name, F} = erlang:fun_info(Fun, name),
            case info(M, {'fun', F}) of
                {OrigM, OrigF, _, File, Line} -> {OrigM, OrigF, File, Line};
                undefined ->
                    case original_module(M) of
                        M -> undefined;
                        OrigM -> {OrigM, F, "", 0}
                    end
            end;
        {type, external} ->
            undefined
    end.

info(Mod, Name) ->
    try Mod:'$mce_info'(Name)
    catch error:undef -> undefined
    end.

step(start, {M, F, Args}) ->
    finish(invoke(M, F, Args, []), []);
step(start, Fun) when is_function(Fun, 0) ->
    finish(invoke(erlang, apply, [Fun, []], []), []);
step({'receive', Msg}, {{mce_rt, '$mce_hibernated', FreeVars, _}, _Frames}) ->
    %% Waking from hibernation: the stack was discarded.
    finish(invoke(mce_rt, '$mce_hibernated', [body, Msg | FreeVars], []), []);
step({'receive', Msg}, {{Mod, Name, FreeVars, _}, Frames}) ->
    finish(invoke(Mod, Name, [body, Msg | FreeVars], Frames), Frames);
step(timeout, {{Mod, Name, FreeVars, _}, Frames}) ->
    finish(invoke(Mod, Name, [timeout, none | FreeVars], Frames), Frames);
step({choice, I}, {{'$mce_choice', Alts}, Frames}) ->
    case lists:nth(I + 1, Alts) of
        {M, F, Args} -> finish(invoke(M, F, Args, Frames), Frames);
        Fun -> finish(invoke(erlang, apply, [Fun, []], Frames), Frames)
    end.

%% Runs a piece of program code and classifies how it ended.  An
%% exception's stack trace goes on below the code that ran with the
%% frames still pending from earlier steps (the calls that were waiting
%% when the process suspended), as the VM's stack would, to its depth.
invoke(M, F, Args, Frames) ->
    %% For stacks caught by the program's own try/catch (caught_stack/1).
    put('$mce_pending', Frames),
    try erlang:apply(M, F, Args) of
        {'$mce_suspend', Recv, Fs} -> {suspend, Recv, Fs};
        Value -> {value, Value}
    catch
        Class:Reason:Stack -> {raise, Class, Reason, with_pending(clean_stack(Stack), Frames)}
    end.

%% @doc A stack trace caught by the program in the step running now (see
%% mce_rt:clean_stack/1): cleaned, and going on with the pending frames.
-spec caught_stack([tuple()]) -> [tuple()].
caught_stack(Stack) ->
    with_pending(clean_stack(Stack), case get('$mce_pending') of
                                         undefined -> [];
                                         Frames -> Frames
                                     end).

with_pending(Stack, Frames) ->
    Pending = pending_frames(Frames),
    Depth = ?BACKTRACE_DEPTH,
    MFAs = fun(S) -> [{M, F, A} || {M, F, A, _} <- S] end,
    case lists:suffix(MFAs(Pending), MFAs(Stack)) of
        true -> Stack;                  % a rethrow of a stack that has them
        false -> lists:sublist(Stack ++ Pending, Depth)
    end.

%% A function with a pending call is one frame of the stack, however many
%% continuation and handler frames the translation gave it.
pending_frames(Frames) ->
    Locs = [Loc || Frame <- Frames, Loc <- [frame_location(Frame)], Loc =/= undefined],
    dedup_frames(Locs).

frame_location({'$mce_handler', Mod, H, _FreeVars}) -> info_frame(Mod, H);
frame_location({Mod, K, _FreeVars}) when is_atom(Mod), is_atom(K) -> info_frame(Mod, K);
frame_location(_) -> undefined.

info_frame(Mod, Name) ->
    case info(Mod, Name) of
        {M, F, A, File, Line} -> {M, F, A, [{file, File}, {line, Line}]};
        undefined -> undefined
    end.

dedup_frames([{M, F, A, _} = Frame, {M, F, A, _} | Rest]) -> dedup_frames([Frame | Rest]);
dedup_frames([Frame | Rest]) -> [Frame | dedup_frames(Rest)];
dedup_frames([]) -> [].

%% Feeds the outcome of the code that ran to the pending frames, innermost
%% first, until the process suspends again or has no frames left.  An
%% ordinary frame continues a body with a value; an exception skips it.  A
%% handler frame (a `try' or `catch' whose body suspended) takes both.
finish({suspend, Recv, Fs}, Frames) ->
    {wait, Recv, lists:reverse(Fs, Frames)};
finish({value, Value}, []) ->
    {done, Value};
finish({raise, Class, Reason, Stack}, []) ->
    {exit, exit_reason(Class, Reason, Stack)};
finish(Outcome, [{'$mce_handler', Mod, H, FreeVars} | Frames]) ->
    finish(invoke(Mod, H, [handler_arg(Outcome) | FreeVars], Frames), Frames);
finish({value, Value}, [{Mod, K, FreeVars} | Frames]) ->
    finish(invoke(Mod, K, [Value | FreeVars], Frames), Frames);
finish({raise, _, _, _} = Raise, [{_Mod, _K, _FreeVars} | Frames]) ->
    finish(Raise, Frames).

handler_arg({value, V}) -> {ok, V};
handler_arg({raise, Class, Reason, Stack}) -> {exception, Class, Reason, Stack}.

%% The exit reason of a process that did not catch an exception, as on the
%% VM.
exit_reason(exit, Reason, _Stack) -> Reason;
exit_reason(error, Reason, Stack) -> {Reason, Stack};
exit_reason(throw, Value, Stack) -> {{nocatch, Value}, Stack}.

%% Exactly one receive must have suspended a waiting step, none a finished
%% one.  Anything else means a suspension travelled through code that did
%% not pass it on (a fun that blocks, called from a library function or
%% from an expression position the translator treats as pure).
check_suspensions({wait, _, _}, [_]) -> ok;
check_suspensions({wait, _, _}, []) -> ok;       % user code returned the tag itself
check_suspensions({exit, _}, []) -> ok;
check_suspensions({done, _}, []) -> ok;
check_suspensions(_, [First | _] = All) ->
    Where = lists:usort([suspension_location(S) || S <- All]),
    erlang:error({mcerlang, {receive_reached_through_untranslated_code,
                             suspension_location(First), Where,
                             "a fun that blocks was called by library code or "
                             "inside an expression; see docs/ARCHITECTURE.md"}}).

%% Where a lost suspension was made: a receive's generated function, or
%% the call of a small-step yield or a choice ({M, F, A, Line}, given by
%% the translation).
suspension_location({at, Where}) -> Where;
suspension_location({Mod, Name}) -> info(Mod, Name).

action(start, Cont) -> {start, Cont};
action(timeout, _Cont) -> timeout;
action({choice, _}, {{'$mce_choice', [{mce_rt, resume, _}]}, _}) -> resume;
action({choice, _}, {{'$mce_choice', [{mce_rt, prop_resume, [Prop]}]}, _}) -> {prop_passed, Prop};
action({choice, I}, _Cont) -> {choice, I + 1};
action({'receive', Msg}, _Cont) -> {'receive', Msg}.

label_outcome({wait, _, Cont, _Dict}) -> {waiting, location(Cont)};
label_outcome({choice, 1, {{'$mce_choice', [{mce_rt, resume, _}]}, _}, _Dict}) -> yielded;
label_outcome({choice, 1, {{'$mce_choice', [{mce_rt, prop_resume, [Prop]}]}, _}, _Dict}) ->
    {prop, Prop};
label_outcome({choice, N, _Cont, _Dict}) -> {choosing, N};
label_outcome({exit, Reason}) -> {exit, Reason}.

%% @doc Stack traces name the original modules and end where the simulated
%% process's own code ends: the executor's frames below it are not part of
%% the program.
-spec clean_stack([tuple()]) -> [tuple()].
clean_stack(Stack) ->
    Own = lists:takewhile(fun({M, _, _, _}) -> not lists:member(M, [mce_exec, mce_search]) end,
                          Stack),
    [original_frame(Frame) || Frame <- ets_frames(Own), keep_frame(Frame)].

%% The frames of the ETS model (mce_ets) stand for one call of the ets BIF:
%% the outermost names the function, the innermost holds the arguments
%% that erlang:error/2 reported.
ets_frames([{mce_ets, _, _, _} | _] = Stack) ->
    {Run, Rest} = lists:splitwith(fun({M, _, _, _}) -> M =:= mce_ets end, Stack),
    {mce_ets, _, Args, _} = hd(Run),
    {mce_ets, F, A, _} = lists:last(Run),
    Arity = case A of
                _ when is_list(A) -> length(A);
                _ -> A
            end,
    ArgsOrArity = case is_list(Args) andalso length(Args) =:= Arity of
                      true -> Args;
                      false -> Arity
                  end,
    [{ets, F, ArgsOrArity, []} | ets_frames(Rest)];
ets_frames([Frame | Rest]) ->
    [Frame | ets_frames(Rest)];
ets_frames([]) ->
    [].

%% A BIF implemented by the runtime (mce_rt:modules/0) appears as the BIF
%% itself, as on the VM; the runtime's internal helpers do not appear.
keep_frame({M, F, _, _}) ->
    not lists:member(M, mce_rt:modules()) orelse lists:member(F, rt_bifs()).

rt_bifs() ->
    [send, link, unlink, exit, register, unregister, whereis, registered, process_flag,
     is_process_alive, spawn, spawn_link, spawn_opt, make_ref, monitor, demonitor,
     spawn_monitor, nodes, monitor_node, alias, unalias, send_after, start_timer,
     cancel_timer, read_timer, unique_integer, process_info].

%% Lambda-lifted receive and frame functions stand for the function whose
%% code they hold.
%% A BIF that raised names no source, only where its error is explained,
%% as on the VM (`Name ! Msg' raises in erlang:send/2 too).
original_frame({M, F, A, Info}) ->
    case lists:member(M, mce_rt:modules()) of
        true -> {erlang, F, A, [{error_info, #{module => erl_erts_errors}}]};
        false -> program_frame({M, F, A, Info})
    end.

program_frame(Frame) ->
    ordered_copy(program_frame1(Frame)).

%% The copy of a function whose guards may compare pids
%% (mce_translate_order) stands for the function.
ordered_copy({M, F, A, Info} = Frame) ->
    case atom_to_list(F) of
        "$mce_ord_" ++ Name -> {M, list_to_existing_atom(Name), A, Info};
        _ -> Frame
    end.

program_frame1({M, F, A, Info}) ->
    case atom_to_list(F) of
        "$mce_ord_" ++ _ ->
            {original_module(M), F, A, Info};
        "$mce_" ++ _ ->
            case info(M, F) of
                {OrigM, OrigF, OrigA, _, _} -> {OrigM, OrigF, OrigA, Info};
                undefined -> {original_module(M), F, A, Info}
            end;
        "-" ++ _ ->
            %% A fun whose compiled name differs from the original's.
            case info(M, {'fun', F}) of
                {OrigM, OrigF, _, _, _} -> {OrigM, OrigF, A, Info};
                undefined -> {original_module(M), F, A, Info}
            end;
        _ ->
            {original_module(M), F, A, Info}
    end.

%% @doc The module a translated module was translated from.
-spec original_module(module()) -> module().
original_module(M) ->
    case atom_to_list(M) of
        "mce$" ++ Orig -> list_to_atom(Orig);
        _ -> M
    end.
