%% Tests of mce_abs_domain: AC-24 (003 Lemma 6) as written in
%% ../shared/ACCEPTANCE.md, the precise rules the interpreter relies on, and
%% soundness by random sampling: for concrete terms and abstract values
%% covering them, every concrete answer (value or exception) is covered by
%% the abstract one.  The sampling is seeded (exsss, {1,2,3}), so a failure
%% reproduces.
-module(mce_abs_domain_tests).

-include_lib("eunit/include/eunit.hrl").

-define(ABS(L), {'$mce_abs', L}).
-define(ANY, {'$mce_abs', any}).
-define(M, mce_abs_domain).

dom(Spec) ->
    {ok, D} = ?M:new(Spec),
    D.

%%====================================================================
%% AC-24: the proposition decision procedure (003 Lemma 6)
%%====================================================================

%% Even/odd: {even} satisfies even; {?} neither satisfies nor refutes even;
%% {odd} refutes even; no proposition refutes everything.
ac24_even_odd_test_() ->
    Builtin = {dom([even_odd]), ?ABS(even), ?ABS(odd), ?ANY},
    Finite = {?M:finite([{'?', even}, {'?', odd}]), even, odd, '?'},
    [{Name, fun() ->
                    ?assert(?M:satisfies(D, [Even], Even)),
                    ?assertNot(?M:satisfies(D, [Top], Even)),
                    ?assertNot(?M:refutes(D, [Top], Even)),
                    ?assert(?M:refutes(D, [Odd], Even)),
                    ?assertNot(?M:satisfies(D, [Odd], Even)),
                    [?assert(?M:refutes(D, [], V)) || V <- [Even, Odd, Top, 42, foo]],
                    [?assertNot(?M:satisfies(D, [], V)) || V <- [Even, Odd, Top, 42, foo]]
            end} || {Name, {D, Even, Odd, Top}} <- [{"built-in", Builtin}, {"finite", Finite}]].

%% Depth-2 terms: {{allocate,p1}} refutes {allocate,p2}; {?} does not;
%% {top} refutes {allocate,_}.
ac24_depth2_test_() ->
    D = dom([{depth, 2}]),
    P1 = list_to_pid("<0.101.0>"),
    P2 = list_to_pid("<0.102.0>"),
    [?_assert(?M:refutes(D, [?M:alpha(D, {allocate, P1})], {allocate, P2})),
     ?_assert(?M:refutes(D, [?M:alpha(D, {allocate, p1})], {allocate, p2})),
     ?_assertNot(?M:refutes(D, [?ANY], {allocate, P2})),
     ?_assert(?M:refutes(D, [top], {allocate, '_'})),
     %% and the positive side: the state's own allocate satisfies it
     ?_assert(?M:satisfies(D, [?M:alpha(D, {allocate, P1})], {allocate, P1})),
     ?_assert(?M:satisfies(D, [?M:alpha(D, {allocate, P1})], {allocate, '_'})),
     ?_assertNot(?M:refutes(D, [?M:alpha(D, {allocate, P1})], {allocate, '_'})),
     %% a deeper message is cut to ?, which no longer refutes
     ?_assertEqual({lookup, {k1, P1}}, ?M:alpha(D, {lookup, {k1, P1}})),
     ?_assertEqual({lookup, {?ANY}}, ?M:alpha(D, {lookup, {{k1, P1}}})),
     ?_assertNot(?M:refutes(D, [?M:alpha(D, {lookup, {{k1, P1}}})], {lookup, {{k1, P2}}})),
     ?_assert(?M:refutes(D, [?M:alpha(D, {lookup, {{k1, P1}}})], {allocate, '_'}))].

%% Refined sign domain (b): {≤0} does not refute ≥0 (the join 0 exists);
%% {<0} (domain (a)) refutes ≥0.
ac24_sign_test_() ->
    D = dom([sign]),
    B = ?M:finite([{num, le0}, {num, ge0}, {le0, zero}, {ge0, zero}]),
    A = ?M:finite([{num, lt0}, {num, ge0}]),
    [?_assertNot(?M:refutes(D, [?ABS(nonpos)], ?ABS(nonneg))),
     ?_assert(?M:refutes(D, [?ABS(neg)], ?ABS(nonneg))),
     ?_assertEqual(0, ?M:alpha(D, 0)),
     ?_assertNot(?M:refutes(B, [le0], ge0)),
     ?_assert(?M:refutes(A, [lt0], ge0))].

%% Incompleteness domains (003 section 7): {zero} is not shown to satisfy 0,
%% and {≤0} is not shown to refute ≥0; both safe failures.
ac24_incompleteness_test_() ->
    Zero = ?M:finite([{num, zero}, {zero, 0}]),
    Sup = ?M:finite([{num, le0}, {num, ge0}, {le0, 0}, {ge0, 0}]),
    [?_assertNot(?M:satisfies(Zero, [zero], 0)),
     ?_assert(?M:satisfies(Zero, [0], zero)),       % the other direction holds
     ?_assertNot(?M:refutes(Sup, [le0], ge0))].

