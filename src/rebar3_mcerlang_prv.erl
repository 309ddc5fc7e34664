%% @doc `rebar3 mcerlang': the rebar3 provider that runs the checks a project
%% declares in its rebar.config,
%%
%%   {project_plugins, [{mcerlang, {git, Url, {branch, "main"}}}]}.
%%   {mcerlang, [{checks, [{Name, {M, F, Args}, #{Options}} | {Name, {M, F, Args}}]},
%%               {options, #{Options}}]}.          % defaults of every check
%%
%% each as `mcerlang check' would (mce_cli:print/3 prints the result), and
%% ends with the command line's exit codes: 0 every check holds, 1 some
%% check found a violation, 2 none did but some check was inconclusive or
%% could not run (a bad declaration, an unknown option or module).
%%
%% The checks run in rebar3's own VM, as `rebar3 eunit' runs tests: after
%% the compile provider, rebar_paths puts the project's and its deps' ebin
%% directories first in the code path, so the checker translates the
%% project's freshly compiled code (and a mcerlang that is also a dep wins
%% over the plugin's copy).  rebar3 itself exits 1 on a provider's error,
%% so exit code 2 is the VM's halt after the report.
%%
%% rebar3's modules (rebar_state, providers, ...) exist only inside rebar3:
%% they are not in this project's PLT, hence no -behaviour(provider) (the
%% compiler would warn of an undefined behaviour), and every call of theirs
%% goes through rebar3/3 (an apply dialyzer does not resolve), so that the
%% rest of the module stays analysed.
-module(rebar3_mcerlang_prv).

-export([init/1, do/1, format_error/1]).

-define(PROVIDER, mcerlang).

%% @doc Registers `rebar3 mcerlang' (rebar3 calls it for every module the
%% app's `providers' environment key lists).
-spec init(State) -> {ok, State} when State :: term().
init(State) ->
    Provider = rebar3(providers, create, [
                 [{name, ?PROVIDER},
                  {module, ?MODULE},
                  {bare, true},
                  {deps, [compile]},
                  {example, "rebar3 mcerlang --check my_check"},
                  {opts, [{check, $c, "check", string,
                           "run only this check (repeatable); default every check declared"},
                          {quiet, $q, "quiet", boolean, "only the verdict line of each check"}]},
                  {short_desc, "Model-check the checks declared in rebar.config with mcerlang"},
                  {desc, "Runs each check of {mcerlang, [{checks, [{Name, {M, F, Args}, Options}]}]}\n"
                         "in rebar.config as `mcerlang check' would.  Exit codes: 0 every check\n"
                         "holds, 1 a violation, 2 otherwise inconclusive or an error."}]]),
    {ok, rebar3(rebar_state, add_provider, [State, Provider])}.

%% @doc Runs the declared checks; returns only when every one holds.
-spec do(State) -> {ok, State} | {error, {module(), term()}} when State :: term().
do(State) ->
    rebar3(rebar_paths, set_paths, [[deps, plugins], State]),
    {Args, _} = rebar3(rebar_state, command_parsed_args, [State]),
    Quiet = proplists:get_value(quiet, Args, false),
    case checks(rebar3(rebar_state, get, [State, mcerlang, []]), [N || {check, N} <- Args]) of
        {ok, Checks} ->
            Codes = [run(Check, Quiet) || Check <- Checks],
            case verdict(Codes) of
                0 -> {ok, State};
                1 -> {error, {?MODULE, {violations, length([C || C <- Codes, C =:= 1]), length(Codes)}}};
                2 -> stop(format_error({inconclusive, length([C || C <- Codes, C =:= 2]), length(Codes)}))
            end;
        {error, Why} ->
            stop(format_error(Why))
    end.

%% @doc The text of an error do/1 returns or halts on.
-spec format_error(term()) -> iolist().
format_error({violations, N, Of}) ->
    io_lib:format("mcerlang: ~b of ~b check(s) found a violation", [N, Of]);
format_error({inconclusive, N, Of}) ->
    io_lib:format("mcerlang: ~b of ~b check(s) inconclusive or could not run", [N, Of]);
format_error(no_checks) ->
    "mcerlang: rebar.config declares no checks: {mcerlang, [{checks, [{Name, {M, F, Args}, #{}}]}]}";
