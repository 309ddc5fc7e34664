%% LTL tests.  The oracle is a brute-force semantics of LTL on lassos,
%% written here independently of mce_ltl: the formula is evaluated on the
%% finitely many positions of an ultimately periodic word, until and
%% release as least and greatest fixpoints.  Seeded random formulas and
%% words check that the Büchi automaton accepts exactly the words on which
%% the formula holds, that simplification keeps the meaning, and that
%% printing and parsing agree.  When Debian's `lbt' translator is
%% installed, its automata are a second, independent oracle.
-module(mce_ltl_tests).
-include_lib("eunit/include/eunit.hrl").

-define(FORMULAS, 600).
-define(WORDS_PER_FORMULA, 40).
-define(LBT_FORMULAS, 150).
-define(LBT_MAX_STATES, 300).

%%% ------------------------------------------------------------------------
%%% Parsing and printing

parse_desugars_test_() ->
    A = {prop, a}, B = {prop, b}, C = {prop, c},
    Impl = fun(X, Y) -> {'or', {'not', X}, Y} end,
    Equiv = fun(X, Y) -> {'or', {'and', X, Y}, {'and', {'not', X}, {'not', Y}}} end,
    Cases =
        [{"a", A},
         {"true", true},
         {"false", false},
         {"[]a", {release, false, A}},
         {"always a", {release, false, A}},
         {"<>a", {until, true, A}},
         {"eventually a", {until, true, A}},
         {"X a", {next, A}},
         {"next a", {next, A}},
         {"!a", {'not', A}},
         {"not a", {'not', A}},
         {"a until b", {until, A, B}},
         {"a release b", {release, A, B}},
         {"a and b", {'and', A, B}},
         {"a or b", {'or', A, B}},
         {"a implies b", Impl(A, B)},
         {"a equiv b", Equiv(A, B)},
         %% Precedence and associativity.
         {"a U b U c", {until, A, {until, B, C}}},
         {"a R b U c", {release, A, {until, B, C}}},
         {"!a U b", {until, {'not', A}, B}},
         {"[]a U b", {until, {release, false, A}, B}},
         {"X a R b", {release, {next, A}, B}},
         {"a && b U c", {'and', A, {until, B, C}}},
         {"a U b && c", {'and', {until, A, B}, C}},
         {"a || b && c", {'or', A, {'and', B, C}}},
         {"a && b || c", {'or', {'and', A, B}, C}},
         {"a && b && c", {'and', {'and', A, B}, C}},
         {"a || b || c", {'or', {'or', A, B}, C}},
         {"a -> b -> c", Impl(A, Impl(B, C))},
         {"a || b -> c", Impl({'or', A, B}, C)},
         {"a -> b <-> c", Equiv(Impl(A, B), C)},
         {"a <-> b <-> c", Equiv(Equiv(A, B), C)},
         {"!!a", {'not', {'not', A}}},
         {"[]<>a", {release, false, {until, true, A}}},
         {"always eventually a", {release, false, {until, true, A}}},
         {"not a until b", {until, {'not', A}, B}},
         {"(a || b) && c", {'and', {'or', A, B}, C}},
         %% McErlang's spellings beside SPIN's, at the same precedence.
         {"a & b", {'and', A, B}},
         {"a | b", {'or', A, B}},
         {"a => b", Impl(A, B)},
         {"a <=> b", Equiv(A, B)},
         {"a|b&c", {'or', A, {'and', B, C}}},
         {"a & b | c", {'or', {'and', A, B}, C}},
         {"a & b && c", {'and', {'and', A, B}, C}},
         {"a | b || c", {'or', {'or', A, B}, C}},
         {"a => b => c", Impl(A, Impl(B, C))},
         {"a | b => c", Impl({'or', A, B}, C)},
         {"a => b -> c", Impl(A, Impl(B, C))},
         {"a => b <-> c", Equiv(Impl(A, B), C)},
         {"a <=> b <-> c", Equiv(Equiv(A, B), C)},
         {"[](a => <>b)", {release, false, Impl(A, {until, true, B})}},
         {"a U b & c", {'and', {until, A, B}, C}},
         {"!a & b", {'and', {'not', A}, B}},
         {"X(a U b)", {next, {until, A, B}}},
         %% Names.
         {"'in_cs'", {prop, in_cs}},
         {"done_1@x", {prop, 'done_1@x'}},
         {"'true' && 'X'", {'and', {prop, true}, {prop, 'X'}}},
         {"'it\\'s' || 'a\\\\b'", {'or', {prop, 'it\'s'}, {prop, 'a\\b'}}},
         {"'two words'", {prop, 'two words'}},
         {"u R r", {release, {prop, u}, {prop, r}}},
         {" a\n&&\tb ", {'and', A, B}},
         {[$', 233, $t, 233, $', $\s, $U, $\s, $b], {until, {prop, 'été'}, B}},
         {<<"'été' U b"/utf8>>, {until, {prop, 'été'}, B}}],
    [{lists:flatten(io_lib:format("~ts", [S])), ?_assertEqual({ok, F}, mce_ltl:parse(S))}
     || {S, F} <- Cases].

parse_errors_test_() ->
    Cases =
        [{"", 1, "expected a formula but found end of input"},
         {"   ", 4, "expected a formula but found end of input"},
         {"(a", 3, "expected ')' but found end of input"},
         {"(a b)", 4, "expected ')' but found predicate b"},
         {"a &&", 5, "expected a formula but found end of input"},
         {"a b", 3, "expected an operator or end of input but found predicate b"},
         {"a <-> b)", 8, "expected an operator or end of input but found ')'"},
         {"true false", 6, "expected an operator or end of input but found 'false'"},
         {"a & ", 5, "expected a formula but found end of input"},
         {"a | | b", 5, "expected a formula but found '|'"},
         {"a = b", 3, "expected '=>', '==', '=:=' or '=/=' but found '='"},
         {"a =", 3, "expected '=>', '==', '=:=' or '=/=' but found '='"},
         {"a - b", 3, "expected '->' but found '-'"},
         {"a < b", 3, "expected '<>', '<->' or '<=>' but found '<'"},
         {"[ a", 1, "expected '[]' but found '['"},
         {"a # b", 3, "unexpected character '#'"},
         {"'abc", 1, "expected a closing quote but found end of input"},
         {"a && 'abc", 6, "expected a closing quote but found end of input"},
         {"Xp", 1, "expected a formula or an operator but found 'Xp'"},
         {"a U", 4, "expected a formula but found end of input"},
         {")", 1, "expected a formula but found ')'"},
         {"a && || b", 6, "expected a formula but found '||'"},
         {"always", 7, "expected a formula but found end of input"},
         {"until", 1, "expected a formula but found 'until'"},
         {"[] (a -> )", 10, "expected a formula but found ')'"},
         {"a && next", 10, "expected a formula but found end of input"},
         {"((a)", 5, "expected ')' but found end of input"},
         {"a U b c", 7, "expected an operator or end of input but found predicate c"}],
    [{S, fun() ->
                 case mce_ltl:parse(S) of
                     {error, {ltl_parse, Col, Message}} ->
                         ?assertEqual({S, Column}, {S, Col}),
                         ?assertEqual({S, 1}, {S, string:str(Message, Expected)});
                     Other ->
                         ?assertEqual({S, error}, {S, Other})
                 end
         end}
     || {S, Column, Expected} <- Cases].

