%% @doc The sandbox rule: checked code never reaches the host.
%%
%% Every call checked code can make either runs translated inside the model,
%% is a pure function of an OTP module on the allow list below, or stops the
%% check with `{unsupported_call | unsupported_bif, {M, F, A}, Where, Hint}'
%% (the hint names the option `stubs', the way out).
%% Static calls are classified by the translator (mce_translate:classify_call/3,
%% which consults pure_call/3 and refused_bif/2 here); everything only known
%% at run time comes through this module: fun values when they are called
%% (checked_fun/2), erlang:make_fun/3 and `fun M:F/A' with computed parts
%% (make_fun/3), the initial call of a spawned process (init_mfa/3,
%% init_fun/1) and funs inside an entry's arguments or a closure entry's
%% captured values (entry_args/1).
%%
%% The executor is bounded too: atoms made by checked code are counted
%% against a budget per check (the BEAM never frees atoms, and a full atom
%% table aborts the VM); the heap limit is set by mcerlang:isolated/2.
-module(mce_sandbox).
-compile({no_auto_import, [list_to_binary/1, iolist_to_binary/1, list_to_atom/1, binary_to_atom/1, binary_to_atom/2, binary_to_term/1, binary_to_term/2]}).

-export([pure_call/3, refused_bif/2, checked_fun/2, make_fun/3, init_mfa/3, init_fun/1,
         entry_args/1, deep_map/2]).
%% Atom-making BIFs, redirected here by the translator.
-export([list_to_atom/1, binary_to_atom/1, binary_to_atom/2, binary_to_term/1,
         binary_to_term/2, atom_budget/0, atoms_made/0, step_atoms_start/0,
         step_atoms_end/0, executor_memory/0]).
%% Binary-making BIFs, redirected here by the translator.
-export([binary_copy/2, list_to_binary/1, iolist_to_binary/1]).

%% New atoms checked code may make in one check: a small fraction of the
%% VM's default table (1,048,576), so that a check never fills it.
-define(ATOM_BUDGET, 100000).
%% Steps between two reads of the atom table's size.
-define(ATOM_SAMPLE, 64).

%%====================================================================
%% Classification
%%====================================================================

%% @doc OTP modules whose functions compute on their arguments only: they
%% are called directly.  Any other OTP module not modelled or translated
%% (file, os, code, init, zip, prim_file, erl_eval, ...) is refused.
-spec pure_call(module(), atom(), arity()) -> boolean().
pure_call(crypto, F, _A) ->
    %% Hashes, MACs, ciphers; not engines (shared libraries), FIPS mode or
    %% starting the application.
    not lists:member(F, [start, stop, enable_fips_mode, ensure_engine_loaded]) andalso
        not lists:prefix("engine_", atom_to_list(F));
pure_call(M, _F, _A) ->
    pure_module(M).

pure_module(M) ->
    lists:member(M, [array, base64, binary, calendar, dict, erl_anno, erl_error,
                     erl_internal, erl_lint, erl_parse, erl_pp, erl_scan, erl_stdlib_errors,
                     filename, gb_sets, gb_trees, io_lib, io_lib_format, io_lib_fread,
                     io_lib_pretty, lists, maps, math, orddict, ordsets, proplists, queue,
                     rand, random, re, sets, sofs, string, unicode, unicode_util, uri_string,
                     zlib, erl_bits, ms_transform, erl_expand_records]).

%% @doc BIFs of module erlang that reach the host (I/O, code loading, VM
%% settings, the executor itself) beyond those mce_translate already
%% refuses as unmodelled process BIFs.
-spec refused_bif(atom(), arity()) -> boolean().
refused_bif(F, A) ->
    lists:member({F, A}, [{load_nif, 2}, {display, 1}, {display_string, 1},
                          {display_string, 2}, {process_display, 2}, {ports, 0},
                          {system_monitor, 0}, {system_monitor, 1}, {system_monitor, 2},
                          {system_profile, 0}, {system_profile, 2}, {seq_trace, 2},
                          {seq_trace_print, 1}, {seq_trace_print, 2}, {trace_delivered, 1},
                          {trace_info, 2}, {setnode, 2}, {setnode, 3}, {set_cookie, 1},
                          {set_cpu_topology, 1}, {finish_loading, 1}, {prepare_loading, 2},
                          {call_on_load_function, 1}, {finish_after_on_load, 2},
                          {port_set_data, 2}, {port_get_data, 1}, {open_port, 2},
                          {erase_persistent_term, 1}, {put_persistent_term, 2}])
        orelse lists:prefix("dist_ctrl", atom_to_list(F)).

%%====================================================================
%% Fun values
%%====================================================================

%% @doc The fun to call in place of `Fun' (called from checked code at
%% `Where'): funs of translated code as they are, external funs classified
%% like a direct call (`fun erlang:put/2' becomes the model's put), funs
%% that would run untranslated or host code refused.  A non-fun is returned
%% unchanged so that the call fails as on the VM (badfun).
-spec checked_fun(term(), term()) -> term().
checked_fun(Fun, Where) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    case erlang:fun_info(Fun, type) of
        {type, local} ->
            case is_translation(M) of
                true -> Fun;
                false -> local_fun(Fun, M, Where)
            end;
        {type, external} ->
            {name, F} = erlang:fun_info(Fun, name),
            {arity, A} = erlang:fun_info(Fun, arity),
            case is_translation(M) of
                true -> Fun;
                false -> memo_call_fun(M, F, A, Fun, Where)
            end
    end;