%% AC-23 at the domain level: prop(84 div 2) under even/odd is `int', which
%% neither satisfies even (F even not proved) nor refutes it (G not even
%% never proved: the key soundness test); prop(42) is even.
ac23_div_test() ->
    D = dom([even_odd]),
    [{value, V}, {error, badarith}] = ?M:arith(D, 'div', [?M:alpha(D, 84), ?M:alpha(D, 2)]),
    ?assertEqual(?ABS(int), V),
    ?assertNot(?M:satisfies(D, [V], ?ABS(even))),
    ?assertNot(?M:refutes(D, [V], ?ABS(even))),
    ?assert(?M:satisfies(D, [?M:alpha(D, 42)], ?ABS(even))),
    %% concretely, 84 div 2 is 42: even
    ?assertEqual([{value, ?ABS(even)}], ?M:arith(D, 'div', [84, 2])).

%%====================================================================
%% Domains and alpha
%%====================================================================

new_test_() ->
    [?_assertMatch({ok, _}, ?M:new([])),
     ?_assertMatch({ok, _}, ?M:new(sign)),
     ?_assertEqual([even_odd, {depth, 3}, {chain, 1}], ?M:spec(dom([even_odd, {depth, 3}, {chain, 1}]))),
     ?_assertEqual({error, {bad_abstraction, sign}}, ?M:new([even_odd, sign])),
     ?_assertEqual({error, {bad_abstraction, even_odd}}, ?M:new([even_odd, even_odd])),
     ?_assertEqual({error, {bad_abstraction, {depth, 3}}}, ?M:new([{depth, 2}, {depth, 3}])),
     ?_assertEqual({error, {bad_abstraction, {depth, 0}}}, ?M:new([{depth, 0}])),
     ?_assertEqual({error, {bad_abstraction, {chain, -1}}}, ?M:new([{chain, -1}])),
     ?_assertEqual({error, {bad_abstraction, parity}}, ?M:new(parity))].

alpha_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    None = dom([]),
    C1 = dom([{chain, 1}]),
    [?_assertEqual([?ABS(odd), ?ABS(even), a, {?ABS(odd)}], ?M:alpha(EO, [1, 2, a, {3}])),
     ?_assertEqual([?ABS(neg), 0, ?ABS(pos)], ?M:alpha(S, [-4, 0, 7])),
     ?_assertEqual([1, 2], ?M:alpha(None, [1, 2])),
     %% a leaf of another integer domain becomes the best leaf of this one
     ?_assertEqual(?ABS(int), ?M:alpha(S, ?ABS(even))),
     ?_assertEqual(?ABS(int), ?M:alpha(EO, ?ABS(pos))),
     %% chain: up to M+3 cells stay, longer becomes a summary of M+4
     ?_assertEqual([a, a, a, a], ?M:alpha(C1, [a, a, a, a])),
     ?_assertEqual(?ABS({list, 5, a}), ?M:alpha(C1, [a, a, a, a, a])),
     ?_assertEqual(?ABS({list, 5, ?ABS(int)}), ?M:alpha(C1, [1, 2, 3, 4, 5, 6])),
     ?_assertEqual(?ABS({list, 5, ?ABS(odd)}), ?M:alpha(dom([{chain, 1}, even_odd]), [1, 3, 5, 7, 9])),
     %% a cell in front of a summary folds into it
     ?_assertEqual(?ABS({list, 5, ?ANY}), ?M:alpha(C1, [b | ?ABS({list, 5, a})])),
     %% depth: a list is one constructor, its elements one level down;
     %% atomic leaves are not cut
     ?_assertEqual([a, b, c], ?M:alpha(dom([{depth, 1}]), [a, b, c])),
     ?_assertEqual([{?ABS({list, 0, ?ANY})}, b], ?M:alpha(dom([{depth, 2}]), [{[x]}, b])),
     ?_assertEqual([{?ANY}, b], ?M:alpha(dom([{depth, 2}]), [{{x}}, b])),
     %% a cut proper list stays "some proper list"
     ?_assertEqual({?ABS({list, 0, ?ANY})}, ?M:alpha(dom([{depth, 1}]), {[a, b, c]})),
     ?_assertEqual({?ANY}, ?M:alpha(dom([{depth, 1}]), {[a, b, c | d]})),
     ?_assertEqual({a, ?ANY, b}, ?M:alpha(dom([{depth, 1}]), {a, {x}, b})),
     %% the summary counts as one constructor
     ?_assertEqual({?ABS({list, 5, ?ANY})}, ?M:alpha(dom([{chain, 1}, {depth, 2}]), {[{x}, {x}, {x}, {x}, {x}]})),
     ?_assertEqual({?ABS({list, 5, {x}})}, ?M:alpha(dom([{chain, 1}, {depth, 3}]), {[{x}, {x}, {x}, {x}, {x}]})),
     ?_assertError({mce_abs_domain, {bad_value, _}}, ?M:alpha(EO, ?ABS(nonsense)))].

%% AC-25's count: lists of one atom of lengths 0..20 have M+5 shapes.
chain_count_test_() ->
    [?_assertEqual(M + 5, length(lists:usort([?M:alpha(dom([{chain, M}]), lists:duplicate(N, a))
                                              || N <- lists:seq(0, 20)])))
     || M <- lists:seq(0, 3)].

is_concrete_format_test_() ->
    C1 = dom([{chain, 1}]),
    [?_assert(?M:is_concrete({a, [1, 2], #{k => v}})),
     ?_assertNot(?M:is_concrete({a, [1, ?ANY]})),
     ?_assertEqual("?", flat(?M:format(?ANY))),
     ?_assertEqual("even", flat(?M:format(?ABS(even)))),
     ?_assertEqual("pos", flat(?M:format(?ABS(pos)))),
     ?_assertEqual("[... at least 5 ...]", flat(?M:format(?ABS({list, 5, ?ANY})))),
     ?_assertEqual("[... at least 5 of a ...]", flat(?M:format(?M:alpha(C1, [a, a, a, a, a])))),
     ?_assertEqual("{x,[odd|?]}", flat(?M:format({x, [?ABS(odd) | ?ANY]})))].

flat(IoList) -> lists:flatten(io_lib:format("~ts", [IoList])).

%%====================================================================
%% Precise rules
%%====================================================================

arith_rules_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    E = ?ABS(even), O = ?ABS(odd), I = ?ABS(int),
    Pos = ?ABS(pos), Neg = ?ABS(neg), NN = ?ABS(nonneg), NP = ?ABS(nonpos),
    Bad = {error, badarith},
    [?_assertEqual([{value, O}], ?M:arith(EO, '+', [E, O])),
     ?_assertEqual([{value, E}], ?M:arith(EO, '+', [O, O])),
     ?_assertEqual([{value, E}], ?M:arith(EO, '*', [E, I])),
     ?_assertEqual([{value, O}], ?M:arith(EO, '*', [O, O])),
     ?_assertEqual([{value, I}, Bad], ?M:arith(EO, 'div', [E, E])),
     ?_assertEqual([{value, O}, Bad], ?M:arith(EO, 'rem', [O, E])),
     ?_assertEqual([{value, O}], ?M:arith(EO, 'bnot', [E])),
     ?_assertEqual([{value, Pos}], ?M:arith(S, '+', [Pos, Pos])),
     ?_assertEqual([{value, Pos}], ?M:arith(S, '+', [Pos, NN])),
     ?_assertEqual([{value, Pos}], ?M:arith(S, '*', [Neg, Neg])),
     ?_assertEqual([{value, Neg}], ?M:arith(S, '*', [Neg, Pos])),
     ?_assertEqual([{value, I}], ?M:arith(S, '-', [Pos, Pos])),
     ?_assertEqual([{value, Neg}], ?M:arith(S, '-', [Pos])),
     ?_assertEqual([{value, NP}], ?M:arith(S, '-', [NN])),
     ?_assertEqual([{value, NN}], ?M:arith(S, 'div', [Pos, Pos])),
     ?_assertEqual([{value, NN}, Bad], ?M:arith(S, 'div', [Pos, NN])),
     ?_assertEqual([{value, 0}], ?M:arith(S, '*', [0, ?ABS(int)])),
     ?_assertEqual([Bad], ?M:arith(S, 'div', [Pos, 0])),
     ?_assertEqual([Bad], ?M:arith(S, '+', [Pos, foo])),
     ?_assertEqual([Bad], ?M:arith(S, 'band', [Pos, 1.5])),
     ?_assertEqual([{value, ?ANY}, Bad], ?M:arith(S, '+', [Pos, ?ANY])),
     ?_assertEqual([{value, NN}, Bad], ?M:arith(S, 'band', [Pos, ?ANY])),
     ?_assertEqual([{value, ?ANY}], ?M:arith(S, '+', [Pos, 1.5])),
     ?_assertEqual([{value, ?ANY}, Bad], ?M:arith(S, '/', [Pos, NN])),
     ?_assertEqual([{value, 3}], ?M:arith(dom([]), '+', [1, 2])),
     ?_assertEqual([{value, I}], ?M:arith(dom([]), '+', [I, 2])),
     ?_assertError({mce_abs_domain, {bad_op, '!', 2}}, ?M:arith(S, '!', [1, 2]))].

compare_rules_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    E = ?ABS(even), O = ?ABS(odd),
    [?_assertEqual(maybe, ?M:compare(EO, '==', E, E)),
     ?_assertEqual(maybe, ?M:compare(EO, '=:=', E, E)),
     ?_assertEqual(false, ?M:compare(EO, '=:=', E, O)),
     ?_assertEqual(true, ?M:compare(EO, '/=', E, O)),
     ?_assertEqual(maybe, ?M:compare(EO, '==', E, 2.0)),
     ?_assertEqual(false, ?M:compare(EO, '=:=', E, 2.0)),
     ?_assertEqual(true, ?M:compare(EO, '<', E, foo)),
     ?_assertEqual(true, ?M:compare(EO, '>', {E}, foo)),
     ?_assertEqual(true, ?M:compare(EO, '<', {E}, {a, b})),
     ?_assertEqual(maybe, ?M:compare(EO, '<', {E}, {4})),
     ?_assertEqual(true, ?M:compare(S, '<', ?ABS(neg), 0)),
     ?_assertEqual(true, ?M:compare(S, '>=', ?ABS(nonneg), 0)),
     ?_assertEqual(false, ?M:compare(S, '>', ?ABS(nonpos), 0)),
     ?_assertEqual(maybe, ?M:compare(S, '>=', ?ABS(nonpos), 0)),
     ?_assertEqual(true, ?M:compare(S, '<', ?ABS(neg), 0.5)),
     ?_assertEqual(maybe, ?M:compare(S, '<', ?ANY, 0)),
     ?_assertEqual(true, ?M:compare(dom([{chain, 1}]), '>', ?ABS({list, 5, a}), {a})),
     ?_assertEqual(true, ?M:compare(dom([{chain, 1}]), '<', ?ABS({list, 5, a}), [b])),
     ?_assertEqual(true, ?M:compare(S, '==', 1, 1.0))].

type_match_rules_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    C1 = dom([{chain, 1}]),
    [?_assertEqual(true, ?M:type_test(EO, is_integer, ?ABS(even))),
     ?_assertEqual(false, ?M:type_test(EO, is_float, ?ABS(even))),
     ?_assertEqual(maybe, ?M:type_test(EO, is_atom, ?ANY)),
     ?_assertEqual(true, ?M:type_test(EO, is_tuple, {?ANY})),
     ?_assertEqual(true, ?M:type_test(C1, is_list, ?ABS({list, 5, a}))),
     ?_assertEqual(false, ?M:type_test(EO, {is_function, 1}, {?ANY})),
     ?_assertEqual(true, ?M:type_test(EO, {is_function, 1}, fun(X) -> X end)),
     ?_assertEqual(maybe, ?M:match_literal(EO, ?ABS(even), 0)),
     ?_assertEqual(false, ?M:match_literal(EO, ?ABS(odd), 0)),
     ?_assertEqual(false, ?M:match_literal(EO, ?ABS(even), 0.0)),
     ?_assertEqual(true, ?M:match_literal(S, 0, 0)),
     ?_assertEqual(false, ?M:match_literal(S, ?ABS(pos), 0)),
     ?_assertEqual(maybe, ?M:match_literal(S, ?ANY, ok)),
     ?_assertEqual(false, ?M:match_literal(S, {?ANY}, ok)),
     ?_assertEqual(maybe, ?M:match_literal(C1, ?ABS({list, 0, a}), [])),
     ?_assertEqual(false, ?M:match_literal(C1, ?ABS({list, 5, a}), []))].

destructure_rules_test_() ->
    C1 = dom([{chain, 1}]),
    Sum = ?M:alpha(C1, [a, a, a, a, a]),
    [?_assertEqual([{certain, a, [a, a, a, a]}, {certain, a, Sum}], ?M:as_cons(C1, Sum)),
     ?_assertEqual([{maybe, ?ANY, ?ANY}], ?M:as_cons(C1, ?ANY)),
     ?_assertEqual([{certain, x, []}], ?M:as_cons(C1, [x])),
     ?_assertEqual([], ?M:as_cons(C1, [])),
     ?_assertEqual([], ?M:as_cons(C1, {x})),
     ?_assertEqual([{certain, [x, y]}], ?M:as_tuple(C1, {x, y}, 2)),
     ?_assertEqual([], ?M:as_tuple(C1, {x, y}, 3)),
     ?_assertEqual([{maybe, [?ANY, ?ANY]}], ?M:as_tuple(C1, ?ANY, 2)),
     ?_assertEqual([], ?M:as_tuple(C1, ?ABS(even), 1)),
     ?_assertEqual(false, ?M:as_nil(C1, Sum)),
     ?_assertEqual(maybe, ?M:as_nil(C1, ?ANY)),
     ?_assertEqual(true, ?M:as_nil(C1, [])),
     %% walking the summary down visits exactly the M+5 shapes (001 Fig. 4)
     ?_assertEqual(6, length(walk_tails(C1, [Sum], []))),
     %% a joined summary of at least 0 cells may be empty
     ?_assertEqual(maybe, ?M:as_nil(C1, ?M:join(C1, [], [a]))),
     ?_assertMatch([{maybe, a, []} | _], ?M:as_cons(C1, ?M:join(C1, [], [a])))].

walk_tails(_D, [], Seen) -> Seen;
walk_tails(D, [V | Vs], Seen) ->
    case lists:member(V, Seen) of
        true -> walk_tails(D, Vs, Seen);
        false -> walk_tails(D, [T || {_, _, T} <- ?M:as_cons(D, V)] ++ Vs, [V | Seen])
    end.

order_rules_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    C1 = dom([{chain, 1}]),
    None = dom([]),
    [?_assert(?M:leq(EO, ?ABS(even), 42)),
     ?_assertNot(?M:leq(EO, 42, ?ABS(even))),
     ?_assert(?M:leq(EO, ?ANY, {x})),
     ?_assertNot(?M:leq(EO, {x}, ?ANY)),
     ?_assert(?M:leq(S, ?ABS(nonneg), ?ABS(pos))),
     ?_assert(?M:leq(S, ?ABS(nonneg), 0)),
     ?_assertNot(?M:leq(S, ?ABS(pos), 0)),
     ?_assertEqual(?ABS(int), ?M:join(EO, ?ABS(even), ?ABS(odd))),
     ?_assertEqual(?ABS(nonneg), ?M:join(S, 0, ?ABS(pos))),
     ?_assertEqual(?ABS(int), ?M:join(S, ?ABS(neg), ?ABS(pos))),
     ?_assertEqual(?ABS(int), ?M:join(None, 1, 2)),
     ?_assertEqual(?ANY, ?M:join(EO, {a}, {a, b})),
     ?_assertEqual({a, ?ABS(int)}, ?M:join(EO, {a, 1}, {a, 2})),
     ?_assertEqual(?ANY, ?M:join(EO, a, b)),
     %% without a chain domain lists of different lengths join cell by
     %% cell: the tail of the shorter one becomes ?
     ?_assertEqual([a | ?ANY], ?M:join(EO, [a], [a, a])),
     ?_assertEqual(?ANY, ?M:join(EO, [], [a])),
     ?_assertEqual(?ABS({list, 1, a}), ?M:join(C1, [a], [a, a])),
     ?_assertEqual(?ABS({list, 0, ?ANY}), ?M:join(C1, [], [a, b])),
     ?_assertEqual([?ANY, b], ?M:join(C1, [a, b], [c, b])),
     ?_assert(?M:meet_exists(S, ?ABS(nonpos), ?ABS(nonneg))),
     ?_assertNot(?M:meet_exists(S, ?ABS(neg), ?ABS(nonneg))),
     ?_assertNot(?M:meet_exists(EO, ?ABS(even), 3)),
     ?_assert(?M:meet_exists(C1, ?ABS({list, 5, ?ANY}), [a, b, c, d, e, f])),
     ?_assertNot(?M:meet_exists(C1, ?ABS({list, 5, ?ANY}), [a, b, c, d])),
     ?_assertEqual(even, ?M:join(?M:finite([{'?', even}, {'?', odd}]), even, even)),
     ?_assertEqual('?', ?M:join(?M:finite([{'?', even}, {'?', odd}]), even, odd))].

bif_rules_test_() ->
    EO = dom([even_odd]),
    S = dom([sign]),
    C1 = dom([{chain, 1}]),
    Sum = ?M:alpha(C1, [a, a, a, a, a]),
    [?_assertEqual([{value, ?ABS(pos)}], ?M:bif(dom([sign, {chain, 1}]), {erlang, length, 1}, [Sum])),
     ?_assertEqual([{value, ?ABS(int)}], ?M:bif(C1, {erlang, length, 1}, [Sum])),
     ?_assertEqual([{value, a}], ?M:bif(C1, {erlang, hd, 1}, [Sum])),
     ?_assertEqual([{value, ?ANY}, {error, badarg}], ?M:bif(C1, {erlang, hd, 1}, [?ANY])),
     ?_assertEqual([{value, b}, {value, c}, {error, badarg}],
                   ?M:bif(EO, {erlang, element, 2}, [?ABS(even), {a, b, c, c}])),
     ?_assertEqual([{value, ?ABS(pos)}], ?M:bif(S, {erlang, abs, 1}, [?ABS(neg)])),
     ?_assertEqual([{value, ?ABS(neg)}], ?M:bif(S, {erlang, min, 2}, [?ABS(neg), ?ABS(nonneg)])),
     ?_assertEqual([{value, true}, {value, false}], ?M:bif(S, {erlang, is_atom, 1}, [?ANY])),
     ?_assertEqual([{value, true}], ?M:bif(C1, {lists, member, 2}, [a, Sum])),
     ?_assertEqual([{value, false}], ?M:bif(C1, {lists, member, 2}, [b, Sum])),
     ?_assertEqual([{value, {k, ?ABS(odd)}}], ?M:bif(EO, {lists, keyfind, 3}, [k, 1, [{k, ?ABS(odd)}]])),
     ?_assertEqual([{value, ?ABS(pos)}], ?M:bif(dom([sign, {chain, 1}]), {lists, sum, 1},
                                              [?M:alpha(dom([sign, {chain, 1}]), [1, 2, 3, 4, 5])])),
     ?_assertEqual([{value, ?ABS({list, 5, ?ANY})}], ?M:bif(C1, {erlang, '++', 2}, [Sum, [b]])),
     ?_assertEqual(unknown, ?M:bif(C1, {erlang, atom_to_list, 1}, [?ANY]))].

%%====================================================================
%% Soundness by random sampling
%%====================================================================

-define(CASES, 3000).

%% The domains the properties run over.
domains() ->
    [dom(S) || S <- [[], [even_odd], [sign], [even_odd, {chain, 1}], [sign, {depth, 2}],
                     [{chain, 0}, {depth, 3}], [even_odd, {chain, 2}, {depth, 4}]]].

seed() -> _ = rand:seed(exsss, {1, 2, 3}), ok.

pick(L) -> lists:nth(rand:uniform(length(L)), L).

small_int() -> rand:uniform(41) - 21.

int() ->
    case rand:uniform(10) of
        1 -> rand:uniform(1 bsl 70) - (1 bsl 69);
        _ -> small_int()
    end.

number() ->
    case rand:uniform(8) of
        1 -> pick([0.0, 1.5, -2.0, 4.0]);
        2 -> pick([a, {}, []]);
        _ -> int()
    end.

term() -> term(3).
term(0) -> pick([a, b, 0, 1, -1, 2, 1.0, []]);
term(N) ->
    case rand:uniform(8) of
        1 -> int();
        2 -> pick([a, b, c, true, false, 2.5, <<"x">>, self()]);
        3 -> list_to_tuple([term(N - 1) || _ <- lists:seq(1, rand:uniform(3) - 1)]);
        4 -> [term(N - 1) || _ <- lists:seq(1, rand:uniform(7) - 1)];
        5 -> lists:duplicate(rand:uniform(8) - 1, pick([a, 1, 2]));
        6 -> [term(N - 1) | pick([b, []])];
        7 -> #{k => term(N - 1)};
        _ -> pick([0, 1, 2, -3, a, []])
    end.

%% An abstract value covering the concrete term T: its abstraction, or that
%% joined with another term's, or `any'.
cover(D, T) ->
    A = ?M:alpha(D, T),
    case rand:uniform(6) of
        1 -> ?ANY;
        2 -> ?M:join(D, A, ?M:alpha(D, term()));
        3 -> ?M:join(D, A, ?M:alpha(D, int()));
        _ -> A
    end.

