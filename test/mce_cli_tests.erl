%% The command line, run as users run it: bin/mcerlang as a process of its
%% own, checked by its exit code and output.  (make test builds the
%% default profile it runs from.)
-module(mce_cli_tests).

-include_lib("eunit/include/eunit.hrl").

-export([root/0, run_cli/1]).

%% The checkout: where bin/mcerlang is.
-spec root() -> file:filename().
root() ->
    up(filename:dirname(code:which(?MODULE))).

up("/") -> erlang:error(no_checkout_above_the_test_beams);
up(Dir) ->
    case filelib:is_regular(filename:join([Dir, "bin", "mcerlang"])) of
        true -> Dir;
        false -> up(filename:dirname(Dir))
    end.

%% Runs bin/mcerlang with Args in the checkout: {ExitCode, Output}.
-spec run_cli([string()]) -> {non_neg_integer(), string()}.
run_cli(Args) ->
    Root = root(),
    Port = open_port({spawn_executable, filename:join([Root, "bin", "mcerlang"])},
                     [{args, Args}, {cd, Root}, exit_status, stderr_to_stdout, binary,
                      {env, [{"TMPDIR", tmp("")}]}]),
    collect(Port, []).

collect(Port, Acc) ->
    receive
        {Port, {data, Data}} -> collect(Port, [Data | Acc]);
        {Port, {exit_status, Code}} ->
            {Code, unicode:characters_to_list(lists:reverse(Acc))}
    after 120000 ->
            erlang:error({cli_timeout, lists:reverse(Acc)})
    end.

tmp(Name) ->
    Dir = filename:join(["/tmp", "mce_cli_tests_" ++ os:getpid()]),
    ok = filelib:ensure_path(Dir),
    filename:join(Dir, Name).

has(Output, Text) ->
    case string:find(Output, Text) of
        nomatch -> erlang:error({missing, Text, {in, Output}});
        _ -> true
    end.

help_test() ->
    {0, Out} = run_cli(["--help"]),
    has(Out, "Usage: mcerlang check"),
    has(Out, "--msc FILE"),
    has(Out, "--abstraction SPEC"),
    has(Out, "even_odd,depth:3"),
    {2, NoArgs} = run_cli([]),
    has(NoArgs, "Usage:").

cli_test_() ->
    {timeout, 600,
     [{"violation: exit 1, the report, a chart and a saved counterexample",
       fun violation/0},
      {"holds: exit 0", fun holds/0},
      {"inconclusive: exit 2", fun inconclusive/0},
      {"errors: exit 2 naming the culprit", fun errors/0},
      {"replay reproduces, and stops reproducing once fixed", fun replay/0},
      {"simulate", fun simulate/0},
      {"LTL from the command line", fun ltl/0},
      {"--fold otp: OTP calls in the report and the chart", fun fold/0},
      {"debug reads commands from standard input", fun debug/0},
      {"--translation-cache and clear-cache", fun translation_cache/0},
      {"--abstraction: proof 0, real violation 1, possibly spurious 2", fun abstraction/0}]}.