format_examples_test_() ->
    Cases = [{"[]a", {release, false, {prop, a}}},
             {"<>a", {until, true, {prop, a}}},
             {"X a", {next, {prop, a}}},
             {"a U b U c", {until, {prop, a}, {until, {prop, b}, {prop, c}}}},
             {"(a U b) U c", {until, {until, {prop, a}, {prop, b}}, {prop, c}}},
             {"a && (b && c)", {'and', {prop, a}, {'and', {prop, b}, {prop, c}}}},
             {"a || b && c", {'or', {prop, a}, {'and', {prop, b}, {prop, c}}}},
             {"!(a || b)", {'not', {'or', {prop, a}, {prop, b}}}},
             {"'true' && 'in cs'", {'and', {prop, true}, {prop, 'in cs'}}},
             {"'it\\'s'", {prop, 'it\'s'}}],
    [?_assertEqual(S, unicode:characters_to_list(mce_ltl:format(F))) || {S, F} <- Cases].

%% format/1 prints exactly the formula back, names of any shape included.
format_round_trip_test() ->
    rand:seed(exsss, 61),
    Names = [a, b, in_cs, 'true', 'X', 'next', 'two words', 'it\'s', 'back\\slash',
             'été', 'Up', '', 'a-b'],
    Bad = [F || _ <- lists:seq(1, 2000),
                F <- [gen_formula(4, Names)],
                mce_ltl:parse(mce_ltl:format(F)) =/= {ok, F}],
    ?assertEqual([], lists:sublist(Bad, 5)).

%% Random surface syntax (every spelling, sugar, extra whitespace) parses
%% to the formula an independent desugaring gives.
surface_syntax_test() ->
    rand:seed(exsss, 62),
    Bad = [{lists:flatten(S), F, Got}
           || _ <- lists:seq(1, 1000),
              {S, F} <- [gen_surface(4)],
              Got <- [mce_ltl:parse(S)],
              Got =/= {ok, F}],
    ?assertEqual([], lists:sublist(Bad, 5)).

%%% ------------------------------------------------------------------------
%%% Quantifiers and parameterised predicates

parse_quantified_test_() ->
    A = fun(V) -> {prop, {a, [{var, V}]}} end,
    B = fun(V, W) -> {prop, {b, [{var, V}, {var, W}]}} end,
    Impl = fun(X, Y) -> {'or', {'not', X}, Y} end,
    Neq = fun(V, W) -> {'not', {eq, V, W}} end,
    Equiv = fun(X, Y) -> {'or', {'and', X, Y}, {'and', {'not', X}, {'not', Y}}} end,
    Cases =
        [{"forall P: a(P)", {forall, ['P'], A('P')}},
         {"forall P, Q: b(P, Q)", {forall, ['P', 'Q'], B('P', 'Q')}},
         {"forall P,Q:b(Q,P)", {forall, ['P', 'Q'], B('Q', 'P')}},
         {"forall P: a (P)", {forall, ['P'], A('P')}},
         {"forall P, Q: P == Q", {forall, ['P', 'Q'], {eq, 'P', 'Q'}}},
         {"forall P, Q: P =:= Q", {forall, ['P', 'Q'], {eq, 'P', 'Q'}}},
         {"forall P, Q: P != Q", {forall, ['P', 'Q'], Neq('P', 'Q')}},
         {"forall P, Q: P =/= Q", {forall, ['P', 'Q'], Neq('P', 'Q')}},
         {"forall P: P == P", {forall, ['P'], {eq, 'P', 'P'}}},
         %% Comparisons bind like operands, tighter than every operator.
         {"forall P, Q: P != Q -> []a(P)",
          {forall, ['P', 'Q'], Impl(Neq('P', 'Q'), {release, false, A('P')})}},
         {"forall P, Q: !P == Q", {forall, ['P', 'Q'], {'not', {eq, 'P', 'Q'}}}},
         {"forall P, Q: P == Q U a(P)", {forall, ['P', 'Q'], {until, {eq, 'P', 'Q'}, A('P')}}},
         {"forall P, Q: X P != Q", {forall, ['P', 'Q'], {next, Neq('P', 'Q')}}},
         %% forall extends as far right as possible.
         {"forall P: a(P) && c || d <-> e",
          {forall, ['P'], Equiv({'or', {'and', A('P'), {prop, c}}, {prop, d}}, {prop, e})}},
         {"a && forall P: a(P) || c",
          {'and', {prop, a}, {forall, ['P'], {'or', A('P'), {prop, c}}}}},
         {"(forall P: a(P)) && c", {'and', {forall, ['P'], A('P')}, {prop, c}}},
         {"!forall P: a(P)", {'not', {forall, ['P'], A('P')}}},
         {"[] forall P: <>a(P)", {release, false, {forall, ['P'], {until, true, A('P')}}}},
         {"c U forall P: a(P) U c", {until, {prop, c}, {forall, ['P'], {until, A('P'), {prop, c}}}}},
         {"forall P: a(P) -> forall Q: b(P, Q)",
          {forall, ['P'], Impl(A('P'), {forall, ['Q'], B('P', 'Q')})}},
         {"forall P: forall Q: b(P, Q)", {forall, ['P'], {forall, ['Q'], B('P', 'Q')}}},
         %% Names and variables of every shape.
         {"forall P: 'next'(P)", {forall, ['P'], {prop, {next, [{var, 'P'}]}}}},
         {"forall P: 'two words'(P, P) && 'two words'",
          {forall, ['P'], {'and', {prop, {'two words', [{var, 'P'}, {var, 'P'}]}},
                           {prop, 'two words'}}}},
         {"forall Pid_1@x, Up, Xa: b(Pid_1@x, Up) || a(Xa)",
          {forall, ['Pid_1@x', 'Up', 'Xa'], {'or', B('Pid_1@x', 'Up'), A('Xa')}}},
         {"'forall'", {prop, forall}},
         {"forall P: a(P) U 'forall'", {forall, ['P'], {until, A('P'), {prop, forall}}}}],
    [{S, ?_assertEqual({ok, F}, mce_ltl:parse(S))} || {S, F} <- Cases].