%% A concrete value V is covered when it is in the concretisation of an
%% outcome's value (concrete terms are the most precise values, so that is
%% leq(A, V)), and, without a chain domain, when the outcome is also below
%% V's abstraction.  With chain summaries the stronger form does not hold
%% and need not: a list value known cell by cell ([E1, ..., Ek | ?], from a
%% depth cut or an unknown tail) is incomparable with the summary that is
%% the abstraction of a long concrete list it covers.
covers(D, Outcomes, {value, V}) ->
    Chain = lists:keymember(chain, 1, ?M:spec(D)),
    C = ?M:alpha(D, V),
    lists:any(fun({value, A}) -> ?M:leq(D, A, V) andalso (Chain orelse ?M:leq(D, A, C));
                 (_) -> false
              end, Outcomes);
covers(_D, Outcomes, {error, R}) -> lists:member({error, R}, Outcomes).

run(F) ->
    try {value, F()}
    catch error:R -> {error, R}
    end.

check(What, Ok, Info) ->
    case Ok of
        true -> ok;
        false -> erlang:error({unsound, What, Info})
    end.

arith_sound_test() ->
    seed(),
    Ops2 = ['+', '-', '*', 'div', 'rem', '/', 'band', 'bor', 'bxor', 'bsl', 'bsr'],
    Ops1 = ['-', '+', 'bnot'],
    Ds = domains(),
    [begin
         D = pick(Ds),
         case rand:uniform(4) of
             1 ->
                 Op = pick(Ops1),
                 A = number(),
                 Xa = cover(D, A),
                 Out = ?M:arith(D, Op, [Xa]),
                 check(arith, covers(D, Out, run(fun() -> apply_op(Op, [A]) end)), {Op, A, Xa, Out});
             _ ->
                 Op = pick(Ops2),
                 A = number(),
                 B = case Op of
                         _ when Op =:= 'bsl'; Op =:= 'bsr' -> small_int();
                         _ -> number()
                     end,
                 Xa = cover(D, A),
                 Xb = cover(D, B),
                 Out = ?M:arith(D, Op, [Xa, Xb]),
                 check(arith, covers(D, Out, run(fun() -> apply_op(Op, [A, B]) end)),
                       {Op, A, B, Xa, Xb, Out})
         end
     end || _ <- lists:seq(1, ?CASES)],
    ok.

