%% @doc The abstract domains of abstract mode (issue 21): values, their
%% abstraction, order, join, and the abstract behaviour of arithmetic,
%% comparisons, type tests, matching and the BIFs the interpreter
%% (`mce_abs_eval') needs.  Pure: no processes, no NIF.
%%
%% An abstract value is an ordinary Erlang term in which some subterms are
%% abstract leaves `{'$mce_abs', L}':
%%   any                         every term ("?")
%%   int                         every integer (the top of every integer domain)
%%   even | odd                  domain even_odd (Huch, papers/003 section 2)
%%   neg | pos | nonpos | nonneg domain sign, Huch's refined sign domain (b)
%%                               (003 section 6): alpha(0) = 0 exactly, so that
%%                               nonpos and nonneg overlap only in the value 0
%%   {list, N, E}                domain {chain, M}: a proper list of at least N
%%                               elements, each described by E (Katoen, Noll and
%%                               Rieger's summary nodes, papers/001 section 3)
%%
%% Invariants of the canonical form (alpha/2 returns it; the C store hashes
%% abstract states, so equal abstract values must be equal terms):
%%   - no integer outside an integer leaf except where the domain keeps it
%%     exact (no integer domain: every integer; sign: 0);
%%   - under {chain, M} no proper list is longer than M+3: longer ones are a
%%     summary {list, M+4, E}; a summary never follows a concrete prefix
%%     ([X | Summary] is folded into the summary) and N =< M+4 always.  alpha
%%     makes only N = M+4; join/3 may make a smaller N (the join of lists of
%%     different lengths, "at least the shorter length"), which is still the
%%     least upper bound in this domain;
%%   - under {depth, K} no constructor (tuple, list, map, summary) sits at
%%     depth > K (the whole term is depth 1; a list is one constructor whose
%%     elements are one level down): a cut proper list is
%%     {list, 0, any} ("some proper list"), anything else cut is `any'.
%%     Atomic terms are never cut.
%% Maps: their values are abstracted, their keys stay as they are.
%% `int' exists in every domain (without an integer domain it is what a join
%% of two integers or an integer operator on `any' gives); floats stay
%% concrete, and an arithmetic result that may be a float is `any'.
%% Without a chain domain, lists of different lengths join cell by cell
%% ([a] and [a, a] give [a | ?]), which is below `any'.
%%
%% The order: leq(A, B) is Huch's A ⊑ B, "B is at least as precise as A"
%% (every concretisation of B is one of A).  Concrete terms are the most
%% precise elements.  satisfies/3 and refutes/3 are 003's Lemma 6.
-module(mce_abs_domain).

-export([new/1, spec/1, finite/1, alpha/2, arith/3, compare/4, type_test/3,
         match_literal/3, as_tuple/3, as_cons/2, as_nil/2, bif/3, join/3,
         leq/3, meet_exists/3, satisfies/3, refutes/3, is_concrete/1,
         format/1]).

-export_type([dom/0, value/0, outcome/0, tri/0, spec_elem/0]).

-define(ABS(L), {'$mce_abs', L}).
-define(ANY, {'$mce_abs', any}).
%% In guards, after is_tuple/1.
-define(is_leaf(T), (tuple_size(T) =:= 2 andalso element(1, T) =:= '$mce_abs')).

-type spec_elem() :: even_odd | sign | {depth, pos_integer()} | {chain, non_neg_integer()}.
-type value() :: term().
-type tri() :: true | false | maybe.
-type outcome() :: {value, value()} | {error, term()}.

-record(dom, {int = none :: none | even_odd | sign,
              depth = infinity :: pos_integer() | infinity,
              chain = none :: none | non_neg_integer(),
              spec = [] :: [spec_elem()]}).
%% An explicitly given finite domain (AC-24): for each element, every
%% element at least as precise as it (the reflexive-transitive closure).
-record(finite, {order = [] :: [{term(), term()}],
                 up = #{} :: #{term() => [term()]}}).

-opaque dom() :: #dom{} | #finite{}.

%% An integer set as the integer leaves see it: a parity and an interval.
%% Every integer leaf and every concrete integer is one exactly, so the
%% arithmetic below computes on these and maps the result back with
%% from_desc/2 (the best leaf of the domain that covers it).
-type ext() :: integer() | ninf | pinf.
-type parity() :: even | odd | any.
-type desc() :: {parity(), ext(), ext()}.

%%====================================================================
%% Domains
%%====================================================================

%% Spec is checked here (it comes from the user: `abstraction => Spec`).
-spec new(spec_elem() | [spec_elem()] | term()) -> {ok, dom()} | {error, {bad_abstraction, term()}}.
new(Spec) when is_list(Spec) -> build(Spec, #dom{}, []);
new(Elem) -> new([Elem]).

build([], D, Seen) -> {ok, D#dom{spec = lists:reverse(Seen)}};
build([E | Es], D, Seen) ->
    case set_elem(E, D) of
        {ok, D1} -> build(Es, D1, [E | Seen]);
        error -> {error, {bad_abstraction, E}}
    end;
build(Tail, _D, _Seen) -> {error, {bad_abstraction, Tail}}.

%% A second element of a kind (two integer domains, two depths, a duplicate)
%% is refused: which one was meant is not ours to guess.
set_elem(I, #dom{int = none} = D) when I =:= even_odd; I =:= sign -> {ok, D#dom{int = I}};
set_elem({depth, K}, #dom{depth = infinity} = D) when is_integer(K), K >= 1 -> {ok, D#dom{depth = K}};
set_elem({chain, M}, #dom{chain = none} = D) when is_integer(M), M >= 0 -> {ok, D#dom{chain = M}};
set_elem(_, _) -> error.

-spec spec(dom()) -> list().
spec(#dom{spec = S}) -> S;
spec(#finite{order = O}) -> [{finite, O}].

%% A finite domain given by its order: pairs {Less, More}, More the more
%% precise.  Only leq/meet_exists/satisfies/refutes (and join) use it: it
%% exists to state 003's incompleteness examples (AC-24).
-spec finite([{term(), term()}]) -> dom().
finite(Order) ->
    Elems = lists:usort(lists:append([[A, B] || {A, B} <- Order])),
    Succ = fun(X) -> [M || {L, M} <- Order, L =:= X] end,
    Up = maps:from_list([{E, reach([E], Succ, [])} || E <- Elems]),
    #finite{order = Order, up = Up}.

reach([], _Succ, Seen) -> lists:usort(Seen);
reach([X | Xs], Succ, Seen) ->
    case lists:member(X, Seen) of
        true -> reach(Xs, Succ, Seen);
        false -> reach(Succ(X) ++ Xs, Succ, [X | Seen])
    end.

up(#finite{up = Up}, X) -> maps:get(X, Up, [X]).

%%====================================================================
%% Abstraction
%%====================================================================

%% Integers to the integer domain, long lists to chain summaries, then the
%% depth cut (so a summary counts as one constructor).  Idempotent.
-spec alpha(dom(), term()) -> value().
alpha(#finite{}, T) -> T;
alpha(#dom{depth = K} = D, T) -> cut(shape(D, T), 1, K).

shape(D, I) when is_integer(I) -> from_desc(D, {parity(I), I, I});
shape(_D, ?ANY) -> ?ANY;
shape(D, ?ABS({list, N, E})) when is_integer(N), N >= 0 -> summary(D, N, shape(D, E));
shape(D, ?ABS(L) = V) ->
    case leaf_desc(L) of
        {ok, Desc} -> from_desc(D, Desc);
        error -> error({mce_abs_domain, {bad_value, V}})
    end;
shape(D, [C | _] = L) when is_integer(C), C >= $\t ->
    %% Text (a format, a name, a message) stays text: keeping exact values
    %% is sound, and a program's literals are finitely many.
    case io_lib:printable_unicode_list(L) of
        true -> L;
        false -> shape_cells(D, L)
    end;
shape(D, [_ | _] = L) ->
    shape_cells(D, L);
shape(D, T) when is_tuple(T) -> list_to_tuple([shape(D, E) || E <- tuple_to_list(T)]);
shape(D, M) when is_map(M) -> maps:map(fun(_, V) -> shape(D, V) end, M);
shape(_D, T) -> T.

shape_cells(D, L) ->
    {Elems, Tail} = spine(L),
    Es = [shape(D, E) || E <- Elems],
    case {shape(D, Tail), D#dom.chain} of
        {[], M} when M =/= none, length(Es) > M + 3 -> summary(D, M + 4, join_all(D, Es));
        %% Cells before "some proper list" (a depth cut) stay cells.
        {?ABS({list, N, _}) = S, C} when N =:= 0; C =:= none -> Es ++ S;
        {?ABS({list, N, E}), _} -> summary(D, N + length(Es), join_all(D, [E | Es]));
        {T, _} -> Es ++ T
    end.

%% The summary a chain domain keeps for "at least N elements, each E":
%% N capped at M+4 (less precise, still sound); without a chain domain
%% the only summary is "some proper list", which the depth cut makes of
%% a cut list (cut/3).
summary(#dom{chain = none}, _N, _E) -> ?ABS({list, 0, ?ANY});
summary(#dom{chain = M}, N, E) -> ?ABS({list, min(N, M + 4), E}).

%% The cons cells of a list and what ends it.
spine(L) -> spine(L, []).
spine([H | T], Acc) -> spine(T, [H | Acc]);
spine(T, Acc) -> {lists:reverse(Acc), T}.

cut(T, _Dep, infinity) -> T;
cut(?ABS({list, N, E}), Dep, K) when Dep =< K -> ?ABS({list, N, cut(E, Dep + 1, K)});
cut(?ABS({list, _, _}), _Dep, _K) -> ?ABS({list, 0, ?ANY});
cut(?ABS(_) = Leaf, _Dep, _K) -> Leaf;
cut([_ | _] = T, Dep, K) when Dep > K ->
    %% A cut proper list stays a list (of any length and elements): a
    %% program that walks a list to its end must not see a "maybe not a
    %% list" tail its clauses never meet concretely.
    case proper_shape(T) of
        true -> ?ABS({list, 0, ?ANY});
        false -> ?ANY
    end;
cut([_ | _] = T, Dep, K) ->
    %% A list is one constructor: its elements are one level down, however
    %% long it is.  The depth cut bounds nesting; the length of a list is
    %% the chain domain's (with the cut over the cells a walk down a cut
    %% list could go on forever in the abstract system: Huch's database,
    %% paper 003 section 9, whose list the keys bound, would not be proved).
    {Elems, Tail} = spine(T),
    [cut(E, Dep + 1, K) || E <- Elems] ++ cut_tail(Tail, Dep, K);
cut(T, Dep, K) when Dep > K, (is_tuple(T) orelse is_map(T)) -> ?ANY;
cut(T, Dep, K) when is_tuple(T) -> list_to_tuple([cut(E, Dep + 1, K) || E <- tuple_to_list(T)]);
cut(M, Dep, K) when is_map(M) -> maps:map(fun(_, V) -> cut(V, Dep + 1, K) end, M);
cut(T, _Dep, _K) -> T.

cut_tail([], _Dep, _K) -> [];
cut_tail(?ABS({list, _, _}) = S, Dep, K) -> cut(S, Dep, K);
cut_tail(T, Dep, K) -> cut(T, Dep + 1, K).

%% A proper list, or cells ending in a list summary.
proper_shape([]) -> true;
proper_shape([_ | T]) -> proper_shape(T);
proper_shape(?ABS({list, _, _})) -> true;
proper_shape(_) -> false.

-spec is_concrete(term()) -> boolean().
is_concrete(?ABS(_)) -> false;
is_concrete([H | T]) -> is_concrete(H) andalso is_concrete(T);
is_concrete(T) when is_tuple(T) -> lists:all(fun is_concrete/1, tuple_to_list(T));
is_concrete(M) when is_map(M) -> lists:all(fun is_concrete/1, maps:values(M));
is_concrete(_) -> true.

%%====================================================================
%% Integer descriptors
%%====================================================================

leaf_desc(int) -> {ok, {any, ninf, pinf}};
leaf_desc(even) -> {ok, {even, ninf, pinf}};
leaf_desc(odd) -> {ok, {odd, ninf, pinf}};
leaf_desc(neg) -> {ok, {any, ninf, -1}};
leaf_desc(pos) -> {ok, {any, 1, pinf}};
leaf_desc(nonpos) -> {ok, {any, ninf, 0}};
leaf_desc(nonneg) -> {ok, {any, 0, pinf}};
leaf_desc(_) -> error.

parity(I) when I rem 2 =:= 0 -> even;
parity(_) -> odd.

%% The integer-ness of a value: an integer set, a float, `any' (which may
%% be an integer or not), or surely no number.
kind(I) when is_integer(I) -> {int, {parity(I), I, I}};
kind(F) when is_float(F) -> {float, F};
kind(?ANY) -> any;
kind(?ABS(L)) ->
    case leaf_desc(L) of
        {ok, Desc} -> {int, Desc};
        error -> nonnum
    end;
kind(_) -> nonnum.

%% The most precise value of the domain covering an integer set.
-spec from_desc(#dom{}, desc()) -> value().
from_desc(#dom{int = none}, {_, I, I}) when is_integer(I) -> I;
from_desc(#dom{int = sign}, {_, 0, 0}) -> 0;
from_desc(#dom{int = even_odd}, {_, I, I}) when is_integer(I) -> ?ABS(parity(I));
from_desc(#dom{int = none}, _) -> ?ABS(int);
from_desc(#dom{int = even_odd}, {P, _, _}) ->
    case P of
        even -> ?ABS(even);
        odd -> ?ABS(odd);
        any -> ?ABS(int)
    end;
from_desc(#dom{int = sign}, {_, L, H}) ->
    if_sign(L, H).

if_sign(L, H) ->
    case {ge(L, 1), le(H, -1), ge(L, 0), le(H, 0)} of
        {true, _, _, _} -> ?ABS(pos);
        {_, true, _, _} -> ?ABS(neg);
        {_, _, true, _} -> ?ABS(nonneg);
        {_, _, _, true} -> ?ABS(nonpos);
        _ -> ?ABS(int)
    end.

%% Extended integers.
le(ninf, _) -> true;
le(_, pinf) -> true;
le(pinf, _) -> false;
le(_, ninf) -> false;
le(A, B) -> A =< B.
ge(A, B) -> le(B, A).
lt(A, B) -> not le(B, A).
emin(A, B) -> case le(A, B) of true -> A; false -> B end.
emax(A, B) -> case le(A, B) of true -> B; false -> A end.
add(ninf, _) -> ninf;
add(_, ninf) -> ninf;
add(pinf, _) -> pinf;
add(_, pinf) -> pinf;
add(A, B) -> A + B.
eneg(ninf) -> pinf;
eneg(pinf) -> ninf;
eneg(A) -> -A.
mul(0, _) -> 0;
mul(_, 0) -> 0;
mul(A, B) when is_integer(A), is_integer(B) -> A * B;
mul(A, B) ->
    case (lt(A, 0)) =:= (lt(B, 0)) of
        true -> pinf;
        false -> ninf
    end.
eabs(X) -> emax(X, eneg(X)).

in_desc(I, {P, L, H}) -> (P =:= any orelse P =:= parity(I)) andalso le(L, I) andalso le(I, H).

%% Whether two integer sets share an integer.
desc_meet({P1, L1, H1}, {P2, L2, H2}) ->
    L = emax(L1, L2),
    H = emin(H1, H2),
    Par = if P1 =:= any -> P2; P2 =:= any -> P1; P1 =:= P2 -> P1; true -> none end,
    case Par =/= none andalso le(L, H) of
        false -> false;
        true when L =:= H -> in_desc(L, {Par, L, H});
        true -> true                            % two or more integers: both parities
    end.

%% Desc2 ⊆ Desc1 ("Desc2 at least as precise").
desc_sub({P1, L1, H1}, {P2, L2, H2}) ->
    case {L2, H2} of
        {I, I} when is_integer(I) -> in_desc(I, {P1, L1, H1});
        _ -> (P1 =:= any orelse P1 =:= P2) andalso le(L1, L2) andalso le(H2, H1)
    end.

desc_join({P1, L1, H1}, {P2, L2, H2}) ->
    {par_join(P1, P2), emin(L1, L2), emax(H1, H2)}.

par_join(P, P) -> P;
par_join(_, _) -> any.

hull([{L, H} | Rs]) -> lists:foldl(fun({L1, H1}, {La, Ha}) -> {emin(L1, La), emax(H1, Ha)} end, {L, H}, Rs).

%% The nonnegative and the negative part of an interval.
parts({_, L, H}) ->
    [{nn, emax(L, 0), H} || ge(H, 0)] ++ [{ng, L, emin(H, -1)} || le(L, -1)].

%%====================================================================
%% Arithmetic
%%====================================================================

-spec arith(dom(), atom(), [value()]) -> [outcome()].
arith(D, Op, Args) ->
    valid_op(Op, length(Args)) orelse error({mce_abs_domain, {bad_op, Op, length(Args)}}),
    case lists:all(fun is_concrete/1, Args) of
        true ->
            try apply_op(Op, Args) of
                V -> [{value, alpha(D, V)}]
            catch error:Reason -> [{error, Reason}]
            end;
        false -> abs_arith(D, Op, [kind(A) || A <- Args])
    end.

valid_op(Op, 2) -> lists:member(Op, ['+', '-', '*', 'div', 'rem', '/', 'band', 'bor', 'bxor', 'bsl', 'bsr']);
valid_op(Op, 1) -> lists:member(Op, ['-', '+', 'bnot']);
valid_op(_, _) -> false.

%% Every operator is a BIF of module erlang ('+'/2, 'div'/2, 'bnot'/1, ...).
apply_op(Op, Args) -> erlang:apply(erlang, Op, Args).

-define(TOP, {any, ninf, pinf}).

abs_arith(D, Op, Kinds) ->
    NumOp = lists:member(Op, ['+', '-', '*', '/']),
    case lists:member(nonnum, Kinds) of
        true -> [{error, badarith}];
        false when NumOp -> num_arith(D, Op, Kinds);
        false ->
            %% Integer-only operators: a float raises, `any' may be an
            %% integer (then it is every integer) or raise.
            case lists:any(fun(K) -> element(1, K) =:= float end, [K || K <- Kinds, K =/= any]) of
                true -> [{error, badarith}];
                false ->
                    Descs = [case K of any -> ?TOP; {int, Ds} -> Ds end || K <- Kinds],
                    Err = [{error, badarith} || lists:member(any, Kinds)],
                    dedup(int_op(D, Op, Descs) ++ Err)
            end
    end.

num_arith(D, Op, Kinds) ->
    Err = [{error, badarith} || lists:member(any, Kinds)],
    AllInt = lists:all(fun(K) -> is_tuple(K) andalso element(1, K) =:= int end, Kinds),
    case Op of
        '/' ->
            %% A float: no float abstraction, so `any'; division by zero
            %% (0 or 0.0) raises.
            [_, Y] = Kinds,
            Zero = case Y of
                       any -> true;
                       {int, Dy} -> in_desc(0, Dy);
                       {float, F} -> F == 0
                   end,
            dedup([{value, ?ANY}] ++ [{error, badarith} || Zero] ++ Err);
        _ when AllInt -> int_op(D, Op, [Ds || {int, Ds} <- Kinds]);
        _ -> dedup([{value, ?ANY} | Err])     % a float may result
    end.

int_op(D, Op, Descs) ->
    [{value, from_desc(D, R)} || R <- int_desc(Op, Descs)] ++ int_errors(Op, Descs).

int_errors(Op, [_, Y]) when Op =:= 'div'; Op =:= 'rem' ->
    [{error, badarith} || in_desc(0, Y)];
int_errors(_, _) -> [].

%% The integer sets an operator's result may lie in ([] when it surely raises).
int_desc('+', [A]) -> [A];
int_desc('-', [{P, L, H}]) -> [{P, eneg(H), eneg(L)}];
int_desc('bnot', [{P, L, H}]) -> [{flip(P), add(eneg(H), -1), add(eneg(L), -1)}];
int_desc('+', [{Pa, La, Ha}, {Pb, Lb, Hb}]) -> [{par_add(Pa, Pb), add(La, Lb), add(Ha, Hb)}];
int_desc('-', [{Pa, La, Ha}, {Pb, Lb, Hb}]) -> [{par_add(Pa, Pb), add(La, eneg(Hb)), add(Ha, eneg(Lb))}];
int_desc('*', [{Pa, La, Ha}, {Pb, Lb, Hb}]) ->
    Ps = [mul(X, Y) || X <- [La, Ha], Y <- [Lb, Hb]],
    [{par_mul(Pa, Pb), lists:foldl(fun emin/2, pinf, Ps), lists:foldl(fun emax/2, ninf, Ps)}];
int_desc('div', [{_, _, _} = X, {_, _, _} = Y]) ->
    %% Truncating division: |X div Y| =< |X|, the sign is the product of
    %% the signs (or 0).  Y = 0 raises.
    Rs = [div_part(Sx, Lx, Hx, Sy) || {Sx, Lx, Hx} <- parts(X), {Sy, _, _} <- nonzero_parts(Y)],
    [{any, L, H} || Rs =/= [], {L, H} <- [hull(Rs)]];
int_desc('rem', [{Px, _, _} = X, {Py, Ly, Hy} = Y]) ->
    %% The sign of X rem Y is X's, |X rem Y| < |Y| and =< |X|; with Y even
    %% the parity is X's (X - Y * Q).
    case nonzero_parts(Y) of
        [] -> [];
        _ ->
            Bound = add(emax(eabs(Ly), eabs(Hy)), -1),
            Rs = [case S of
                      nn -> {0, emin(H, Bound)};
                      ng -> {emax(L, eneg(Bound)), 0}
                  end || {S, L, H} <- parts(X)],
            {L, H} = hull(Rs),
            [{case Py of even -> Px; _ -> any end, L, H}]
    end;
int_desc(Op, [{Px, _, _} = X, {Py, _, _} = Y]) when Op =:= 'band'; Op =:= 'bor'; Op =:= 'bxor' ->
    Rs = [bit_part(Op, A, B) || A <- parts(X), B <- parts(Y)],
    {L, H} = hull(Rs),
    [{bit_par(Op, Px, Py), L, H}];
int_desc(Op, [{Px, Lx, Hx} = X, {_, Ly, Hy}]) when Op =:= 'bsl'; Op =:= 'bsr' ->
    %% A shift keeps the sign; "up" (bsl by >= 0, bsr by =< 0) does not
    %% shrink the magnitude, "down" does not grow it.
    {Up, Down} = case Op of
                     'bsl' -> {ge(Ly, 0), le(Hy, 0)};
                     'bsr' -> {le(Hy, 0), ge(Ly, 0)}
                 end,
    case {Lx, Hx} of
        {0, 0} -> [{even, 0, 0}];
        _ ->
            Rs = [case {S, Up, Down} of
                      {_, true, true} -> {L, H};             % shift by 0
                      {nn, true, _} -> {L, pinf};
                      {nn, _, true} -> {0, H};
                      {nn, _, _} -> {0, pinf};
                      {ng, true, _} -> {ninf, H};
                      {ng, _, true} -> {L, -1};
                      {ng, _, _} -> {ninf, -1}
                  end || {S, L, H} <- parts(X)],
            {L, H} = hull(Rs),
            Shift = case Op of 'bsl' -> {Ly, Hy}; 'bsr' -> {eneg(Hy), eneg(Ly)} end,
            Par = case Shift of
                      {0, 0} -> Px;
                      {Sl, _} -> case ge(Sl, 1) of true -> even; false -> any end
                  end,
            [{Par, L, H}]
    end.

nonzero_parts({_, L, H}) ->
    [{pos, emax(L, 1), H} || ge(H, 1)] ++ [{neg, L, emin(H, -1)} || le(L, -1)].

div_part(nn, _L, H, pos) -> {0, H};
div_part(nn, _L, H, neg) -> {eneg(H), 0};
div_part(ng, L, _H, pos) -> {L, 0};
div_part(ng, L, _H, neg) -> {0, eneg(L)}.

bit_part('band', {nn, _, H1}, {nn, _, H2}) -> {0, emin(H1, H2)};
bit_part('band', {nn, _, H1}, {ng, _, _}) -> {0, H1};
bit_part('band', {ng, _, _}, {nn, _, H2}) -> {0, H2};
bit_part('band', {ng, _, H1}, {ng, _, H2}) -> {ninf, emin(H1, H2)};
bit_part('bor', {nn, L1, H1}, {nn, L2, H2}) -> {emax(L1, L2), add(H1, H2)};
bit_part('bor', {nn, _, _}, {ng, L2, _}) -> {L2, -1};
bit_part('bor', {ng, L1, _}, {nn, _, _}) -> {L1, -1};
bit_part('bor', {ng, L1, _}, {ng, L2, _}) -> {emax(L1, L2), -1};
bit_part('bxor', {nn, _, H1}, {nn, _, H2}) -> {0, add(H1, H2)};
bit_part('bxor', {ng, _, _}, {ng, _, _}) -> {0, pinf};
bit_part('bxor', _, _) -> {ninf, -1}.

bit_par('band', odd, odd) -> odd;
bit_par('band', even, _) -> even;
bit_par('band', _, even) -> even;
bit_par('bor', even, even) -> even;
bit_par('bor', odd, _) -> odd;
bit_par('bor', _, odd) -> odd;
bit_par('bxor', A, B) -> par_add(A, B);
bit_par(_, _, _) -> any.

par_add(any, _) -> any;
par_add(_, any) -> any;
par_add(P, P) -> even;
par_add(_, _) -> odd.

par_mul(even, _) -> even;
par_mul(_, even) -> even;
par_mul(odd, odd) -> odd;
par_mul(_, _) -> any.

flip(even) -> odd;
flip(odd) -> even;
flip(any) -> any.

%% Remove repeated outcomes, keeping the first occurrence's order.
dedup(L) -> dedup(L, []).
dedup([], Acc) -> lists:reverse(Acc);
dedup([X | Xs], Acc) ->
    case lists:member(X, Acc) of
        true -> dedup(Xs, Acc);
        false -> dedup(Xs, [X | Acc])
    end.

%%====================================================================
%% Comparisons, type tests, matching
%%====================================================================

-spec compare(dom(), atom(), value(), value()) -> tri().
compare(_D, Op, A, B) ->
    case is_concrete(A) andalso is_concrete(B) of
        true -> concrete_compare(Op, A, B);
        false -> abs_compare(Op, A, B)
    end.

concrete_compare('==', A, B) -> A == B;
concrete_compare('/=', A, B) -> A /= B;
concrete_compare('=:=', A, B) -> A =:= B;
concrete_compare('=/=', A, B) -> A =/= B;
concrete_compare('<', A, B) -> A < B;
concrete_compare('>', A, B) -> A > B;
concrete_compare('=<', A, B) -> A =< B;
concrete_compare('>=', A, B) -> A >= B.

%% An abstract value stands for more than one term, so two values of which
%% one is abstract are never surely equal.
abs_compare(Op, A, B) when Op =:= '=='; Op =:= '=:=' ->
    case may_equal(A, B, Op =:= '=:=') of
        true -> maybe;
        false -> false
    end;
abs_compare('/=', A, B) -> tri_not(abs_compare('==', A, B));
abs_compare('=/=', A, B) -> tri_not(abs_compare('=:=', A, B));
abs_compare(Op, A, B) ->
    Want = case Op of
               '<' -> [lt];
               '>' -> [gt];
               '=<' -> [lt, eq];
               '>=' -> [gt, eq]
           end,
    Got = cmp3(A, B),
    case {Got -- Want, Got -- (Got -- Want)} of
        {[], _} -> true;
        {_, []} -> false;
        _ -> maybe
    end.

tri_not(true) -> false;
tri_not(false) -> true;
tri_not(maybe) -> maybe.

%% May some concretisations of A and B be equal (=:= when Exact, else ==)?
%% The domain has no superfluous values (every leaf stands for infinitely
%% many terms, and distinct canonical values for distinct sets), so this is
%% exact, and it is 003's "A ⊔ B exists" (meet_exists/3).
may_equal(?ANY, _, _) -> true;
may_equal(_, ?ANY, _) -> true;
may_equal(A, B, Exact) ->
    case {kind(A), kind(B)} of
        {{int, Da}, {int, Db}} -> desc_meet(Da, Db);
        {{int, Da}, {float, F}} -> not Exact andalso float_int(F, Da);
        {{float, F}, {int, Db}} -> not Exact andalso float_int(F, Db);
        _ -> may_equal_shape(A, B, Exact)
    end.

float_int(F, Desc) ->
    F == trunc(F) andalso in_desc(trunc(F), Desc).

may_equal_shape(A, B, Exact) ->
    case is_concrete(A) andalso is_concrete(B) of
        true when Exact -> A =:= B;
        true -> A == B;
        false -> may_equal_struct(A, B, Exact)
    end.

may_equal_struct(A, B, Exact) when is_tuple(A), is_tuple(B), not ?is_leaf(A), not ?is_leaf(B) ->
    tuple_size(A) =:= tuple_size(B) andalso
        lists:all(fun({X, Y}) -> may_equal(X, Y, Exact) end,
                  lists:zip(tuple_to_list(A), tuple_to_list(B)));
may_equal_struct(A, B, Exact) when is_map(A), is_map(B) ->
    lists:sort(maps:keys(A)) =:= lists:sort(maps:keys(B)) andalso
        lists:all(fun(K) -> may_equal(maps:get(K, A), maps:get(K, B), Exact) end, maps:keys(A));
may_equal_struct(A, B, Exact) ->
    case {listish(A), listish(B)} of
        {true, true} -> lists_may_equal(A, B, Exact);
        _ -> false
    end.

lists_may_equal([], B, _) -> nil_possible(B);
lists_may_equal(A, [], _) -> nil_possible(A);
lists_may_equal([Ha | Ta], [Hb | Tb], Ex) -> may_equal(Ha, Hb, Ex) andalso may_equal(Ta, Tb, Ex);
lists_may_equal([Ha | Ta], ?ABS({list, N, E}), Ex) ->
    may_equal(Ha, E, Ex) andalso may_equal(Ta, ?ABS({list, max(N - 1, 0), E}), Ex);
lists_may_equal(?ABS({list, _, _}) = S, [_ | _] = C, Ex) -> lists_may_equal(C, S, Ex);
lists_may_equal(?ABS({list, Na, Ea}), ?ABS({list, Nb, Eb}), Ex) ->
    (Na =:= 0 andalso Nb =:= 0) orelse may_equal(Ea, Eb, Ex).

nil_possible([]) -> true;
nil_possible(?ABS({list, 0, _})) -> true;
nil_possible(_) -> false.

%% A list cell, [] or a summary.
listish([]) -> true;
listish([_ | _]) -> true;
listish(?ABS({list, _, _})) -> true;
listish(_) -> false.

%% The possible outcomes of comparing in the term order: lt, eq (compare
%% equal, as ==) and gt.
cmp3(A, B) ->
    case is_concrete(A) andalso is_concrete(B) of
        true when A < B -> [lt];
        true when A > B -> [gt];
        true -> [eq];
        false when A =:= ?ANY; B =:= ?ANY -> [lt, eq, gt];
        false ->
            lists:usort(lists:append([cmp3_alt(X, Y) || X <- alts(A), Y <- alts(B)]))
    end.

%% A summary of at least 0 elements is [] or a non-empty list, of different
%% classes in the term order.
alts(?ABS({list, 0, E})) -> [[], ?ABS({list, 1, E})];
alts(V) -> [V].

cmp3_alt(A, B) ->
    Ca = class(A),
    Cb = class(B),
    if Ca < Cb -> [lt];
       Ca > Cb -> [gt];
       true -> within(Ca, A, B)
    end.

%% Erlang's term order: number < atom < reference < fun < port < pid <
%% tuple < map < nil < list < bitstring.
class(V) ->
    case kind(V) of
        {int, _} -> 0;
        {float, _} -> 0;
        _ when is_atom(V) -> 1;
        _ when is_reference(V) -> 2;
        _ when is_function(V) -> 3;
        _ when is_port(V) -> 4;
        _ when is_pid(V) -> 5;
        _ when is_tuple(V), not ?is_leaf(V) -> 6;
        _ when is_map(V) -> 7;
        _ when V =:= [] -> 8;
        _ when is_list(V) -> 9;
        _ when is_bitstring(V) -> 10;
        _ -> 9                                  % a summary of at least one element
    end.

within(_, A, B) when A =:= ?ANY; B =:= ?ANY -> [lt, eq, gt];
within(0, A, B) ->
    {La, Ha} = interval(A),
    {Lb, Hb} = interval(B),
    [lt || num_lt(La, Hb)] ++ [eq || may_equal(A, B, false)] ++ [gt || num_lt(Lb, Ha)];
within(6, A, B) ->
    case {tuple_size(A), tuple_size(B)} of
        {Sa, Sb} when Sa < Sb -> [lt];
        {Sa, Sb} when Sa > Sb -> [gt];
        _ -> lex(tuple_to_list(A), tuple_to_list(B))
    end;
within(8, _, _) -> [eq];
within(9, [Ha | Ta], [Hb | Tb]) -> lex_pair(Ha, Hb, fun() -> cmp3(Ta, Tb) end);
within(9, ?ABS({list, N, E}), [Hb | Tb]) ->
    lex_pair(E, Hb, fun() -> cmp3(?ABS({list, N - 1, E}), Tb) end);
within(9, [Ha | Ta], ?ABS({list, N, E})) ->
    lex_pair(Ha, E, fun() -> cmp3(Ta, ?ABS({list, N - 1, E})) end);
within(_, _, _) -> [lt, eq, gt].

interval(V) ->
    case kind(V) of
        {int, {_, L, H}} -> {L, H};
        {float, F} -> {F, F}
    end.

%% Lo < Hi, where a lower bound is never pinf and an upper bound never ninf.
num_lt(ninf, _) -> true;
num_lt(_, pinf) -> true;
num_lt(A, B) -> A < B.

%% Lexicographic: the first pair that may differ decides; when it may also
%% compare equal, the rest may decide.
lex([], []) -> [eq];
lex([A | As], [B | Bs]) -> lex_pair(A, B, fun() -> lex(As, Bs) end).

lex_pair(A, B, Rest) ->
    R = cmp3(A, B),
    case lists:member(eq, R) of
        true -> lists:usort((R -- [eq]) ++ Rest());
        false -> R
    end.

-spec type_test(dom(), atom() | {is_function, arity()}, value()) -> tri().
type_test(_D, _Test, ?ANY) -> maybe;
type_test(_D, Test, V) ->
    %% Below `any' a value's top constructor is known, and a type test
    %% looks at nothing else: test a representative of it.
    run_test(Test, representative(V)).

representative(V) ->
    case {is_concrete(V), kind(V)} of
        {true, _} -> V;
        {_, {int, _}} -> 0;
        _ when is_tuple(V), not ?is_leaf(V) -> erlang:make_tuple(tuple_size(V), x);
        _ when is_map(V) -> #{};
        _ when is_list(V) -> [x];
        _ -> [x]                                % a summary: a list
    end.

run_test(is_integer, X) -> is_integer(X);
run_test(is_float, X) -> is_float(X);
run_test(is_number, X) -> is_number(X);
run_test(is_atom, X) -> is_atom(X);
run_test(is_boolean, X) -> is_boolean(X);
run_test(is_list, X) -> is_list(X);
run_test(is_tuple, X) -> is_tuple(X);
run_test(is_pid, X) -> is_pid(X);
run_test(is_reference, X) -> is_reference(X);
run_test(is_port, X) -> is_port(X);
run_test(is_binary, X) -> is_binary(X);
run_test(is_bitstring, X) -> is_bitstring(X);
run_test(is_function, X) -> is_function(X);
run_test(is_map, X) -> is_map(X);
run_test({is_function, N}, X) when is_integer(N), N >= 0 -> is_function(X, N);
run_test(Test, _) -> error({mce_abs_domain, {bad_type_test, Test}}).

-spec match_literal(dom(), value(), term()) -> tri().
match_literal(_D, V, Lit) ->
    case is_concrete(V) of
        true -> V =:= Lit;
        false ->
            case may_equal(V, Lit, true) of
                true -> maybe;
                false -> false
            end
    end.

%%====================================================================
%% Destructuring
%%====================================================================

-spec as_tuple(dom(), value(), non_neg_integer()) -> [{certain | maybe, [value()]}].
as_tuple(_D, ?ANY, N) -> [{maybe, lists:duplicate(N, ?ANY)}];
as_tuple(_D, ?ABS(_), _N) -> [];
as_tuple(_D, T, N) when is_tuple(T), tuple_size(T) =:= N -> [{certain, tuple_to_list(T)}];
as_tuple(_D, _, _) -> [].

%% For a summary, 001's nondeterministic concretisation (Def. 3.7 rule 2,
%% the dashed transitions of Fig. 4): the first cell is split off and the
%% rest is either exactly the remaining cells (a list of copies of E, one
%% alternative per length the summary allows below M+4) or still a summary.
-spec as_cons(dom(), value()) -> [{certain | maybe, value(), value()}].
as_cons(_D, ?ANY) -> [{maybe, ?ANY, ?ANY}];
as_cons(_D, [H | T]) -> [{certain, H, T}];
as_cons(#dom{chain = M} = D, ?ABS({list, N, E})) when M =/= none ->
    Tag = case N of 0 -> maybe; _ -> certain end,
    Tails = [lists:duplicate(K, E) || K <- lists:seq(max(N - 1, 0), M + 3)] ++ [?ABS({list, M + 4, E})],
    dedup([{Tag, alpha(D, E), alpha(D, T)} || T <- Tails]);
as_cons(_D, ?ABS({list, N, E})) ->
    [{case N of 0 -> maybe; _ -> certain end, E, ?ABS({list, max(N - 1, 0), E})}];
as_cons(_D, _) -> [].

-spec as_nil(dom(), value()) -> tri().
as_nil(_D, []) -> true;
as_nil(_D, ?ANY) -> maybe;
as_nil(_D, ?ABS({list, 0, _})) -> maybe;
as_nil(_D, _) -> false.

%%====================================================================
%% BIFs
%%====================================================================

-spec bif(dom(), {module(), atom(), arity()}, [value()]) -> [outcome()] | unknown.
bif(D, MFA, Args) ->
    case bif1(D, MFA, Args) of
        unknown -> unknown;
        Outcomes -> dedup(Outcomes)
    end.

v(X) -> {value, X}.

bif1(D, {erlang, length, 1}, [L]) ->
    case lview(L) of
        {P, nil} -> [v(alpha(D, length(P)))];
        {P, {summary, N, _}} -> [v(from_desc(D, {any, length(P) + N, pinf}))];
        {P, any} -> [v(from_desc(D, {any, length(P), pinf})), {error, badarg}];
        {_, improper} -> [{error, badarg}]
    end;
bif1(D, {erlang, hd, 1}, [L]) -> cons_part(D, L, 2);
bif1(D, {erlang, tl, 1}, [L]) -> cons_part(D, L, 3);
bif1(D, {erlang, element, 2}, [N, T]) ->
    index_tuple(D, N, T, fun(I, Es) -> lists:nth(I, Es) end);
bif1(D, {erlang, setelement, 3}, [N, T, V]) ->
    index_tuple(D, N, T, fun(I, Es) ->
                                 alpha(D, list_to_tuple(lists:sublist(Es, I - 1) ++ [V] ++ lists:nthtail(I, Es)))
                         end);
bif1(D, {erlang, tuple_size, 1}, [T]) -> size_of(D, T, false);
bif1(D, {erlang, size, 1}, [T]) -> size_of(D, T, true);
bif1(D, {erlang, abs, 1}, [X]) ->
    case kind(X) of
        {int, {P, L, H}} ->
            R = case {ge(L, 0), le(H, 0)} of
                    {true, _} -> {P, L, H};
                    {_, true} -> {P, eneg(H), eneg(L)};
                    _ -> {P, 0, emax(eneg(L), H)}
                end,
            [v(from_desc(D, R))];
        {float, F} -> [v(abs(F))];
        any -> [v(?ANY), {error, badarg}];
        nonnum -> [{error, badarg}]
    end;
bif1(D, {erlang, Mm, 2}, [A, B]) when Mm =:= min; Mm =:= max ->
    case {kind(A), kind(B)} of
        {{int, {Pa, La, Ha}}, {int, {Pb, Lb, Hb}}} ->
            F = case Mm of min -> fun emin/2; max -> fun emax/2 end,
            [v(from_desc(D, {par_join(Pa, Pb), F(La, Lb), F(Ha, Hb)}))];
        _ ->
            %% min(A, B) is B when A > B, else A; max(A, B) is B when A < B.
            Op = case Mm of min -> '>'; max -> '<' end,
            case compare(D, Op, A, B) of
                true -> [v(B)];
                false -> [v(A)];
                maybe -> [v(A), v(B)]
            end
    end;
bif1(D, {erlang, '++', 2}, [A, B]) -> append(D, A, B);
bif1(D, {lists, append, 2}, [A, B]) -> append(D, A, B);
bif1(D, {erlang, '--', 2}, [A, B]) -> subtract(D, A, B);
bif1(D, {erlang, Test, 1}, [X]) when Test =:= is_integer; Test =:= is_float; Test =:= is_number;
                                    Test =:= is_atom; Test =:= is_boolean; Test =:= is_list;
                                    Test =:= is_tuple; Test =:= is_pid; Test =:= is_reference;
                                    Test =:= is_port; Test =:= is_binary; Test =:= is_bitstring;
                                    Test =:= is_function; Test =:= is_map ->
    bools(type_test(D, Test, X));
bif1(D, {erlang, is_function, 2}, [X, N]) when is_integer(N), N >= 0 ->
    bools(type_test(D, {is_function, N}, X));
bif1(D, {lists, reverse, 1}, [L]) ->
    case lview(L) of
        {P, nil} -> [v(alpha(D, lists:reverse(P)))];
        {P, {summary, N, E}} -> [v(alpha(D, ?ABS({list, length(P) + N, join_all(D, [E | P])})))];
        %% lists:reverse/1 raised badarg while it was a BIF, function_clause
        %% since it is Erlang code: either may be met.
        {_, any} -> [v(?ANY), {error, function_clause}, {error, badarg}];
        {_, improper} -> [{error, function_clause}, {error, badarg}]
    end;
bif1(D, {lists, member, 2}, [X, L]) -> member(D, X, L);
bif1(D, {lists, nth, 2}, [N, L]) -> nth(D, N, L);
bif1(_D, {lists, last, 1}, [L]) ->
    Err = {error, function_clause},
    case lview(L) of
        {[], nil} -> [Err];
        {P, nil} -> [v(lists:last(P))];
        {P, {summary, N, E}} ->
            [v(E)] ++ [v(lists:last(P)) || N =:= 0, P =/= []] ++ [Err || N =:= 0, P =:= []];
        {P, any} -> [v(?ANY)] ++ [v(lists:last(P)) || P =/= []] ++ [Err];
        {_, improper} -> [Err]
    end;
bif1(D, {lists, keyfind, 3}, [K, N, L]) -> keyfind(D, K, N, L);
bif1(D, {lists, sum, 1}, [L]) -> sum(D, L);
bif1(_D, _MFA, _Args) -> unknown.

bools(true) -> [v(true)];
bools(false) -> [v(false)];
bools(maybe) -> [v(true), v(false)].

%% A list as its known cells and what ends them: [] (nil), a summary, `any'
%% (maybe a list, maybe not) or something that is surely not a list.
lview(L) ->
    {P, T} = spine(L),
    {P, case T of
            [] -> nil;
            ?ABS({list, N, E}) -> {summary, N, E};
            ?ANY -> any;
            _ -> improper
        end}.

cons_part(D, L, Pos) ->
    Alts = as_cons(D, L),
    Vals = [v(element(Pos, A)) || A <- Alts],
    Err = [{error, badarg} || Alts =:= [] orelse lists:keymember(maybe, 1, Alts)],
    Vals ++ Err.

%% element/setelement: one outcome per index the position may be.
index_tuple(_D, _N, ?ANY, _Get) -> [v(?ANY), {error, badarg}];
index_tuple(_D, N, T, Get) when is_tuple(T), not ?is_leaf(T) ->
    Es = tuple_to_list(T),
    S = length(Es),
    Vals = [v(Get(I, Es)) || I <- lists:seq(1, S), may_equal(N, I, true)],
    InRange = case kind(N) of
                  {int, {_, L, H}} when is_integer(L), is_integer(H) -> L >= 1 andalso H =< S;
                  _ -> false
              end,
    Vals ++ [{error, badarg} || not InRange];
index_tuple(_D, _N, _T, _Get) -> [{error, badarg}].

size_of(D, T, _) when is_tuple(T), not ?is_leaf(T) -> [v(alpha(D, tuple_size(T)))];
size_of(D, ?ANY, _) -> [v(from_desc(D, {any, 0, pinf})), {error, badarg}];
size_of(D, B, true) when is_binary(B) -> [v(alpha(D, byte_size(B)))];
size_of(_D, _, _) -> [{error, badarg}].

%% The elements a list view may hold.
view_elems({P, {summary, _, E}}) -> [E | P];
view_elems({P, _}) -> P.

view_min({P, {summary, N, _}}) -> length(P) + N;
view_min({P, _}) -> length(P).

append(D, A, B) ->
    case lview(A) of
        {P, nil} -> [v(alpha(D, P ++ B))];
        {_, {summary, _, _}} = Va ->
            case lview(B) of
                {_, T} = Vb when T =:= nil; is_tuple(T) ->
                    [v(alpha(D, ?ABS({list, view_min(Va) + view_min(Vb),
                                      join_all(D, view_elems(Va) ++ view_elems(Vb))})))];
                _ -> [v(?ANY)]                  % an improper or unknown tail
            end;
        {_, any} -> [v(?ANY), {error, badarg}];
        {_, improper} -> [{error, badarg}]
    end.

subtract(D, A, B) ->
    Va = lview(A),
    Vb = lview(B),
    Proper = fun({_, T}) -> T =:= nil orelse is_tuple(T) end,
    Err = [{error, badarg} || not (Proper(Va) andalso Proper(Vb))],
    Sure = [{error, badarg} || element(2, Va) =:= improper orelse element(2, Vb) =:= improper],
    case Sure of
        [_] -> Sure;
        [] ->
            Ea = view_elems(Va),
            Eb = view_elems(Vb),
            Touch = Ea =/= [] andalso element(2, Vb) =:= any orelse
                lists:any(fun(X) -> lists:any(fun(Y) -> may_equal(X, Y, true) end, Eb) end, Ea),
            Val = case {Proper(Va), Touch} of
                      {false, _} -> ?ANY;
                      {true, false} -> A;
                      {true, true} ->
                          %% A -- B keeps a subsequence of A: at least the
                          %% cells B cannot remove.
                          Max = case Vb of {Pb, nil} -> length(Pb); _ -> infinity end,
                          Min = case Max of infinity -> 0; _ -> max(0, view_min(Va) - Max) end,
                          alpha(D, ?ABS({list, Min, join_all(D, Ea)}))
                  end,
            [v(Val) | Err]
    end.

member(D, X, L) ->
    {P, T} = lview(L),
    member_walk(D, X, P, T, []).

member_walk(D, X, [E | Es], T, Acc) ->
    case compare(D, '=:=', X, E) of
        true -> [v(true) | Acc];
        maybe -> member_walk(D, X, Es, T, [v(true) | Acc]);
        false -> member_walk(D, X, Es, T, Acc)
    end;
member_walk(_D, _X, [], nil, Acc) -> [v(false) | Acc];
member_walk(D, X, [], {summary, N, E}, Acc) ->
    case {compare(D, '=:=', X, E), N} of
        {true, N} when N >= 1 -> [v(true) | Acc];
        {false, _} -> [v(false) | Acc];
        _ -> [v(true), v(false) | Acc]
    end;
member_walk(_D, _X, [], any, Acc) -> [v(true), v(false), {error, badarg} | Acc];
member_walk(_D, _X, [], improper, Acc) -> [{error, badarg} | Acc].

nth(_D, N, L) ->
    Err = {error, function_clause},
    %% lists:nth/2 is Erlang code: a non-number position passes its
    %% `N > 1' guard (numbers sort first) and then N - 1 raises.
    NonNum = [{error, badarith} || kind(N) =:= nonnum orelse kind(N) =:= any],
    NonNum ++ case kind(N) of
        nonnum -> [Err];
        {float, _} -> [Err];
        K ->
            {_, Lo, Hi} = Desc = case K of any -> ?TOP; {int, Ds} -> Ds end,
            {P, T} = lview(L),
            Len = length(P),
            Vals = [v(E) || {I, E} <- lists:zip(lists:seq(1, Len), P), in_desc(I, Desc)],
            Beyond = lt(Len, Hi),                 % N may point past the known cells
            Tail = case T of
                       nil -> [Err || Beyond];
                       {summary, Ns, E} -> [v(E) || Beyond] ++ [Err || lt(Len + Ns, Hi)];
                       any -> [v(?ANY) || Beyond] ++ [Err || Beyond];
                       improper -> [Err || Beyond]
                   end,
            Vals ++ Tail ++ [Err || lt(Lo, 1) orelse K =:= any]
    end.

keyfind(D, K, N, L) when is_integer(N), N >= 1 ->
    {P, T} = lview(L),
    keyfind_walk(D, K, N, P, T, []);
keyfind(_D, _K, N, _L) when is_integer(N) -> [{error, badarg}];
keyfind(_D, _K, _N, _L) -> [v(?ANY), v(false), {error, badarg}].

keyfind_walk(D, K, N, [E | Es], T, Acc) ->
    case key_match(D, K, N, E) of
        true -> lists:reverse([v(E) | Acc]);
        maybe -> keyfind_walk(D, K, N, Es, T, [v(E) | Acc]);
        false -> keyfind_walk(D, K, N, Es, T, Acc)
    end;
keyfind_walk(_D, _K, _N, [], nil, Acc) -> lists:reverse([v(false) | Acc]);
keyfind_walk(D, K, N, [], {summary, Ns, E}, Acc) ->
    case {key_match(D, K, N, E), Ns} of
        {true, Ns} when Ns >= 1 -> lists:reverse([v(E) | Acc]);
        {false, _} -> lists:reverse([v(false) | Acc]);
        _ -> lists:reverse([v(false), v(E) | Acc])
    end;
keyfind_walk(_D, _K, _N, [], any, Acc) -> lists:reverse([{error, badarg}, v(false), v(?ANY) | Acc]);
keyfind_walk(_D, _K, _N, [], improper, Acc) -> lists:reverse([{error, badarg} | Acc]).

key_match(_D, _K, _N, ?ANY) -> maybe;
key_match(D, K, N, E) when is_tuple(E), not ?is_leaf(E), tuple_size(E) >= N ->
    compare(D, '==', element(N, E), K);
key_match(_D, _K, _N, _E) -> false.

%% lists:sum/1 is Erlang code: an improper list ends in function_clause,
%% a non-number in badarith.
sum(D, L) ->
    {P, T} = lview(L),
    Kinds = [kind(E) || E <- P],
    {Desc, Float, Err} = lists:foldl(fun sum_step/2, {{even, 0, 0}, false, []}, Kinds),
    {Desc1, Float1, Err1} =
        case T of
            nil -> {Desc, Float, Err};
            {summary, Ns, E} ->
                case kind(E) of
                    {int, {Pe, Le, He}} ->
                        Many = {case Pe of even -> even; _ -> any end,
                                case ge(Le, 0) of true -> mul(Ns, Le); false -> ninf end,
                                case le(He, 0) of true -> mul(Ns, He); false -> pinf end},
                        {add_desc(Desc, Many), Float, Err};
                    {float, _} -> {Desc, true, Err};
                    any -> {Desc, true, [{error, badarith} | Err]};
                    nonnum when Ns >= 1 -> {Desc, Float, [{error, badarith}, sure | Err]};
                    nonnum -> {Desc, Float, [{error, badarith} | Err]}
                end;
            any -> {Desc, true, [{error, badarith}, {error, function_clause} | Err]};
            improper -> {Desc, Float, [{error, function_clause}, sure | Err]}
        end,
    Errs = [E || E <- Err1, E =/= sure],
    case lists:member(sure, Err1) of
        true -> Errs;
        false when Float1 -> [v(?ANY) | Errs];
        false -> [v(from_desc(D, Desc1)) | Errs]
    end.

sum_step({int, Ds}, {Acc, F, Err}) -> {add_desc(Acc, Ds), F, Err};
sum_step({float, _}, {Acc, _, Err}) -> {Acc, true, Err};
sum_step(any, {Acc, _, Err}) -> {Acc, true, [{error, badarith} | Err]};
sum_step(nonnum, {Acc, F, Err}) -> {Acc, F, [{error, badarith}, sure | Err]}.

add_desc(A, B) -> hd(int_desc('+', [A, B])).

%%====================================================================
%% Order and join
%%====================================================================

%% Least upper bound: the most precise value covering both.
-spec join(dom(), value(), value()) -> value().
join(#finite{} = F, A, B) ->
    Bounds = [C || C <- maps:keys(F#finite.up), leq(F, C, A), leq(F, C, B)],
    case [C || C <- Bounds, lists:all(fun(C2) -> leq(F, C2, C) end, Bounds)] of
        [C | _] -> C;
        [] -> error({mce_abs_domain, {no_join, A, B}})
    end;
join(_D, A, A) -> A;
join(_D, ?ANY, _) -> ?ANY;
join(_D, _, ?ANY) -> ?ANY;
join(D, A, B) ->
    case {kind(A), kind(B)} of
        {{int, Da}, {int, Db}} -> from_desc(D, desc_join(Da, Db));
        _ -> join_struct(D, A, B)
    end.

join_struct(D, A, B) when is_tuple(A), is_tuple(B), not ?is_leaf(A), not ?is_leaf(B),
                          tuple_size(A) =:= tuple_size(B) ->
    list_to_tuple([join(D, X, Y) || {X, Y} <- lists:zip(tuple_to_list(A), tuple_to_list(B))]);
join_struct(D, A, B) when is_map(A), is_map(B) ->
    case lists:sort(maps:keys(A)) =:= lists:sort(maps:keys(B)) of
        true -> maps:map(fun(K, V) -> join(D, V, maps:get(K, B)) end, A);
        false -> ?ANY
    end;
join_struct(D, A, B) ->
    case listish(A) andalso listish(B) of
        false -> ?ANY;
        true ->
            Va = lview(A),
            Vb = lview(B),
            Proper = fun({_, T}) -> T =:= nil orelse is_tuple(T) end,
            case {Va, Vb} of
                {{Pa, nil}, {Pb, nil}} when length(Pa) =:= length(Pb) ->
                    [join(D, X, Y) || {X, Y} <- lists:zip(Pa, Pb)];
                _ when D#dom.chain =/= none ->
                    case Proper(Va) andalso Proper(Vb) of
                        true ->
                            summary(D, min(view_min(Va), view_min(Vb)),
                                    join_all(D, view_elems(Va) ++ view_elems(Vb)));
                        false -> join_cons(D, A, B)
                    end;
                _ -> join_cons(D, A, B)
            end
    end.

join_cons(D, [Ha | Ta], [Hb | Tb]) -> [join(D, Ha, Hb) | join(D, Ta, Tb)];
join_cons(_D, _, _) -> ?ANY.

join_all(D, [X | Xs]) -> lists:foldl(fun(Y, Acc) -> join(D, Acc, Y) end, X, Xs).

%% A ⊑ B: B is at least as precise as A.
-spec leq(dom(), value(), value()) -> boolean().
leq(#finite{} = F, A, B) -> lists:member(B, up(F, A));
leq(_D, A, B) -> l(A, B).

l(A, A) -> true;
l(?ANY, _) -> true;
l(_, ?ANY) -> false;
l(?ABS({list, N, E}), B) ->
    listish(B) andalso
        case lview(B) of
            {P, nil} -> length(P) >= N andalso lists:all(fun(X) -> l(E, X) end, P);
            {P, {summary, Nb, Eb}} ->
                length(P) + Nb >= N andalso lists:all(fun(X) -> l(E, X) end, [Eb | P]);
            _ -> false
        end;
l(?ABS(La), B) ->
    case {leaf_desc(La), kind(B)} of
        {{ok, Da}, {int, Db}} -> desc_sub(Da, Db);
        _ -> false
    end;
l([Ha | Ta], [Hb | Tb]) -> l(Ha, Hb) andalso l(Ta, Tb);
l([Ha | Ta], ?ABS({list, N, E})) when N >= 1 -> l(Ha, E) andalso l(Ta, ?ABS({list, N - 1, E}));
l(A, B) when is_tuple(A), is_tuple(B), not ?is_leaf(B), tuple_size(A) =:= tuple_size(B) ->
    lists:all(fun({X, Y}) -> l(X, Y) end, lists:zip(tuple_to_list(A), tuple_to_list(B)));
l(A, B) when is_map(A), is_map(B) ->
    lists:sort(maps:keys(A)) =:= lists:sort(maps:keys(B)) andalso
        lists:all(fun(K) -> l(maps:get(K, A), maps:get(K, B)) end, maps:keys(A));
l(_, _) -> false.

%% Some value is at least as precise as both: their concretisations may meet.
-spec meet_exists(dom(), value(), value()) -> boolean().
meet_exists(#finite{} = F, A, B) -> up(F, A) -- (up(F, A) -- up(F, B)) =/= [];
meet_exists(_D, A, B) -> may_equal(A, B, true).

%% 003 Lemma 6: a state whose propositions are Props satisfies the formula's
%% value V when one of them is at least as precise as V; it refutes V when
%% none may meet V.  Neither is the negation of the other: with
%% Props = [?] both fail, and an abstract proof must not take one for the
%% other (003 section 6, the G ¬even example).
-spec satisfies(dom(), [value()], value()) -> boolean().
satisfies(D, Props, V) ->
    V1 = wildcard(V),
    lists:any(fun(P) -> leq(D, V1, P) end, Props).

-spec refutes(dom(), [value()], value()) -> boolean().
refutes(D, Props, V) ->
    V1 = wildcard(V),
    lists:all(fun(P) -> not meet_exists(D, P, V1) end, Props).

%% In formula values '_' is a wildcard (the `{prop, Pattern}' predicates).
wildcard('_') -> ?ANY;
wildcard([H | T]) -> [wildcard(H) | wildcard(T)];
wildcard(?ABS(_) = L) -> L;
wildcard(T) when is_tuple(T) -> list_to_tuple([wildcard(E) || E <- tuple_to_list(T)]);
wildcard(M) when is_map(M) -> maps:map(fun(_, X) -> wildcard(X) end, M);
wildcard(X) -> X.

%%====================================================================
%% Text
%%====================================================================

-spec format(value()) -> iolist().
format(?ANY) -> "?";
format(?ABS({list, N, ?ANY})) -> io_lib:format("[... at least ~b ...]", [N]);
format(?ABS({list, N, E})) -> ["[... at least ", integer_to_list(N), " of ", format(E), " ...]"];
format(?ABS(nonneg)) -> ">=0";
format(?ABS(nonpos)) -> "=<0";
format(?ABS(L)) when is_atom(L) -> atom_to_list(L);
format([_ | _] = L) ->
    case is_concrete(L) of
        true -> io_lib:format("~tw", [L]);
        false ->
            {P, T} = spine(L),
            ["[", lists:join(",", [format(E) || E <- P]),
             case T of [] -> ""; _ -> ["|", format(T)] end, "]"]
    end;
format(T) when is_tuple(T) ->
    case is_concrete(T) of
        true -> io_lib:format("~tw", [T]);
        false -> ["{", lists:join(",", [format(E) || E <- tuple_to_list(T)]), "}"]
    end;
format(M) when is_map(M) ->
    case is_concrete(M) of
        true -> io_lib:format("~tw", [M]);
        false -> ["#{", lists:join(",", [[io_lib:format("~tw", [K]), " => ", format(V)]
                                         || {K, V} <- lists:sort(maps:to_list(M))]), "}"]
    end;
format(X) -> io_lib:format("~tw", [X]).