violation() ->
    Msc = tmp("dining.html"),
    Saved = tmp("dining.cex"),
    {1, Out} = run_cli(["check", "--msc", Msc, "--save", Saved, "examples/dining.erl",
                        "dining:start(2)"]),
    has(Out, "Violation: deadlock"),
    has(Out, "violation: deadlock"),
    has(Out, "dining.erl:"),
    ?assert(filelib:file_size(Msc) > 0),
    {ok, Html} = file:read_file(Msc),
    ?assertMatch({match, _}, re:run(Html, "<svg")),
    ?assertMatch({ok, #{violation := deadlock}}, mcerlang:load(Saved)),
    {1, Quiet} = run_cli(["check", "--quiet", "examples/dining.erl", "dining:start(2)"]),
    ?assertEqual(nomatch, string:find(Quiet, "Final state")),
    has(Quiet, "violation: deadlock").

holds() ->
    {0, Out} = run_cli(["check", "examples/pingpong.erl", "pingpong:start(3)"]),
    has(Out, "holds: 3 states (7 more passed through), 9 transitions").

translation_cache() ->
    Dir = tmp("translations"),
    ok = filelib:ensure_path(Dir),
    Other = filename:join(Dir, "not_an_entry.txt"),
    ok = file:write_file(Other, "kept"),
    Check = ["check", "--translation-cache", Dir, "examples/pingpong.erl", "pingpong:start(3)"],
    {0, Cold} = run_cli(Check),
    has(Cold, "holds: 3 states (7 more passed through), 9 transitions"),
    ?assert(filelib:is_regular(filename:join(Dir, "pingpong.mcet"))),
    {0, Warm} = run_cli(Check),
    has(Warm, "holds: 3 states (7 more passed through), 9 transitions"),
    {0, _} = run_cli(["clear-cache", "--translation-cache", Dir]),
    ?assertEqual([Other], filelib:wildcard(filename:join(Dir, "*"))),
    {0, NoCache} = run_cli(["check", "--translation-cache", "false", "examples/pingpong.erl",
                            "pingpong:start(3)"]),
    has(NoCache, "holds: 3 states (7 more passed through), 9 transitions"),
    {2, Bad} = run_cli(["clear-cache", "extra"]),
    has(Bad, "clear-cache takes no arguments"),
    {0, Help} = run_cli(["--help"]),
    has(Help, "--translation-cache DIR|false").

inconclusive() ->
    {2, Out} = run_cli(["check", "--max-states", "3", "examples/dining.erl", "dining:start(3)"]),
    has(Out, "inconclusive: max_states").

errors() ->
    {2, Unknown} = run_cli(["check", "--bogus", "1", "examples/pingpong.erl", "pingpong:start(3)"]),
    has(Unknown, "unknown option --bogus"),
    {2, NoModule} = run_cli(["check", "nosuch:start()"]),
    has(NoModule, "undefined_module"),
    {2, BadEntry} = run_cli(["check", "examples/pingpong.erl", "not a call"]),
    has(BadEntry, "expected a call"),
    {2, BadValue} = run_cli(["check", "--max-states", "lots", "examples/pingpong.erl",
                             "pingpong:start(3)"]),
    has(BadValue, "--max-states lots: expected an integer"),
    {2, BadOption} = run_cli(["check", "--granularity", "huge", "examples/pingpong.erl",
                              "pingpong:start(3)"]),
    has(BadOption, "bad_option_value,granularity,huge"),
    {2, NoFile} = run_cli(["replay", tmp("nothing.cex")]),
    has(NoFile, "enoent"),
    {2, Verb} = run_cli(["prove", "x:y()"]),
    has(Verb, "unknown command prove").

replay() ->
    Saved = tmp("bank.cex"),
    {1, _} = run_cli(["check", "--save", Saved, "examples/tutorial/bank.erl", "bank:main()"]),
    {1, Again} = run_cli(["replay", "examples/tutorial/bank.erl", Saved]),
    has(Again, "replay: the counterexample reproduces"),
    has(Again, "money_lost"),
    {0, Fixed} = run_cli(["replay", "examples/tutorial/fixed/bank.erl", Saved]),
    has(Fixed, "replay: the counterexample does not reproduce"),
    has(Fixed, "is not enabled").

simulate() ->
    {1, Found} = run_cli(["simulate", "--seed", "3", "examples/dining.erl", "dining:start(3)"]),
    has(Found, "violation: deadlock"),
    has(Found, "seed 3"),
    {0, None} = run_cli(["simulate", "--seed", "3", "--runs", "7", "examples/pingpong.erl",
                         "pingpong:start(3)"]),
    has(None, "no violation in 7 runs"),
    has(None, "seed 3").

ltl() ->
    Args = ["--ltl", "<> done", "--pred", "done={prop, done}", "-pa",
            filename:dirname(code:which(tprog_ltl)), "tprog_ltl:spin_and_work()"],
    {0, Fair} = run_cli(["check" | Args]),
    has(Fair, "holds:"),
    {1, Unfair} = run_cli(["check", "--fairness", "none" | Args]),
    has(Unfair, "Cycle (repeats forever)"),
    %% McErlang's spellings, a step predicate, a shortest lasso, a depth bound
    Events = ["--ltl", "[] (scheduled_worker => <> done) & [] !done", "--pred", "done={prop, done}",
              "--pred", "scheduled_worker={spawned, '_', '_', {tprog_ltl, worker, []}}", "--shortest",
              "--fairness", "none", "-pa", filename:dirname(code:which(tprog_ltl)),
              "tprog_ltl:spin_and_work()"],
    {1, Short} = run_cli(["check" | Events]),
    has(Short, "after 3 steps, then a cycle of 1"),
    {2, Bounded} = run_cli(["check", "--max-depth", "1" | Events]),
    has(Bounded, "inconclusive: max_depth").

fold() ->
    Msc = tmp("locker.html"),
    Args = ["check", "--msc", Msc, "examples/locker.erl",
            "locker:start_buggy([{a, exclusive}, {a, shared}], 1)"],
    {1, Plain} = run_cli(Args),
    has(Plain, "'$gen_call'"),
    {1, Out} = run_cli(["check", "--fold", "otp" | tl(Args)]),
    has(Out, "calls <0.3.0> with {request,a,exclusive}"),
    has(Out, "receives call {request,a,exclusive} from <0.5.0>"),
    ?assertEqual(nomatch, string:find(Out, "$gen_call")),
    {ok, Html} = file:read_file(Msc),
    ?assertMatch({match, _}, re:run(Html, "call \\{request,a,exclusive\\}")),
    {2, Bad} = run_cli(["check", "--fold", "yes" | tl(Args)]),
    has(Bad, "--fold yes: expected otp or none").

debug() ->
    Saved = tmp("dining2.cex"),
    {1, _} = run_cli(["check", "--save", Saved, "examples/dining.erl", "dining:start(2)"]),
    Script = tmp("debug_input"),
    ok = file:write_file(Script, "next 10\nmailboxes\nquit\n"),
    {0, Out} = run_sh(io_lib:format("bin/mcerlang debug examples/dining.erl ~ts < ~ts",
                                    [Saved, Script])),
    has(Out, "mcerlang debugger"),
    has(Out, "deadlock"),
    has(Out, "{take,").

run_sh(Command) ->
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", lists:flatten(Command)]}, {cd, root()}, exit_status,
                      stderr_to_stdout, binary]),
    collect(Port, []).