paper_formula_test() ->
    S = "forall P, Q: P != Q -> [](allocate(P) -> (!value(Q) U (value(P) || allocated)))",
    V = fun(Name, Var) -> {prop, {Name, [{var, Var}]}} end,
    Expected = {forall, ['P', 'Q'],
                {'or', {'not', {'not', {eq, 'P', 'Q'}}},
                 {release, false,
                  {'or', {'not', V(allocate, 'P')},
                   {until, {'not', V(value, 'Q')}, {'or', V(value, 'P'), {prop, allocated}}}}}}},
    ?assertEqual({ok, Expected}, mce_ltl:parse(S)),
    ?assertEqual([{allocate, 1}, {allocated, 0}, {value, 1}], mce_ltl:predicates(Expected)),
    ?assertEqual({ok, Expected}, mce_ltl:parse(mce_ltl:format(Expected))),
    %% Over three pids: nine instances, of which the three with P = Q hold
    %% trivially.  The automaton of the negation, which is what a search
    %% for counterexamples builds, agrees with the direct semantics; so
    %% does the automaton of the formula over two pids.  (That of the
    %% formula over three pids is a product of six independent
    %% obligations, too slow to build here.)
    Pids = [c:pid(0, N, 0) || N <- [3, 4, 5]],
    F = mce_ltl:instantiate(Expected, Pids),
    ?assertEqual([{allocate, 1}, {allocated, 0}, {value, 1}], mce_ltl:predicates(F)),
    Text = format(F),
    ?assertNotEqual(0, string:str(Text, "value(<0.3.0>)")),
    ?assertNotEqual(0, string:str(Text, "allocate(<0.5.0>)")),
    Names = fun(Ps) -> [allocated | [{N, [P]} || N <- [allocate, value], P <- Ps]] end,
    rand:seed(exsss, 71),
    agree(mce_ltl:to_buchi({'not', F}), [{{'not', Expected}, Pids}, {{'not', F}, []}],
          Names(Pids), 300),
    Two = lists:sublist(Pids, 2),
    F2 = mce_ltl:instantiate(Expected, Two),
    agree(mce_ltl:to_buchi(F2), [{Expected, Two}, {F2, []}], Names(Two), 300).

instantiate_examples_test_() ->
    P = fun(S) -> {ok, F} = mce_ltl:parse(S), F end,
    A = fun(V) -> {prop, {a, [V]}} end,
    B = fun(V, W) -> {prop, {b, [V, W]}} end,
    Cases =
        [{"forall P: a(P)", [1, 2], {'and', A(1), A(2)}},
         {"forall P: a(P)", [x], A(x)},
         {"forall P: a(P)", [], true},
         {"forall P: a(P)", [1, 2, 3], {'and', {'and', A(1), A(2)}, A(3)}},
         {"forall P, Q: P == Q", [1, 2], {'and', {'and', {'and', true, false}, false}, true}},
         {"forall P, Q: P != Q", [1, 2],
          {'and', {'and', {'and', {'not', true}, {'not', false}}, {'not', false}}, {'not', true}}},
         {"forall P, Q: b(P, Q)", [1, 2],
          {'and', {'and', {'and', B(1, 1), B(1, 2)}, B(2, 1)}, B(2, 2)}},
         {"forall P: a(P) && forall Q: b(Q, P)", [1, 2],
          {'and', {'and', A(1), {'and', B(1, 1), B(2, 1)}},
           {'and', A(2), {'and', B(1, 2), B(2, 2)}}}},
         {"c && forall P: X a(P)", [{p, 1}], {'and', {prop, c}, {next, A({p, 1})}}},
         {"forall P, Q: a(P)", [1, 2], {'and', {'and', {'and', A(1), A(1)}, A(2)}, A(2)}},
         {"forall P, Q: P != Q -> [](a(P) -> !b(Q, Q))", [1],
          {'or', {'not', {'not', true}},
           {release, false, {'or', {'not', A(1)}, {'not', B(1, 1)}}}}},
         {"[](p -> <>q) && 'next'", [1, 2], P("[](p -> <>q) && 'next'")}],
    [{S, ?_assertEqual(F, mce_ltl:instantiate(P(S), D))} || {S, D, F} <- Cases].

%% A formula without quantifiers comes back unchanged.
instantiate_unquantified_test() ->
    rand:seed(exsss, 72),
    Formulas = [gen_formula(4, [a, b, {c, [1]}, {c, [{var, 'P'}]}]) || _ <- lists:seq(1, 500)],
    ?assertEqual([], [F || F <- Formulas, mce_ltl:instantiate(F, [1, 2]) =/= F]).

predicates_test_() ->
    P = fun(S) -> {ok, F} = mce_ltl:parse(S), F end,
    Cases = [{"true", []},
             {"[]p U (q || !p)", [{p, 0}, {q, 0}]},
             {"forall P, Q: P == Q", []},
             {"a && forall P: a(P) || b(P, P) || X a(P)", [{a, 0}, {a, 1}, {b, 2}]},
             {"forall P: 'next'(P) && next 'next'", [{next, 0}, {next, 1}]}],
    [{S, ?_assertEqual(Expected, mce_ltl:predicates(P(S)))} || {S, Expected} <- Cases] ++
        [?_assertEqual([{a, 1}, {b, 0}],
                       mce_ltl:predicates(mce_ltl:instantiate(P("forall P: a(P) U b"), [x, y])))].

