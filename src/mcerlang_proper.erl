%% @doc PropEr's parallel state-machine tests under mcerlang (what McErlang
%% offered with QuickCheck): every interleaving of a generated parallel
%% test case is explored, instead of the one schedule
%% proper_statem:run_parallel_commands/2 happens to run.
%%
%%   prop_parallel() ->
%%       ?FORALL(Cmds, proper_statem:parallel_commands(?MODULE),
%%               begin
%%                   Result = mcerlang_proper:check_parallel(?MODULE, Cmds, #{}),
%%                   ?WHENFAIL(io:put_chars(mcerlang_proper:format(Result)),
%%                             mcerlang_proper:passed(Result))
%%               end).
%%
%% The checked program (mcerlang_proper_run) runs the sequential prefix,
%% then each branch in a process of its own, and ends with the results it
%% saw.  Those results are judged here, on the host, by the model's pure
%% callbacks as PropEr judges them: the prefix's preconditions and
%% postconditions in order, then proper_statem:check/6, PropEr's own
%% search for a sequential interleaving of the branches that satisfies
%% the postconditions.  The judge is a treat_as_normal fun of the entry's
%% exit reason, so an outcome no interleaving explains is an abnormal
%% exit, and its counterexample is the schedule that produced it.
%%
%% PropEr is optional (Debian's erlang-proper): not a dependency of the
%% application nor in the PLT, so its functions are called through
%% proper/3.
%%
%% Invariant: the model module's callbacks run only on the host, and only
%% on results the checked program produced; the system under test runs
%% only in the checked program.
-module(mcerlang_proper).

-export([check_parallel/3, passed/1, format/1]).

-type testcase() :: {[tuple()], [[tuple()]]}.
-export_type([testcase/0]).

%% @doc Explores every interleaving of a parallel test case of the
%% proper_statem model `Mod' (as proper_statem:parallel_commands/1,2 gives
%% it).  {ok, Stats} when every interleaving's results linearize; {error,
%% Counterexample} for one that does not (violation {abnormal_exit, Pid,
%% {mcerlang_proper, SeqResults, ParHistories}}), or any other violation
%% of the check's properties (a branch that crashes, a deadlock).
%% Options are mcerlang:check/2's (progress off unless given); the judge
%% is added to their treat_as_normal.
-spec check_parallel(module(), testcase(), mcerlang:options()) -> mcerlang:result().
check_parallel(Mod, {Seq, Par}, Options)
  when is_atom(Mod), is_list(Seq), is_list(Par) ->
    lists:all(fun is_list/1, Par)
        orelse erlang:error({mcerlang, {bad_parallel_testcase, Mod, {Seq, Par}}}),
    is_map(Options) orelse erlang:error({mcerlang, {bad_options, Options}}),
    {module, Mod} =:= code:ensure_loaded(Mod)
        orelse erlang:error({mcerlang, {undefined_module, Mod}}),
    Normal = maps:get(treat_as_normal, Options, [normal, shutdown]),
    is_list(Normal) orelse erlang:error({mcerlang, {bad_option_value, treat_as_normal, Normal}}),
    Judge = fun(Reason) -> linearizable(Mod, Seq, Reason) end,
    Opts = maps:merge(#{progress => false},
                      Options#{treat_as_normal => Normal ++ [mcerlang_proper_branch_done, Judge]}),
    mcerlang:check({mcerlang_proper_run, main, [Seq, Par]}, Opts);
check_parallel(Mod, Testcase, _Options) ->
    erlang:error({mcerlang, {bad_parallel_testcase, Mod, Testcase}}).

%% @doc Whether a result of check_parallel/3 passes the property.
-spec passed(mcerlang:result()) -> boolean().
passed({ok, _}) -> true;
passed(_) -> false.

%% @doc A result as text: for a violation, what each branch saw first,
%% then the counterexample as mcerlang:format/1 writes it.
-spec format(mcerlang:result()) -> iolist().
format({ok, #{states := States}}) ->
    io_lib:format("every interleaving linearizes (~b states)~n", [States]);
format({inconclusive, Why, _Stats}) ->
    io_lib:format("inconclusive: ~tp~n", [Why]);
format({error, #{violation := {abnormal_exit, _, {mcerlang_proper, SeqResults, Histories}}} = Cex}) ->
    ["No sequential interleaving of the parallel branches satisfies the postconditions.\n",
     io_lib:format("Sequential prefix results: ~tp~n", [SeqResults]),
     [[io_lib:format("Branch ~b:~n", [N]),
       [io_lib:format("  ~ts -> ~tp~n", [call_text(Cmd), Res]) || {Cmd, Res} <- History]]
      || {N, History} <- lists:zip(lists:seq(1, length(Histories)), Histories)],
     "The schedule that produced these results:\n",
     mcerlang:format(Cex)];
format({error, Cex}) ->
    mcerlang:format(Cex).

call_text({set, {var, V}, {call, M, F, A}}) ->
    io_lib:format("~tp = ~tp:~tp(~ts)", [{var, V}, M, F, lists:join(", ", [io_lib:format("~tp", [X]) || X <- A])]).

%%--------------------------------------------------------------------
%% The judge (on the host)
%%--------------------------------------------------------------------

%% Whether the checked program's outcome is one a sequential run of the
%% model allows.  Any other exit reason is not this judge's to excuse.
linearizable(Mod, Seq, {mcerlang_proper, SeqResults, Histories})
  when is_list(SeqResults), is_list(Histories) ->
    State0 = proper(proper_symb, eval, [[], proper(proper_statem, get_initial_state, [Mod, Seq])]),
    case sequential([C || {set, _, _} = C <- Seq], SeqResults, Mod, State0, []) of
        {ok, State, Env} -> proper(proper_statem, check, [Mod, State, Env, false, [], Histories]);
        false -> false
    end;
linearizable(_Mod, _Seq, _Reason) ->
    false.

%% The prefix as proper_statem:run_commands/2 judges it.
sequential([], [], _Mod, State, Env) ->
    {ok, State, Env};
sequential([{set, {var, V}, {call, M, F, A}} | Cmds], [Res | Results], Mod, State, Env) ->
    Call = {call, eval(Env, M), eval(Env, F), eval(Env, A)},
    case Mod:precondition(State, Call) andalso Mod:postcondition(State, Call, Res) of
        true ->
            Env2 = [{V, Res} | Env],
            sequential(Cmds, Results, Mod, eval(Env2, Mod:next_state(State, Res, Call)), Env2);
        false ->
            false
    end.

eval(Env, Term) ->
    proper(proper_symb, eval, [Env, Term]).

proper(Module, Function, Args) ->
    erlang:apply(Module, Function, Args).