apply_op(Op, Args) -> erlang:apply(erlang, Op, Args).

%% Three-valued answers: the concrete answer unless maybe.
agrees(maybe, _) -> true;
agrees(Abs, Conc) -> Abs =:= Conc.

compare_sound_test() ->
    seed(),
    Ops = ['==', '/=', '=:=', '=/=', '<', '>', '=<', '>='],
    Ds = domains(),
    [begin
         D = pick(Ds),
         {A, B} = case rand:uniform(3) of
                      1 -> {int(), int()};
                      2 -> {number(), number()};
                      _ -> {term(), term()}
                  end,
         Op = pick(Ops),
         Xa = cover(D, A),
         Xb = cover(D, B),
         R = ?M:compare(D, Op, Xa, Xb),
         check(compare, agrees(R, erlang:Op(A, B)), {Op, A, B, Xa, Xb, R})
     end || _ <- lists:seq(1, ?CASES)],
    ok.

type_match_sound_test() ->
    seed(),
    Tests = [is_integer, is_float, is_number, is_atom, is_boolean, is_list, is_tuple, is_pid,
             is_reference, is_port, is_binary, is_bitstring, is_function, is_map, {is_function, 1}],
    Lits = [0, 1, 2, -1, 1.0, 0.0, a, true, []],
    Ds = domains(),
    [begin
         D = pick(Ds),
         T = case rand:uniform(2) of 1 -> term(); _ -> pick(Lits ++ [int()]) end,
         X = cover(D, T),
         Test = pick(Tests),
         R = ?M:type_test(D, Test, X),
         check(type_test, agrees(R, concrete_test(Test, T)), {Test, T, X, R}),
         Lit = pick(Lits),
         Rm = ?M:match_literal(D, X, Lit),
         check(match_literal, agrees(Rm, T =:= Lit), {Lit, T, X, Rm})
     end || _ <- lists:seq(1, ?CASES)],
    ok.