parse_quantified_errors_test_() ->
    Cases =
        [{"p(X)", 3, "X is the next operator; variables cannot be named X"},
         {"forall P: p(P, U)", 16, "U is the until operator; variables cannot be named U"},
         {"forall R: a", 8, "R is the release operator; variables cannot be named R"},
         {"forall P, X: a", 11, "X is the next operator; variables cannot be named X"},
         {"forall P: X == P", 11, "X is the next operator; variables cannot be named X"},
         {"forall P: P != X", 16, "X is the next operator; variables cannot be named X"},
         {"p(P)", 3, "variable P is not bound by a forall"},
         {"forall P: q(Q)", 13, "variable Q is not bound by a forall"},
         {"forall P: q(P, Q)", 16, "variable Q is not bound by a forall"},
         {"(forall P: a(P)) && b(P)", 23, "variable P is not bound by a forall"},
         {"forall P: P == Q", 16, "variable Q is not bound by a forall"},
         {"P == Q", 1, "variable P is not bound by a forall"},
         {"forall P, P: a(P)", 11, "variable P is bound twice"},
         {"forall P: forall Q, P: a(P)", 21, "variable P is already bound by an enclosing forall"},
         {"forall P: P", 11, "variable P is not a formula"},
         {"forall P: a(P) && !P", 20, "variable P is not a formula"},
         {"Foo", 1, "expected a formula or an operator but found 'Foo'"},
         {"a && Foo", 6, "expected a formula or an operator but found 'Foo'"},
         {"forall P a(P)", 10, "expected ',' or ':' but found predicate a"},
         {"forall P, Q a(P)", 13, "expected ',' or ':' but found predicate a"},
         {"forall P; a", 9, "unexpected character ';'"},
         {"forall: a", 7, "expected a variable but found ':'"},
         {"forall a: a", 8, "expected a variable but found predicate a"},
         {"forall P,: a", 10, "expected a variable but found ':'"},
         {"forall", 7, "expected a variable but found end of input"},
         {"forall P:", 10, "expected a formula but found end of input"},
         {"forall P: p()", 13, "expected a variable but found ')'"},
         {"p()", 3, "expected a variable but found ')'"},
         {"forall P: p(P", 14, "expected ',' or ')' but found end of input"},
         {"forall P: p(P,)", 15, "expected a variable but found ')'"},
         {"forall P: p(a)", 13, "expected a variable but found predicate a"},
         {"forall P: p(P Q)", 15, "expected ',' or ')' but found variable Q"},
         {"forall P: P = P", 13, "expected '=>', '==', '=:=' or '=/=' but found '='"},
         {"forall P: P == a", 16, "expected a variable but found predicate a"},
         {"forall P, Q: P == Q == P", 21, "expected an operator or end of input but found '=='"},
         {"forall P: a(P) b", 16, "expected an operator or end of input but found predicate b"},
         {"a forall P: a(P)", 3, "expected an operator or end of input but found 'forall'"},
         {"a Up b", 3, "expected an operator or end of input but found variable Up"},
         {"forall P: (a(P)", 16, "expected ')' but found end of input"},
         {"true(P)", 5, "expected an operator or end of input but found '('"}],
    [{S, fun() ->
                 case mce_ltl:parse(S) of
                     {error, {ltl_parse, Col, Message}} ->
                         ?assertEqual({S, Column}, {S, Col}),
                         ?assertEqual({S, Expected}, {S, lists:sublist(Message, length(Expected))});
                     Other ->
                         ?assertEqual({S, error}, {S, Other})
                 end
         end}
     || {S, Column, Expected} <- Cases].

format_quantified_examples_test_() ->
    A = fun(V) -> {prop, {a, [{var, V}]}} end,
    Cases = [{"forall P, Q: P != Q", {forall, ['P', 'Q'], {'not', {eq, 'P', 'Q'}}}},
             {"forall P: P == P", {forall, ['P'], {eq, 'P', 'P'}}},
             {"forall P, Q: !P != Q || a(P)",
              {forall, ['P', 'Q'], {'or', {'not', {'not', {eq, 'P', 'Q'}}}, A('P')}}},
             {"forall P: forall Q: b(P, Q)",
              {forall, ['P'], {forall, ['Q'], {prop, {b, [{var, 'P'}, {var, 'Q'}]}}}}},
             {"(forall P: a(P)) && b", {'and', {forall, ['P'], A('P')}, {prop, b}}},
             {"b || (forall P: a(P))", {'or', {prop, b}, {forall, ['P'], A('P')}}},
             {"!(forall P: a(P))", {'not', {forall, ['P'], A('P')}}},
             {"forall P: 'next'(P)", {forall, ['P'], {prop, {next, [{var, 'P'}]}}}},
             %% Instantiated predicates, for reading.
             {"value(<0.3.0>)", {prop, {value, [c:pid(0, 3, 0)]}}},
             {"'next'(1, foo, \"s\", {x,[]}) U b",
              {until, {prop, {next, [1, foo, "s", {x, []}]}}, {prop, b}}},
             {"[]b(x, 'X')", {release, false, {prop, {b, [x, 'X']}}}}],
    [{S, ?_assertEqual(S, format(F))} || {S, F} <- Cases].

%% format/1 prints quantified formulas back exactly too.
format_quantified_round_trip_test() ->
    rand:seed(exsss, 73),
    Bad = [F || _ <- lists:seq(1, 2000),
                F <- [gen_quantified(4, [], 3)],
                mce_ltl:parse(mce_ltl:format(F)) =/= {ok, F}],
    ?assertEqual([], lists:sublist(Bad, 5)).

%% The paper's example over two values is the conjunction of its two
%% instances with P and Q different.
instantiate_conjunction_test() ->
    {ok, Q} = mce_ltl:parse("forall P, Q: P != Q -> [](a(P) -> !b(Q))"),
    {ok, Expected} = mce_ltl:parse("[](a1 -> !b2) && [](a2 -> !b1)"),
    Rename = #{a1 => {a, [1]}, a2 => {a, [2]}, b1 => {b, [1]}, b2 => {b, [2]}},
    Conj = rename(Expected, Rename),
    F = mce_ltl:instantiate(Q, [1, 2]),
    ?assertEqual([{a, 1}, {b, 1}], mce_ltl:predicates(F)),
    rand:seed(exsss, 74),
    agree(mce_ltl:to_buchi(F), [{Conj, []}, {Q, [1, 2]}, {F, []}], maps:values(Rename), 500).

