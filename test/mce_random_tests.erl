%% Generated differential tests: random expression nests around blocking
%% calls, each run on the real VM and under the checker.
%%
%% A seeded generator writes one module of programs
%%     p_N() -> Self = self(), spawn(Sender), exit({result, Expr}).
%% where Expr nests integer arithmetic, tuples, lists, case, if,
%% andalso/orelse, try/catch, catch, funs, list comprehensions and library
%% higher-order functions around calls `wait(Tag)' that receive a message
%% tagged Tag.  Every tag is used once and the sender sends one message per
%% tag, so the program is deterministic whatever the interleaving: the
%% checker must find exactly one outcome over all interleavings, and it
%% must be the real VM's (value, or exception and the function it was
%% raised in).  Contexts evaluated several times (fun bodies called by
%% folds, comprehension templates) only get pure subexpressions, so no tag
%% is waited for twice.  Each program is also checked with the reductions
%% of issue 18 off and on, which must find the same outcomes (the
%% concurrent programs of mce_reduction_random_tests test more of them).
-module(mce_random_tests).
-include_lib("eunit/include/eunit.hrl").

-define(MODULE_NAME, mce_random_progs).
-define(PROGRAMS, 120).
-define(SEED, {exsss, [20261122 | 7]}).

random_programs_test_() ->
    {setup, fun build/0, fun cleanup/1,
     fun({Dir, N}) ->
             [{"p_" ++ integer_to_list(I), {timeout, 60, fun() -> same_outcome(I) end}}
              || I <- lists:seq(1, N), Dir =/= none]
             ++ [{"p_" ++ integer_to_list(I) ++ " reductions",
                  {timeout, 60, fun() -> same_with_reductions(I) end}}
                 || I <- lists:seq(1, N), Dir =/= none]
     end}.

build() ->
    rand:seed(exsss, 20261122),
    Dir = filename:join(["/tmp", "mce_random_" ++ os:getpid()]),
    ok = filelib:ensure_dir(filename:join(Dir, "x")),
    Src = filename:join(Dir, atom_to_list(?MODULE_NAME) ++ ".erl"),
    Programs = [program(I) || I <- lists:seq(1, ?PROGRAMS)],
    ok = file:write_file(Src, [header() | Programs]),
    {ok, ?MODULE_NAME} = compile:file(Src, [debug_info, {outdir, Dir}, report_errors]),
    true = code:add_patha(Dir),
    code:purge(?MODULE_NAME),
    {module, ?MODULE_NAME} = code:load_abs(filename:join(Dir, atom_to_list(?MODULE_NAME))),
    %% Translating the module (and the library modules it uses) takes a few
    %% seconds on a cold VM: done here, outside the tests' time limits.
    _ = mce_translate:ensure(?MODULE_NAME),
    [mce_translate:ensure_library(L) || L <- [lists]],
    {Dir, ?PROGRAMS}.

cleanup({Dir, _}) ->
    code:del_path(Dir).

header() ->
    ["-module(", atom_to_list(?MODULE_NAME), ").\n",
     "-compile([export_all, nowarn_export_all, nowarn_unused_vars]).\n\n",
     "wait(Tag) -> receive {Tag, V} -> V end.\n\n",
     "send_all(Pid, Msgs) -> [Pid ! M || M <- Msgs], ok.\n\n"].

%%--------------------------------------------------------------------
%% Comparison
%%--------------------------------------------------------------------

same_outcome(I) ->
    F = list_to_atom("p_" ++ integer_to_list(I)),
    Real = real_exit(F),
    Checked = checked_exits(F, []),
    ?assertEqual([Real], Checked).

real_exit(F) ->
    {Pid, Ref} = spawn_monitor(?MODULE_NAME, F, []),
    receive {'DOWN', Ref, process, Pid, Reason} -> outcome(Reason)
    after 10000 -> timeout
    end.

%% Issue 18: the same outcomes with the reductions off, with partial-order
%% reduction alone and with symmetry too (the programs order no pids).
same_with_reductions(I) ->
    F = list_to_atom("p_" ++ integer_to_list(I)),
    Off = checked_exits(F, #{reduction => false, symmetry => false}, []),
    ?assertEqual(Off, checked_exits(F, #{reduction => true, symmetry => false}, [])),
    ?assertEqual(Off, checked_exits(F, #{reduction => true, symmetry => true}, [])).

checked_exits(F, Seen) ->
    checked_exits(F, #{}, Seen).

checked_exits(F, Opts, Seen) when length(Seen) < 4 ->
    case mcerlang:check({?MODULE_NAME, F, []}, Opts#{treat_as_normal => [normal | Seen]}) of
        {ok, _} -> [outcome(R) || R <- lists:reverse(Seen)];
        {error, #{violation := {abnormal_exit, _, Reason}}} -> checked_exits(F, Opts, [Reason | Seen]);
        {error, #{violation := deadlock}} -> lists:reverse([deadlock | Seen])
    end;
checked_exits(_F, _Opts, Seen) ->
    lists:reverse(Seen).

%% The value, or the exception and the function that raised it (file
%% paths and line details are not compared).
outcome({result, V}) -> {result, V};
outcome({Reason, [{M, F, A, _} | _]}) when is_atom(M) ->
    {Reason, M, enclosing(F), arity(A)};
outcome(Other) -> Other.

enclosing(F) ->
    case re:run(atom_to_list(F), "^-([^/]+)/", [{capture, all_but_first, list}]) of
        {match, [Name]} -> list_to_atom(Name);
        nomatch -> F
    end.

arity(A) when is_list(A) -> length(A);
arity(A) -> A.

%%--------------------------------------------------------------------
%% Generator
%%--------------------------------------------------------------------

program(I) ->
    put(tags, []),
    put(vars, 0),
    Expr = int_expr(4, true),
    Msgs = [io_lib:format("{~s, ~b}", [T, V]) || {T, V} <- lists:reverse(get(tags))],
    ["p_", integer_to_list(I), "() ->\n",
     "    Self = self(),\n",
     "    spawn(fun() -> send_all(Self, [", lists:join(", ", Msgs), "]) end),\n",
     "    exit({result, ", Expr, "}).\n\n"].

%% An integer-valued expression of depth at most D; Waits says whether it
%% may contain blocking calls (it is evaluated at most once).
int_expr(0, Waits) -> leaf(Waits);
int_expr(D, Waits) ->
    Sub = fun() -> int_expr(D - 1, Waits) end,
    Pure = fun() -> int_expr(D - 1, false) end,
    case rand:uniform(19) of
        1 -> leaf(Waits);
        2 -> ["(", Sub(), " + ", Sub(), ")"];
        3 -> ["(", Sub(), " * ", Sub(), ")"];
        4 -> ["(", Sub(), " - ", Sub(), ")"];
        5 -> X = var(),
             ["(case ", Sub(), " of ", X, " when ", X, " > ", int(), " -> ", Sub(),
              "; _ -> ", Sub(), " end)"];
        6 -> ["(case (", Sub(), " > ", int(), ") andalso (", Sub(), " < ", int(),
              ") of true -> ", Sub(), "; false -> ", Sub(), " end)"];
        7 -> ["(case (", Sub(), " =:= ", int(), ") orelse (", Sub(), " > ", int(),
              ") of true -> 1; false -> 0 end)"];
        8 -> ["(try ", Sub(), " div ", Sub(), " catch error:badarith -> ", Sub(), " end)"];
        9 -> ["element(", integer_to_list(rand:uniform(2)), ", {", Sub(), ", ", Sub(), "})"];
        10 -> X = var(),
              ["(fun(", X, ") -> ", X, " + ", Sub(), " end)(", Sub(), ")"];
        11 -> ["lists:sum([", Sub(), ", ", Sub(), ", ", Sub(), "])"];
        12 -> X = var(), A = var(),
              ["lists:foldl(fun(", X, ", ", A, ") -> ", X, " + ", A, " + ", Pure(), " end, ",
               Sub(), ", [1, 2])"];
        13 -> X = var(),
              ["length([", X, " || ", X, " <- [", Sub(), ", ", Sub(), "], ", X, " > ", int(),
               "])"];
        14 -> ["(case catch (", Sub(), " div ", Sub(), ") of {'EXIT', _} -> ", Sub(),
               "; Q", integer_to_list(next_var()), " -> Q", integer_to_list(get(vars)), " end)"];
        15 -> X = var(),
              ["begin ", X, " = ", Sub(), ", if ", X, " > ", int(), " -> ", Sub(), "; true -> ",
               Sub(), " end end"];
        16 -> X = var(),
              ["begin ", X, " = ", Sub(), ", ", X, " * 2 + ", Sub(), " end"];
        %% Exceptions that may escape: badarith, a throw, an exit.
        17 -> ["(", Sub(), " div ", Sub(), ")"];
        18 -> X = var(),
              ["(case ", Sub(), " of 0 -> throw(zero); ", X, " -> ", X, " end)"];
        19 -> X = var(),
              ["(case ", Sub(), " of 1 -> exit(one); ", X, " -> ", X, " end)"]
    end.

leaf(false) -> int();
leaf(true) ->
    case rand:uniform(3) of
        1 -> int();
        _ ->
            Tag = "t" ++ integer_to_list(length(get(tags)) + 1),
            put(tags, [{Tag, rand:uniform(7) - 2} | get(tags)]),
            ["wait(", Tag, ")"]
    end.

int() -> integer_to_list(rand:uniform(9) - 3).

var() -> "V" ++ integer_to_list(next_var()).

next_var() ->
    N = get(vars) + 1,
    put(vars, N),
    N.