concrete_test({is_function, N}, T) -> is_function(T, N);
concrete_test(Test, T) -> erlang:Test(T).

destructure_sound_test() ->
    seed(),
    Ds = domains(),
    [begin
         D = pick(Ds),
         T = term(),
         X = cover(D, T),
         Cons = ?M:as_cons(D, X),
         case T of
             [H | Tl] ->
                 %% Covered: the concrete parts are in the abstract ones'
                 %% concretisations (text stays exact, so its cells are
                 %% more precise than the alpha of their parts).
                 check(as_cons, lists:any(fun({_, Xh, Xt}) ->
                                                  ?M:leq(D, Xh, H) andalso ?M:leq(D, Xt, Tl)
                                          end, Cons), {T, X, Cons});
             _ ->
                 check(as_cons, not lists:keymember(certain, 1, Cons), {T, X, Cons})
         end,
         Tup = ?M:as_tuple(D, X, 2),
         case T of
             {T1, T2} ->
                 check(as_tuple, lists:any(fun({_, [X1, X2]}) ->
                                                   ?M:leq(D, X1, ?M:alpha(D, T1)) andalso
                                                       ?M:leq(D, X2, ?M:alpha(D, T2))
                                           end, Tup), {T, X, Tup});
             _ ->
                 check(as_tuple, not lists:keymember(certain, 1, Tup), {T, X, Tup})
         end,
         Nil = ?M:as_nil(D, X),
         check(as_nil, agrees(Nil, T =:= []), {T, X, Nil})
     end || _ <- lists:seq(1, ?CASES)],
    ok.

