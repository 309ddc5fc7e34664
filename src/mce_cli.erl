%% @doc The command line: `mcerlang check | simulate | replay | debug'.
%%
%% bin/mcerlang (an escript) calls main/1.  Options mirror those of
%% mcerlang:check/2 and simulate/2; values that are Erlang terms (funs
%% included) are written as Erlang.  Exit codes: 0 the property holds (or,
%% for replay, the counterexample no longer reproduces), 1 a violation, 2
%% inconclusive or an error.
-module(mce_cli).

-export([main/1, run/1]).
-export([print/3]).

-define(HOLDS, 0).
-define(VIOLATION, 1).
-define(OTHER, 2).

%% @doc The escript's entry point: runs the command, then halts the VM with
%% its exit code.
-spec main([string()]) -> no_return().
main(Args) ->
    erlang:halt(run(Args)).

%% @doc Runs a command line and returns its exit code.
-spec run([string()]) -> 0 | 1 | 2.
run(Args) ->
    try command(Args)
    catch
        throw:{usage, Message} ->
            io:format(standard_error, "mcerlang: ~ts~nRun mcerlang --help for the usage.~n",
                      [Message]),
            ?OTHER;
        error:{mcerlang, Reason} ->
            io:format(standard_error, "mcerlang: error: ~tp~n", [Reason]),
            ?OTHER;
        Class:Reason:Stack ->
            %% A bug of mcerlang's: reported whole, and exit code 2 rather
            %% than the escript's own crash.
            io:format(standard_error, "mcerlang: internal error: ~tp~n~tp~n",
                      [{Class, Reason}, Stack]),
            ?OTHER
    end.

command([]) -> usage(), ?OTHER;
command([H | _]) when H =:= "--help"; H =:= "-h"; H =:= "help" -> usage(), ?HOLDS;
command(["check" | Args]) -> check(parse(Args, check));
command(["simulate" | Args]) -> simulate(parse(Args, simulate));
command(["replay" | Args]) -> replay(parse(Args, replay));
command(["debug" | Args]) -> debug(parse(Args, debug));
command(["clear-cache" | Args]) -> clear_cache(parse(Args, clear_cache));
command(["node" | Args]) -> serve(parse(Args, node));
command([Other | _]) -> throw({usage, io_lib:format("unknown command ~ts", [Other])}).

usage() ->
    io:put_chars(
      "Usage: mcerlang check    [OPTIONS] [FILE.erl ...] 'Module:Function(Args)'\n"
      "       mcerlang simulate [OPTIONS] [FILE.erl ...] 'Module:Function(Args)'\n"
      "       mcerlang replay   [OPTIONS] COUNTEREXAMPLE_FILE\n"
      "       mcerlang debug    [OPTIONS] COUNTEREXAMPLE_FILE | [FILE.erl ...] 'Module:Function(Args)'\n"
      "       mcerlang clear-cache [--translation-cache DIR]\n"
      "       mcerlang node     --sname NAME | --name NAME [--cookie C] [-pa DIR]\n"
      "\n"
      "check explores every interleaving of the program the call starts; simulate runs\n"
      "random schedules; replay reruns a saved counterexample (--save) and says whether\n"
      "it still reproduces; debug steps through a counterexample or a program;\n"
      "clear-cache deletes the translations kept on disk; node runs a node that other\n"
      "machines' checks search with (--cluster), until it is stopped.\n"
      "FILE.erl arguments are compiled (with debug_info) and loaded first.\n"
      "\n"
      "Exit codes: 0 holds (replay: no longer reproduces), 1 violation (replay: reproduces),\n"
      "2 inconclusive or error.\n"
      "\n"
      "Code:\n"
      "  -pa DIR                      add DIR to the code path (repeatable); ./ebin and\n"
      "                               ./_build/default/lib/*/ebin are added when present\n"
      "  --translation-cache DIR|false where translations are kept between runs (default\n"
      "                               the user's cache directory, " ++ default_cache() ++ ");\n"
      "                               false: none\n"
      "Properties (as the options of mcerlang:check/2):\n"
      "  --property P[,P]             deadlock, abnormal_exit, or none (default both)\n"
      "  --treat-as-normal TERM       an exit reason that is not a violation (repeatable): an\n"
      "                               atom A (also {A, _}), a term, or a fun of the reason\n"
      "  --ltl FORMULA                an LTL formula every run must satisfy\n"
      "  --pred NAME=EXPR             a predicate of the formula: {prop, Pattern}, {probe, Label},\n"
      "                               {probe, Label, Pattern}, or fun(View) -> boolean() end\n"
      "  --fairness weak|none         for --ltl (default weak)\n"
      "  --monitor MODULE[=TERM]      a safety monitor with its init argument (default [])\n"
      "  --invariant FUN              fun(View) -> boolean() end, true in every state\n"
      "  --mailbox-bound N            no mailbox may hold more than N messages\n"
      "Search:\n"
      "  --max-states N  --max-depth N  --max-time MS  --memory BYTES\n"
      "  --shortest                   breadth-first: a shortest counterexample\n"
      "  --table exact|hash_compact|bitstate:BITS\n"
      "  --timeouts any|when_idle|infinite_above:MS\n"
      "  --granularity big|small  --delivery instant|ether\n"
      "  --ordering process_pair|node_pair\n"
      "  --reduction on|off           partial-order reduction (default on)\n"
      "  --por-renaming on|off        with the reduction, steps safe up to a renaming of\n"
      "                               pids and refs: spawns, make_ref, dropped pids and\n"
      "                               refs, processes' ends (default on)\n"
      "  --cut-states pass|store      with the reduction, states cut to one safe step are\n"
      "                               passed through, not stored (default pass)\n"
      "  --dead-payloads on|off       merge states differing in message parts no run\n"
      "                               reads (default on, with the reduction)\n"
      "  --symmetry auto|on|off       symmetry reduction under pid permutation (default auto:\n"
      "                               on until the program observes pid order; on: you\n"
      "                               assert it never does)\n"
      "  --abstraction SPEC           check over abstract values (even_odd, sign, depth:K,\n"
      "                               chain:M, comma-separated, e.g. even_odd,depth:3):\n"
      "                               holds for every concrete run; a violation is replayed\n"
      "                               on the real values, and one that does not replay is\n"
      "                               possibly spurious (exit 2)\n"
      "  --workers N|auto             N workers search at once (breadth-first, one shared\n"
      "                               state store; auto: one per scheduler; default 1)\n"
      "  --cluster N1@H,N2@H          search with these nodes too (each started with\n"
      "                               mcerlang node, or any node running mcerlang): the\n"
      "                               states are shared out by hash; the FILE.erl modules\n"
      "                               are sent to them; this run becomes a node itself\n"
      "                               (--sname NAME or --name NAME, default mcerlang_PID)\n"
      "  --cookie C                   the distribution cookie (default ~/.erlang.cookie's)\n"
      "  --nodes N1@H,N2@H            simulated nodes (the entry runs on the first)\n"
      "  --faults KIND=N[,KIND=N]     crash_node, disconnect, kill: how many may happen\n"
      "                               KIND=N:T1:T2 aims them (kill: name=A, module=M;\n"
      "                               crash_node: NODE; disconnect: NODE or NODE+NODE)\n"
      "  --idle otp|none|otp,T1,T2    who may be left waiting at the end: OTP servers in\n"
      "                               their main loop (default), none, or also T (name=A,\n"
      "                               module=M, or a registered name)\n"
      "  --env TERM                   application environments, #{App => #{Key => Value}}\n"
      "  --stub M:F/A=MOD:FUN         calls of M:F/A run MOD:FUN/A inside the model instead\n"
      "                               (repeatable)\n"
      "  --option KEY=TERM            any other option of mcerlang:check/2\n"
      "  --no-progress                no progress lines on stderr\n"
      "Simulation:\n"
      "  --runs N (100)  --max-steps N (1000)  --seed N (drawn, and printed)\n"
      "Output:\n"
      "  --msc FILE                   write the counterexample's message sequence chart\n"
      "                               (FILE.svg: SVG; otherwise self-contained HTML)\n"
      "  --save FILE                  save the counterexample for replay\n"
      "  --full  --depth N  --width N how much of long terms to show (default abbreviated)\n"
      "  --fold otp|none              OTP calls as one call and one reply (report and chart)\n"
      "  --quiet                      only the verdict line\n"
      "  --help                       this text\n").

%%--------------------------------------------------------------------
%% Arguments
%%--------------------------------------------------------------------

-record(cli, {verb :: atom(),
              options = #{} :: map(),
              format = #{} :: map(),
              msc = none :: none | string(),
              save = none :: none | string(),
              quiet = false :: boolean(),
              paths = [] :: [string()],
              %% this VM's distribution: name => {Name, shortnames | longnames}, cookie
              dist = #{} :: map(),
              files = [] :: [string()],
              positional = [] :: [string()]}).

parse(Args, Verb) ->
    Cli = parse(Args, #cli{verb = Verb}, []),
    distribution_flags(Cli),
    Cli#cli{options = maps:merge(#{progress => true}, Cli#cli.options)}.

%% --sname, --name and --cookie make this run a node: for `node', and for
%% a check with --cluster; anywhere else they would do nothing.
distribution_flags(#cli{dist = Dist}) when map_size(Dist) =:= 0 -> ok;
distribution_flags(#cli{verb = node}) -> ok;
distribution_flags(#cli{verb = check, options = #{cluster := [_ | _]}}) -> ok;
distribution_flags(_) ->
    throw({usage, "--sname, --name and --cookie are for mcerlang node and for check --cluster"}).

parse([], Cli, Pos) ->
    {Files, Rest} = lists:partition(fun(A) -> filename:extension(A) =:= ".erl" end,
                                    lists:reverse(Pos)),
    Cli#cli{files = Files, positional = Rest};
parse(["--" ++ _ = Flag | Rest], Cli, Pos) when Flag =:= "--shortest"; Flag =:= "--full";
                                                  Flag =:= "--quiet"; Flag =:= "--no-progress" ->
    parse(Rest, flag(Flag, Cli), Pos);
parse(["-pa", Dir | Rest], Cli, Pos) ->
    parse(Rest, Cli#cli{paths = Cli#cli.paths ++ [Dir]}, Pos);
parse(["--" ++ Name | Rest], Cli, Pos) ->
    {Value, Rest1} = case string:split(Name, "=") of
                         [N, V] -> {{N, V}, Rest};
                         [N] ->
                             case Rest of
                                 [V | R] -> {{N, V}, R};
                                 [] -> throw({usage, io_lib:format("--~ts needs a value", [N])})
                             end
                     end,
    parse(Rest1, option(Value, Cli), Pos);
parse(["-" ++ _ = Flag | _], _Cli, _Pos) when Flag =/= "-" ->
    throw({usage, io_lib:format("unknown flag ~ts", [Flag])});
parse([Arg | Rest], Cli, Pos) ->
    parse(Rest, Cli, [Arg | Pos]).

flag("--shortest", Cli) -> set(shortest, true, Cli);
flag("--full", Cli) -> Cli#cli{format = (Cli#cli.format)#{full => true}};
flag("--quiet", Cli) -> Cli#cli{quiet = true};
flag("--no-progress", Cli) -> set(progress, false, Cli).

set(K, V, #cli{options = O} = Cli) -> Cli#cli{options = O#{K => V}}.

option({"property", V}, Cli) ->
    set(property, case V of
                      "none" -> none;
                      _ -> [atom(P, "--property") || P <- string:lexemes(V, ",")]
                  end, Cli);
option({"treat-as-normal", V}, #cli{options = O} = Cli) ->
    set(treat_as_normal, maps:get(treat_as_normal, O, [normal, shutdown]) ++ [term(V, "--treat-as-normal")],
        Cli);
option({"ltl", V}, Cli) -> set(ltl, V, Cli);
option({"pred", V}, #cli{options = O} = Cli) ->
    case string:split(V, "=") of
        [Name, Expr] when Name =/= "" ->
            Preds = maps:get(predicates, O, #{}),
            set(predicates, Preds#{atom(string:trim(Name), "--pred") => term(Expr, "--pred")}, Cli);
        _ -> throw({usage, io_lib:format("--pred ~ts: expected NAME=EXPR", [V])})
    end;
option({"fairness", V}, Cli) -> set(fairness, atom(V, "--fairness"), Cli);
option({"monitor", V}, #cli{options = O} = Cli) ->
    Mon = case string:split(V, "=") of
              [M, Arg] -> {atom(M, "--monitor"), term(Arg, "--monitor")};
              [M] -> {atom(M, "--monitor"), []}
          end,
    set(monitor, maps:get(monitor, O, []) ++ [Mon], Cli);
option({"invariant", V}, #cli{options = O} = Cli) ->
    set(invariant, maps:get(invariant, O, []) ++ [term(V, "--invariant")], Cli);
option({K, V}, Cli) when K =:= "max-states"; K =:= "max-depth"; K =:= "max-time"; K =:= "memory";
                         K =:= "mailbox-bound";
                         K =:= "runs"; K =:= "max-steps"; K =:= "seed" ->
    set(list_to_atom(lists:flatten(string:replace(K, "-", "_", all))), integer(V, "--" ++ K), Cli);
option({"table", V}, Cli) ->
    set(table, case string:split(V, ":") of
                   ["bitstate", Bits] -> {bitstate, integer(Bits, "--table")};
                   [T] -> atom(T, "--table");
                   _ -> throw({usage, io_lib:format("--table ~ts: expected exact, hash_compact "
                                                    "or bitstate:BITS", [V])})
               end, Cli);
option({"idle", V}, Cli) ->
    set(idle, case string:lexemes(V, ",") of
                  ["otp"] -> otp;
                  ["none"] -> none;
                  ["otp" | Ts] -> {otp, [fault_target(kill, T, "--idle") || T <- Ts]};
                  _ -> throw({usage, io_lib:format("--idle ~ts: expected otp, none or "
                                                   "otp,TARGET,... (name=A, module=M or a "
                                                   "registered name)", [V])})
              end, Cli);
option({"timeouts", "infinite_above:" ++ Ms}, Cli) ->
    set(timeouts, {infinite_above, integer(Ms, "--timeouts infinite_above:")}, Cli);
option({K, V}, Cli) when K =:= "timeouts"; K =:= "granularity"; K =:= "delivery";
                         K =:= "ordering" ->
    set(list_to_atom(K), atom(V, "--" ++ K), Cli);
option({"reduction", "on"}, Cli) -> set(reduction, true, Cli);
option({"reduction", "off"}, Cli) -> set(reduction, false, Cli);
option({"reduction", V}, _Cli) ->
    throw({usage, io_lib:format("--reduction ~ts: expected on or off", [V])});
option({"cut-states", "pass"}, Cli) -> set(cut_states, pass, Cli);
option({"cut-states", "store"}, Cli) -> set(cut_states, store, Cli);
option({"por-renaming", "on"}, Cli) -> set(por_renaming, true, Cli);
option({"por-renaming", "off"}, Cli) -> set(por_renaming, false, Cli);
option({"cut-states", V}, _Cli) ->
    throw({usage, io_lib:format("--cut-states ~ts: expected pass or store", [V])});
option({"por-renaming", V}, _Cli) ->
    throw({usage, io_lib:format("--por-renaming ~ts: expected on or off", [V])});
option({"dead-payloads", "on"}, Cli) -> set(dead_payloads, true, Cli);
option({"dead-payloads", "off"}, Cli) -> set(dead_payloads, false, Cli);
option({"dead-payloads", V}, _Cli) ->
    throw({usage, io_lib:format("--dead-payloads ~ts: expected on or off", [V])});
option({"nodes", V}, Cli) -> set(nodes, [atom(N, "--nodes") || N <- string:lexemes(V, ",")], Cli);
option({"cluster", V}, Cli) ->
    set(cluster, [atom(N, "--cluster") || N <- string:lexemes(V, ",")], Cli);
option({"cookie", V}, Cli) -> Cli#cli{dist = (Cli#cli.dist)#{cookie => atom(V, "--cookie")}};
option({"sname", V}, Cli) -> Cli#cli{dist = (Cli#cli.dist)#{name => {atom(V, "--sname"), shortnames}}};
option({"name", V}, Cli) -> Cli#cli{dist = (Cli#cli.dist)#{name => {atom(V, "--name"), longnames}}};
option({"faults", V}, Cli) ->
    set(faults, maps:from_list([fault_budget(KV, V) || KV <- string:lexemes(V, ",")]), Cli);
option({"env", V}, Cli) -> set(env, term(V, "--env"), Cli);
option({"stub", V}, #cli{options = O} = Cli) ->
    {MFA, Fun} = stub(V),
    set(stubs, (maps:get(stubs, O, #{}))#{MFA => Fun}, Cli);
option({"abstraction", V}, Cli) -> set(abstraction, abstraction(V), Cli);
option({"workers", "auto"}, Cli) -> set(workers, auto, Cli);
option({"workers", V}, Cli) -> set(workers, integer(V, "--workers"), Cli);
option({"symmetry", "on"}, Cli) -> set(symmetry, true, Cli);
option({"symmetry", "off"}, Cli) -> set(symmetry, false, Cli);
option({"symmetry", "auto"}, Cli) -> set(symmetry, auto, Cli);
option({"symmetry", V}, _Cli) ->
    throw({usage, io_lib:format("--symmetry ~ts: expected auto, on or off", [V])});
option({"option", V}, Cli) ->
    case string:split(V, "=") of
        [K, T] when K =/= "" -> set(atom(K, "--option"), term(T, "--option " ++ K), Cli);
        _ -> throw({usage, io_lib:format("--option ~ts: expected KEY=TERM", [V])})
    end;
option({"translation-cache", "false"}, Cli) -> set(translation_cache, false, Cli);
option({"translation-cache", Dir}, Cli) -> set(translation_cache, Dir, Cli);
option({"msc", V}, Cli) -> Cli#cli{msc = V};
option({"fold", V}, Cli) when V =:= "otp"; V =:= "none" ->
    Cli#cli{format = (Cli#cli.format)#{fold => list_to_atom(V)}};
option({"fold", V}, _Cli) ->
    throw({usage, io_lib:format("--fold ~ts: expected otp or none", [V])});
option({"save", V}, Cli) -> Cli#cli{save = V};
option({K, V}, Cli) when K =:= "depth"; K =:= "width" ->
    Cli#cli{format = (Cli#cli.format)#{list_to_atom(K) => integer(V, "--" ++ K)}};
option({K, _}, _Cli) ->
    throw({usage, io_lib:format("unknown option --~ts", [K])}).

%% --abstraction even_odd,depth:3: the domains of mce_abs_domain:new/1, as
%% a list (even_odd, sign, depth:K, chain:M).
abstraction(V) ->
    Bad = fun(Why) ->
                  throw({usage, io_lib:format("--abstraction ~ts: ~ts (expected even_odd, sign, "
                                              "depth:K or chain:M, comma-separated)", [V, Why])})
          end,
    Spec = [case string:split(E, ":") of
                ["even_odd"] -> even_odd;
                ["sign"] -> sign;
                ["depth", K] -> {depth, count(K, 1, Bad)};
                ["chain", M] -> {chain, count(M, 0, Bad)};
                _ -> Bad(io_lib:format("~ts is not a domain", [E]))
            end || E <- string:split(V, ",", all)],
    case mce_abs_domain:new(Spec) of
        {ok, _} -> Spec;
        %% every element parsed: the one refused repeats a kind
        {error, {bad_abstraction, _}} -> Bad("at most one integer domain, one depth and one chain")
    end.

count(Text, Min, Bad) ->
    case string:to_integer(Text) of
        {N, []} when N >= Min -> N;
        _ -> Bad(io_lib:format("~ts is not an integer of at least ~b", [Text, Min]))
    end.

%% KIND=N, or KIND=N:TARGET:... with targets (faults => #{Kind => {N,
%% Targets}}): kill's are name=ATOM, module=ATOM or a bare registered
%% name; crash_node's are nodes; disconnect's are nodes or pairs A+B.
fault_budget(KV, V) ->
    case string:split(KV, "=") of
        [K, Rest] ->
            Kind = atom(K, "--faults"),
            case string:split(Rest, ":", all) of
                [N] -> {Kind, integer(N, "--faults")};
                [N | Ts] -> {Kind, {integer(N, "--faults"),
                                    [fault_target(Kind, T, "--faults") || T <- Ts]}}
            end;
        _ -> throw({usage, io_lib:format("--faults ~ts: expected KIND=N[:TARGET...] (kill: "
                                         "name=A, module=M; crash_node: NODE; disconnect: NODE "
                                         "or NODE+NODE)", [V])})
    end.

%% A target of --faults (Flag) or --idle: for kill and idle name=A,
%% module=M or a bare registered name; for disconnect a node or A+B; a
%% node otherwise.
fault_target(kill, "name=" ++ Name, Flag) -> {name, atom(Name, Flag)};
fault_target(kill, "module=" ++ M, Flag) -> {module, atom(M, Flag)};
fault_target(kill, T, Flag) ->
    case lists:member($=, T) of
        true -> throw({usage, io_lib:format("~ts: target ~ts: expected name=A, module=M or a "
                                            "registered name", [Flag, T])});
        false -> atom(T, Flag)
    end;
fault_target(disconnect, T, Flag) ->
    case string:split(T, "+") of
        [A, B] -> {atom(A, Flag), atom(B, Flag)};
        [Node] -> atom(Node, Flag)
    end;
fault_target(_, T, Flag) -> atom(T, Flag).

%% --stub M:F/A=Mod:Fun: calls of M:F/A run Mod:Fun/A, an exported
%% function of a module on the code path (checked by mcerlang:check/2,
%% once the code path is set).
stub(V) ->
    Usage = fun() -> throw({usage, io_lib:format("--stub ~ts: expected M:F/A=Mod:Fun", [V])}) end,
    case string:split(V, "=") of
        [Call, Stub] ->
            case {string:split(Call, ":"), string:split(Stub, ":")} of
                {[M, FA], [SM, SF]} when M =/= "", SM =/= "", SF =/= "" ->
                    case string:split(FA, "/", trailing) of
                        [F, A] when F =/= "" ->
                            Arity = integer(A, "--stub"),
                            Arity >= 0 andalso Arity =< 255 orelse Usage(),
                            {{atom(M, "--stub"), atom(F, "--stub"), Arity},
                             erlang:make_fun(atom(SM, "--stub"), atom(SF, "--stub"), Arity)};
                        _ -> Usage()
                    end;
                _ -> Usage()
            end;
        _ -> Usage()
    end.

%% Atoms hold at most 255 characters: a longer name is a usage error, not
%% a system_limit crash.
atom(Text, Culprit) ->
    try list_to_atom(Text)
    catch error:_ -> throw({usage, io_lib:format("~ts ~ts: not a name (at most 255 characters)",
                                                 [Culprit, Text])})
    end.

integer(Text, Culprit) ->
    case string:to_integer(Text) of
        {N, []} -> N;
        _ -> throw({usage, io_lib:format("~ts ~ts: expected an integer", [Culprit, Text])})
    end.

%% An Erlang expression (funs included), evaluated.
term(Text, Culprit) ->
    case erl_scan:string(Text ++ ".") of
        {ok, Tokens, _} ->
            case erl_parse:parse_exprs(Tokens) of
                {ok, [Expr]} ->
                    {value, V, _} = erl_eval:expr(Expr, erl_eval:new_bindings()),
                    V;
                _ -> throw({usage, io_lib:format("~ts ~ts: not an Erlang expression", [Culprit, Text])})
            end;
        _ -> throw({usage, io_lib:format("~ts ~ts: not an Erlang expression", [Culprit, Text])})
    end.

%% 'Module:Function(Args)' as an entry.
entry(#cli{positional = [Call]}) ->
    case erl_scan:string(Call ++ ".") of
        {ok, Tokens, _} ->
            case erl_parse:parse_exprs(Tokens) of
                {ok, [{call, _, {remote, _, {atom, _, M}, {atom, _, F}}, ArgExprs}]} ->
                    {M, F, [literal(A, N, Call) || {N, A} <- lists:enumerate(ArgExprs)]};
                _ -> bad_entry(Call)
            end;
        _ -> bad_entry(Call)
    end;
entry(#cli{positional = []}) ->
    throw({usage, "no entry: give the call that starts the program, as 'Module:Function(Args)'"});
entry(#cli{positional = Many}) ->
    throw({usage, io_lib:format("one entry expected, got ~ts", [lists:join(" ", Many)])}).

%% The entry's arguments are data, never evaluated: a command line pasted
%% from elsewhere must not run code before the check (os:cmd(...)).
literal(Expr, N, Call) ->
    try erl_parse:normalise(Expr)
    catch
        error:_ ->
            throw({usage, io_lib:format("~ts: argument ~b, ~ts, is not a literal term (the entry's "
                                        "arguments are not evaluated)",
                                        [Call, N, erl_pp:expr(Expr)])})
    end.

bad_entry(Call) ->
    throw({usage, io_lib:format("~ts: expected a call 'Module:Function(Args)' with literal "
                                "arguments", [Call])}).

%% Code paths, then the files given, compiled with debug_info (the
%% checker translates from it).
prepare(#cli{paths = Paths, files = Files}) ->
    Default = [D || D <- ["ebin" | filelib:wildcard("_build/default/lib/*/ebin")], filelib:is_dir(D)],
    [code:add_patha(D) || D <- Default ++ Paths, filelib:is_dir(D) orelse
                                                     throw({usage, io_lib:format("-pa ~ts: no such directory", [D])})],
    %% Not named mcerlang-*: code:lib_dir(mcerlang) would take it for the
    %% application directory (name-version) and look for the NIF there.
    Out = build_dir(),
    ok = filelib:ensure_path(Out),
    code:add_patha(Out),
    lists:foreach(
      fun(File) ->
              filelib:is_regular(File) orelse throw({usage, io_lib:format("~ts: no such file", [File])}),
              case compile:file(File, [debug_info, report, return_errors, {outdir, Out}]) of
                  {ok, M} ->
                      code:purge(M),
                      {module, M} = code:load_abs(filename:join(Out, atom_to_list(M)));
                  {ok, M, _Warnings} ->
                      code:purge(M),
                      {module, M} = code:load_abs(filename:join(Out, atom_to_list(M)));
                  _ ->
                      throw({usage, io_lib:format("~ts does not compile", [File])})
              end
      end, Files).

%% --cluster: this VM becomes a node (unless it is one), and the modules
%% of the FILE.erl arguments go to every other node, whose checks translate
%% them from their own copy of the beam (the check refuses a node whose
%% translation of a module differs from this one's).
join_cluster(#cli{options = #{cluster := [_ | _] = Nodes}} = Cli) ->
    Default = case lists:any(fun(N) -> lists:member($., host(N)) end, Nodes) of
                  true -> longnames;
                  false -> shortnames
              end,
    distribute(Cli, {list_to_atom("mcerlang_" ++ os:getpid()), Default}),
    Modules = [M || {M, Path} <- code:all_loaded(), is_list(Path),
                    filename:dirname(Path) =:= build_dir()],
    [send_modules(N, Modules) || N <- Nodes],
    ok;
join_cluster(_) ->
    ok.

host(Node) ->
    case string:split(atom_to_list(Node), "@") of
        [_, Host] -> Host;
        _ -> ""
    end.

%% Starts distribution with --sname/--name (else Default) and the cookie.
distribute(#cli{dist = Dist}, Default) ->
    case node() of
        nonode@nohost ->
            _ = os:cmd("epmd -daemon"),
            {Name, Mode} = maps:get(name, Dist, Default),
            %% A failure is told below in one line, not by the kernel's
            %% supervisor reports.
            #{level := Level} = logger:get_primary_config(),
            ok = logger:set_primary_config(level, emergency),
            Started = net_kernel:start([Name, Mode]),
            ok = logger:set_primary_config(level, Level),
            case Started of
                {ok, _} -> ok;
                {error, _} ->
                    throw({usage, io_lib:format("cannot start distribution as ~ts: the name is "
                                                "taken on this host, or epmd does not run", [Name])})
            end;
        _ ->
            ok
    end,
    case Dist of
        #{cookie := Cookie} -> erlang:set_cookie(Cookie);
        _ -> ok
    end.

%% A module sent to a node: its beam written into a directory of the
%% node's own, put first in its code path, and loaded.
send_modules(Node, Modules) ->
    Call = fun(M, F, A) ->
                   case rpc:call(Node, M, F, A, 30000) of
                       {badrpc, Why} ->
                           throw({usage, io_lib:format("--cluster ~ts: the node does not answer "
                                                       "(~tp): is it running mcerlang node, with "
                                                       "this cookie?", [Node, Why])});
                       R -> R
                   end
           end,
    Failed = fun(What, Why) ->
                     throw({usage, io_lib:format("--cluster ~ts: ~ts failed there: ~tp",
                                                 [Node, What, Why])})
             end,
    Dir = filename:join(Call(os, getenv, ["TMPDIR", "/tmp"]),
                        "mce_cli_cluster_" ++ atom_to_list(node())),
    case Call(filelib, ensure_path, [Dir]) of
        ok -> ok;
        Error -> Failed(["making ", Dir], Error)
    end,
    case Call(code, add_patha, [Dir]) of
        true -> ok;
        Error1 -> Failed(["adding ", Dir, " to the code path"], Error1)
    end,
    lists:foreach(
      fun(M) ->
              {M, Bin, _} = code:get_object_code(M),
              Beam = filename:join(Dir, atom_to_list(M) ++ ".beam"),
              case Call(file, write_file, [Beam, Bin]) of
                  ok -> ok;
                  Error2 -> Failed(["writing ", Beam], Error2)
              end,
              _ = Call(code, purge, [M]),
              case Call(code, load_abs, [filename:rootname(Beam)]) of
                  {module, M} -> ok;
                  Error3 -> Failed(["loading ", atom_to_list(M)], Error3)
              end
      end, Modules).

%% Where prepare/1 compiles the FILE.erl arguments.
build_dir() ->
    filename:join(tmp_dir(), "mce_cli_build_" ++ os:getpid()).

%% mcerlang node: a distributed node with mcerlang loaded that other runs'
%% checks search with (--cluster), until the VM is stopped or its process
%% `mcerlang_node' gets `stop'.
serve(#cli{dist = #{name := _}, positional = []} = Cli) ->
    prepare(Cli),
    distribute(Cli, none),
    %% loaded now, not at the first check's call (the code path is this
    %% script's)
    {module, _} = code:ensure_loaded(mce_cluster),
    true = register(mcerlang_node, self()),
    io:format("mcerlang node ~ts ready~n", [node()]),
    receive stop -> ?HOLDS end;
serve(#cli{positional = []}) ->
    throw({usage, "node needs --sname NAME or --name NAME"});
serve(#cli{positional = Args}) ->
    throw({usage, io_lib:format("node takes no arguments: ~ts", [lists:join(" ", Args)])}).

tmp_dir() ->
    case os:getenv("TMPDIR") of
        false -> "/tmp";
        Dir -> Dir
    end.

%%--------------------------------------------------------------------
%% Verbs
%%--------------------------------------------------------------------

check(Cli) ->
    prepare(Cli),
    Entry = entry(Cli),
    join_cluster(Cli),
    report(mcerlang:check(Entry, Cli#cli.options), Cli).

simulate(Cli) ->
    prepare(Cli),
    Entry = entry(Cli),
    report(mcerlang:simulate(Entry, Cli#cli.options), Cli).

%% Deletes the translations kept on disk (the default directory's, or
%% the one --translation-cache names).
clear_cache(#cli{options = Opts, positional = []}) ->
    case maps:get(translation_cache, Opts, true) of
        false -> ok;
        true -> mcerlang:clear_translation_cache();
        Dir -> mce_translate_cache:clear(Dir)
    end,
    ?HOLDS;
clear_cache(_) ->
    throw({usage, "clear-cache takes no arguments"}).

default_cache() ->
    mce_translate_cache:default_dir().

replay(#cli{positional = [File]} = Cli) ->
    prepare(Cli),
    Cex = load(File),
    %% Options given here replace the file's, whose funs are never run.
    case mcerlang:replay(Cex, Cli#cli.options) of
        {ok, Replayed} ->
            Cli#cli.quiet orelse io:put_chars([mcerlang:format(Replayed, Cli#cli.format)]),
            io:format("replay: the counterexample reproduces~n"),
            outputs(Replayed, Cli),
            ?VIOLATION;
        {error, Why} ->
            io:format("replay: the counterexample does not reproduce: ~ts~n", [why(Why, Cli)]),
            ?HOLDS
    end;
replay(_) ->
    throw({usage, "replay takes one counterexample file (written by --save or mcerlang:save/2)"}).

debug(#cli{positional = [Arg]} = Cli) ->
    prepare(Cli),
    What = case filelib:is_regular(Arg) of
               true -> load(Arg);
               false -> entry(Cli)
           end,
    mcerlang:debug(What, maps:merge(maps:remove(progress, Cli#cli.options), Cli#cli.format)),
    ?HOLDS;
debug(Cli) ->
    entry(Cli).

load(File) ->
    case mcerlang:load(File) of
        {ok, Cex} -> Cex;
        {error, Why} -> erlang:error({mcerlang, {cannot_load, File, Why}})
    end.

why({diverged, N, Expected, Enabled}, Cli) ->
    [io_lib:format("step ~b is not enabled:~n", [N]),
     mce_format:step(N, Expected, Cli#cli.format),
     "enabled instead:\n",
     [mce_format:step(N, S, Cli#cli.format) || S <- Enabled]];
why({not_reproduced, How}, _Cli) ->
    io_lib:format("the steps replay, but ~tp", [How]);
why(Other, _Cli) ->
    io_lib:format("~tp", [Other]).

%% @doc Prints a result of mcerlang:check/2 (or simulate/2) as the command
%% line does (quiet: only the verdict line) and returns its exit code: for
%% rebar3 mcerlang (rebar3_mcerlang_prv).
-spec print(check | simulate, mcerlang:result(), boolean()) -> 0 | 1 | 2.
print(Verb, Result, Quiet) ->
    report(Result, #cli{verb = Verb, quiet = Quiet}).

report({ok, Stats}, Cli) ->
    io:format("holds: ~ts~n", [stats(Stats, Cli)]),
    ?HOLDS;
report({error, Cex}, Cli) ->
    Cli#cli.quiet orelse io:put_chars(mcerlang:format(Cex, Cli#cli.format)),
    io:format("violation: ~ts~n", [violation_line(maps:get(violation, Cex))]),
    case Cex of
        #{simulation := #{seed := Seed, run := Run}} ->
            io:format("found by run ~b of the simulation with seed ~b~n", [Run, Seed]);
        _ -> ok
    end,
    maps:is_key(abstract_counterexample, Cex) andalso
        io:format("found under the abstraction and replayed on the concrete values~n"),
    outputs(Cex, Cli),
    ?VIOLATION;
report({inconclusive, {possibly_spurious, Abstract}, Stats}, Cli) ->
    io:format("possibly spurious: the abstract counterexample below did not replay concretely~n"),
    Cli#cli.quiet orelse io:put_chars(mcerlang:format(Abstract)),
    io:format("inconclusive: possibly spurious ~ts (~ts; concrete replay: ~0tP)~n",
              [violation_line(maps:get(violation, Abstract)), stats(Stats, Cli),
               maps:get(concrete_replay, Stats, unknown), 8]),
    ?OTHER;
report({inconclusive, Why, Stats}, Cli) ->
    io:format("inconclusive: ~tp (~ts)~n", [Why, stats(Stats, Cli)]),
    ?OTHER.

outputs(Cex, #cli{msc = Msc, save = Save, format = Format}) ->
    Msc =:= none orelse written(mcerlang:msc(Cex, Msc, maps:with([fold], Format)), Msc,
                                "message sequence chart"),
    Save =:= none orelse written(mcerlang:save(Cex, Save), Save, "counterexample"),
    ok.

written(ok, File, What) ->
    io:format("~ts written to ~ts~n", [What, File]);
written({error, Why}, File, _What) ->
    erlang:error({mcerlang, {cannot_write, File, Why}}).

violation_line(deadlock) -> "deadlock";
violation_line({abnormal_exit, Pid, Reason}) ->
    io_lib:format("~p exited abnormally: ~0tP", [Pid, Reason, 8]);
violation_line({ltl, F}) -> io_lib:format("LTL property ~ts fails", [F]);
violation_line({invariant, _}) -> "an invariant is false";
violation_line({monitor, M, V}) -> io_lib:format("monitor ~p: ~0tP", [M, V, 8]);
violation_line(Other) -> io_lib:format("~0tP", [Other, 8]).

stats(#{runs := Runs, steps := Steps, seed := Seed, time_ms := Ms}, #cli{verb = simulate}) ->
    io_lib:format("no violation in ~b runs (~b steps, seed ~b, ~b ms)", [Runs, Steps, Seed, Ms]);
stats(#{states := _, transitions := _, time_ms := Ms} = Stats, _Cli) ->
    [io_lib:format("~ts, ~b ms", [mce_format:state_counts(Stats), Ms]),
     case Stats of
         #{abstraction := Spec} -> io_lib:format(", abstraction ~0tp", [Spec]);
         #{} -> ""
     end].
