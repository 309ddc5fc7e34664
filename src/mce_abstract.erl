%%% @doc A check under an over-approximating abstraction (`abstraction =>
%%% Spec', issue 21), and its three-valued verdict.
%%%
%%% The program runs in the abstract interpreter (mce_abs_eval) over the
%%% domains of `Spec' (mce_abs_domain), through the same C search as a
%%% concrete check.  Every concrete run is a run of the abstract system
%%% (papers 000_252f033da8c97ae1.txt and 003_7dd3bcd1accd73d3.txt: the
%%% abstract operational semantics includes every path of the standard
%%% one), so:
%%%   - no violation in the abstract system proves the property for every
%%%     concretisation: `{ok, Stats}';
%%%   - a violation may be one of the abstraction only.  It is checked
%%%     concretely: the same program and properties, without the
%%%     abstraction, searched breadth-first within a budget (at most
%%%     ?REPLAY_STATES states and ?REPLAY_TIME ms, or the user's smaller
%%%     limits).  A concrete violation found is a real counterexample,
%%%     `{error, Cex}', that `replay/1' replays; otherwise the abstract one
%%%     is `{inconclusive, {possibly_spurious, AbstractCex}, Stats}'.
%%% Reductions are off (their independence arguments are about concrete
%%% steps), and so is symmetry.
-module(mce_abstract).

-export([check/3, initial_call/1, readable/1, confirm/4]).

-define(REPLAY_STATES, 200000).
-define(REPLAY_TIME, 20000).

%% @doc The check of `Entry' under `abstraction' (set in `Opts').
-spec check(mcerlang:entry(), mcerlang:options() | [{atom(), term()}], map()) ->
          mcerlang:result().
check(Entry, Options, #{abstraction := Spec} = Opts0) ->
    Started = erlang:monotonic_time(millisecond),
    InitCall = initial_call(Entry),
    Opts = Opts0#{symmetry => {off, abstraction}},
    case mcerlang:isolated(fun() -> mce_search:run(InitCall, Opts) end, Opts) of
        {ok, Stats} ->
            {ok, Stats#{abstraction => Spec}};
        {inconclusive, Reason, Stats} ->
            {inconclusive, Reason, Stats#{abstraction => Spec}};
        {error, Cex} ->
            %% The user's max_time covers the abstract search and the
            %% concrete one together.
            Left = case maps:get(max_time, Opts0) of
                       infinity -> infinity;
                       Ms -> max(0, Ms - (erlang:monotonic_time(millisecond) - Started))
                   end,
            confirm(Entry, Options, Opts0#{max_time => Left}, Cex)
    end.

%% @doc An abstract violation (of check/3, or of simulate/2 under
%% abstraction) checked on the real values: `{error, ConcreteCex}' or
%% `{inconclusive, {possibly_spurious, AbstractCex}, Stats}'.
-spec confirm(mcerlang:entry(), mcerlang:options() | [{atom(), term()}], map(), map()) ->
          mcerlang:result().
confirm(Entry, Options, Opts, Cex) ->
    Abstract = readable(Cex#{entry => Entry, options => given(Options)}),
    concrete_replay(Entry, Options, Opts, Abstract).

%% @doc The initial call of `Entry' under abstraction: the interpreter's
%% machine for it (replay/1, simulate/2 and the debugger start from it).
-spec initial_call(mcerlang:entry()) -> {module(), atom(), [term()]}.
initial_call(Entry) ->
    {M, F, Args} = abstract_entry(Entry),
    mce_abs_eval:entry(M, F, Args).

%% The entry as a call the interpreter can start (checked as every entry
%% is, mcerlang:entry_call/1): the abstract mode reads the program's
%% forms, so a closure compiled elsewhere is not one.
abstract_entry(Entry) ->
    case mcerlang:entry_call(Entry) of
        {closure, Fun} ->
            erlang:error({mcerlang, {bad_entry, Fun,
                                     "with abstraction, the entry is {Module, Function, Args} or fun M:F/0"}});
        Call ->
            Call
    end.

%% @doc The interpreter's initial calls `{mce_abs_eval, start, [Machine]}'
%% in an abstract counterexample (or one of its steps), shown as the
%% program's calls.
-spec readable(T) -> T.
readable({mce_abs_eval, start, [Machine]}) ->
    mce_abs_eval:origin(Machine);
readable(T) when is_map(T) ->
    maps:map(fun(_, V) -> readable(V) end, T);
readable([H | T]) ->
    [readable(H) | readable(T)];
readable(T) when is_tuple(T) ->
    list_to_tuple(readable(tuple_to_list(T)));
readable(T) ->
    T.

given(Options) when is_map(Options) -> Options;
given(Options) when is_list(Options) -> maps:from_list(lists:reverse(Options)).

%% The abstract counterexample, checked on the real values.
concrete_replay(Entry, Options, Opts, Abstract) ->
    Given = maps:remove(abstraction, given(Options)),
    Budget = Given#{max_states => budget(maps:get(max_states, Opts), ?REPLAY_STATES),
                    max_time => case maps:get(max_time, Opts) of
                                    infinity -> ?REPLAY_TIME;
                                    Ms -> min(Ms, ?REPLAY_TIME)
                                end,
                    progress => false},
    %% Breadth-first finds the short violations of an infinite program; the
    %% LTL search and the lossy tables are depth-first.
    Concrete = case maps:get(ltl, Opts) =:= none andalso maps:get(table, Opts) =:= exact of
                   true -> Budget#{shortest => true};
                   false -> Budget
               end,
    Outcome = case maps:get(max_time, Concrete) of
                  0 -> {not_replayed, max_time};
                  _ ->
                      try mcerlang:check(Entry, Concrete)
                      catch error:{mcerlang, NotReplayed} -> {not_replayed, NotReplayed}
                      end
              end,
    #{stats := AbsStats} = Abstract,
    Spec = maps:get(abstraction, Opts),
    case Outcome of
        {inconclusive, stopped, _} ->
            %% mcerlang:stop/1 during the concrete search stops the check.
            {inconclusive, stopped, AbsStats#{abstraction => Spec}};
        {error, Cex} ->
            {error, Cex#{abstract_counterexample => Abstract}};
        {ok, _} ->
            {inconclusive, {possibly_spurious, Abstract},
             AbsStats#{abstraction => Spec, concrete_replay => no_violation}};
        {inconclusive, Reason, _} ->
            {inconclusive, {possibly_spurious, Abstract},
             AbsStats#{abstraction => Spec, concrete_replay => {inconclusive, Reason}}};
        {not_replayed, Reason} ->
            {inconclusive, {possibly_spurious, Abstract},
             AbsStats#{abstraction => Spec, concrete_replay => {not_replayed, Reason}}}
    end.

%% The user's limit if smaller (0: none).
budget(0, Default) -> Default;
budget(N, Default) -> min(N, Default).
