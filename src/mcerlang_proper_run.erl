%% @doc The checked program of mcerlang_proper:check_parallel/3: runs one
%% parallel test case of a proper_statem model as PropEr's
%% run_parallel_commands/2 does, but as code the checker translates, so
%% that every interleaving of the branches is explored.
%%
%% The entry process runs the sequential prefix, then spawns one process
%% per branch, collects each branch's history, and ends with the exit
%% reason {mcerlang_proper, SeqResults, ParHistories}: the results of
%% the prefix's calls in order, and each branch's [{Command, Result}] as
%% proper_statem:execute/3 gives them.  Whether that outcome is correct
%% (some sequential interleaving satisfies the postconditions) is decided
%% on the host by mcerlang_proper's treat_as_normal fun: the model's
%% callbacks never run in here.
%%
%% The test's processes end with it: a branch, its history sent, exits
%% with the reason mcerlang_proper_branch_done (normal for the check), so
%% that, like the entry's, its exit signal ends the processes the calls
%% linked to it (start_link); they are not left idle, which would be a
%% deadlock.  A branch that crashes is an abnormal exit, as in PropEr.
%%
%% Invariant: only the system under test's calls (and the symbolic calls
%% PropEr puts in arguments) run in the checked program; nothing here
%% calls PropEr.
-module(mcerlang_proper_run).

-export([main/2]).

%% @doc The entry: Seq and Par as proper_statem:parallel_commands/1,2
%% generated them.
-spec main([tuple()], [[tuple()]]) -> no_return().
main(Seq, Par) ->
    {SeqResults, Env} = sequential(Seq, [], []),
    Self = self(),
    Branches = [spawn(fun() ->
                              Self ! {self(), branch(Cmds, Env)},
                              exit(mcerlang_proper_branch_done)
                      end) || Cmds <- Par],
    Histories = [receive {B, History} -> History end || B <- Branches],
    exit({mcerlang_proper, SeqResults, Histories}).

sequential([], Results, Env) ->
    {lists:reverse(Results), Env};
sequential([{init, _} | Rest], Results, Env) ->
    sequential(Rest, Results, Env);
sequential([{set, {var, V}, Call} | Rest], Results, Env) ->
    Res = call(Call, Env),
    sequential(Rest, [Res | Results], [{V, Res} | Env]).

branch([], _Env) ->
    [];
branch([{set, {var, V}, Call} = Cmd | Rest], Env) ->
    Res = call(Call, Env),
    [{Cmd, Res} | branch(Rest, [{V, Res} | Env])].

call({call, M, F, A}, Env) ->
    erlang:apply(eval(M, Env), eval(F, Env), eval(A, Env)).

%% proper_symb:eval/2: symbolic variables replaced by their values,
%% symbolic calls made (inner ones first).
eval({var, V}, Env) when is_atom(V); is_integer(V) ->
    case lists:keyfind(V, 1, Env) of
        {V, Value} -> Value;
        false -> {var, V}
    end;
eval({call, M, F, A}, Env) ->
    erlang:apply(eval(M, Env), eval(F, Env), eval(A, Env));
eval(Tuple, Env) when is_tuple(Tuple) ->
    list_to_tuple(eval(tuple_to_list(Tuple), Env));
eval([H | T], Env) ->
    [eval(H, Env) | eval(T, Env)];
eval(Other, _Env) ->
    Other.
