%%% @doc User funs over abstract views: invariants and LTL predicate funs
%%% of a check under abstraction (issue 21), judged three-valued.
%%%
%%% On a view holding abstract values a boolean answer of ordinary Erlang
%%% could be false where a concretisation makes it true (`N =/= 3' on an odd
%%% N), which would prove too much.  So the fun's own code (its module's
%%% forms and captured values, mce_closure:source/1) is run by the abstract
%%% interpreter (mce_abs_eval) over the view, every undecided branch
%%% explored.  Invariant: the answer is `true' (or `false') only when every
%%% outcome of every concretisation is; otherwise, and when the code is not
%%% found or leaves pure computation, `maybe'.
-module(mce_abs_judge).

-export([prepare/1, judge/3]).

%% At most this many machines are run for one judgement.
-define(JUDGE_BUDGET, 10000).

%% @doc What judge/3 needs of the check (the domains, the fun's code),
%% taken in the check's process, for judging in another (a guard's).
-spec prepare(function()) -> {term(), term()}.
prepare(Fun) ->
    {get('$mce_abs_dom'), source(Fun)}.

%% @doc A user fun (an invariant, a predicate of the view) applied to
%% Args under abstraction, anywhere (a guard's process).  On concrete
%% arguments its answer is exact: it is called.  On abstract ones a boolean
%% answer of ordinary Erlang could be false where a concretisation makes it
%% true (`N =/= 3' on an odd N), so the fun's own code is run by this
%% interpreter over the abstract arguments (its module's forms and its
%% captured values, mce_closure:source/1), every undecided branch explored:
%% `true' or `false' when every outcome agrees, else `maybe', also when
%% the code is not found (a shell fun) or leaves pure computation.
-spec judge({term(), term()}, function(), [term()]) -> term().
judge({Dom, Source}, Fun, Args) ->
    case mce_abs_domain:is_concrete(Args) of
        true -> erlang:apply(Fun, Args);
        false ->
            put('$mce_abs_dom', Dom),
            put('$mce_abs_judge_budget', ?JUDGE_BUDGET),
            put('$mce_abs_judge_seen', #{}),
            verdict_of(judge_outcomes(Source, Args))
    end.

%% The fun's code, found once per fun.
source(Fun) ->
    case get({'$mce_abs_source', Fun}) of
        undefined ->
            Source = case erlang:fun_info(Fun, type) of
                         {type, external} ->
                             {module, M} = erlang:fun_info(Fun, module),
                             {name, F} = erlang:fun_info(Fun, name),
                             {external, M, F};
                         {type, local} ->
                             mce_closure:source(Fun)
                     end,
            put({'$mce_abs_source', Fun}, Source),
            Source;
        Source ->
            Source
    end.

judge_outcomes({external, M, F}, Args) ->
    outcomes_of(mce_abs_eval:call_machine(M, F, Args));
judge_outcomes({ok, M, FunExpr, Env}, Args) ->
    outcomes_of(mce_abs_eval:fun_machine(M, FunExpr, Env, Args));
judge_outcomes(error, _Args) ->
    [unknown].

%% Every outcome of a pure computation, its undecided branches all taken,
%% within a budget of branches.  A machine met before is not run again:
%% the outcomes are those of the finite graph of machines, so a walk down
%% a summary list (whose tail may be the summary again) ends; every
%% concrete run is a path in that graph, and each of its machines is run
%% once, so no outcome of one is lost.
outcomes_of(Machine) ->
    Seen = case get('$mce_abs_judge_seen') of
               undefined -> #{};
               S -> S
           end,
    case get('$mce_abs_judge_budget') of
        _ when is_map_key(Machine, Seen) ->
            [];
        N when N > 0 ->
            put('$mce_abs_judge_budget', N - 1),
            put('$mce_abs_judge_seen', Seen#{Machine => true}),
            try mce_abs_eval:resume(Machine) of
                {'$mce_suspend', {'$mce_choice', Alts}, []} ->
                    lists:append([outcomes_of(M) || {mce_abs_eval, resume, [M]} <- Alts]);
                {'$mce_suspend', _, _} -> [unknown];
                V -> [{value, V}]
            catch _:_ -> [unknown]
            end;
        _ ->
            [unknown]
    end.

verdict_of(Outcomes) ->
    case lists:usort(Outcomes) of
        [{value, true}] -> true;
        [{value, false}] -> false;
        _ -> maybe
    end.