lattice_sound_test() ->
    seed(),
    Ds = domains(),
    [begin
         D = pick(Ds),
         T = term(),
         U = term(),
         A = ?M:alpha(D, T),
         B = ?M:alpha(D, U),
         check(idempotent, ?M:alpha(D, A) =:= A, {T, A}),
         check(alpha_covers, ?M:leq(D, A, T), {T, A}),
         J = ?M:join(D, A, B),
         check(join_upper, ?M:leq(D, J, A) andalso ?M:leq(D, J, B), {A, B, J}),
         check(join_canonical, ?M:alpha(D, J) =:= J, {A, B, J}),
         check(meet, ?M:meet_exists(D, J, A) andalso ?M:meet_exists(D, A, T), {A, B, J}),
         check(reflexive, ?M:leq(D, A, A) andalso ?M:leq(D, J, J), {A, J}),
         %% canonical: alpha of the same concretisation is the same term
         check(canonical, ?M:alpha(D, T) =:= ?M:alpha(D, ?M:alpha(D, T)), T)
     end || _ <- lists:seq(1, ?CASES)],
    ok.

%% The BIFs: for concrete arguments, covered by their abstractions.
bif_sound_test() ->
    seed(),
    Ds = domains(),
    [begin
         D = pick(Ds),
         {MFA, Args} = bif_case(),
         Xs = [cover(D, A) || A <- Args],
         case ?M:bif(D, MFA, Xs) of
             unknown -> erlang:error({unknown, MFA});
             Out ->
                 {M, F, _} = MFA,
                 check(bif, covers(D, Out, run(fun() -> apply(M, F, Args) end)), {MFA, Args, Xs, Out})
         end
     end || _ <- lists:seq(1, ?CASES)],
    ok.

