%% The step debugger: its commands as functions (mce_debug:command/2) and
%% the interactive prompt (mcerlang:debug/1,2) fed by a scripted input.
-module(mce_debug_tests).

-include_lib("eunit/include/eunit.hrl").

-define(OPTS, #{progress => false}).

text(D, Line) ->
    {ok, Text} = mce_debug:command(D, Line),
    lists:flatten(io_lib:format("~ts", [Text])).

has(Text, Part) ->
    case string:find(Text, Part) of
        nomatch -> erlang:error({missing, Part, {in, Text}});
        _ -> true
    end.

with_debugger(What, Options, Test) ->
    {ok, D} = mce_debug:start(What, Options),
    try Test(D)
    after mce_debug:stop(D)
    end.

%% next follows the counterexample to its deadlock; back and goto move
%% along it; the state shown is the counterexample's.
follows_a_counterexample_test() ->
    %% The counterexample of the plain search (symmetry reduction, on by
    %% default, finds another deadlock first).
    {error, Cex} = mcerlang:check({dining, start, [2]}, ?OPTS#{symmetry => false}),
    N = length(maps:get(trace, Cex)),
    with_debugger(Cex, #{}, fun(D) ->
        has(text(D, "where"), "at step 0; next: step 1 of 9"),
        has(text(D, "next"), "1. <0.1.0> (dining:start/1) starts"),
        All = text(D, "next " ++ integer_to_list(N - 1)),
        has(All, "Violation: deadlock"),
        has(text(D, "where"), "the counterexample's steps are done"),
        has(text(D, "next"), "no transition is enabled"),
        has(text(D, "mailboxes"), "{take,<0.5.0>}"),
        has(text(D, "show <0.2.0>"), "mailbox: [{take,<0.5.0>}]"),
        has(text(D, "p 4"), "process <0.4.0>"),
        has(text(D, "show 99"), "no process 99"),
        has(text(D, "back"), "at step 8"),
        has(text(D, "goto 2"), "at step 2"),
        has(text(D, "trace"), "2. <0.2.0>"),
        has(text(D, "goto 0"), "at step 0"),
        has(text(D, "goto 9"), "at step 9"),
        has(text(D, "state"), "waits in receive")
    end).

%% Leaving the counterexample's path by choosing another transition, then
%% choosing by hand; enabled marks the counterexample's choice.
chooses_transitions_test() ->
    {error, Cex} = mcerlang:check({dining, start, [2]}, ?OPTS),
    with_debugger(Cex, #{}, fun(D) ->
        text(D, "next 3"),
        Enabled = text(D, "enabled"),
        has(Enabled, "*"),
        {match, Marked} = re:run(Enabled, "^([ *]) *([0-9]+)\\. <", [multiline, global,
                                                                    {capture, all_but_first, list}]),
        ?assert(length(Marked) >= 2),
        ?assertEqual(1, length([x || ["*", _] <- Marked])),
        Other = hd([list_to_integer(I) || [" ", I] <- Marked]),
        text(D, "choose " ++ integer_to_list(Other)),
        has(text(D, "where"), "off the counterexample's path"),
        has(text(D, "choose 99"), "only "),
        has(text(D, "back"), "at step 3"),
        has(text(D, "where"), "next: step 4 of 9")
    end).

%% Over a program: no plan; next takes the only transition, else asks.
steps_through_a_program_test() ->
    with_debugger({pingpong, start, [1]}, ?OPTS, fun(D) ->
        has(text(D, "where"), "at step 0"),
        has(text(D, "next"), "1. <0.1.0>"),
        Reply = text(D, "next"),
        ?assert(string:find(Reply, "enabled") =/= nomatch orelse
                string:find(Reply, "2. <") =/= nomatch),
        has(text(D, "enabled"), "1. <"),
        has(text(D, "choose 1"), ". <")
    end).

commands_reject_bad_input_test() ->
    with_debugger({pingpong, start, [1]}, ?OPTS, fun(D) ->
        has(text(D, "frobnicate"), "unknown command frobnicate"),
        has(text(D, "goto x"), "expected a step number"),
        has(text(D, "next -2"), "expected a positive number"),
        has(text(D, "choose"), "wrong arguments"),
        has(text(D, "help"), "goto N"),
        ?assertMatch({quit, _}, mce_debug:command(D, "quit"))
    end),
    ?assertError({mcerlang, {undefined_module, nosuch, _}}, mce_debug:start({nosuch, f, []}, #{})),
    ?assertError({mcerlang, {not_replayable, _}},
                 mce_debug:start(#{violation => deadlock, trace => [], final_state => []}, #{})).

%% The LTL lasso: the debugger marks where the cycle starts and closes.
lasso_test() ->
    {error, Cex} = mcerlang:check({tprog_ltl, spin_and_work, []},
                                  ?OPTS#{ltl => "<> done", predicates => #{done => {prop, done}},
                                         fairness => none}),
    with_debugger(Cex, #{}, fun(D) ->
        Stem = length(maps:get(trace, Cex)),
        has(text(D, "next " ++ integer_to_list(Stem)), "the cycle starts here"),
        has(text(D, "next " ++ integer_to_list(length(maps:get(cycle, Cex)))),
            "back where the cycle started")
    end).

%% The prompt reads lines from standard input (here a scripted group
%% leader) until quit.
repl_test() ->
    {error, Cex} = mcerlang:check({dining, start, [2]}, ?OPTS),
    Output = scripted(["next 9\n", "mailboxes\n", "quit\n"], fun() -> mcerlang:debug(Cex) end),
    has(Output, "mcerlang debugger"),
    has(Output, "Violation: deadlock"),
    has(Output, "{take,"),
    has(Output, "bye"),
    %% End of input ends the session too.
    Eof = scripted(["next\n"], fun() -> mcerlang:debug({pingpong, start, [1]}, ?OPTS) end),
    has(Eof, "1. <0.1.0>").

%% Runs Fun with a group leader that answers get_line requests with Lines
%% (then eof) and collects what is written.
scripted(Lines, Fun) ->
    Self = self(),
    Io = spawn_link(fun() -> io_server(Lines, []) end),
    Worker = spawn_link(fun() ->
                                group_leader(Io, self()),
                                Fun(),
                                Self ! {done, self()}
                        end),
    receive {done, Worker} -> ok after 60000 -> erlang:error(repl_timeout) end,
    Io ! {output, self()},
    receive {Io, Out} -> Out end.

io_server(Lines, Out) ->
    receive
        {io_request, From, ReplyAs, Request} ->
            {Reply, Lines1, Out1} = io_request(Request, Lines, Out),
            From ! {io_reply, ReplyAs, Reply},
            io_server(Lines1, Out1);
        {output, From} ->
            From ! {self(), lists:flatten(lists:reverse(Out))}
    end.

io_request({put_chars, unicode, Chars}, Lines, Out) ->
    {ok, Lines, [unicode:characters_to_list(Chars) | Out]};
io_request({put_chars, unicode, M, F, A}, Lines, Out) ->
    io_request({put_chars, unicode, apply(M, F, A)}, Lines, Out);
io_request({put_chars, Chars}, Lines, Out) ->
    io_request({put_chars, unicode, Chars}, Lines, Out);
io_request({get_line, _Enc, _Prompt}, [Line | Rest], Out) ->
    {Line, Rest, Out};
io_request({get_line, _Enc, _Prompt}, [], Out) ->
    {eof, [], Out};
io_request({get_line, Prompt}, Lines, Out) ->
    io_request({get_line, unicode, Prompt}, Lines, Out);
io_request(getopts, Lines, Out) ->
    {[{binary, false}, {encoding, unicode}], Lines, Out};
io_request({get_geometry, _}, Lines, Out) ->
    {{error, enotsup}, Lines, Out};
io_request(_, Lines, Out) ->
    {{error, request}, Lines, Out}.

%% Processes of the simulated nodes read node-qualified, as the text
%% report writes them (`n2@sim/<0.3.0>', not `<8349.3.0>@n2@sim'), and
%% `show' finds a process by that text.
node_qualified_pids_test() ->
    {error, Cex} = mcerlang:check({world_hello, worldhello, ['n1@sim', 'n2@sim', 'n3@sim']},
                                  #{nodes => ['n1@sim', 'n2@sim', 'n3@sim'], progress => false}),
    with_debugger(Cex, #{}, fun(D) ->
        text(D, "goto 4"),
        Procs = text(D, "state"),
        {match, [[Pid] | _]} = re:run(Procs, "(n[123]@sim/<0\\.[0-9]+\\.[0-9]+>)",
                                      [global, {capture, all_but_first, list}]),
        ?assertEqual(nomatch, string:find(Procs, "<8")),
        has(text(D, "show " ++ Pid), "process " ++ Pid)
    end).