checked_fun(NotFun, _Where) ->
    NotFun.

%% Classifying costs microseconds (the library's higher-order functions are
%% looked up): the fun to call for an external fun is remembered for the
%% check, in the worker's dictionary.  Refusals are not remembered: they
%% stop the check.
memo_call_fun(M, F, A, Fun, Where) ->
    Memo = case erlang:get('$mce_sandbox_funs') of
               undefined -> #{};
               Map -> Map
           end,
    case Memo of
        #{{M, F, A} := Checked} -> Checked;
        _ ->
            Checked = call_fun(M, F, A, Fun, Where),
            erlang:put('$mce_sandbox_funs', Memo#{{M, F, A} => Checked}),
            Checked
    end.

%% A closure of a user module is untranslated code; of the checker's own
%% modules or of a pure OTP module, it is not the program's.
local_fun(Fun, M, Where) ->
    case M =/= erl_eval andalso not mce_translate:translatable(M) andalso
         (is_checker_module(M) orelse pure_module(M)) of
        true -> Fun;
        false ->
            {name, Name} = erlang:fun_info(Fun, name),
            refuse({untranslated_closure, {M, Name}, Where})
    end.

call_fun(M, F, A, Fun, Where) ->
    case stub_or_classify(M, F, A, Where) of
        {stub, Stub} -> Stub;
        direct -> order_fun(M, F, A, Fun);
        {RM, RF} -> redirected_fun(M, F, A, RM, RF)
    end.

%% The translated (or modelled) function a fun of M:F/A runs; a maps
%% function that iterates maps in key order reports that it was made
%% (mce_rt_order:map_iterator_made/2, the guard of map order).
redirected_fun(M, F, A, RM, RF) ->
    ok = case M of
             maps -> mce_rt_order:map_iterator_made(F, A);
             _ -> ok
         end,
    erlang:make_fun(RM, RF, A).

%% A fun of an operation that observes pid order reports it when called
%% (mce_rt_order, the guard of symmetry reduction).
order_fun(M, F, A, Fun) ->
    case mce_rt_order:observes(M, F, A) of
        none -> Fun;
        _ -> mce_rt_order:make_fun(M, F, A)
    end.

%% @doc erlang:make_fun/3, and `fun M:F/A' with M or F computed.
-spec make_fun(term(), term(), term()) -> function().
make_fun(M, F, A) when is_atom(M), is_atom(F), is_integer(A), A >= 0, A =< 255 ->
    case stub_or_classify(M, F, A, make_fun) of
        {stub, Stub} -> Stub;
        direct -> order_fun(M, F, A, erlang:make_fun(M, F, A));
        {RM, RF} -> redirected_fun(M, F, A, RM, RF)
    end;
make_fun(M, F, A) ->
    erlang:error(badarg, [M, F, A]).

%% @doc The initial call of a process spawned with `{M, F, Args}' (or
%% started by mcerlang:choice/1): a translated module's translation, a
%% redirected BIF's model, a pure function as it is; refused otherwise.
-spec init_mfa(module(), atom(), [term()]) -> {module(), atom(), [term()]}.
init_mfa(M, F, Args) ->
    case mce_stubs:lookup(M, F, length(Args)) of
        {ok, Stub} -> stub_init(Stub, Args);
        none -> init_mfa_unstubbed(M, F, Args)
    end.