some_list() ->
    case rand:uniform(5) of
        1 -> lists:duplicate(rand:uniform(8) - 1, pick([a, 1, 2, {k, 1}]));
        2 -> [small_int() || _ <- lists:seq(1, rand:uniform(7) - 1)];
        3 -> [pick([{k, 1}, {j, 2}, {k, a}, {k}, x]) || _ <- lists:seq(1, rand:uniform(7) - 1)];
        4 -> term();
        _ -> [term(2) || _ <- lists:seq(1, rand:uniform(4) - 1)]
    end.

bif_case() ->
    case rand:uniform(17) of
        1 -> {{erlang, length, 1}, [some_list()]};
        2 -> {{erlang, hd, 1}, [some_list()]};
        3 -> {{erlang, tl, 1}, [some_list()]};
        4 -> {{erlang, element, 2}, [pick([0, 1, 2, 3, a]), pick([{a, b}, {1, 2, 3}, {}, x, {k, 2}])]};
        5 -> {{erlang, setelement, 3}, [pick([0, 1, 2, 3]), pick([{a, b}, {1, 2, 3}, x]), term(1)]};
        6 -> {{erlang, tuple_size, 1}, [term()]};
        7 -> {{erlang, abs, 1}, [number()]};
        8 -> {{erlang, pick([min, max]), 2}, [number(), number()]};
        9 -> {{erlang, '++', 2}, [some_list(), some_list()]};
        10 -> {{erlang, '--', 2}, [some_list(), some_list()]};
        11 -> {{lists, reverse, 1}, [some_list()]};
        12 -> {{lists, member, 2}, [pick([a, 1, 2, {k, 1}, x]), some_list()]};
        13 -> {{lists, nth, 2}, [pick([0, 1, 2, 3, 7, a]), some_list()]};
        14 -> {{lists, last, 1}, [some_list()]};
        15 -> {{lists, keyfind, 3}, [pick([k, j, 1]), pick([1, 2]), some_list()]};
        16 -> {{lists, sum, 1}, [some_list()]};
        _ -> {{erlang, pick([is_integer, is_atom, is_list, is_tuple]), 1}, [term()]}
    end.