%% On random quantified formulas over domains of two and three values,
%% the automaton of the instantiated formula accepts exactly the words on
%% which the quantified formula holds, evaluated directly.
instantiate_oracle_test_() ->
    {timeout, 60,
     fun() ->
             rand:seed(exsss, 75),
             Bad = lists:append(
                     [instantiate_check(gen_quantified(3, [], MaxVars), Domain)
                      || {Domain, MaxVars, Count} <- [{[1, 2], 2, 150}, {[x, y, z], 1, 100},
                                                      {[x, y, z], 2, 25}],
                         _ <- lists:seq(1, Count)]),
             ?assertEqual([], lists:sublist(Bad, 5))
     end}.

instantiate_check(Q, Domain) ->
    F = mce_ltl:instantiate(Q, Domain),
    A = mce_ltl:to_buchi(F),
    Names = [c | [{a, [V]} || V <- Domain] ++ [{b, [V, W]} || V <- Domain, W <- Domain]],
    well_formed(F, A) ++
        [{format(Q), Domain, W, {automaton, Acc}, {semantics, Holds}}
         || W <- [gen_lasso(Names) || _ <- lists:seq(1, 20)],
            Acc <- [mce_ltl:accepts(A, W)],
            Holds <- [holds(Q, Domain, W)],
            Acc =/= Holds].

%% The automaton agrees with every formula (with its domain) on N random
%% lassos over Names.
agree(Automaton, Formulas, Names, N) ->
    Bad = [{W, Acc, Holds}
           || W <- [gen_lasso(Names) || _ <- lists:seq(1, N)],
              Acc <- [mce_ltl:accepts(Automaton, W)],
              Holds <- [[holds(F, D, W) || {F, D} <- Formulas]],
              lists:usort([Acc | Holds]) =/= [Acc]],
    ?assertEqual([], lists:sublist(Bad, 5)),
    %% Both outcomes occur, so the comparison means something.
    ?assertEqual([false, true],
                 lists:usort([mce_ltl:accepts(Automaton, gen_lasso(Names))
                              || _ <- lists:seq(1, N)])).

rename({prop, Name}, Map) -> {prop, maps:get(Name, Map, Name)};
rename(T, Map) when is_tuple(T) ->
    list_to_tuple([rename(E, Map) || E <- tuple_to_list(T)]);
rename(X, _) -> X.

%%% ------------------------------------------------------------------------
%%% Normal forms

%% nnf/1 and simplify/1 give negation normal forms with the same meaning.
simplify_test_() ->
    {timeout, 30,
     fun() ->
             rand:seed(exsss, 63),
             Formulas = [gen_formula(4, names(rand:uniform(2) + 1)) || _ <- lists:seq(1, 1000)],
             NotNnf = [format(F) || F <- Formulas,
                                    not is_nnf(mce_ltl:nnf(F)) orelse
                                        not is_nnf(mce_ltl:simplify(F))],
             ?assertEqual([], lists:sublist(NotNnf, 5)),
             Changed = [{format(F), format(G), W}
                        || F <- Formulas,
                           G <- [mce_ltl:simplify(F), mce_ltl:nnf(F)],
                           W <- [gen_lasso(names(3)) || _ <- lists:seq(1, 20)],
                           holds(F, W) =/= holds(G, W)],
             ?assertEqual([], lists:sublist(Changed, 5))
     end}.

simplify_examples_test_() ->
    P = {prop, p}, Q = {prop, q},
    Cases = [{{next, true}, true},
             {{until, true, true}, true},
             {{until, P, false}, false},
             {{until, false, Q}, Q},
             {{release, true, Q}, Q},
             {{'and', P, {'not', P}}, false},
             {{'or', P, {'not', P}}, true},
             {{'and', P, P}, P},
             {{'not', {until, P, Q}}, {release, {'not', P}, {'not', Q}}},
             {{until, true, {until, true, P}}, {until, true, P}},
             {{release, false, {release, false, P}}, {release, false, P}},
             {{'and', {next, P}, {next, Q}}, {next, {'and', P, Q}}},
             {{until, true, {release, false, {until, true, P}}},
              {release, false, {until, true, P}}}],
    [?_assertEqual(Out, mce_ltl:simplify(In)) || {In, Out} <- Cases].

%%% ------------------------------------------------------------------------
%%% Automata

%% The acceptance criterion: on seeded random formulas and words, the
%% automaton accepts exactly the words on which the formula holds.
buchi_oracle_test_() ->
    {timeout, 60,
     fun() ->
             rand:seed(exsss, 64),
             Results = [check_formula(gen_formula(4, names(rand:uniform(2) + 1)))
                        || _ <- lists:seq(1, ?FORMULAS)],
             Bad = lists:append(Results),
             ?assertEqual([], lists:sublist(Bad, 5))
     end}.

check_formula(F) ->
    A = mce_ltl:to_buchi(F),
    well_formed(F, A) ++
        [{format(F), W, {automaton, Acc}, {semantics, Holds}}
         || W <- [gen_lasso(names(3)) || _ <- lists:seq(1, ?WORDS_PER_FORMULA)],
            Acc <- [mce_ltl:accepts(A, W)],
            Holds <- [holds(F, W)],
            Acc =/= Holds].