%% A process spawned as a stubbed M:F(Args) runs the stub (a fun of a
%% translated module, or a translated closure applied to Args).
stub_init(Stub, Args) ->
    case erlang:fun_info(Stub, type) of
        {type, external} ->
            {module, SM} = erlang:fun_info(Stub, module),
            {name, SF} = erlang:fun_info(Stub, name),
            {SM, SF, Args};
        {type, local} -> {erlang, apply, [Stub, Args]}
    end.

init_mfa_unstubbed(M, F, Args) ->
    case mce_translate:translatable(M) of
        true -> checker(fun() -> mce_translate:init_call({M, F, Args}) end);
        false ->
            case classify(M, F, length(Args), spawn) of
                direct -> {M, F, Args};
                {RM, RF} -> {RM, RF, Args}
            end
    end.

%% @doc The initial call of a process spawned with a fun.
-spec init_fun(function()) -> function() | {module(), atom(), [term()]}.
init_fun(Fun) ->
    Checked = checked_fun(Fun, spawn),
    checker(fun() -> mce_translate:init_call(Checked) end).

%% A stub of the check's (mce_stubs) comes before the classification.
stub_or_classify(M, F, A, Where) ->
    case mce_stubs:lookup(M, F, A) of
        {ok, Stub} -> {stub, Stub};
        none -> classify(M, F, A, Where)
    end.

%% direct: call M:F as it is; {RM, RF}: call RM:RF instead.
classify(M, F, A, Where) ->
    case mce_translate:classify_call(M, F, A) of
        pure -> direct;
        {redirect, RM, RF} -> {RM, RF};
        {model, MM, MF} -> {checker(fun() -> mce_translate:ensure(MM) end), MF};
        library_hof -> {checker(fun() -> mce_translate:ensure_library(M) end), F};
        translate -> {checker(fun() -> mce_translate:ensure(M) end), F};
        {unsupported, Why} -> refuse({Why, {M, F, A}, Where, mce_stubs:hint({M, F, A})})
    end.

%%====================================================================
%% Entries
%%====================================================================

%% @doc Funs inside an entry's arguments (or a closure entry's captured
%% values) are called by checked code: they are pointed at translations or
%% models like checked_fun/2 does, and refused before the check starts if
%% they would run untranslated code: funs of OTP modules off the allow
%% list.  Closures compiled into user modules and shell funs are replaced
%% by their translated counterparts (mce_closure:translated_fun/1,
%% mce_translate:shell_fun/1).
-spec entry_args(term()) -> term().
entry_args(Args) ->
    deep_map(fun entry_fun/1, Args).

entry_fun(Fun) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    case erlang:fun_info(Fun, type) of
        {type, external} ->
            {name, F} = erlang:fun_info(Fun, name),
            {arity, A} = erlang:fun_info(Fun, arity),
            case mce_translate:translatable(M) of
                true -> mce_translate:make_fun(M, F, A);
                false -> outside_step(fun() -> call_fun(M, F, A, Fun, entry_argument) end)
            end;
        {type, local} ->
            case mce_translate:translatable(M) of
                %% A closure of a user module runs translated: the same fun
                %% expression made by the translated module.
                true -> mce_closure:translated_fun(Fun);
                %% A shell fun likewise, instead of running in erl_eval.
                false when M =:= erl_eval -> mce_translate:shell_fun(Fun);
                false -> outside_step(fun() -> local_fun(Fun, M, entry_argument) end)
            end
    end;