%% Lemma 6 is sound on the built-in domains: a state proposition covering
%% the concrete T that satisfies V has T in V's concretisation, and one that
%% refutes V has T outside it.  And meet_exists holds for two covers of one
%% term.
propositions_sound_test() ->
    seed(),
    Ds = domains(),
    [begin
         D = pick(Ds),
         T = term(),
         U = case rand:uniform(3) of 1 -> T; _ -> term() end,
         X = cover(D, T),
         V = case rand:uniform(3) of 1 -> ?M:alpha(D, U); 2 -> cover(D, U); _ -> wild(U) end,
         check(satisfies, not ?M:satisfies(D, [X], V) orelse ?M:leq(D, unwild(V), T), {T, X, V}),
         check(refutes, not (?M:refutes(D, [X], V) andalso ?M:leq(D, unwild(V), T)), {T, X, V}),
         check(meet_exists, ?M:meet_exists(D, X, cover(D, T)), {T, X})
     end || _ <- lists:seq(1, ?CASES)],
    ok.

%% A formula value with '_' for some atoms.
wild(a) -> '_';
wild([H | T]) -> [wild(H) | wild(T)];
wild(T) when is_tuple(T) -> list_to_tuple([wild(E) || E <- tuple_to_list(T)]);
wild(X) -> X.

unwild('_') -> ?ANY;
unwild([H | T]) -> [unwild(H) | unwild(T)];
unwild(?ABS(_) = L) -> L;
unwild(T) when is_tuple(T) -> list_to_tuple([unwild(E) || E <- tuple_to_list(T)]);
unwild(X) -> X.