format_error({unknown_checks, Names}) ->
    io_lib:format("mcerlang: --check ~ts: no such check in rebar.config", [lists:join(", ", Names)]);
format_error({bad_config, Term}) ->
    io_lib:format("mcerlang: rebar.config: {mcerlang, ~0tp}: expected a list of {checks, [...]} "
                  "and {options, #{...}}", [Term]);
format_error({bad_check, Term}) ->
    io_lib:format("mcerlang: rebar.config: bad check ~0tp: expected {Name, {Module, Function, Args}} "
                  "or {Name, {Module, Function, Args}, #{Options}}", [Term]);
format_error({bad_options, Term}) ->
    io_lib:format("mcerlang: rebar.config: {options, ~0tp}: expected a map of mcerlang:check/2's options",
                  [Term]);
format_error(Other) ->
    io_lib:format("mcerlang: ~0tp", [Other]).

%% The exit code of a run: a violation is the finding that matters most.
verdict(Codes) ->
    case {lists:member(1, Codes), lists:member(2, Codes)} of
        {true, _} -> 1;
        {false, true} -> 2;
        {false, false} -> 0
    end.

%% Prints the error and ends the VM with the command line's code for it.
-spec stop(iolist()) -> no_return().
stop(Text) ->
    rebar3(rebar_api, error, ["~ts", [Text]]),
    erlang:halt(2).

rebar3(Module, Function, Args) ->
    erlang:apply(Module, Function, Args).

%%--------------------------------------------------------------------
%% The declaration
%%--------------------------------------------------------------------

checks(Config, Wanted) when is_list(Config) ->
    Defaults = proplists:get_value(options, Config, #{}),
    Declared = proplists:get_value(checks, Config, []),
    case {is_map(Defaults), is_list(Declared)} of
        {false, _} -> {error, {bad_options, Defaults}};
        {_, false} -> {error, {bad_config, Config}};
        {true, true} ->
            case lists:dropwhile(fun valid_check/1, Declared) of
                [Bad | _] -> {error, {bad_check, Bad}};
                [] -> select([check(C, Defaults) || C <- Declared], Wanted)
            end
    end;
checks(Config, _Wanted) ->
    {error, {bad_config, Config}}.

valid_check({Name, {M, F, A}}) -> valid_check({Name, {M, F, A}, #{}});
valid_check({Name, {M, F, A}, Options}) ->
    (is_atom(Name) orelse io_lib:printable_unicode_list(Name))
        andalso is_atom(M) andalso is_atom(F) andalso is_list(A) andalso is_map(Options);
valid_check(_) -> false.

check({Name, Entry}, Defaults) -> check({Name, Entry, #{}}, Defaults);
check({Name, Entry, Options}, Defaults) ->
    {name(Name), Entry, maps:merge(maps:merge(#{progress => true}, Defaults), Options)}.

select([], _Wanted) -> {error, no_checks};
select(Checks, []) -> {ok, Checks};
select(Checks, Wanted) ->
    case Wanted -- [N || {N, _, _} <- Checks] of
        [] -> {ok, [C || {N, _, _} = C <- Checks, lists:member(N, Wanted)]};
        Unknown -> {error, {unknown_checks, Unknown}}
    end.

name(Name) when is_atom(Name) -> atom_to_list(Name);
name(Name) -> Name.

%%--------------------------------------------------------------------
%% A check
%%--------------------------------------------------------------------

%% The check's exit code, its result printed as the command line does.
%% As there, an error of the user's (a bad option, an undefined entry)
%% is one line, and a crash of mcerlang's is reported whole.
run({Name, {M, F, A} = Entry, Options}, Quiet) ->
    io:format("~n=== mcerlang check ~ts: ~ts:~ts(~ts)~n",
              [Name, atom_to_list(M), atom_to_list(F), lists:join(", ", [io_lib:format("~0tp", [X]) || X <- A])]),
    try mce_cli:print(check, mcerlang:check(Entry, Options), Quiet)
    catch
        error:{mcerlang, Reason} ->
            io:format("error: ~tp~n", [Reason]),
            2;
        Class:Reason:Stack ->
            io:format("internal error: ~tp~n~tp~n", [{Class, Reason}, Stack]),
            2
    end.
