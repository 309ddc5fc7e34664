%% @doc Dead payloads (issue 18): which parts of the message a suspended
%% receive will take no run of the program can observe, so that the C
%% search may store the message with those parts replaced by the atom
%% '$mce_dead' (c_src/dead_payload.c) and merge the states that differ only
%% there.
%%
%% The typical case is a reply nobody reads: `gen_server:call(S, incr)' in
%% a comprehension whose results are dropped.  The reply value sits in the
%% client's mailbox until the client takes it, and which client holds
%% which counter value splits states that no run can tell apart.
%%
%% The analysis is static, over the translated code, and composed along
%% the suspended process's frames, which are known when a step ends:
%%
%%   * the receive's `body' function (mce_translate_gen: `case Msg of
%%     Clauses end') binds each clause's variables; a variable that occurs
%%     once in its pattern, not in the guard, is a candidate;
%%   * the clause's body is interpreted abstractly with each candidate a
%%     *hole*: a value that may be copied, put in tuples and lists and
%%     returned, bound by a variable pattern, and dropped, but not looked at
%%     (matched against anything but a variable, compared, passed to a
%%     function other than the module's own, put into a fun, a map or a
%%     binary);
%%   * the value the clause returns goes to the frames, innermost first,
%%     each interpreted the same way with the value as its argument (a
%%     handler frame gets `{ok, Value}');
%%   * past the last frame the process ends, its value dropped.
%%
%% A hole that is looked at anywhere is no longer a candidate and the
%% clause is analysed again.  The candidates left are dead: replacing them
%% in the message changes no step's effects or control, only the values of
%% variables that end up dropped.
%%
%% Invariant: the descriptor is a function of the receive's generated
%% function and the names of the frames' functions, not of their free
%% variables (a pattern's bound variables are named by their index among
%% the receive's free variables), so it is memoised per check on that key
%% and holds for every continuation of that shape.
%%
%% A receive's `after' does not matter: the search fires a timeout only
%% when no message matches (docs/ARCHITECTURE.md, "Transitions"), so a
%% process with a message its receive takes can do nothing else.
%%
%% The descriptor (decoded by c_src/dead_payload.c): a byte, the number of
%% clauses, then per clause a byte (1: it has a guard) and its pattern:
%%   0 any   1 dead   2 env I (=:= the I-th free variable, one byte)
%%   3 literal (4-byte length, the term's external format without the
%%     version byte)   4 tuple (arity byte, its elements)   5 cons (head,
%%   tail)   6 nil   7 unknown (the C side cannot decide it).
-module(mce_payload).

-export([descriptor/2, dead_clauses/2]).

-define(ANY, 0).
-define(DEAD, 1).
-define(ENV, 2).
-define(LIT, 3).
-define(TUPLE, 4).
-define(CONS, 5).
-define(NIL, 6).
-define(UNKNOWN, 7).

%% How deep local calls are followed, and how many in all per analysis of
%% a clause, before giving up (a hole passed to a deeper call, or past the
%% budget, counts as looked at).
-define(CALL_DEPTH, 12).
-define(CALL_BUDGET, 400).

%% @doc The dead-payload descriptor of a process suspended in `Recv' with
%% `Frames' pending, or `none' when no clause has a dead part.
-spec descriptor(term(), list()) -> none | binary().
descriptor({Mod, Name, FreeVars, _Timeout}, Frames) when is_atom(Mod), is_atom(Name),
                                                         is_list(FreeVars), is_list(Frames) ->
    case frame_keys(Frames, []) of
        error -> none;
        Keys ->
            Key = {'$mce_payload', Mod, Name, length(FreeVars), Keys},
            case get(Key) of
                undefined ->
                    D = try_descriptor(Mod, Name, length(FreeVars), Keys),
                    put(Key, D),
                    D;
                D -> D
            end
    end;
descriptor(_, _) ->
    none.

%% @doc For tests and the docs: per clause of the receive, the variables
%% found dead (`unknown' for a receive the analysis does not cover).
-spec dead_clauses(term(), list()) -> unknown | [[atom()]].
dead_clauses({Mod, Name, FreeVars, _}, Frames) ->
    case frame_keys(Frames, []) of
        error -> unknown;
        Keys ->
            case analyse_receive(Mod, Name, length(FreeVars), Keys) of
                error -> unknown;
                Clauses -> [Dead || {_Pattern, _Guard, Dead} <- Clauses]
            end
    end.

frame_keys([{'$mce_handler', M, H, Env} | Fs], Acc) when is_atom(M), is_atom(H), is_list(Env) ->
    frame_keys(Fs, [{handler, M, H, length(Env)} | Acc]);
frame_keys([{M, K, Env} | Fs], Acc) when is_atom(M), is_atom(K), is_list(Env) ->
    frame_keys(Fs, [{frame, M, K, length(Env)} | Acc]);
frame_keys([], Acc) -> lists:reverse(Acc);
frame_keys(_, _) -> error.

try_descriptor(Mod, Name, NFree, Keys) ->
    case analyse_receive(Mod, Name, NFree, Keys) of
        error -> none;
        Clauses ->
            case lists:any(fun({_, _, Dead}) -> Dead =/= [] end, Clauses) of
                false -> none;
                true -> encode(Clauses)
            end
    end.

%%--------------------------------------------------------------------
%% The receive
%%--------------------------------------------------------------------

%% [{Pattern, Guarded, DeadVars}] per clause, or error.
analyse_receive(Mod, Name, NFree, Keys) ->
    case body_clause(Mod, Name, NFree + 2) of
        {ok, EnvVars, Clauses} ->
            put('$mce_payload_module', Mod),
            try
                [analyse_clause(C, EnvVars, Keys) || C <- Clauses]
            catch
                throw:unsupported -> error
            end;
        error -> error
    end.

%% The receive's body function: '$mce_rN'(body, Msg, Free...) -> case Msg of ... end.
body_clause(Mod, Name, Arity) ->
    case function(Mod, Name, Arity) of
        {ok, Clauses} ->
            case [C || {clause, _, [{atom, _, body} | _], [], _} = C <- Clauses] of
                [{clause, _, [_, {var, _, Msg} | Free], [], [{'case', _, {var, _, Msg}, Cs}]}] ->
                    case lists:all(fun({var, _, V}) -> V =/= '_'; (_) -> false end, Free) of
                        true -> {ok, [V || {var, _, V} <- Free], Cs};
                        false -> error
                    end;
                _ -> error
            end;
        error -> error
    end.

analyse_clause({clause, _, [Pattern], Guard, Body}, EnvVars, Keys) ->
    Counts = var_counts(Pattern, #{}),
    InGuard = vars_in(Guard),
    Candidates = [V || {V, 1} <- maps:to_list(Counts), not lists:member(V, EnvVars),
                       not lists:member(V, InGuard)],
    Dead = dead_among(Candidates, Pattern, Body, EnvVars, Keys),
    {compile_pattern(Pattern, EnvVars, Counts, Dead), Guard =/= [], lists:sort(Dead)};
analyse_clause(_, _, _) ->
    throw(unsupported).

dead_among([], _Pattern, _Body, _EnvVars, _Keys) ->
    [];
dead_among(Candidates, Pattern, Body, EnvVars, Keys) ->
    Env0 = maps:from_list([{V, top} || V <- EnvVars ++ vars_in(Pattern)]),
    Env = maps:merge(Env0, maps:from_list([{V, {hole, V}} || V <- Candidates])),
    put('$mce_payload_candidates', Candidates),
    put('$mce_payload_calls', {?CALL_BUDGET, #{}}),
    try
        {Value, _} = body(Body, Env, ?CALL_DEPTH),
        through_frames(Value, Keys),
        Candidates
    catch
        throw:{looked_at, Holes} ->
            case Candidates -- Holes of
                Candidates -> [];           % not one of ours: give up
                Left -> dead_among(Left, Pattern, Body, EnvVars, Keys)
            end
    end.

through_frames(none, _) -> ok;
through_frames(_Value, []) -> ok;            % the process ends: dropped
through_frames(top, _) -> ok;
through_frames(Value, [{frame, M, K, N} | Keys]) ->
    through_frames(call_local(M, K, [Value | lists:duplicate(N, top)], ?CALL_DEPTH), Keys);
through_frames(Value, [{handler, M, H, N} | Keys]) ->
    Arg = {tuple, [{lit, ok}, Value]},
    through_frames(call_local(M, H, [Arg | lists:duplicate(N, top)], ?CALL_DEPTH), Keys).

%%--------------------------------------------------------------------
%% Abstract interpretation
%%--------------------------------------------------------------------
%% A value: top (anything, no hole inside), {lit, Term}, {tuple, [V]},
%% {cons, V, V}, {hole, Var}; `none': the expression does not return.
%% Looking at a hole throws {looked_at, [Var]}.

body([E], Env, D) ->
    expr(E, Env, D);
body([E | Es], Env, D) ->
    case expr(E, Env, D) of
        {none, _} = None -> None;
        {_, Env1} -> body(Es, Env1, D)
    end.

expr({var, _, '_'}, Env, _D) -> {top, Env};
expr({var, _, V}, Env, _D) ->
    case Env of
        #{V := Value} -> {Value, Env};
        #{} ->
            %% Bound where this walk did not follow (inside a try, a fun):
            %% it may hold a hole.
            throw({looked_at, get('$mce_payload_candidates')})
    end;
expr({nil, _}, Env, _D) -> {{lit, []}, Env};
expr({Lit, _, Val}, Env, _D) when Lit =:= atom; Lit =:= integer; Lit =:= char;
                                  Lit =:= float; Lit =:= string ->
    {{lit, Val}, Env};
expr({tuple, _, Es}, Env, D) ->
    case exprs(Es, Env, D) of
        {none, _} = None -> None;
        {Vs, Env1} -> {{tuple, Vs}, Env1}
    end;
expr({cons, _, H, T}, Env, D) ->
    case exprs([H, T], Env, D) of
        {none, _} = None -> None;
        {[HV, TV], Env1} -> {{cons, HV, TV}, Env1}
    end;
expr({match, _, P, E}, Env, D) ->
    case expr(E, Env, D) of
        {none, _} = None -> None;
        {V, Env1} ->
            case match(P, V, Env1) of
                no -> {none, Env1};
                {_, Env2} -> {V, Env2}
            end
    end;
expr({block, _, Es}, Env, D) ->
    body(Es, Env, D);
expr({'case', _, E, Clauses}, Env, D) ->
    case expr(E, Env, D) of
        {none, _} = None -> None;
        {V, Env1} -> clauses(live_clauses(Clauses), [V], Env1, D)
    end;
expr({'if', _, Clauses}, Env, D) ->
    clauses(Clauses, [], Env, D);
expr({call, _, {atom, _, F}, Args}, Env, D) when F =:= exit; F =:= error; F =:= throw ->
    raise(Args, Env, D);
expr({call, _, {remote, _, {atom, _, erlang}, {atom, _, F}}, Args}, Env, D)
  when F =:= exit; F =:= error; F =:= throw ->
    raise(Args, Env, D);
expr({call, _, {atom, _, F}, Args}, Env, D) ->
    case exprs(Args, Env, D) of
        {none, _} = None -> None;
        {Vs, Env1} -> {call_local(get('$mce_payload_module'), F, Vs, D), Env1}
    end;
expr({call, _, {remote, _, {atom, _, M}, {atom, _, F}}, Args}, Env, D) ->
    case exprs(Args, Env, D) of
        {none, _} = None -> None;
        {Vs, Env1} ->
            case lists:prefix("mce$", atom_to_list(M)) of
                %% Another translated module: followed as a local call.
                true -> {call_local(M, F, Vs, D), Env1};
                false -> lists:foreach(fun not_looked_at/1, Vs), {top, Env1}
            end
    end;
expr({op, _, _, A}, Env, D) ->
    opaque([A], Env, D);
expr({op, _, _, A, B}, Env, D) ->
    opaque([A, B], Env, D);
expr(E, Env, _D) ->
    %% Anything else (funs, try, maps, binaries, comprehensions, calls
    %% through funs): it may look at whatever variable it names.
    [not_looked_at(maps:get(V, Env, top)) || V <- vars_in(E)],
    {top, Env}.

raise(Args, Env, D) ->
    case exprs(Args, Env, D) of
        {none, _} = None -> None;
        {Vs, Env1} -> lists:foreach(fun not_looked_at/1, Vs), {none, Env1}
    end.

opaque(Es, Env, D) ->
    case exprs(Es, Env, D) of
        {none, _} = None -> None;
        {Vs, Env1} -> lists:foreach(fun not_looked_at/1, Vs), {top, Env1}
    end.

exprs(Es, Env, D) ->
    exprs(Es, Env, D, []).

exprs([], Env, _D, Acc) -> {lists:reverse(Acc), Env};
exprs([E | Es], Env, D, Acc) ->
    case expr(E, Env, D) of
        {none, _} = None -> None;
        {V, Env1} -> exprs(Es, Env1, D, [V | Acc])
    end.

%% The generator's pushing of a frame, `case Call of {'$mce_suspend', R,
%% Fs} -> {'$mce_suspend', R, [Frame | Fs]}; X -> k(X, ...) end' (and its
%% handler form): the frame pushed on suspension runs the same function
%% with the same variables as the direct branch, so the direct branch says
%% all there is to say about both.
live_clauses(Clauses) ->
    [C || {clause, _, [P], _, _} = C <- Clauses, not suspension_pattern(P)].