entry_fun(Other) ->
    Other.

%% @doc `F' applied to every leaf of a term (list elements, improper tails
%% included, tuple elements, map keys and values).
-spec deep_map(fun((term()) -> term()), term()) -> term().
deep_map(F, L) when is_list(L) -> deep_map_list(F, L);
deep_map(F, T) when is_tuple(T) -> list_to_tuple(deep_map_list(F, tuple_to_list(T)));
deep_map(F, M) when is_map(M) -> maps:from_list(deep_map_list(F, maps:to_list(M)));
deep_map(F, X) -> F(X).

%% Handles improper lists too.
deep_map_list(F, [H | T]) -> [deep_map(F, H) | deep_map_list(F, T)];
deep_map_list(_F, []) -> [];
deep_map_list(F, Tail) -> deep_map(F, Tail).

%% Outside a step there is no executor context: a refusal is a plain
%% error, not recorded for the executor.
outside_step(Fun) ->
    Before = erlang:get('$mce_fatal'),
    try Fun()
    after
        case Before of
            undefined -> erlang:erase('$mce_fatal');
            _ -> ok
        end
    end.

%%====================================================================
%% The atom budget
%%====================================================================

%% @doc The number of new atoms checked code may make in one check.
-spec atom_budget() -> pos_integer().
atom_budget() ->
    ?ATOM_BUDGET.

%% @doc Atoms made since this check's first step (the check worker runs
%% one check).  The table is the VM's: atoms made meanwhile by other
%% processes count too, since they fill the same table.
-spec atoms_made() -> non_neg_integer().
atoms_made() ->
    Now = erlang:system_info(atom_count),
    case erlang:get('$mce_atoms_base') of
        undefined ->
            erlang:put('$mce_atoms_base', Now),
            0;
        Base -> Now - Base
    end.

%% @doc Called by the executor when a step starts: the first one sets the
%% base of the count.
-spec step_atoms_start() -> ok.
step_atoms_start() ->
    case erlang:get('$mce_atoms_base') of
        undefined -> erlang:put('$mce_atoms_base', erlang:system_info(atom_count));
        _ -> ok
    end,
    ok.

%% @doc Called by the executor when a step ends; over budget, the reason
%% to stop the check.  The atom-making BIFs check the budget at each call;
%% this catches atoms made otherwise (erl_scan, a translation), reading the
%% table's size (microseconds) every ?ATOM_SAMPLE steps only.
-spec step_atoms_end() -> ok | {error, term()}.
step_atoms_end() ->
    N = case erlang:get('$mce_atom_steps') of
            undefined -> 0;
            S -> S
        end,
    case N >= ?ATOM_SAMPLE of
        false ->
            erlang:put('$mce_atom_steps', N + 1),
            ok;
        true ->
            erlang:put('$mce_atom_steps', 0),
            Made = atoms_made(),
            case Made > ?ATOM_BUDGET of
                true -> {error, over_budget(Made)};
                false -> ok
            end
    end.

over_budget(Made) ->
    {mcerlang, {atom_budget, ?ATOM_BUDGET, Made,
                "checked code made more new atoms than a check may (atoms are never freed)"}}.

%% Before making an atom: refused once the budget is spent (the table
%% only grows, so the count includes the atoms this step made so far).
new_atom() ->
    case atoms_made() >= ?ATOM_BUDGET of
        true -> mce_rt:fatal(over_budget(atoms_made() + 1));
        false -> ok
    end.

-spec list_to_atom(term()) -> atom().
list_to_atom(L) ->
    new_atom(),
    erlang:list_to_atom(L).

-spec binary_to_atom(term()) -> atom().
binary_to_atom(B) ->
    binary_to_atom(B, utf8).

-spec binary_to_atom(term(), term()) -> atom().
binary_to_atom(B, Enc) ->
    new_atom(),
    erlang:binary_to_atom(B, Enc).

%% A term's new atoms are counted after decoding it: one binary holds at
%% most a few hundred thousand of them, well within the margin the budget
%% leaves.
-spec binary_to_term(term()) -> term().
binary_to_term(B) ->
    binary_to_term(B, []).

-spec binary_to_term(term(), term()) -> term().
binary_to_term(B, Opts) ->
    T = erlang:binary_to_term(B, Opts),
    case atoms_made() > ?ATOM_BUDGET of
        true -> mce_rt:fatal(over_budget(atoms_made()));
        false -> ok
    end,
    %% A decoded fun was never seen by the translator, and untranslated
    %% code (sofs, erl_parse:map_anno/2, ets:foldl) may call it without
    %% checked_fun/2: each is replaced here by the fun checked_fun/2 gives
    %% (fun erlang:put/2 becomes the model's, as the translator makes the
    %% literal), and one that would reach the host is refused.  Funs are
    %% tags 112, 113 and 117 of the external format, 80 a compressed term.
    case binary:match(B, [<<112>>, <<113>>, <<117>>, <<80>>]) of
        nomatch -> T;
        _ -> deep_map(fun decoded_fun/1, T)
    end.

decoded_fun(F) when is_function(F) -> checked_fun(F, binary_to_term);
decoded_fun(X) -> X.

%%====================================================================
%% Memory
%%====================================================================

%% Binaries live outside the heap, where max_heap_size does not see them,
%% and one call can make a huge one: the BIFs that build a binary of a size
%% known beforehand check it against the step's limit (the heap limit, in
%% bytes) before building it.

-spec binary_copy(term(), term()) -> binary().
binary_copy(B, N) when is_binary(B), is_integer(N), N >= 0 ->
    binary_size_check(byte_size(B) * N),
    binary:copy(B, N);
binary_copy(B, N) ->
    binary:copy(B, N).

-spec list_to_binary(term()) -> binary().
list_to_binary(L) ->
    binary_size_check(iolist_size_or_zero(L)),
    erlang:list_to_binary(L).

-spec iolist_to_binary(term()) -> binary().
iolist_to_binary(L) ->
    binary_size_check(iolist_size_or_zero(L)),
    erlang:iolist_to_binary(L).

%% A bad argument fails in the BIF itself, as on the VM.
iolist_size_or_zero(L) ->
    try erlang:iolist_size(L)
    catch error:badarg -> 0
    end.

binary_size_check(Bytes) ->
    case erlang:get('$mce_heap_limit') of
        Words when is_integer(Words) ->
            Limit = Words * erlang:system_info(wordsize),
            case Bytes > Limit of
                true -> mce_rt:fatal({mcerlang, {step_heap_limit, mce_rt:self(),
                                                 {binary, Bytes, Limit}}});
                false -> ok
            end;
        _ -> ok
    end.

%% @doc Bytes held by the executor (the calling process): its heap, stack
%% and mailbox, and the off-heap binaries it references, which
%% max_heap_size does not count.
-spec executor_memory() -> non_neg_integer().
executor_memory() ->
    [{memory, Mem}, {binary, Bins}] = erlang:process_info(self(), [memory, binary]),
    Mem + lists:sum([Size || {_, Size, _} <- Bins]).

%%====================================================================
%% Helpers
%%====================================================================

is_translation(M) ->
    case atom_to_binary(M) of
        <<"mce$", _/binary>> -> true;
        _ -> false
    end.

is_checker_module(M) ->
    case atom_to_binary(M) of
        <<"mce_", _/binary>> -> true;
        <<"mcerlang", _/binary>> -> true;
        _ -> false
    end.

%% Inside a step, a refusal must stop the check even if the program
%% catches it (mce_rt:fatal/1).
-spec refuse(term()) -> no_return().
refuse(Reason) ->
    mce_rt:fatal({mcerlang, Reason}).

checker(Fun) ->
    try Fun()
    catch error:{mcerlang, _} = E -> mce_rt:fatal(E)
    end.
