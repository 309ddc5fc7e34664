%% Hostile programs for the sandbox tests (mce_sandbox_tests): checked code
%% must never reach the host through a fun, apply, make_fun or spawn.  The
%% zero-arity ones end with exit({result, V}) and run on the real VM too.
-module(tprog_sandbox).
-export([fun_put/0, fun_erase/0, apply_fun_put/0, make_fun_put/0, foldl_fun_put/0,
         spawn_send/0, fun_from_term_put/0, computed_fun_put/0]).
-export([fun_write_file/1, prim_file_write/1, zip_create/1, map_os_cmd/1, spawn_write_file/1,
         call_arg/3, make_fun_write_file/1, term_fun_write_file/1]).
-export([fun_halt/0, apply_fun_halt/0, make_fun_halt/0, spawn_halt/0, foreach_fun_halt/0,
         call0/1]).
-export([parse_term_os_cmd/1, call_decoded/1, crypto_engine/0, crypto_hash/0, map_anno_decoded/1]).
-export([many_atoms/1, many_atoms_term/1, big_list/1, big_binary_copy/1, big_iolist_binary/1]).
-export([piecewise_binary/1, count_down/2]).
-export([checker_direct/0, checker_apply/0, checker_fun/0, checker_api/0, id/1]).
-export([runtime_direct/0, runtime_apply/0]).
-export([ensure_onload_loaded/0]).

%% Funs of process-dictionary BIFs act on the simulated process's dictionary.
fun_put() ->
    F = fun erlang:put/2,
    F(k, v),
    exit({result, get(k)}).

fun_erase() ->
    put(a, 1),
    F = fun erlang:erase/0,
    Old = F(),
    exit({result, {Old, get(a)}}).

apply_fun_put() ->
    apply(fun erlang:put/2, [k, v]),
    exit({result, get(k)}).

make_fun_put() ->
    F = erlang:make_fun(erlang, put, 2),
    F(k, v),
    exit({result, get(k)}).

foldl_fun_put() ->
    Old = lists:foldl(fun erlang:put/2, v, [k]),
    exit({result, {Old, get(k)}}).

%% spawn(erlang, send, ...) sends within the model.
spawn_send() ->
    Me = self(),
    spawn(erlang, send, [Me, hi]),
    receive hi -> exit({result, got}) end.

%% A fun the translator cannot see: decoded from a binary.
fun_from_term_put() ->
    F = binary_to_term(term_to_binary(fun erlang:put/2)),
    F(k, v),
    exit({result, get(k)}).

computed_fun_put() ->
    M = list_to_atom("erlang"),
    F = fun M:put/2,
    F(k, v),
    exit({result, get(k)}).

fun_write_file(Path) ->
    F = fun file:write_file/2,
    F(Path, <<"x">>).

prim_file_write(Path) ->
    prim_file:write_file(Path, <<"x">>).

zip_create(Path) ->
    zip:create(Path, [{"a", <<"x">>}]).

map_os_cmd(Path) ->
    lists:map(fun os:cmd/1, ["touch " ++ Path]).

spawn_write_file(Path) ->
    spawn(file, write_file, [Path, <<"x">>]).

make_fun_write_file(Path) ->
    F = erlang:make_fun(file, write_file, 2),
    F(Path, <<"x">>).

term_fun_write_file(Path) ->
    F = binary_to_term(term_to_binary(fun file:write_file/2)),
    lists:foreach(fun(P) -> F(P, <<"x">>) end, [Path]).

call_arg(F, A, B) ->
    F(A, B).

fun_halt() ->
    F = fun erlang:halt/0,
    F().

apply_fun_halt() ->
    apply(fun erlang:halt/0, []).

make_fun_halt() ->
    F = erlang:make_fun(erlang, halt, 0),
    F().

spawn_halt() ->
    spawn(erlang, halt, []).

foreach_fun_halt() ->
    lists:foreach(fun erlang:halt/1, [0]).

call0(F) ->
    F().

%% N new atoms in one step.
many_atoms(N) ->
    [list_to_atom("tprog_sandbox_" ++ integer_to_list(I)) || I <- lists:seq(1, N)].

many_atoms_term(N) ->
    Ext = << <<119, (byte_size(S)), S/binary>>
             || I <- lists:seq(1, N), S <- [<<"tprog_sandbox_t", (integer_to_binary(I))/binary>>] >>,
    binary_to_term(<<131, 108, N:32, Ext/binary, 106>>).

%% A list of N elements built in one step.
big_list(N) ->
    exit({result, length(lists:duplicate(N, x))}).

%% Binaries of N bytes built in one call: outside the heap.
big_binary_copy(N) ->
    exit({result, byte_size(binary:copy(<<0>>, N))}).

big_iolist_binary(N) ->
    B = binary:copy(<<0>>, 1000000),
    exit({result, byte_size(iolist_to_binary([B || _ <- lists:seq(1, N)]))}).

%% N steps, one message to itself each; the first argument is dropped
%% after the first step.
count_down(_Dropped, 0) ->
    exit({result, done});
count_down(_Dropped, N) ->
    self() ! tick,
    receive tick -> count_down(none, N - 1) end.

%% The checker's own modules, reached directly, by apply and by a fun.
checker_direct() ->
    exit({result, mce_pid:term(1)}).

checker_apply() ->
    M = id(mce_nif),
    exit({result, M:stats(x)}).

checker_fun() ->
    F = id(fun mce_pid:term/1),
    exit({result, F(1)}).

%% The runtime (mce_rt and the rest of its family) called directly, and by
%% apply: redirect targets, so not refused (docs/ARCHITECTURE.md, "The
%% sandbox"), and never translated.
runtime_direct() ->
    exit({result, {mce_rt:node(), is_reference(mce_rt_signals:make_ref()),
                   mce_rt_node:known_node(nonode@nohost)}}).

runtime_apply() ->
    {M1, M2} = id({mce_rt, mce_rt_signals}),
    exit({result, {M1:node(), is_reference(M2:make_ref())}}).

%% The API for checked programs stays callable.
checker_api() ->
    ok = mcerlang:probe(here, 1),
    exit({result, mcerlang:choice([fun() -> a end])}).

id(X) -> X.

%% N MB of binary data built in one step from 1 MB pieces: no one call is
%% large.
piecewise_binary(N) ->
    exit({result, iolist_size(pieces(N, []))}).

pieces(0, Acc) -> Acc;
pieces(N, Acc) ->
    Piece = binary:copy(<<N:64>>, 1 bsl 17),
    pieces(N - 1, [Piece | Acc]).

%% erl_parse:map_anno/2 calls the fun it is given directly (erl_parse is
%% a pure module, not translated): here on the annotation "touch Path".
parse_term_os_cmd(Path) ->
    F = binary_to_term(term_to_binary(fun os:cmd/1)),
    erl_parse:map_anno(F, {atom, "touch " ++ Path, a}).

%% A fun that reaches the program as data (a binary) and is decoded.
call_decoded(Bin) ->
    F = binary_to_term(Bin),
    F().

crypto_engine() ->
    crypto:engine_list().

crypto_hash() ->
    exit({result, crypto:hash(sha256, <<"x">>)}).

%% A decoded fun of a modelled BIF, called by untranslated code.
map_anno_decoded(Bin) ->
    put(k, v),
    F = binary_to_term(Bin),
    _ = erl_parse:map_anno(F, {atom, k, a}),
    exit({result, get(k)}).

%% Loading a module runs its on_load function: the checker must not load
%% the program's modules itself (test/tprog_onload.erl).
ensure_onload_loaded() ->
    code:ensure_loaded(tprog_onload).