suspension_pattern({tuple, _, [{atom, _, '$mce_suspend'} | _]}) -> true;
suspension_pattern({tuple, _, [{atom, _, '$mce_ok'}, P]}) -> suspension_pattern(P);
suspension_pattern(_) -> false.

%% The clauses that may be taken, each with its body's value, joined; the
%% variables bound by every such clause are bound after them, their values
%% joined.
clauses(Clauses, Values, Env, D) ->
    clauses(Clauses, Values, Env, D, []).

clauses([], _Values, Env, _D, Taken) -> joined(Taken, Env);
clauses([{clause, _, Ps, Guard, Body} | Cs], Values, Env, D, Taken) ->
    case match_all(Ps, Values, Env, yes) of
        no -> clauses(Cs, Values, Env, D, Taken);
        {Sure, Env1} ->
            guard(Guard, Env1),
            Taken1 = [body(Body, Env1, D) | Taken],
            case Sure =:= yes andalso Guard =:= [] of
                true -> joined(Taken1, Env);
                false -> clauses(Cs, Values, Env, D, Taken1)
            end
    end.

joined(Taken, Env) ->
    case [{V, E} || {V, E} <- Taken, V =/= none] of
        [] -> {none, Env};
        [{V0, E0} | Rest] ->
            Value = lists:foldl(fun({V, _}, Acc) -> join(Acc, V) end, V0, Rest),
            New = [K || K <- maps:keys(E0), not is_map_key(K, Env),
                        lists:all(fun({_, E}) -> is_map_key(K, E) end, Rest)],
            Bound = lists:foldl(
                      fun(K, Acc) ->
                              Acc#{K => lists:foldl(fun({_, E}, J) -> join(J, maps:get(K, E)) end,
                                                    maps:get(K, E0), Rest)}
                      end, Env, New),
            {Value, Bound}
    end.