%% The abstract mode (issue 21): the unbounded counter is proved safe for
%% every concretisation; the buggy one's abstract crash replays on the real
%% values; the list's `<> empty' fails only abstractly (the chain's
%% summary), so the verdict is possibly spurious, exit 2, with the
%% abstract trace shown.
abstraction() ->
    {0, Proof} = run_cli(["check", "--abstraction", "sign", "examples/abs_counter.erl",
                          "abs_counter:start()"]),
    has(Proof, "holds: "),
    has(Proof, "abstraction [sign]"),
    {1, Real} = run_cli(["check", "--abstraction", "even_odd,depth:3", "--max-states", "100000",
                         "examples/abs_counter.erl", "abs_counter:start_buggy()"]),
    has(Real, "violation: <0.2.0> exited abnormally: {{overflow,"),
    has(Real, "found under the abstraction and replayed on the concrete values"),
    List = ["--abstraction=chain:1", "--ltl", "<> empty", "--pred", "empty={prop, empty}",
            "examples/abs_list.erl", "abs_list:start(6)"],
    {2, Spurious} = run_cli(["check" | List]),
    has(Spurious, "possibly spurious: the abstract counterexample below did not replay concretely"),
    has(Spurious, "Counterexample: the LTL property <> empty fails"),
    has(Spurious, "mcerlang:prop(nonempty)"),
    has(Spurious, "inconclusive: possibly spurious LTL property <> empty fails"),
    has(Spurious, "concrete replay: no_violation"),
    {2, Quiet} = run_cli(["check", "--quiet" | List]),
    has(Quiet, "possibly spurious: the abstract counterexample below"),
    ?assertEqual(nomatch, string:find(Quiet, "Counterexample:")),
    [begin
         {2, Bad} = run_cli(["check", "--abstraction", Spec, "examples/abs_counter.erl",
                             "abs_counter:start()"]),
         has(Bad, "--abstraction " ++ Spec ++ ": " ++ Why),
         has(Bad, "expected even_odd, sign, depth:K or chain:M")
     end || {Spec, Why} <- [{"bogus", "bogus is not a domain"},
                            {"depth:x", "x is not an integer of at least 1"},
                            {"depth:0", "0 is not an integer of at least 1"},
                            {"chain:-1", "-1 is not an integer of at least 0"},
                            {"even_odd,sign", "at most one integer domain"},
                            {"", " is not a domain"}]].