well_formed(F, #{states := States, init := Init, accepting := Accepting, trans := Trans} = A) ->
    Checks = [States =:= lists:seq(0, length(States) - 1),
              lists:all(fun(S) -> lists:member(S, States) end, Init ++ Accepting),
              Init =:= lists:usort(Init),
              Accepting =:= lists:usort(Accepting),
              Trans =:= lists:usort(Trans),
              lists:all(fun({S, G, T}) ->
                                lists:member(S, States) andalso lists:member(T, States)
                                    andalso G =:= lists:usort(G)
                                    andalso length(lists:ukeysort(1, G)) =:= length(G)
                        end, Trans),
              %% Empty exactly when nothing satisfies the formula, otherwise
              %% every state can be used by some accepting run: it has
              %% a successor.
              lists:all(fun(S) -> lists:keymember(S, 1, Trans) end, States)],
    case lists:all(fun(C) -> C end, Checks) of
        true -> [];
        false -> [{format(F), malformed, A}]
    end.

accepts_examples_test_() ->
    {ok, Always} = mce_ltl:parse("[]p"),
    {ok, Response} = mce_ltl:parse("[](p -> <>q)"),
    A = mce_ltl:to_buchi(Always),
    R = mce_ltl:to_buchi(Response),
    [?_assert(mce_ltl:accepts(A, {[], [[p]]})),
     ?_assert(mce_ltl:accepts(A, {[[p, q]], [[p]]})),
     ?_assertNot(mce_ltl:accepts(A, {[[p], []], [[p]]})),
     ?_assertNot(mce_ltl:accepts(A, {[], [[p], [q]]})),
     ?_assert(mce_ltl:accepts(R, {[[p]], [[], [q]]})),
     ?_assertNot(mce_ltl:accepts(R, {[[q]], [[p], []]})),
     ?_assertNot(mce_ltl:accepts(mce_ltl:to_buchi(false), {[], [[]]})),
     ?_assert(mce_ltl:accepts(mce_ltl:to_buchi(true), {[], [[]]}))].

%% Upper bounds on the reduced automata of common properties, so that a
%% regression in the reductions shows.
automaton_size_test_() ->
    Cases = [{"true", 1}, {"false", 0}, {"p", 2}, {"[]p", 1}, {"<>p", 2},
             {"p U q", 2}, {"[]<>p", 2}, {"<>[]p", 2}, {"[](p -> <>q)", 3},
             {"!(<>(p && X q))", 2}, {"[]<>p && []<>q", 4}],
    [{S, fun() ->
                 {ok, F} = mce_ltl:parse(S),
                 #{states := States} = mce_ltl:to_buchi(F),
                 ?assert(length(States) =< Max)
         end}
     || {S, Max} <- Cases].

%% lbt (Debian package lbt) translates the same formulas to generalised
%% Büchi automata; all three of its automaton, ours and the semantics must
%% agree on every word.  lbt's unoptimised tableau blows up on a few
%% formulas: those it does not finish in a second, or whose automaton is
%% too big for the quadratic acceptance check below, are left out, but
%% most (about 90% with this seed) must be compared.  Skipped when lbt
%% (or coreutils' timeout) is not installed.
lbt_oracle_test_() ->
    case {os:find_executable("lbt"), os:find_executable("timeout")} of
        {false, _} ->
            [];
        {_, false} ->
            [];
        {Lbt, _} ->
            {timeout, 120,
             fun() ->
                     rand:seed(exsss, 65),
                     Results = [lbt_check(Lbt, gen_formula(4, names(3)))
                                || _ <- lists:seq(1, ?LBT_FORMULAS)],
                     Compared = [R || R <- Results, R =/= skipped],
                     ?assert(length(Compared) >= ?LBT_FORMULAS * 3 div 4),
                     ?assertEqual([], lists:sublist(lists:append(Compared), 5))
             end}
    end.

lbt_check(Lbt, F) ->
    case lbt(Lbt, F) of
        {ok, GBA} ->
            A = mce_ltl:to_buchi(F),
            [{format(F), W, Ours, Theirs, Holds}
             || W <- [gen_lasso(names(3)) || _ <- lists:seq(1, 20)],
                Ours <- [mce_ltl:accepts(A, W)],
                Theirs <- [gba_accepts(GBA, W)],
                Holds <- [holds(F, W)],
                not (Ours =:= Holds andalso Theirs =:= Holds)];
        skipped ->
            skipped
    end.

%%% ------------------------------------------------------------------------
%%% The oracle: LTL on lassos

%% Whether F holds on the word Prefix Cycle Cycle ...  Position I of the
%% lasso stands for every position of the word with the same suffix; the
%% last position's successor is the first of the cycle.
holds(F, Lasso) ->
    holds(F, [], Lasso).

%% The same for a quantified formula, its variables ranging over Domain:
%% a forall is evaluated directly, as the conjunction over the values,
%% independently of mce_ltl:instantiate/2.
holds(F, Domain, {Prefix, Cycle}) ->
    Word = list_to_tuple(Prefix ++ Cycle),
    N = tuple_size(Word),
    Loop = length(Prefix),
    Succ = list_to_tuple(lists:seq(1, N - 1) ++ [Loop]),
    element(1, eval(F, {#{}, Domain}, Word, Succ)).

%% The tuple of F's truth values at each position, under the assignment
%% Sub of values of Domain to the variables bound so far.
eval(true, _, Word, _) -> erlang:make_tuple(tuple_size(Word), true);
eval(false, _, Word, _) -> erlang:make_tuple(tuple_size(Word), false);
eval({prop, {Name, Args}}, {Sub, _}, Word, _) ->
    Instance = {Name, [case A of {var, V} -> maps:get(V, Sub); _ -> A end || A <- Args]},
    map(fun(L) -> lists:member(Instance, L) end, Word);
eval({prop, Name}, _, Word, _) -> map(fun(L) -> lists:member(Name, L) end, Word);
eval({eq, P, Q}, {Sub, _}, Word, _) ->
    erlang:make_tuple(tuple_size(Word), maps:get(P, Sub) =:= maps:get(Q, Sub));
eval({forall, [], F}, Ctx, Word, Succ) ->
    eval(F, Ctx, Word, Succ);
eval({forall, [V | Vs], F}, {Sub, Domain}, Word, Succ) ->
    lists:foldl(fun(Value, Acc) ->
                        zip(fun(X, Y) -> X andalso Y end, Acc,
                            eval({forall, Vs, F}, {Sub#{V => Value}, Domain}, Word, Succ))
                end, erlang:make_tuple(tuple_size(Word), true), Domain);
eval({'not', F}, Ctx, Word, Succ) -> map(fun(V) -> not V end, eval(F, Ctx, Word, Succ));
eval({'and', F, G}, Ctx, Word, Succ) ->
    zip(fun(X, Y) -> X andalso Y end, eval(F, Ctx, Word, Succ), eval(G, Ctx, Word, Succ));
eval({'or', F, G}, Ctx, Word, Succ) ->
    zip(fun(X, Y) -> X orelse Y end, eval(F, Ctx, Word, Succ), eval(G, Ctx, Word, Succ));
eval({next, F}, Ctx, Word, Succ) ->
    V = eval(F, Ctx, Word, Succ),
    map(fun(J) -> element(J + 1, V) end, Succ);
eval({until, F, G}, Ctx, Word, Succ) ->
    VF = eval(F, Ctx, Word, Succ),
    VG = eval(G, Ctx, Word, Succ),
    fixpoint(fun(V) -> step(fun(I) -> element(I, VG) orelse
                                           (element(I, VF) andalso element(element(I, Succ) + 1, V))
                            end, tuple_size(V))
             end, erlang:make_tuple(tuple_size(Word), false));
eval({release, F, G}, Ctx, Word, Succ) ->
    VF = eval(F, Ctx, Word, Succ),
    VG = eval(G, Ctx, Word, Succ),
    fixpoint(fun(V) -> step(fun(I) -> element(I, VG) andalso
                                           (element(I, VF) orelse element(element(I, Succ) + 1, V))
                            end, tuple_size(V))
             end, erlang:make_tuple(tuple_size(Word), true)).

map(Fun, T) -> list_to_tuple([Fun(X) || X <- tuple_to_list(T)]).
zip(Fun, T, U) -> list_to_tuple(lists:zipwith(Fun, tuple_to_list(T), tuple_to_list(U))).
step(Fun, N) -> list_to_tuple([Fun(I) || I <- lists:seq(1, N)]).

fixpoint(Fun, V) ->
    case Fun(V) of
        V -> V;
        V1 -> fixpoint(Fun, V1)
    end.

%%% ------------------------------------------------------------------------
%%% lbt's automata

%% lbt reads prefix formulas over p0, p1, ... and writes LBTT: "N K", then
%% per state "Id Initial AccSets... -1" and its transitions
%% "Target Guard" (guard in prefix), closed by "-1".
lbt(Lbt, F) ->
    %% The formula is letters, digits, spaces and `!&|': safe to quote.
    Out = os:cmd("echo '" ++ lists:flatten(lbt_formula(F)) ++ "' | timeout 1 " ++ Lbt),
    case string:lexemes(Out, " \n\t\r") of
        [N, K | Tokens] ->
            case list_to_integer(N) of
                Size when Size =< ?LBT_MAX_STATES ->
                    {ok, {list_to_integer(K), lbt_states(Size, Tokens)}};
                _ ->
                    skipped
            end;
        [] ->
            skipped
    end.

lbt_formula(true) -> "t";
lbt_formula(false) -> "f";
lbt_formula({prop, Name}) -> lbt_prop(Name);
lbt_formula({'not', F}) -> ["! ", lbt_formula(F)];
lbt_formula({next, F}) -> ["X ", lbt_formula(F)];
lbt_formula({Op, F, G}) ->
    Sym = #{'and' => "& ", 'or' => "| ", until => "U ", release => "V "},
    [maps:get(Op, Sym), lbt_formula(F), " ", lbt_formula(G)].

lbt_prop(a) -> "p0";
lbt_prop(b) -> "p1";
lbt_prop(c) -> "p2".

lbt_states(0, []) -> [];
lbt_states(N, [Id, Init | Tokens]) ->
    {Sets, ["-1" | Rest]} = lists:splitwith(fun(T) -> T =/= "-1" end, Tokens),
    {Trans, Rest1} = lbt_trans(Rest, []),
    [{list_to_integer(Id), Init =:= "1", [list_to_integer(S) || S <- Sets], Trans}
     | lbt_states(N - 1, Rest1)].

lbt_trans(["-1" | Rest], Acc) -> {lists:reverse(Acc), Rest};
lbt_trans([Target | Tokens], Acc) ->
    {Guard, Rest} = lbt_guard(Tokens),
    lbt_trans(Rest, [{list_to_integer(Target), Guard} | Acc]).

lbt_guard(["t" | Rest]) -> {true, Rest};
lbt_guard(["f" | Rest]) -> {false, Rest};
lbt_guard(["p0" | Rest]) -> {{prop, a}, Rest};
lbt_guard(["p1" | Rest]) -> {{prop, b}, Rest};
lbt_guard(["p2" | Rest]) -> {{prop, c}, Rest};
lbt_guard(["!" | Tokens]) ->
    {G, Rest} = lbt_guard(Tokens),
    {{'not', G}, Rest};
lbt_guard([Op | Tokens]) ->
    {G1, Rest1} = lbt_guard(Tokens),
    {G2, Rest} = lbt_guard(Rest1),
    Guard = case Op of
                "&" -> {'and', G1, G2};
                "|" -> {'or', G1, G2};
                "i" -> {'or', {'not', G1}, G2};
                "e" -> {'or', {'and', G1, G2}, {'and', {'not', G1}, {'not', G2}}};
                "^" -> {'or', {'and', G1, {'not', G2}}, {'and', {'not', G1}, G2}}
            end,
    {Guard, Rest}.

guard_holds(true, _) -> true;
guard_holds(false, _) -> false;
guard_holds({prop, Name}, Letter) -> lists:member(Name, Letter);
guard_holds({'not', G}, Letter) -> not guard_holds(G, Letter);
guard_holds({'and', G, H}, Letter) -> guard_holds(G, Letter) andalso guard_holds(H, Letter);
guard_holds({'or', G, H}, Letter) -> guard_holds(G, Letter) orelse guard_holds(H, Letter).

%% Generalised Büchi acceptance by brute force on the product with the
%% lasso: some reachable node on a cycle whose component meets every
%% acceptance set (with no sets, any cycle accepts).
gba_accepts({K, States}, {Prefix, Cycle}) ->
    Word = list_to_tuple(Prefix ++ Cycle),
    N = tuple_size(Word),
    Next = fun(I) when I =:= N - 1 -> length(Prefix); (I) -> I + 1 end,
    ById = maps:from_list([{Id, {Sets, Trans}} || {Id, _, Sets, Trans} <- States]),
    Succ = fun({Q, I}) ->
                   {_, Trans} = maps:get(Q, ById),
                   [{T, Next(I)} || {T, G} <- Trans, guard_holds(G, element(I + 1, Word))]
           end,
    Roots = [{Id, 0} || {Id, true, _, _} <- States],
    Reachable = reach(Roots, Succ),
    Plus = maps:from_list([{V, reach(Succ(V), Succ)} || V <- Reachable]),
    lists:any(fun(V) ->
                      Comp = [U || U <- maps:get(V, Plus), lists:member(V, maps:get(U, Plus))],
                      Comp =/= [] andalso
                          lists:all(fun(Set) ->
                                            lists:any(fun({Q, _}) ->
                                                              {Sets, _} = maps:get(Q, ById),
                                                              lists:member(Set, Sets)
                                                      end, Comp)
                                    end, lists:seq(0, K - 1))
              end, Reachable).

reach(Roots, Succ) -> reach(Roots, Succ, #{}).

reach([], _, Seen) -> maps:keys(Seen);
reach([V | Todo], Succ, Seen) ->
    case Seen of
        #{V := _} -> reach(Todo, Succ, Seen);
        #{} -> reach(Succ(V) ++ Todo, Succ, Seen#{V => true})
    end.

%%% ------------------------------------------------------------------------
%%% Generators

names(N) -> lists:sublist([a, b, c], N).

pick(List) -> lists:nth(rand:uniform(length(List)), List).

%% A random core formula of depth at most Depth; `[]' and `<>' get their
%% own weight, since random operands would rarely be false and true.
gen_formula(0, Names) ->
    case rand:uniform(10) of
        1 -> true;
        2 -> false;
        _ -> {prop, pick(Names)}
    end;
gen_formula(Depth, Names) ->
    Sub = fun() -> gen_formula(Depth - 1, Names) end,
    case rand:uniform(12) of
        1 -> gen_formula(0, Names);
        2 -> {'not', Sub()};
        3 -> {next, Sub()};
        4 -> {release, false, Sub()};
        5 -> {until, true, Sub()};
        6 -> {'and', Sub(), Sub()};
        7 -> {'or', Sub(), Sub()};
        N when N =< 9 -> {until, Sub(), Sub()};
        _ -> {release, Sub(), Sub()}
    end.

%% A random quantified formula of depth at most Depth whose variables are
%% all bound (Env are those bound around it, MaxVars how many there may
%% be): predicates c, a/1 and b/2, comparisons, and foralls.
gen_quantified(0, Env, _) ->
    case {rand:uniform(10), Env} of
        {1, _} -> true;
        {2, _} -> false;
        {N, _} when N =< 4; Env =:= [] -> {prop, c};
        {N, _} when N =< 6 -> {prop, {a, [{var, pick(Env)}]}};
        {N, _} when N =< 8 -> {prop, {b, [{var, pick(Env)}, {var, pick(Env)}]}};
        {9, _} -> {eq, pick(Env), pick(Env)};
        {10, _} -> {'not', {eq, pick(Env), pick(Env)}}
    end;
gen_quantified(Depth, Env, MaxVars) ->
    Sub = fun() -> gen_quantified(Depth - 1, Env, MaxVars) end,
    Free = [V || V <- ['P', 'Q', 'Pid', 'V_2', 'W@x'], not lists:member(V, Env)],
    case rand:uniform(14) of
        %% More often where nothing is bound yet.
        N when N =< 2 orelse (Env =:= [] andalso N =< 6), length(Env) < MaxVars ->
            K = min(rand:uniform(2), MaxVars - length(Env)),
            Vars = lists:sublist([V || {_, V} <- lists:sort([{rand:uniform(), V} || V <- Free])], K),
            {forall, Vars, gen_quantified(Depth - 1, Vars ++ Env, MaxVars)};
        N when N =< 3 -> gen_quantified(0, Env, MaxVars);
        4 -> {'not', Sub()};
        5 -> {next, Sub()};
        6 -> {release, false, Sub()};
        7 -> {until, true, Sub()};
        8 -> {'and', Sub(), Sub()};
        9 -> {'or', Sub(), Sub()};
        N when N =< 11 -> {until, Sub(), Sub()};
        N when N =< 13 -> {release, Sub(), Sub()};
        _ -> gen_quantified(0, Env, MaxVars)
    end.

gen_lasso(Names) ->
    Letter = fun() -> [N || N <- Names, rand:uniform(2) =:= 1] end,
    {[Letter() || _ <- lists:seq(1, rand:uniform(4) - 1)],
     [Letter() || _ <- lists:seq(1, rand:uniform(3))]}.

%% Random text in any spelling, fully parenthesised, with the formula it
%% denotes desugared independently of the parser.
gen_surface(0) ->
    case rand:uniform(8) of
        1 -> {"true", true};
        2 -> {"false", false};
        3 -> {"'next'", {prop, next}};
        4 -> {"'b'", {prop, b}};
        _ -> pick([{"a", {prop, a}}, {"b", {prop, b}}, {"c_1", {prop, c_1}}])
    end;
gen_surface(Depth) ->
    Sub = fun() ->
                  {S, F} = gen_surface(Depth - 1),
                  {["(", ws(), S, ws(), ")"], F}
          end,
    case rand:uniform(10) of
        1 ->
            gen_surface(0);
        N when N =< 4 ->
            {Op, Make} = pick([{["!", "not "], fun(F) -> {'not', F} end},
                               {["X ", "next "], fun(F) -> {next, F} end},
                               {["[]", "always "], fun(F) -> {release, false, F} end},
                               {["<>", "eventually "], fun(F) -> {until, true, F} end}]),
            {S, F} = Sub(),
            {[pick(Op), ws(), S], Make(F)};
        _ ->
            {Op, Make} =
                pick([{["&&", "and"], fun(F, G) -> {'and', F, G} end},
                      {["||", "or"], fun(F, G) -> {'or', F, G} end},
                      {["U", "until"], fun(F, G) -> {until, F, G} end},
                      {["R", "release"], fun(F, G) -> {release, F, G} end},
                      {["->", "implies"], fun(F, G) -> {'or', {'not', F}, G} end},
                      {["<->", "equiv"],
                       fun(F, G) -> {'or', {'and', F, G}, {'and', {'not', F}, {'not', G}}} end}]),
            {S1, F1} = Sub(),
            {S2, F2} = Sub(),
            {[S1, " ", ws(), pick(Op), " ", ws(), S2], Make(F1, F2)}
    end.

ws() -> pick(["", "", " ", "\t", "\n"]).

%%% ------------------------------------------------------------------------
%%% Helpers

format(F) -> unicode:characters_to_list(mce_ltl:format(F)).

is_nnf({'not', {prop, _}}) -> true;
is_nnf({'not', _}) -> false;
is_nnf({next, F}) -> is_nnf(F);
is_nnf({_, F, G}) -> is_nnf(F) andalso is_nnf(G);
is_nnf(_) -> true.