match_all([], [], Env, Sure) -> {Sure, Env};
match_all([P | Ps], [V | Vs], Env, Sure) ->
    case match(P, V, Env) of
        no -> no;
        {S, Env1} -> match_all(Ps, Vs, Env1, both(Sure, S))
    end.

both(yes, yes) -> yes;
both(_, _) -> maybe.

guard(Guard, Env) ->
    [not_looked_at(maps:get(V, Env, top)) || V <- vars_in(Guard)],
    ok.

%% A local call: the function's clauses with the arguments' values.  Past
%% the depth, a hole passed on counts as looked at.
call_local(_M, _F, Args, 0) ->
    lists:foreach(fun not_looked_at/1, Args),
    top;
call_local(M, F, Args, D) ->
    case holes({tuple, Args}, []) =:= [] orelse function(M, F, length(Args)) of
        true ->
            %% No hole goes in, so none comes out and none is looked at.
            top;
        {ok, Clauses} ->
            Key = {M, F, Args},
            {Budget, Memo} = get('$mce_payload_calls'),
            case Memo of
                #{Key := in_progress} ->
                    %% Recursion with a hole: its value is a fixpoint this
                    %% walk does not compute.
                    lists:foreach(fun not_looked_at/1, Args);
                #{Key := Value} ->
                    Value;
                #{} when Budget =< 0 ->
                    lists:foreach(fun not_looked_at/1, Args);
                #{} ->
                    put('$mce_payload_calls', {Budget - 1, Memo#{Key => in_progress}}),
                    Saved = put('$mce_payload_module', M),
                    Value = try
                                element(1, clauses(Clauses, Args, #{}, D - 1))
                            after
                                put('$mce_payload_module', Saved)
                            end,
                    {Left, Memo1} = get('$mce_payload_calls'),
                    put('$mce_payload_calls', {Left, Memo1#{Key => Value}}),
                    Value
            end;
        error ->
            lists:foreach(fun not_looked_at/1, Args),
            top
    end.

%% Matching a pattern against a value: no (it cannot match), or {yes |
%% maybe, Env}.  A hole may only be bound by a variable or skipped by `_'.
match({var, _, '_'}, _V, Env) -> {yes, Env};
match({var, _, X}, V, Env) ->
    case Env of
        #{X := Bound} ->
            not_looked_at(V),
            not_looked_at(Bound),
            {maybe, Env};
        #{} -> {yes, Env#{X => V}}
    end;
match({match, _, P1, P2}, V, Env) ->
    case match(P1, V, Env) of
        no -> no;
        {S1, Env1} ->
            case match(P2, V, Env1) of
                no -> no;
                {S2, Env2} -> {both(S1, S2), Env2}
            end
    end;
match(_P, {hole, X}, _Env) ->
    throw({looked_at, [X]});
match(P, top, Env) ->
    {maybe, bind_top(P, Env)};
match(P, {lit, T}, Env) when is_tuple(T); is_list(T), T =/= [] ->
    match(P, expand_lit(T), Env);
match({tuple, _, Ps}, {tuple, Vs}, Env) when length(Ps) =:= length(Vs) ->
    match_all(Ps, Vs, Env, yes);
match({cons, _, PH, PT}, {cons, VH, VT}, Env) ->
    match_all([PH, PT], [VH, VT], Env, yes);
match({string, L, S}, V, Env) ->
    match(string_pattern(S, L), V, Env);
match({nil, _}, {lit, []}, Env) -> {yes, Env};
match({Lit, _, Val}, {lit, T}, Env) when Lit =:= atom; Lit =:= integer; Lit =:= char ->
    case Val =:= T of
        true -> {yes, Env};
        false -> no
    end;
match({cons, _, _, _}, {tuple, _}, _Env) -> no;
match({Kind, _, _}, {tuple, _}, _Env) when Kind =:= atom; Kind =:= integer; Kind =:= char;
                                           Kind =:= tuple -> no;
match({nil, _}, {tuple, _}, _Env) -> no;
match({Kind, _, _}, {cons, _, _}, _Env) when Kind =:= atom; Kind =:= integer; Kind =:= char;
                                              Kind =:= tuple -> no;
match({nil, _}, {cons, _, _}, _Env) -> no;
match({tuple, _, _}, {lit, _}, _Env) -> no;
match(P, V, Env) ->
    %% Anything else (maps, binaries, operators): it looks at the whole.
    not_looked_at(V),
    {maybe, bind_top(P, Env)}.

%% The variables of a pattern matched against a value with no hole: the
%% new ones bound to top, the bound ones compared.
bind_top(P, Env) ->
    lists:foldl(fun(X, Acc) ->
                        case Acc of
                            #{X := Bound} -> not_looked_at(Bound), Acc;
                            #{} -> Acc#{X => top}
                        end
                end, Env, vars_in(P)).

string_pattern([], L) -> {nil, L};
string_pattern([C | Cs], L) -> {cons, L, {integer, L, C}, string_pattern(Cs, L)}.

%% A literal as the structure matching can walk into.
expand_lit(T) when is_tuple(T) -> {tuple, [{lit, E} || E <- tuple_to_list(T)]};
expand_lit([H | T]) -> {cons, {lit, H}, {lit, T}};
expand_lit(T) -> {lit, T}.

join(none, V) -> V;
join(V, none) -> V;
join(V, V) -> V;
join({tuple, As}, {tuple, Bs}) when length(As) =:= length(Bs) ->
    {tuple, lists:zipwith(fun join/2, As, Bs)};
join({cons, AH, AT}, {cons, BH, BT}) ->
    {cons, join(AH, BH), join(AT, BT)};
join({lit, T}, V) when is_tuple(T); is_list(T), T =/= [] -> join(expand_lit(T), V);
join(V, {lit, T}) when is_tuple(T); is_list(T), T =/= [] -> join(V, expand_lit(T));
join(A, B) ->
    %% Two different shapes: the hole's place is no longer known.
    not_looked_at(A),
    not_looked_at(B),
    top.

not_looked_at(V) ->
    case holes(V, []) of
        [] -> ok;
        Holes -> throw({looked_at, Holes})
    end.

holes({hole, X}, Acc) -> [X | Acc];
holes({tuple, Vs}, Acc) -> lists:foldl(fun holes/2, Acc, Vs);
holes({cons, H, T}, Acc) -> holes(T, holes(H, Acc));
holes(_, Acc) -> Acc.

%%--------------------------------------------------------------------
%% Forms
%%--------------------------------------------------------------------

%% The clauses of a function of a translated module ('mce$M'), from the
%% translation's forms: memoised per check (a translation does not change
%% during one) and per VM under the translation's MD5, since decoding the
%% forms of an OTP behaviour costs milliseconds, a check's worth of steps.
function(TrMod, F, A) ->
    case module_functions(TrMod) of
        #{{F, A} := Clauses} -> {ok, Clauses};
        _ -> error
    end.

module_functions(TrMod) ->
    Key = {'$mce_payload_forms', TrMod},
    case get(Key) of
        undefined ->
            Funs = shared_functions(TrMod),
            put(Key, Funs),
            Funs;
        Funs -> Funs
    end.

shared_functions(TrMod) ->
    MD5 = try TrMod:module_info(md5)
          catch error:undef -> undefined
          end,
    case persistent_term:get({?MODULE, TrMod}, none) of
        {MD5, Funs} when MD5 =/= undefined ->
            Funs;
        _ ->
            Funs = case forms(TrMod) of
                       {ok, Forms} ->
                           maps:from_list([{{F, A}, Cs} || {function, _, F, A, Cs} <- Forms]);
                       error -> #{}
                   end,
            MD5 =/= undefined andalso Funs =/= #{} andalso
                persistent_term:put({?MODULE, TrMod}, {MD5, Funs}),
            Funs
    end.

forms(TrMod) ->
    case atom_to_list(TrMod) of
        "mce$" ++ Orig ->
            try mce_translate:translated_forms(list_to_existing_atom(Orig))
            catch error:badarg -> error
            end;
        _ -> error
    end.

%%--------------------------------------------------------------------
%% Patterns for the C side
%%--------------------------------------------------------------------

var_counts({var, _, '_'}, Acc) -> Acc;
var_counts({var, _, V}, Acc) -> maps:update_with(V, fun(N) -> N + 1 end, 1, Acc);
var_counts(T, Acc) when is_tuple(T) -> var_counts(tuple_to_list(T), Acc);
var_counts([H | T], Acc) -> var_counts(T, var_counts(H, Acc));
var_counts(_, Acc) -> Acc.

vars_in(T) -> lists:usort(maps:keys(var_counts(T, #{}))).

encode(Clauses) ->
    iolist_to_binary([length(Clauses) |
                      [[case Guarded of true -> 1; false -> 0 end, Pattern]
                       || {Pattern, Guarded, _Dead} <- Clauses]]).

compile_pattern({var, _, '_'}, _EnvVars, _Counts, _Dead) ->
    ?ANY;
compile_pattern({var, _, V}, EnvVars, Counts, Dead) ->
    case index_of(V, EnvVars, 0) of
        I when I < 256 -> [?ENV, I];
        none ->
            case {maps:get(V, Counts), lists:member(V, Dead)} of
                {1, true} -> ?DEAD;
                {1, false} -> ?ANY;
                _ -> ?UNKNOWN       % a repeated variable: an equality test
            end;
        _ -> ?UNKNOWN
    end;
compile_pattern({tuple, _, Ps}, EnvVars, Counts, Dead) when length(Ps) < 256 ->
    [?TUPLE, length(Ps) | [compile_pattern(P, EnvVars, Counts, Dead) || P <- Ps]];
compile_pattern({cons, _, H, T}, EnvVars, Counts, Dead) ->
    [?CONS, compile_pattern(H, EnvVars, Counts, Dead), compile_pattern(T, EnvVars, Counts, Dead)];
compile_pattern({nil, _}, _EnvVars, _Counts, _Dead) ->
    ?NIL;
compile_pattern(P, _EnvVars, _Counts, _Dead) ->
    case vars_in(P) of
        [] ->
            try erl_parse:normalise(P) of
                Term ->
                    <<131, Ext/binary>> = term_to_binary(Term),
                    [?LIT, <<(byte_size(Ext)):32>>, Ext]
            catch
                _:_ -> ?UNKNOWN
            end;
        _ -> ?UNKNOWN
    end.

index_of(_, [], _) -> none;
index_of(V, [V | _], I) -> I;
index_of(V, [_ | Vs], I) -> index_of(V, Vs, I + 1).
