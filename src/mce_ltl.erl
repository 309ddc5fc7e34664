%% @doc LTL formulas: parsing, printing, normal forms and translation to
%% Büchi automata, in pure Erlang.
%%
%% This module owns the LTL side of the checker's LTL search (issue 6): the
%% concrete syntax of properties (McErlang-compatible operators), the
%% formula terms they parse to, negation normal form and simplification,
%% the tableau translation to a Büchi automaton, and acceptance of an
%% ultimately periodic word by such an automaton (the check that a lasso
%% the search found really is a counterexample).  It knows nothing about
%% programs: predicate names are atoms that the search maps to state
%% predicates, or, for parameterised predicates, `{Name, Arguments}'.
%%
%% Syntax, tightest first: the prefix operators `!'/`not', `[]'/`always',
%% `<>'/`eventually' and `X'/`next'; `U'/`until' and `R'/`release' (right
%% associative); `&&'/`&'/`and' and `||'/`|'/`or' (left associative);
%% `->'/`=>'/`implies' (right associative); `<->'/`<=>'/`equiv' (left
%% associative).  The one-character `&' and `|' and the arrow `=>' are
%% McErlang's spellings, `&&', `||' and `->' SPIN's; both mean the same
%% at the same precedence (SPIN's: unary, then U/R, &&, ||, ->, <->).  Operands are
%% `true', `false', parenthesised formulas and predicate names: lowercase
%% Erlang-atom-like words, or single-quoted atoms (`\'' and `\\' escape),
%% which is how a name that is a keyword is written, e.g. `'next''.
%%
%% Quantification over a domain of values (the search uses the pids of
%% the run): `forall P, Q: F' binds the variables P and Q in F, and
%% extends as far right as possible (it binds loosest of all, and may
%% start any operand: `a && forall P: b(P) || c' is
%% `a && (forall P: (b(P) || c))').  Variables are Erlang-variable-like
%% words (an uppercase letter, then letters, digits, `_' and `@') other
%% than the operators `X', `U' and `R'; each is bound once, and is only
%% used inside its forall, as an argument of a parameterised predicate,
%% `name(P, Q)' (quoted names too: `'next'(P)'), or in a comparison
%% operand, `P == Q' or `P != Q' (also `=:=' and `=/=').  A quantified
%% formula (`quantified()') is made a core formula by `instantiate/2'.
%%
%% Formulas are kept in a small core: `[]F' is `false R F', `<>F' is
%% `true U F', `A -> B' is `!A || B', `A <-> B' is
%% `(A && B) || (!A && !B)' and `P != Q' is `!(P == Q)'.
%%
%% Automata (see `to_buchi/1') are plain Büchi automata with guards on
%% transitions and acceptance on states: a run on a word w0 w1 ... is
%% q0 q1 ... with q0 initial and, for every i, a transition
%% {qi, Guard, qi+1} whose Guard holds in wi (the letter is read while
%% leaving qi); the run accepts if an accepting state occurs infinitely
%% often.  This is the LBTT convention, and it is what a product with a
%% program wants: the guard is evaluated on the program state being left.
-module(mce_ltl).

-export([parse/1, format/1, instantiate/2, predicates/1, nnf/1, simplify/1, to_buchi/1,
         to_buchi/2, accepts/2]).

-export_type([formula/0, quantified/0, variable/0, name/0, literal/0, guard/0, state/0,
              automaton/0, letter/0, lasso/0, parse_error/0]).

%% A predicate: an atom, or a parameterised predicate applied to its
%% arguments, `{Name, [Argument]}' with a non-empty argument list.  In a
%% quantified formula the arguments are `{var, Variable}'; `instantiate/2'
%% replaces them with values of the domain.
-type name() :: atom() | {atom(), [term()]}.
-type formula() :: true | false
                 | {prop, name()}
                 | {'not', formula()}
                 | {'and', formula(), formula()}
                 | {'or', formula(), formula()}
                 | {next, formula()}
                 | {until, formula(), formula()}
                 | {release, formula(), formula()}.
-type variable() :: atom().
%% What `parse/1' returns: a formula that may also have quantifiers over
%% variables and comparisons of variables.  Every formula() is one.
-type quantified() :: true | false
                    | {prop, name()}
                    | {eq, variable(), variable()}
                    | {forall, [variable(), ...], quantified()}
                    | {'not', quantified()}
                    | {'and', quantified(), quantified()}
                    | {'or', quantified(), quantified()}
                    | {next, quantified()}
                    | {until, quantified(), quantified()}
                    | {release, quantified(), quantified()}.
%% A literal {Name, true} holds where predicate Name holds, {Name, false}
%% where it does not.
-type literal() :: {name(), boolean()}.
%% The conjunction of its literals, sorted without duplicates; [] is true.
-type guard() :: [literal()].
-type state() :: non_neg_integer().
-type automaton() :: #{states := [state()],
                       init := [state()],
                       accepting := [state()],
                       trans := [{state(), guard(), state()}]}.
%% The predicate names that hold at one position of a word.
-type letter() :: [name()].
%% The word Prefix Cycle Cycle Cycle ...
-type lasso() :: {[letter()], [letter(), ...]}.
-type parse_error() :: {ltl_parse, pos_integer(), string()}.

%%% ------------------------------------------------------------------------
%%% Parsing

-type token_kind() :: always | eventually | next | until | release | 'not'
                    | 'and' | 'or' | implies | equiv | true | false
                    | lparen | rparen | eof | {name, atom()}
                    | forall | comma | colon | eq | neq | {var, variable()}.
%% Kind, 1-based column, and how the token is described in messages.
-type token() :: {token_kind(), pos_integer(), string()}.

%% The operators that look like variables.
-define(IS_OPERATOR_WORD(Text), (Text =:= "'X'" orelse Text =:= "'U'" orelse Text =:= "'R'")).

%% @doc Parses a formula in McErlang's LTL syntax, with quantifiers over
%% pids (see the module documentation).  The input is Unicode text (a
%% string, or chardata as `format/1' returns).  Every variable of the
%% result is bound by an enclosing forall.
-spec parse(unicode:chardata()) -> {ok, quantified()} | {error, parse_error()}.
parse(Input) ->
    case unicode:characters_to_list(Input) of
        Chars when is_list(Chars) ->
            try
                Tokens = scan(Chars, 1, []),
                {F, [{eof, _, _}]} = p_top(Tokens),
                {ok, F}
            catch
                throw:{ltl_parse, _, _} = Error -> {error, Error}
            end;
        _ ->
            {error, {ltl_parse, 1, "input is not valid Unicode text"}}
    end.

scan([], Col, Acc) ->
    lists:reverse([{eof, Col, "end of input"} | Acc]);
scan([C | Cs], Col, Acc) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r ->
    scan(Cs, Col + 1, Acc);
scan("[]" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{always, Col, "'[]'"} | Acc]);
scan("<->" ++ Cs, Col, Acc) -> scan(Cs, Col + 3, [{equiv, Col, "'<->'"} | Acc]);
scan("<>" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{eventually, Col, "'<>'"} | Acc]);
scan("->" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{implies, Col, "'->'"} | Acc]);
scan("<=>" ++ Cs, Col, Acc) -> scan(Cs, Col + 3, [{equiv, Col, "'<=>'"} | Acc]);
scan("=>" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{implies, Col, "'=>'"} | Acc]);
scan("&&" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{'and', Col, "'&&'"} | Acc]);
scan("||" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{'or', Col, "'||'"} | Acc]);
scan("&" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{'and', Col, "'&'"} | Acc]);
scan("|" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{'or', Col, "'|'"} | Acc]);
scan("=:=" ++ Cs, Col, Acc) -> scan(Cs, Col + 3, [{eq, Col, "'=:='"} | Acc]);
scan("=/=" ++ Cs, Col, Acc) -> scan(Cs, Col + 3, [{neq, Col, "'=/='"} | Acc]);
scan("==" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{eq, Col, "'=='"} | Acc]);
scan("!=" ++ Cs, Col, Acc) -> scan(Cs, Col + 2, [{neq, Col, "'!='"} | Acc]);
scan("!" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{'not', Col, "'!'"} | Acc]);
scan("(" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{lparen, Col, "'('"} | Acc]);
scan(")" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{rparen, Col, "')'"} | Acc]);
scan("," ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{comma, Col, "','"} | Acc]);
scan(":" ++ Cs, Col, Acc) -> scan(Cs, Col + 1, [{colon, Col, "':'"} | Acc]);
scan([$' | Cs], Col, Acc) ->
    {Name, Rest, Width} = scan_quoted(Cs, Col, [], 1),
    Atom = list_to_atom(Name),
    scan(Rest, Col + Width, [{{name, Atom}, Col, describe_name(Atom)} | Acc]);
scan([C | _] = Cs, Col, Acc) when C >= $A, C =< $Z ->
    {Word, Rest} = lists:splitwith(fun is_name_char/1, Cs),
    Token = case Word of
                "X" -> {next, Col, "'X'"};
                "U" -> {until, Col, "'U'"};
                "R" -> {release, Col, "'R'"};
                _ -> {{var, list_to_atom(Word)}, Col, "variable " ++ Word}
            end,
    scan(Rest, Col + length(Word), [Token | Acc]);
scan([C | _] = Cs, Col, Acc) ->
    case is_name_start(C) of
        true ->
            {Word, Rest} = lists:splitwith(fun is_name_char/1, Cs),
            Token = case keyword(Word) of
                        {ok, Kind} ->
                            {Kind, Col, "'" ++ Word ++ "'"};
                        error ->
                            Atom = list_to_atom(Word),
                            {{name, Atom}, Col, describe_name(Atom)}
                    end,
            scan(Rest, Col + length(Word), [Token | Acc]);
        false ->
            bad_char(C, Col)
    end.

%% Single characters of a two- or three-character operator get a message
%% naming the operator the writer probably meant.
-spec bad_char(char(), pos_integer()) -> no_return().
bad_char($<, Col) -> fail(Col, "expected '<>', '<->' or '<=>' but found '<'", []);
bad_char($-, Col) -> fail(Col, "expected '->' but found '-'", []);
bad_char($[, Col) -> fail(Col, "expected '[]' but found '['", []);
bad_char($=, Col) -> fail(Col, "expected '=>', '==', '=:=' or '=/=' but found '='", []);
bad_char(C, Col) -> fail(Col, "unexpected character '~ts'", [[C]]).

scan_quoted([], Col, _, _) ->
    fail(Col, "expected a closing quote but found end of input", []);
scan_quoted([$' | Rest], _, Acc, Width) ->
    {lists:reverse(Acc), Rest, Width + 1};
scan_quoted([$\\, C | Rest], Col, Acc, Width) when C =:= $'; C =:= $\\ ->
    scan_quoted(Rest, Col, [C | Acc], Width + 2);
scan_quoted([C | Rest], Col, Acc, Width) ->
    scan_quoted(Rest, Col, [C | Acc], Width + 1).

keyword("always") -> {ok, always};
keyword("eventually") -> {ok, eventually};
keyword("next") -> {ok, next};
keyword("until") -> {ok, until};
keyword("release") -> {ok, release};
keyword("not") -> {ok, 'not'};
keyword("and") -> {ok, 'and'};
keyword("or") -> {ok, 'or'};
keyword("implies") -> {ok, implies};
keyword("equiv") -> {ok, equiv};
keyword("true") -> {ok, true};
keyword("false") -> {ok, false};
keyword("forall") -> {ok, forall};
keyword(_) -> error.

%% Erlang's unquoted atoms: a lowercase (Latin-1) letter, then letters,
%% digits, `_' and `@'.
is_name_start(C) -> (C >= $a andalso C =< $z) orelse (C >= 223 andalso C =< 255 andalso C =/= 247).

is_name_char(C) ->
    (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z) orelse
        (C >= $0 andalso C =< $9) orelse C =:= $_ orelse C =:= $@ orelse
        (C >= 192 andalso C =< 255 andalso C =/= 215 andalso C =/= 247).

describe_name(Atom) ->
    "predicate " ++ unicode:characters_to_list(format_name(Atom)).

-spec fail(pos_integer(), string(), [term()]) -> no_return().
fail(Col, Format, Args) ->
    throw({ltl_parse, Col, lists:flatten(io_lib:format(Format, Args))}).

-spec expected(string(), token()) -> no_return().
expected(What, {_, Col, Found}) ->
    fail(Col, "expected ~ts but found ~ts", [What, Found]).

%% The parsing functions take the variables bound by the enclosing
%% foralls (Env).
p_top(Tokens) ->
    case p_equiv(Tokens, []) of
        {_, [{eof, _, _}]} = Done -> Done;
        {_, [Token | _]} -> expected("an operator or end of input", Token)
    end.

p_equiv(Tokens, Env) ->
    {Left, Rest} = p_implies(Tokens, Env),
    p_equiv_rest(Left, Rest, Env).

p_equiv_rest(Left, [{equiv, _, _} | Tokens], Env) ->
    {Right, Rest} = p_implies(Tokens, Env),
    Equiv = {'or', {'and', Left, Right}, {'and', {'not', Left}, {'not', Right}}},
    p_equiv_rest(Equiv, Rest, Env);
p_equiv_rest(Left, Rest, _) ->
    {Left, Rest}.

p_implies(Tokens, Env) ->
    case p_or(Tokens, Env) of
        {Left, [{implies, _, _} | Tokens1]} ->
            {Right, Rest} = p_implies(Tokens1, Env),
            {{'or', {'not', Left}, Right}, Rest};
        Done ->
            Done
    end.

p_or(Tokens, Env) ->
    {Left, Rest} = p_and(Tokens, Env),
    p_or_rest(Left, Rest, Env).

p_or_rest(Left, [{'or', _, _} | Tokens], Env) ->
    {Right, Rest} = p_and(Tokens, Env),
    p_or_rest({'or', Left, Right}, Rest, Env);
p_or_rest(Left, Rest, _) ->
    {Left, Rest}.

p_and(Tokens, Env) ->
    {Left, Rest} = p_until(Tokens, Env),
    p_and_rest(Left, Rest, Env).

p_and_rest(Left, [{'and', _, _} | Tokens], Env) ->
    {Right, Rest} = p_until(Tokens, Env),
    p_and_rest({'and', Left, Right}, Rest, Env);
p_and_rest(Left, Rest, _) ->
    {Left, Rest}.

p_until(Tokens, Env) ->
    case p_unary(Tokens, Env) of
        {Left, [{Op, _, _} | Tokens1]} when Op =:= until; Op =:= release ->
            {Right, Rest} = p_until(Tokens1, Env),
            {{Op, Left, Right}, Rest};
        Done ->
            Done
    end.

%% `X == P': X, U or R compared, meant as a variable.
p_unary([{_, _, Text} = Token, {Cmp, _, _} | _], _)
  when ?IS_OPERATOR_WORD(Text), (Cmp =:= eq orelse Cmp =:= neq) ->
    operator_as_variable(Token);
p_unary([{'not', _, _} | Tokens], Env) ->
    {F, Rest} = p_unary(Tokens, Env),
    {{'not', F}, Rest};
p_unary([{always, _, _} | Tokens], Env) ->
    {F, Rest} = p_unary(Tokens, Env),
    {{release, false, F}, Rest};
p_unary([{eventually, _, _} | Tokens], Env) ->
    {F, Rest} = p_unary(Tokens, Env),
    {{until, true, F}, Rest};
p_unary([{next, _, _} | Tokens], Env) ->
    {F, Rest} = p_unary(Tokens, Env),
    {{next, F}, Rest};
p_unary(Tokens, Env) ->
    p_operand(Tokens, Env).

p_operand([{true, _, _} | Rest], _) -> {true, Rest};
p_operand([{false, _, _} | Rest], _) -> {false, Rest};
p_operand([{forall, _, _} | Tokens], Env) ->
    p_forall(Tokens, Env, []);
p_operand([{{name, Name}, _, _}, {lparen, _, _} | Tokens], Env) ->
    {Args, Rest} = p_args(Tokens, Env, []),
    {{prop, {Name, Args}}, Rest};
p_operand([{{name, Name}, _, _} | Rest], _) -> {{prop, Name}, Rest};
p_operand([{{var, _}, _, _} = Var, {Cmp, _, _} | Tokens], Env) when Cmp =:= eq; Cmp =:= neq ->
    {Left, _} = p_use_var([Var], Env),
    {Right, Rest} = p_use_var(Tokens, Env),
    Eq = {eq, Left, Right},
    case Cmp of
        eq -> {Eq, Rest};
        neq -> {{'not', Eq}, Rest}
    end;
p_operand([{{var, Var}, Col, _} | _], Env) ->
    Word = atom_to_list(Var),
    case lists:member(Var, Env) of
        true ->
            fail(Col, "variable ~ts is not a formula (a variable is an argument of a "
                 "predicate, as in p(~ts), or compared with '==' or '!=')", [Word, Word]);
        false ->
            fail(Col, "expected a formula or an operator but found '~ts' (predicate "
                 "names start with a lowercase letter or are quoted, and variables are "
                 "bound by a forall)", [Word])
    end;
p_operand([{lparen, _, _} | Tokens], Env) ->
    case p_equiv(Tokens, Env) of
        {F, [{rparen, _, _} | Rest]} -> {F, Rest};
        {_, [Token | _]} -> expected("')'", Token)
    end;
p_operand([Token | _], _) ->
    expected("a formula", Token).

%% `forall V1, V2, ...: F', after the keyword; Bound are the variables of
%% this forall so far, last first.
p_forall([{{var, Var}, Col, _} | Tokens], Env, Bound) ->
    case {lists:member(Var, Bound), lists:member(Var, Env)} of
        {true, _} ->
            fail(Col, "variable ~ts is bound twice by this forall", [Var]);
        {_, true} ->
            fail(Col, "variable ~ts is already bound by an enclosing forall", [Var]);
        {false, false} ->
            ok
    end,
    case Tokens of
        [{comma, _, _} | Rest] ->
            p_forall(Rest, Env, [Var | Bound]);
        [{colon, _, _} | Rest] ->
            Vars = lists:reverse(Bound, [Var]),
            {F, Rest1} = p_equiv(Rest, Vars ++ Env),
            {{forall, Vars, F}, Rest1};
        [Token | _] ->
            expected("',' or ':'", Token)
    end;
p_forall(Tokens, _, _) ->
    not_a_variable(Tokens).

%% The arguments of a parameterised predicate, after `('.
p_args([{rparen, Col, _} | _], _, []) ->
    fail(Col, "expected a variable but found ')' (a predicate without arguments is "
         "written without parentheses)", []);
p_args(Tokens, Env, Args) ->
    {Var, Rest} = p_use_var(Tokens, Env),
    case Rest of
        [{comma, _, _} | Rest1] -> p_args(Rest1, Env, [{var, Var} | Args]);
        [{rparen, _, _} | Rest1] -> {lists:reverse(Args, [{var, Var}]), Rest1};
        [Token | _] -> expected("',' or ')'", Token)
    end.

%% A use of a variable, which must be bound.
p_use_var([{{var, Var}, Col, _} | Rest], Env) ->
    case lists:member(Var, Env) of
        true -> {Var, Rest};
        false -> fail(Col, "variable ~ts is not bound by a forall", [Var])
    end;
p_use_var(Tokens, _) ->
    not_a_variable(Tokens).

-spec not_a_variable([token()]) -> no_return().
not_a_variable([{_, _, Text} = Token | _]) when ?IS_OPERATOR_WORD(Text) ->
    operator_as_variable(Token);
not_a_variable([Token | _]) ->
    expected("a variable", Token).

-spec operator_as_variable(token()) -> no_return().
operator_as_variable({Kind, Col, [$', Letter, $']}) ->
    fail(Col, "~c is the ~s operator; variables cannot be named ~c", [Letter, Kind, Letter]).

%%% ------------------------------------------------------------------------
%%% Printing

%% Binding levels, tightest first; an operand printed at a level above
%% what its position allows gets parentheses.
-define(L_OPERAND, 0).
-define(L_UNARY, 1).
-define(L_UNTIL, 2).
-define(L_AND, 3).
-define(L_OR, 4).
-define(L_FORALL, 5).

%% @doc Prints a formula in the syntax `parse/1' reads, so that
%% `parse(format(F))' is `{ok, F}' (for a quantified formula, as long as
%% its predicates' arguments are variables).  `false R F' and `true U F'
%% are printed as `[]F' and `<>F', `!(P == Q)' as `P != Q'.  Instantiated
%% predicates are printed with their values as Erlang terms, e.g.
%% `value(<0.3.0>)', which is for reading, not parsing.
-spec format(quantified()) -> iolist().
format(F) ->
    fmt(F, ?L_FORALL).

fmt(F, Max) ->
    case level(F) > Max of
        true -> ["(", fmt1(F), ")"];
        false -> fmt1(F)
    end.

level(true) -> ?L_OPERAND;
level(false) -> ?L_OPERAND;
level({prop, _}) -> ?L_OPERAND;
level({eq, _, _}) -> ?L_OPERAND;
level({'not', {eq, _, _}}) -> ?L_OPERAND;
level({'not', _}) -> ?L_UNARY;
level({next, _}) -> ?L_UNARY;
level({release, false, _}) -> ?L_UNARY;
level({until, true, _}) -> ?L_UNARY;
level({until, _, _}) -> ?L_UNTIL;
level({release, _, _}) -> ?L_UNTIL;
level({'and', _, _}) -> ?L_AND;
level({'or', _, _}) -> ?L_OR;
%% A forall extends as far right as possible: parenthesised unless it is
%% the whole formula or a forall's body.
level({forall, _, _}) -> ?L_FORALL.

fmt1(true) -> "true";
fmt1(false) -> "false";
fmt1({prop, Name}) -> format_name(Name);
fmt1({eq, P, Q}) -> [format_var(P), " == ", format_var(Q)];
fmt1({'not', {eq, P, Q}}) -> [format_var(P), " != ", format_var(Q)];
fmt1({'not', F}) -> ["!", fmt(F, ?L_UNARY)];
%% A space, because `Xp' would scan as one (uppercase) word.
fmt1({next, F}) -> ["X ", fmt(F, ?L_UNARY)];
fmt1({release, false, F}) -> ["[]", fmt(F, ?L_UNARY)];
fmt1({until, true, F}) -> ["<>", fmt(F, ?L_UNARY)];
fmt1({until, F, G}) -> [fmt(F, ?L_UNARY), " U ", fmt(G, ?L_UNTIL)];
fmt1({release, F, G}) -> [fmt(F, ?L_UNARY), " R ", fmt(G, ?L_UNTIL)];
fmt1({'and', F, G}) -> [fmt(F, ?L_AND), " && ", fmt(G, ?L_UNTIL)];
fmt1({'or', F, G}) -> [fmt(F, ?L_OR), " || ", fmt(G, ?L_AND)];
fmt1({forall, Vars, F}) ->
    ["forall ", lists:join(", ", [format_var(V) || V <- Vars]), ": ", fmt(F, ?L_FORALL)].

%% Names are written bare when the scanner reads them back as the same
%% name, quoted otherwise; a quoted name is UTF-8 encoded, so the result
%% stays an iolist whatever the name's characters.  A parameterised
%% predicate's arguments are its variables, or the values it was
%% instantiated with as Erlang terms.
format_name({Name, Args}) ->
    [format_name(Name), "(", lists:join(", ", [format_arg(A) || A <- Args]), ")"];
format_name(Name) ->
    Chars = atom_to_list(Name),
    Bare = case Chars of
               [C | Cs] -> is_name_start(C) andalso lists:all(fun is_name_char/1, Cs)
                               andalso keyword(Chars) =:= error;
               [] -> false
           end,
    case Bare of
        true -> Chars;
        false -> unicode:characters_to_binary([$', escape(Chars), $'])
    end.

format_arg({var, Var}) when is_atom(Var) -> format_var(Var);
format_arg(Value) -> unicode:characters_to_binary(io_lib:format("~0p", [Value])).

format_var(Var) -> unicode:characters_to_binary(atom_to_list(Var)).

escape(Chars) ->
    lists:flatmap(fun($') -> "\\'"; ($\\) -> "\\\\"; (C) -> [C] end, Chars).

%%% ------------------------------------------------------------------------
%%% Quantifiers

%% @doc The core formula of a quantified one over a domain: every
%% `forall Vs: F' becomes the conjunction of F under every assignment of
%% values of Domain to the variables Vs (all combinations, in the order of
%% Domain, equal values included; `true' for an empty domain), a
%% comparison `P == Q' becomes `true' or `false', and a parameterised
%% predicate `{Name, [{var, P}, ...]}' becomes `{Name, [Value, ...]}'.  A
%% formula without quantifiers comes back unchanged.  A comparison of a
%% variable that no forall binds raises `{unbound_variable, Var}'.
-spec instantiate(quantified(), [term()]) -> formula().
instantiate(F, Domain) when is_list(Domain) ->
    inst(F, #{}, Domain).

inst(true, _, _) -> true;
inst(false, _, _) -> false;
inst({prop, {Name, Args}}, Sub, _) when is_atom(Name), is_list(Args) ->
    {prop, {Name, [case A of
                       {var, V} when is_map_key(V, Sub) -> map_get(V, Sub);
                       _ -> A
                   end || A <- Args]}};
inst({prop, _} = P, _, _) -> P;
inst({eq, P, Q}, Sub, _) -> value(P, Sub) =:= value(Q, Sub);
inst({forall, Vars, F}, Sub, Domain) ->
    case [inst(F, S, Domain) || S <- assignments(Vars, Domain, Sub)] of
        [] -> true;
        [G | Gs] -> lists:foldl(fun(H, Acc) -> {'and', Acc, H} end, G, Gs)
    end;
inst({'not', F}, Sub, Domain) -> {'not', inst(F, Sub, Domain)};
inst({next, F}, Sub, Domain) -> {next, inst(F, Sub, Domain)};
inst({Op, F, G}, Sub, Domain) -> {Op, inst(F, Sub, Domain), inst(G, Sub, Domain)}.

value(Var, Sub) ->
    case Sub of
        #{Var := Value} -> Value;
        #{} -> erlang:error({unbound_variable, Var})
    end.

assignments([], _, Sub) -> [Sub];
assignments([Var | Vars], Domain, Sub) ->
    [S || Value <- Domain, S <- assignments(Vars, Domain, Sub#{Var => Value})].

%% @doc The predicates a formula uses, with the number of arguments they
%% take (0 for a plain name), sorted without duplicates.  A predicate used
%% with two arities is listed twice.
-spec predicates(quantified()) -> [{atom(), non_neg_integer()}].
predicates(F) ->
    lists:usort(preds(F, [])).

preds({prop, {Name, Args}}, Acc) when is_atom(Name), is_list(Args) -> [{Name, length(Args)} | Acc];
preds({prop, Name}, Acc) when is_atom(Name) -> [{Name, 0} | Acc];
preds({eq, _, _}, Acc) -> Acc;
preds({forall, _, F}, Acc) -> preds(F, Acc);
preds({'not', F}, Acc) -> preds(F, Acc);
preds({next, F}, Acc) -> preds(F, Acc);
preds({_, F, G}, Acc) -> preds(G, preds(F, Acc));
preds(Constant, Acc) when is_boolean(Constant) -> Acc.

%%% ------------------------------------------------------------------------
%%% Normal forms

%% @doc Negation normal form: `not' only applied to predicates.
-spec nnf(formula()) -> formula().
nnf(true) -> true;
nnf(false) -> false;
nnf({prop, _} = P) -> P;
nnf({'not', F}) -> negate(F);
nnf({next, F}) -> {next, nnf(F)};
nnf({Op, F, G}) -> {Op, nnf(F), nnf(G)}.

%% The negation normal form of not F.
negate(true) -> false;
negate(false) -> true;
negate({prop, _} = P) -> {'not', P};
negate({'not', F}) -> nnf(F);
negate({'and', F, G}) -> {'or', negate(F), negate(G)};
negate({'or', F, G}) -> {'and', negate(F), negate(G)};
negate({next, F}) -> {next, negate(F)};
negate({until, F, G}) -> {release, negate(F), negate(G)};
negate({release, F, G}) -> {until, negate(F), negate(G)}.

%% @doc The negation normal form of a formula, simplified bottom-up by
%% language-preserving rewrites: constants folded, idempotence,
%% complementary literals, absorption, and the temporal identities
%% `X true = true', `F U true = true', `false U G = G', `true R G = G',
%% `F U (F U G) = F U G', `(F U G) U G = F U G' (and their duals),
%% `X F op X G = X (F op G)', `<>[]<>F = []<>F', `[]<>[]F = <>[]F'.
-spec simplify(formula()) -> formula().
simplify(F) ->
    simp(nnf(F)).

simp({'and', F, G}) -> mk_and(simp(F), simp(G));
simp({'or', F, G}) -> mk_or(simp(F), simp(G));
simp({next, F}) -> mk_next(simp(F));
simp({until, F, G}) -> mk_until(simp(F), simp(G));
simp({release, F, G}) -> mk_release(simp(F), simp(G));
simp(Literal) -> Literal.

mk_and(false, _) -> false;
mk_and(_, false) -> false;
mk_and(true, G) -> G;
mk_and(F, true) -> F;
mk_and(F, F) -> F;
mk_and({next, F}, {next, G}) -> mk_next(mk_and(F, G));
mk_and({release, false, F}, {release, false, G}) -> mk_release(false, mk_and(F, G));
mk_and({until, F1, G}, {until, F2, G}) -> mk_until(mk_and(F1, F2), G);
mk_and({release, F, G1}, {release, F, G2}) -> mk_release(F, mk_and(G1, G2));
mk_and(F, {'or', F, _}) -> F;
mk_and(F, {'or', _, F}) -> F;
mk_and({'or', G, _}, G) -> G;
mk_and({'or', _, G}, G) -> G;
mk_and(F, G) ->
    case negate(F) =:= G of
        true -> false;
        false -> {'and', F, G}
    end.

mk_or(true, _) -> true;
mk_or(_, true) -> true;
mk_or(false, G) -> G;
mk_or(F, false) -> F;
mk_or(F, F) -> F;
mk_or({next, F}, {next, G}) -> mk_next(mk_or(F, G));
mk_or({until, true, F}, {until, true, G}) -> mk_until(true, mk_or(F, G));
mk_or({until, F, G1}, {until, F, G2}) -> mk_until(F, mk_or(G1, G2));
mk_or({release, F1, G}, {release, F2, G}) -> mk_release(mk_or(F1, F2), G);
mk_or(F, {'and', F, _}) -> F;
mk_or(F, {'and', _, F}) -> F;
mk_or({'and', G, _}, G) -> G;
mk_or({'and', _, G}, G) -> G;
mk_or(F, G) ->
    case negate(F) =:= G of
        true -> true;
        false -> {'or', F, G}
    end.

mk_next(true) -> true;
mk_next(false) -> false;
mk_next(F) -> {next, F}.

mk_until(_, true) -> true;
mk_until(_, false) -> false;
mk_until(false, G) -> G;
mk_until(F, F) -> F;
mk_until(F, {until, F, _} = G) -> G;
mk_until({until, _, G} = F, G) -> F;
mk_until({next, F}, {next, G}) -> mk_next(mk_until(F, G));
mk_until(true, {release, false, {until, true, _}} = G) -> G;
mk_until(F, G) -> {until, F, G}.

mk_release(_, true) -> true;
mk_release(_, false) -> false;
mk_release(true, G) -> G;
mk_release(F, F) -> F;
mk_release(F, {release, F, _} = G) -> G;
mk_release({release, _, G} = F, G) -> F;
mk_release({next, F}, {next, G}) -> mk_next(mk_release(F, G));
mk_release(false, {until, true, {release, false, _}} = G) -> G;
mk_release(F, G) -> {release, F, G}.

%%% ------------------------------------------------------------------------
%%% Translation
%%
%% The tableau of Gerth, Peled, Vardi and Wolper (PSTV 1995) on the
%% simplified negation normal form builds a generalised Büchi automaton
%% whose nodes are labelled with the literals that must hold at the
%% position they stand for.  Moving the label of a node onto every edge
%% into it, from a fresh initial node 0, gives the guards-on-transitions
%% form.  One acceptance set per until subformula F U G (nodes where it is
%% not pending: not promised, or G holds) is degeneralised with a counter
%% of the next set awaited; the plain automaton is then reduced.
%%
%% Unlike the paper, a finished node is identified by its label, its
%% obligations for the next position and its pending untils, not by all
%% the formulas it processed: nodes agreeing on these three have the same
%% letters, successors and acceptance, so identifying them is a
%% bisimulation quotient done on the fly.  It keeps the tableau of nested
%% formulas from growing with every order of decomposition.

-record(node, {incoming :: [gnode()],
               old = [] :: [formula()],      % ordset: processed here
               new = [] :: [formula()],      % still to process here
               next = [] :: [formula()]}).   % ordset: promised from next position
-record(tab, {next_id = 1 :: pos_integer(),
              %% Formulas processed so far, and the most allowed.
              steps = 0 :: non_neg_integer(),
              max_steps = infinity :: pos_integer() | infinity,
              %% Nodes done, by label, next obligations and pending
              %% untils: their number and incoming nodes.
              nodes = #{} :: #{{guard(), [formula()], [formula()]} => {gnode(), [gnode()]}}}).

-type gnode() :: non_neg_integer().

%% Working form of a plain Büchi automaton.
-type ba() :: #{init := [term()],
                acc := #{term() => boolean()},
                out := #{term() => [{guard(), term()}]}}.

%% @doc A Büchi automaton accepting exactly the words on which the formula
%% holds.  Guards are on transitions, acceptance on states (see the module
%% documentation).  States are numbered from 0 in breadth-first order from
%% the initial states; a formula no word satisfies gives the automaton with
%% no states.  Unreachable states and states from which no accepting cycle
%% is reachable are removed, parallel guards merged (`[p]' and `[!p]' to the
%% same state become `[]', and a guard implied by another is dropped), and
%% bisimilar states merged.
-spec to_buchi(formula()) -> automaton().
to_buchi(Formula) ->
    {ok, Automaton} = to_buchi(Formula, #{max_steps => infinity}),
    Automaton.

%% @doc As `to_buchi/1', giving up when building the tableau takes more
%% than `max_steps' steps (a formula taken from a node's to-do list): the
%% tableau's size, and the time to build and reduce it, can be
%% exponential in the formula's (each nested until quadruples the steps).
-spec to_buchi(formula(), #{max_steps := pos_integer() | infinity}) ->
          {ok, automaton()} | {error, {too_large, {max_tableau_steps, pos_integer()}}}.
to_buchi(Formula, #{max_steps := Max}) ->
    try tableau(simplify(Formula), Max) of
        Nodes -> {ok, output(reduce(degeneralise(Nodes)))}
    catch
        throw:{mce_ltl_too_large, Max} -> {error, {too_large, {max_tableau_steps, Max}}}
    end.

%% Nodes of the tableau as {Number, Label, Pending, Incoming}; node 0 is
%% the initial node, which has no entry of its own.
tableau(F, Max) ->
    #tab{nodes = Nodes} = expand(#node{incoming = [0], new = [F]}, #tab{max_steps = Max}),
    [{Id, Label, Pending, Incoming}
     || {{Label, _, Pending}, {Id, Incoming}} <- maps:to_list(Nodes)].

expand(#node{new = [], old = Old, next = Next, incoming = Incoming},
       #tab{next_id = Id, nodes = Nodes} = Tab) ->
    Key = {label(Old), Next, [U || {until, _, G} = U <- Old, not ordsets:is_element(G, Old)]},
    case Nodes of
        #{Key := {Id0, Incoming0}} ->
            Tab#tab{nodes = Nodes#{Key := {Id0, lists:umerge(Incoming, Incoming0)}}};
        #{} ->
            Tab1 = Tab#tab{next_id = Id + 1, nodes = Nodes#{Key => {Id, Incoming}}},
            expand(#node{incoming = [Id], new = Next}, Tab1)
    end;
expand(#node{new = [_ | _]}, #tab{steps = Max, max_steps = Max}) ->
    throw({mce_ltl_too_large, Max});
expand(#node{new = [F | New], old = Old} = Node, #tab{steps = Steps} = Tab0) ->
    Tab = Tab0#tab{steps = Steps + 1},
    case ordsets:is_element(F, Old) of
        true -> expand(Node#node{new = New}, Tab);
        false -> expand1(F, Node#node{new = New, old = ordsets:add_element(F, Old)}, Old, Tab)
    end.

%% F has just moved from New to Old; Old0 is Old before.  Where an
%% alternative is already fulfilled by Old0 the node is not split: the
%% other branch only adds obligations, so its words are a subset.
expand1(false, _, _, Tab) ->
    Tab;
expand1(true, Node, _, Tab) ->
    expand(Node, Tab);
expand1({prop, _} = P, Node, Old0, Tab) ->
    case ordsets:is_element({'not', P}, Old0) of
        true -> Tab;
        false -> expand(Node, Tab)
    end;
expand1({'not', P}, Node, Old0, Tab) ->
    case ordsets:is_element(P, Old0) of
        true -> Tab;
        false -> expand(Node, Tab)
    end;
expand1({'and', F, G}, Node, _, Tab) ->
    expand(add_new([F, G], Node), Tab);
expand1({'or', F, G}, Node, Old0, Tab) ->
    case ordsets:is_element(F, Old0) orelse ordsets:is_element(G, Old0) of
        true -> expand(Node, Tab);
        false -> expand(add_new([G], Node), expand(add_new([F], Node), Tab))
    end;
expand1({next, F}, Node, _, Tab) ->
    expand(add_next(F, Node), Tab);
expand1({until, F, G} = U, Node, Old0, Tab) ->
    case ordsets:is_element(G, Old0) of
        true -> expand(Node, Tab);
        false -> expand(add_new([G], Node), expand(add_next(U, add_new([F], Node)), Tab))
    end;
expand1({release, F, G} = R, Node, Old0, Tab) ->
    case ordsets:is_element(F, Old0) andalso ordsets:is_element(G, Old0) of
        true -> expand(Node, Tab);
        false -> expand(add_new([F, G], Node), expand(add_next(R, add_new([G], Node)), Tab))
    end.

add_new(Fs, #node{old = Old, new = New} = Node) ->
    Node#node{new = [F || F <- Fs, not ordsets:is_element(F, Old)] ++ New}.

add_next(F, #node{next = Next} = Node) ->
    Node#node{next = ordsets:add_element(F, Next)}.

%% The plain automaton of the tableau's nodes: states {Node, I}, where I
%% is the acceptance set awaited; leaving a node of set I moves on to the
%% next set the node is not in (wrapping to 0 after the last), and states
%% {Node, 0} with Node in set 0 accept.
-spec degeneralise([{gnode(), guard(), [formula()], [gnode()]}]) -> ba().
degeneralise(Nodes) ->
    %% Untils never pending give sets of all nodes, which constrain nothing.
    Untils = lists:usort(lists:append([Pending || {_, _, Pending, _} <- Nodes])),
    K = length(Untils),
    %% For each node, the tuple of its memberships in the acceptance sets.
    Member = maps:from_list(
               [{0, list_to_tuple([true || _ <- Untils])} |
                [{Id, list_to_tuple([not lists:member(U, Pending) || U <- Untils])}
                 || {Id, _, Pending, _} <- Nodes]]),
    Succ = lists:foldl(
             fun({Id, Label, _, Incoming}, Acc) ->
                     Edge = {Label, Id},
                     lists:foldl(fun(From, Acc1) ->
                                         maps:update_with(From, fun(Es) -> [Edge | Es] end,
                                                          [Edge], Acc1)
                                 end, Acc, Incoming)
             end, #{}, Nodes),
    InSet = fun(Id, I) -> K =:= 0 orelse element(I + 1, maps:get(Id, Member)) end,
    Init = {0, 0},
    explore([Init], Succ, InSet, K, #{init => [Init], acc => #{}, out => #{}}).

explore([], _, _, _, BA) ->
    BA;
explore([{Id, I} = S | Todo], Succ, InSet, K, #{acc := Acc, out := Out} = BA) ->
    case Acc of
        #{S := _} ->
            explore(Todo, Succ, InSet, K, BA);
        #{} ->
            J = case K > 0 andalso InSet(Id, I) of
                    true -> skip_sets(Id, I + 1, K, InSet);
                    false -> I
                end,
            Edges = [{G, {To, J}} || {G, To} <- maps:get(Id, Succ, [])],
            BA1 = BA#{acc := Acc#{S => I =:= 0 andalso InSet(Id, 0)},
                      out := Out#{S => Edges}},
            explore([T || {_, T} <- Edges] ++ Todo, Succ, InSet, K, BA1)
    end.

skip_sets(_, K, K, _) -> 0;
skip_sets(Id, J, K, InSet) ->
    case InSet(Id, J) of
        true -> skip_sets(Id, J + 1, K, InSet);
        false -> J
    end.

label(Old) ->
    lists:usort([{Name, true} || {prop, Name} <- Old] ++
                    [{Name, false} || {'not', {prop, Name}} <- Old]).

%% Reduces until nothing changes; no step adds states or transitions.
-spec reduce(ba()) -> ba().
reduce(BA0) ->
    BA = quotient(normalise_transient(merge_guards(prune(BA0)))),
    case size_of(BA) =:= size_of(BA0) of
        true -> BA;
        false -> reduce(BA)
    end.

size_of(#{out := Out}) ->
    {map_size(Out), lists:sum([length(Es) || Es <- maps:values(Out)])}.

%% Keeps the states reachable from an initial state from which an
%% accepting cycle is reachable.
prune(#{init := Init, acc := Acc, out := Out}) ->
    Targets = fun(S) -> [T || {_, T} <- maps:get(S, Out)] end,
    %% Strongly connected components come sinks first, so a component's
    %% successors are classified before it.
    Live = lists:foldl(
             fun(Comp, Live0) ->
                     Good = cyclic(Comp, Targets) andalso lists:any(fun(S) -> maps:get(S, Acc) end, Comp),
                     case Good orelse lists:any(fun(S) -> lists:any(fun(T) -> is_map_key(T, Live0) end,
                                                                    Targets(S)) end, Comp) of
                         true -> maps:merge(Live0, maps:from_keys(Comp, true));
                         false -> Live0
                     end
             end, #{}, sccs(Init, Targets)),
    #{init => [S || S <- Init, is_map_key(S, Live)],
      acc => maps:with(maps:keys(Live), Acc),
      out => maps:map(fun(_, Es) -> [E || {_, T} = E <- Es, is_map_key(T, Live)] end,
                      maps:with(maps:keys(Live), Out))}.

%% Per state and target: guards implied by another guard are dropped, and
%% two guards differing only in one literal's sign become one without it.
merge_guards(#{out := Out} = BA) ->
    BA#{out := maps:map(fun(_, Es) -> merge_edges(Es) end, Out)}.

merge_edges(Es) ->
    ByTarget = maps:groups_from_list(fun({_, T}) -> T end, fun({G, _}) -> G end, Es),
    lists:sort([{G, T} || {T, Gs} <- maps:to_list(ByTarget),
                          G <- merge_guard_list(lists:usort(Gs))]).

merge_guard_list(Gs0) ->
    Gs = [G || G <- Gs0,
               not lists:any(fun(H) -> H =/= G andalso ordsets:is_subset(H, G) end, Gs0)],
    case complementary(Gs, Gs) of
        {G1, G2, Merged} -> merge_guard_list(lists:usort([Merged | (Gs -- [G1, G2])]));
        none -> Gs
    end.

complementary([], _) ->
    none;
complementary([G | Rest], Gs) ->
    Pairs = [{G, Other, Without}
             || {Name, Value} = L <- G,
                Without <- [ordsets:del_element(L, G)],
                Other <- [ordsets:add_element({Name, not Value}, Without)],
                lists:member(Other, Gs)],
    case Pairs of
        [Pair | _] -> Pair;
        [] -> complementary(Rest, Gs)
    end.

%% A state on no cycle is passed at most once, so whether it accepts does
%% not matter: it is made to accept when all its successors do, which lets
%% an initial state merge with the state it behaves like.
normalise_transient(#{init := Init, acc := Acc0, out := Out} = BA) ->
    Targets = fun(S) -> [T || {_, T} <- maps:get(S, Out)] end,
    Acc = lists:foldl(
            fun(Comp, Acc1) ->
                    case cyclic(Comp, Targets) of
                        true ->
                            Acc1;
                        false ->
                            [S] = Comp,
                            Ts = Targets(S),
                            Acc1#{S := Ts =/= [] andalso lists:all(fun(T) -> maps:get(T, Acc1) end, Ts)}
                    end
            end, Acc0, sccs(Init, Targets)),
    BA#{acc := Acc}.

%% Merges bisimilar states: the coarsest partition in which the states of
%% a block agree on acceptance and have the same guards into the same
%% blocks.  Bisimilar states accept the same words.
quotient(#{init := Init, acc := Acc, out := Out}) ->
    Block = refine(Acc, Out),
    Reps = maps:fold(fun(S, B, Reps0) -> maps:put(B, S, Reps0) end, #{}, Block),
    #{init => lists:usort([maps:get(S, Block) || S <- Init]),
      acc => maps:map(fun(_, S) -> maps:get(S, Acc) end, Reps),
      out => maps:map(fun(_, S) ->
                              lists:usort([{G, maps:get(T, Block)} || {G, T} <- maps:get(S, Out)])
                      end, Reps)}.

refine(Block, Out) ->
    Sigs = maps:map(fun(S, B) ->
                            {B, lists:usort([{G, maps:get(T, Block)} || {G, T} <- maps:get(S, Out)])}
                    end, Block),
    Distinct = lists:usort(maps:values(Sigs)),
    Numbers = maps:from_list(lists:zip(Distinct, lists:seq(0, length(Distinct) - 1))),
    Block1 = maps:map(fun(_, Sig) -> maps:get(Sig, Numbers) end, Sigs),
    case map_size(Numbers) =:= length(lists:usort(maps:values(Block))) of
        true -> Block1;
        false -> refine(Block1, Out)
    end.

%% Numbers states 0.. breadth-first from the initial states.
-spec output(ba()) -> automaton().
output(#{init := []}) ->
    #{states => [], init => [], accepting => [], trans => []};
output(#{init := Init, acc := Acc, out := Out}) ->
    Order = bfs(Init, Out, #{}, []),
    Number = maps:from_list(lists:zip(Order, lists:seq(0, length(Order) - 1))),
    N = fun(S) -> maps:get(S, Number) end,
    #{states => lists:seq(0, length(Order) - 1),
      init => lists:sort([N(S) || S <- Init]),
      accepting => lists:sort([N(S) || S <- Order, maps:get(S, Acc)]),
      trans => lists:sort([{N(S), G, N(T)} || S <- Order, {G, T} <- maps:get(S, Out)])}.

bfs([], _, _, Order) ->
    lists:reverse(Order);
bfs(Queue, Out, Seen0, Order0) ->
    {Seen, Order, Next} =
        lists:foldl(fun(S, {Seen1, Order1, Next1} = Acc) ->
                            case Seen1 of
                                #{S := _} -> Acc;
                                #{} -> {Seen1#{S => true}, [S | Order1],
                                        Next1 ++ [T || {_, T} <- maps:get(S, Out)]}
                            end
                    end, {Seen0, Order0, []}, Queue),
    bfs(Next, Out, Seen, Order).

%%% ------------------------------------------------------------------------
%%% Acceptance of lassos

%% @doc Whether the automaton accepts the word Prefix Cycle Cycle ...: some
%% run through the product of the automaton with the lasso's positions
%% reaches a cycle through an accepting state.
-spec accepts(automaton(), lasso()) -> boolean().
accepts(#{init := Init, accepting := Accepting, trans := Trans}, {Prefix, [_ | _] = Cycle}) ->
    Letters = list_to_tuple(Prefix ++ Cycle),
    Loop = length(Prefix),
    Last = tuple_size(Letters) - 1,
    Out = maps:groups_from_list(fun({S, _, _}) -> S end, fun({_, G, T}) -> {G, T} end, Trans),
    Acc = maps:from_keys(Accepting, true),
    Succ = fun({S, I}) ->
                   J = case I of Last -> Loop; _ -> I + 1 end,
                   Letter = element(I + 1, Letters),
                   [{T, J} || {G, T} <- maps:get(S, Out, []), satisfies(G, Letter)]
           end,
    lists:any(fun(Comp) ->
                      cyclic(Comp, Succ) andalso
                          lists:any(fun({S, _}) -> is_map_key(S, Acc) end, Comp)
              end, sccs([{S, 0} || S <- Init], Succ)).

satisfies(Guard, Letter) ->
    lists:all(fun({Name, Value}) -> lists:member(Name, Letter) =:= Value end, Guard).

%%% ------------------------------------------------------------------------
%%% Strongly connected components (Tarjan)

-record(tarjan, {index = 0 :: non_neg_integer(),
                 number = #{} :: #{term() => non_neg_integer()},
                 low = #{} :: #{term() => non_neg_integer()},
                 stack = [] :: [term()],
                 on_stack = #{} :: #{term() => true},
                 comps = [] :: [[term()]]}).

%% Whether a component has a cycle: more than one state, or a self-loop.
cyclic([S], Succ) -> lists:member(S, Succ(S));
cyclic([_, _ | _], _) -> true.

%% The strongly connected components reachable from Roots, each
%% component after every component it reaches (sinks first).
sccs(Roots, Succ) ->
    T = lists:foldl(fun(V, T0) ->
                            case is_map_key(V, T0#tarjan.number) of
                                true -> T0;
                                false -> strong(V, Succ, T0)
                            end
                    end, #tarjan{}, Roots),
    lists:reverse(T#tarjan.comps).

strong(V, Succ, #tarjan{index = I, number = Num, low = Low, stack = Stack, on_stack = On} = T0) ->
    T1 = T0#tarjan{index = I + 1, number = Num#{V => I}, low = Low#{V => I},
                   stack = [V | Stack], on_stack = On#{V => true}},
    T2 = lists:foldl(
           fun(W, T) ->
                   case T#tarjan.number of
                       #{W := WNum} ->
                           case is_map_key(W, T#tarjan.on_stack) of
                               true -> lower(V, WNum, T);
                               false -> T
                           end;
                       #{} ->
                           T3 = strong(W, Succ, T),
                           lower(V, maps:get(W, T3#tarjan.low), T3)
                   end
           end, T1, Succ(V)),
    case maps:get(V, T2#tarjan.low) =:= I of
        true ->
            {Comp, Rest} = pop_until(V, T2#tarjan.stack, []),
            T2#tarjan{stack = Rest,
                       on_stack = maps:without(Comp, T2#tarjan.on_stack),
                       comps = [Comp | T2#tarjan.comps]};
        false ->
            T2
    end.

lower(V, N, #tarjan{low = Low} = T) ->
    case N < maps:get(V, Low) of
        true -> T#tarjan{low = Low#{V := N}};
        false -> T
    end.

pop_until(V, [V | Rest], Comp) -> {[V | Comp], Rest};
pop_until(V, [W | Rest], Comp) -> pop_until(V, Rest, [W | Comp]).
