%% Message sequence charts (mcerlang:msc/2, mce_msc): the SVG is well
%% formed XML with a lifeline per process and an arrow per message or
%% signal, deliveries through the ether drawn apart from their sends,
%% faults, crashes and lasso cycles marked, text escaped; and a real
%% browser (headless Chromium) lays the HTML page out at its declared size.
-module(mce_msc_tests).
-include_lib("eunit/include/eunit.hrl").
-include_lib("xmerl/include/xmerl.hrl").

-define(N1, 'n1@sim').
-define(N2, 'n2@sim').
-define(N3, 'n3@sim').
-define(NODES, [?N1, ?N2, ?N3]).
-define(BROWSER_TIMEOUT_MS, 60000).

warm_up_test_() ->
    {timeout, 120,
     fun() -> [mce_translate:ensure(M) || M <- [dining, world_hello, racy_child, tprog_dist,
                                                tprog_ltl]]
     end}.

%%--------------------------------------------------------------------
%% The SVG's structure
%%--------------------------------------------------------------------

dining_test() ->
    Cex = cex(dining),
    with_svg(Cex, fun(Svg, Bin) ->
        #xmlElement{name = svg} = Svg,
        W = attr(Svg, width),
        H = attr(Svg, height),
        ?assert(list_to_integer(W) > 0 andalso list_to_integer(H) > 0),
        ?assertEqual("0 0 " ++ W ++ " " ++ H, attr(Svg, viewBox)),
        ?assertEqual(length(pids(Cex)), count(Svg, "msc-lifeline")),
        ?assertEqual(5, count(Svg, "msc-lifeline")),
        Sends = [E || #{effects := Es} <- maps:get(trace, Cex), {send, _, _} = E <- Es],
        ?assertEqual(6, length(Sends)),
        ?assertEqual(length(Sends), count(Svg, "msc-message")),
        ?assertEqual(length(Sends), count(Svg, "msc-instant")),
        ?assertEqual(4, count(Svg, "msc-spawn")),
        ?assertEqual(0, count(Svg, "msc-deliver")),
        ?assertEqual(10, count(Svg, "msc-arrow")),
        %% The deadlocked processes and what their mailboxes hold.
        ?assertEqual(4, count(Svg, "msc-final")),
        Mailboxes = [text(E) || E <- with_class(Svg, "msc-mailbox")],
        ?assert(lists:member("{take,<0.5.0>}", Mailboxes)),
        ?assert(lists:member("{take,<0.4.0>}", Mailboxes)),
        ?assertMatch([_], [T || E <- with_class(Svg, "msc-violation"), T <- [text(E)],
                                string:find(T, "deadlock") =/= nomatch]),
        %% Every pid went through escaping.
        ?assertEqual(nomatch, binary:match(Bin, <<"<0.">>)),
        ?assertNotEqual(nomatch, binary:match(Bin, <<"&lt;0.2.0&gt;">>)),
        %% Step numbers, as in the text report.
        ?assertEqual([integer_to_list(N) || N <- lists:seq(1, 9)],
                     [text(E) || E <- with_class(Svg, "msc-step-number")])
    end).

%% Between nodes a message waits in the ether: its arrow runs from the
%% send (a row of the sender) down to the delivery step (a later row).
world_hello_ether_test() ->
    Cex = cex(world_hello),
    Trace = maps:get(trace, Cex),
    with_svg(Cex, fun(Svg, _Bin) ->
        Delivers = [S || #{kind := deliver} = S <- Trace],
        ?assertEqual(3, length(Delivers)),
        Arrows = with_class(Svg, "msc-deliver"),
        ?assertEqual(length(Delivers), length(Arrows)),
        ?assertEqual(3, count(Svg, "msc-message")),
        ?assertEqual(0, count(Svg, "msc-instant")),
        lists:foreach(fun(A) ->
                              [Line] = children(A, line),
                              Y1 = list_to_integer(attr(Line, y1)),
                              Y2 = list_to_integer(attr(Line, y2)),
                              ?assert(Y2 > Y1)
                      end, Arrows),
        ?assertEqual(["hello", "world", "world"],
                     lists:sort([text(hd(children(A, text))) || A <- Arrows])),
        ?assertEqual(4, count(Svg, "msc-lifeline")),
        ?assertEqual(3, count(Svg, "msc-node")),
        ?assertEqual(["n1@sim", "n2@sim", "n3@sim"],
                     lists:sort([text(E) || E <- with_class(Svg, "msc-node-name")])),
        [Crash] = with_class(Svg, "msc-crash"),
        ?assertNotEqual(nomatch, string:find(text(Crash), "wrong_order"))
    end).

%% Pids of the simulated nodes read node-qualified (`n1@sim/<0.1.0>'), in
%% the headers, the labels, the descriptions and the hover titles alike,
%% never as this VM's `<8349.1.0>'.
node_qualified_pids_test() ->
    Cex = cex(world_hello),
    with_svg(Cex, fun(Svg, Bin) ->
        Pids = [text(E) || E <- with_class(Svg, "msc-pid")],
        ?assertEqual(4, length(Pids)),
        ?assert(lists:member("n1@sim/<0.1.0>", Pids)),
        ?assert(lists:all(fun(P) -> re:run(P, "^n[123]@sim/<0\\.[0-9]+\\.0>'*$") =/= nomatch end, Pids)),
        ?assertEqual(nomatch, re:run(Bin, "&lt;[1-9][0-9]*\\.[0-9]+\\.[0-9]+&gt;")),
        Notes = lists:append([text(E) || E <- with_class(Svg, "msc-note")]),
        ?assertNotEqual(nomatch, string:find(Notes, "n2@sim/<0."))
    end).

%% Labels are cut to the room the chart has: a message to a column three
%% columns away shows whole where it would not fit between neighbours, and
%% the description column grows to hold a long description.
labels_fit_their_room_test() ->
    Long = list_to_atom("a_message_long_enough_to_be_cut_between_neighbours_" ++
                            lists:duplicate(20, $x)),
    [P1, P2, P3, P4] = [list_to_pid("<0." ++ integer_to_list(I) ++ ".0>") || I <- [1, 2, 3, 4]],
    Start = fun(P) -> #{kind => run, pid => P, action => {start, {'mce$m', sink, []}},
                        effects => [], output => [], outcome => {waiting, {m, sink, 0, "m.erl", 1}}}
            end,
    Cex = #{violation => deadlock,
            trace => [#{kind => run, pid => P1, action => {start, {'mce$m', main, []}},
                        effects => [{spawn, P, {'mce$m', sink, []}, false} || P <- [P2, P3, P4]],
                        output => [], outcome => {waiting, {m, main, 0, "m.erl", 2}}},
                      Start(P2), Start(P3), Start(P4),
                      #{kind => run, pid => P1, action => resume,
                        effects => [{send, P4, Long}, {send, P2, Long}],
                        output => [], outcome => {exit, normal}}],
            final_state => [#{pid => P, node => node(P), name => undefined, status => waiting,
                              where => undefined, mailbox => [Long], links => []}
                            || P <- [P2, P4]],
            stats => #{states => 2, transitions => 1, max_depth => 1, time_ms => 0, memory => 0}},
    Name = atom_to_list(Long),
    with_svg(Cex, fun(Svg, _Bin) ->
        Labels = [text(hd(children(A, text))) || A <- with_class(Svg, "msc-message")],
        %% to P4 (three columns, 480 px): whole; to P2 (160 px): cut
        ?assert(lists:member(Name, Labels)),
        ?assert(lists:any(fun(L) -> L =/= Name andalso lists:last(L) =:= 16#2026 end, Labels)),
        %% the description of the sending step holds its first send whole,
        %% well past the 74 characters a description had before
        Notes = [text(E) || E <- with_class(Svg, "msc-note")],
        Sends = [N || N <- Notes, string:find(N, "sends " ++ Name ++ " to <0.4.0>; sends") =/= nomatch],
        ?assertMatch([_], Sends),
        ?assert(length(hd(Sends)) > 150)
    end).

%% The checker reuses the pid of a process that ended: the root's pid for
%% procC when every signal goes through the ether.  Two processes, two
%% lifelines.
reused_pid_test() ->
    {error, Cex} = mcerlang:check({world_hello, worldhello, [?N1, ?N1, ?N1]},
                                  #{nodes => [?N1], delivery => ether, progress => false}),
    with_svg(Cex, fun(Svg, _Bin) ->
        ?assertEqual(3, length(pids(Cex))),
        ?assertEqual(4, count(Svg, "msc-lifeline")),
        ?assertEqual(3, count(Svg, "msc-deliver"))
    end).

crash_node_fault_test() ->
    {error, Cex} = mcerlang:check({tprog_dist, crash_watch, [?N2]},
                                  #{nodes => ?NODES, faults => #{crash_node => 1},
                                    progress => false}),
    with_svg(Cex, fun(Svg, _Bin) ->
        [Fault] = with_class(Svg, "msc-fault"),
        ?assertNotEqual(nomatch, string:find(text(Fault), "node n2@sim crashes")),
        ?assertEqual(1, count(Svg, "msc-crash"))
    end).

kill_fault_test() ->
    {error, Cex} = mcerlang:check({tprog_dist, killable, []},
                                  #{faults => #{kill => 1}, progress => false}),
    with_svg(Cex, fun(Svg, _Bin) ->
        [Fault] = with_class(Svg, "msc-fault"),
        ?assertEqual(1, count(Fault, "msc-cross")),
        ?assertNotEqual(nomatch, string:find(text(Fault), "killed"))
    end).

%% A disconnect loses the signal in transit: its arrow ends in a cross.
disconnect_loses_signal_test() ->
    {error, Cex} = mcerlang:check({tprog_dist, disconnect_lost, [?N2]},
                                  #{nodes => ?NODES, faults => #{disconnect => 1},
                                    progress => false}),
    Faults = [F || #{kind := fault, fault := F} <- maps:get(trace, Cex)],
    ?assertMatch([{disconnect, ?N1, ?N2} | _], Faults),
    with_svg(Cex, fun(Svg, _Bin) ->
        ?assertEqual(length(Faults), count(Svg, "msc-fault")),
        ?assertEqual(1, count(Svg, "msc-disconnect")),
        ?assertEqual(1, count(Svg, "msc-lost"))
    end).

%% The worker crashes; its linked parent dies of the exit signal without
%% a step of its own.
crash_and_link_test() ->
    Cex = cex(racy_child),
    with_svg(Cex, fun(Svg, _Bin) ->
        [Crash] = with_class(Svg, "msc-crash"),
        ?assertNotEqual(nomatch, string:find(text(Crash), "function_clause")),
        ?assertEqual(1, count(Svg, "msc-gone")),
        ?assertEqual(1, count(Svg, "msc-final"))
    end).

lasso_cycle_test() ->
    {error, Cex} = mcerlang:check({tprog_ltl, spin_and_work, []},
                                  #{ltl => "<> done", predicates => #{done => {prop, done}},
                                    fairness => none, progress => false}),
    #{trace := Stem, cycle := Cycle} = Cex,
    with_svg(Cex, fun(Svg, _Bin) ->
        [Band] = with_class(Svg, "msc-cycle"),
        ?assertNotEqual(nomatch, string:find(text(Band), "repeat forever")),
        ?assertEqual([integer_to_list(N) || N <- lists:seq(1, length(Stem) + length(Cycle))],
                     [text(E) || E <- with_class(Svg, "msc-step-number")]),
        %% The spinner's message to itself, in the stem and in the cycle.
        ?assertEqual(2, count(Svg, "msc-message")),
        ?assertMatch([_], [T || E <- with_class(Svg, "msc-violation"), T <- [text(E)],
                                string:find(T, "<> done") =/= nomatch])
    end).

%% A run that stays put: the stutter step is a row of its own.
stutter_test() ->
    {error, Cex} = mcerlang:check({tprog_ltl, never_done, []},
                                  #{ltl => "<> done", predicates => #{done => {prop, done}},
                                    progress => false}),
    Stutters = [S || #{kind := stutter} = S <- maps:get(trace, Cex) ++ maps:get(cycle, Cex, [])],
    ?assertNotEqual([], Stutters),
    with_svg(Cex, fun(Svg, _Bin) ->
        ?assertEqual(length(Stutters), count(Svg, "msc-stutter"))
    end).

%% A timer fires: an arrow from where it was started to the step that
%% delivers its message.
timer_test() ->
    P1 = list_to_pid("<0.1.0>"),
    Ref = make_ref(),
    Cex = #{violation => deadlock,
            trace => [#{kind => run, pid => P1, action => {start, {'mce$m', main, []}},
                        effects => [{timer, Ref, P1, wake_up, 10}], output => [],
                        outcome => {waiting, undefined}},
                      #{kind => timer, ref => Ref, to => P1, signal => {message, wake_up}}],
            final_state => [#{pid => P1, node => node(P1), name => undefined, status => waiting,
                              where => undefined, mailbox => [wake_up], links => []}],
            stats => #{states => 2, transitions => 1, max_depth => 1, time_ms => 0,
                       memory => 0}},
    with_svg(Cex, fun(Svg, _Bin) ->
        ?assertEqual(1, count(Svg, "msc-timer-set")),
        [Arrow] = with_class(Svg, "msc-timer"),
        ?assertEqual(1, count(Svg, "msc-arrow")),
        [Path] = children(Arrow, path),
        ?assertNotEqual(undefined, attr(Path, d)),
        ?assertNotEqual(nomatch, string:find(text(Arrow), "wake_up"))
    end).

%% A big message: abbreviated on its arrow and in the mailbox, whole when
%% hovered; markup characters in it escaped.
big_term_test() ->
    Big = {big, lists:seq(1, 200), "<tag> & 'quoted' \"x\""},
    Whole = lists:flatten(io_lib:format("~0tp", [Big])),
    with_svg(synthetic(Big), fun(Svg, Bin) ->
        [Arrow] = with_class(Svg, "msc-message"),
        [Label] = children(Arrow, text),
        Short = text(Label),
        ?assert(length(Short) =< 40),
        ?assertEqual([16#2026], lists:nthtail(length(Short) - 1, Short)),
        [Title] = children(Arrow, title),
        ?assertNotEqual(nomatch, string:find(text(Title), Whole)),
        ?assert(lists:any(fun(E) -> [T] = children(E, title), text(T) =:= Whole end,
                          with_class(Svg, "msc-mailbox"))),
        ?assertNotEqual(nomatch, binary:match(Bin, <<"&lt;tag&gt; &amp; &#39;quoted&#39;">>)),
        ?assertEqual(nomatch, binary:match(Bin, <<"<tag>">>))
    end).

html_is_self_contained_test() ->
    with_dir(fun(Dir) ->
        File = filename:join(Dir, "chart.html"),
        ok = mcerlang:msc(cex(dining), File),
        {ok, Bin} = file:read_file(File),
        ?assertMatch(<<"<!DOCTYPE html>", _/binary>>, Bin),
        ?assertEqual(1, length(binary:matches(Bin, <<"<svg ">>))),
        %% Nothing to fetch: the only URL is the SVG namespace.
        ?assertEqual([<<"http://www.w3.org/2000/svg">>],
                     [U || [U] <- match_all(Bin, "(https?://[^\"' ]*)")]),
        ?assertEqual(nomatch, binary:match(Bin, [<<"src=">>, <<"href=">>, <<"@import">>])),
        %% The same drawing as the standalone SVG.
        Svg = mce_msc:render(cex(dining), svg),
        [SvgPart] = [P || [P] <- match_all(iolist_to_binary(Svg), "(<svg .*</svg>)")],
        ?assertNotEqual(nomatch, binary:match(Bin, SvgPart))
    end).

render_test() ->
    Svg = mce_msc:render(cex(dining), svg),
    ?assertMatch(<<"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", _/binary>>, Svg),
    Html = mce_msc:render(cex(dining), html),
    ?assertMatch(<<"<!DOCTYPE html>", _/binary>>, Html).

write_errors_test() ->
    ?assertEqual({error, enoent}, mcerlang:msc(cex(dining), "/nonexistent/dir/chart.svg")).

%%--------------------------------------------------------------------
%% A real browser
%%--------------------------------------------------------------------

%% Chromium lays the page out: the SVG has its declared size and every
%% arrow is in the DOM (the page's script writes what it measured).
chromium_test_() ->
    {timeout, 150, fun() ->
                           Chromium = chromium(),
                           with_dir(fun(Dir) ->
                                            0 = in_browser(Chromium, Dir, dining, cex(dining)),
                                            0 = in_browser(Chromium, Dir, world_hello,
                                                           cex(world_hello)),
                                            %% a message lost by a crash and by
                                            %% a disconnect: the marks drawn,
                                            %% no fault box or label over them
                                            [?assertEqual({F, 1}, {F, in_browser(Chromium, Dir, F, cex(F))})
                                             || F <- [lost_by_crash, lost_by_disconnect]]
                                    end)
                   end}.

chromium() ->
    case os:find_executable("chromium") of
        false ->
            case filelib:is_regular("/usr/bin/chromium") of
                true -> "/usr/bin/chromium";
                false -> erlang:error({chromium_not_found,
                                       "this test needs a headless browser: install the "
                                       "Debian package chromium (/usr/bin/chromium)"})
            end;
        Path ->
            Path
    end.

in_browser(Chromium, Dir, Name, Cex) ->
    File = filename:join(Dir, atom_to_list(Name) ++ ".html"),
    ok = mcerlang:msc(Cex, File),
    {ok, Page} = file:read_file(File),
    [[W, H]] = match_all(Page, "<svg [^>]*width=\"([0-9]+)\" height=\"([0-9]+)\""),
    Arrows = length(binary:matches(Page, <<"class=\"msc-arrow ">>)),
    ?assert(Arrows > 0),
    Dom = dump_dom(Chromium, Dir, File),
    case match_all(Dom, "<pre id=\"msc-check\"[^>]*>([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+) ([0-9]+)</pre>") of
        [[MW, MH, MA, Lost, Overlaps]] ->
            ?assertEqual({Name, binary_to_integer(W), binary_to_integer(H), Arrows},
                         {Name, binary_to_integer(MW), binary_to_integer(MH),
                          binary_to_integer(MA)}),
            ?assert(binary_to_integer(MW) > 0 andalso binary_to_integer(MH) > 0),
            ?assertEqual({Name, overlaps, 0}, {Name, overlaps, binary_to_integer(Overlaps)}),
            binary_to_integer(Lost);
        _ ->
            erlang:error({no_measurement_in_dom, Name, Dom})
    end.

%% Chromium's stderr (dbus and GPU noise) goes to a log file, its stdout
%% (the DOM) to us; a fresh profile, so that no other instance interferes.
dump_dom(Chromium, Dir, File) ->
    Log = filename:join(Dir, "chromium.log"),
    Profile = filename:join(Dir, "profile-" ++ integer_to_list(erlang:unique_integer([positive]))),
    Args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--user-data-dir=" ++ Profile, "--dump-dom", "file://" ++ File],
    Port = open_port({spawn_executable, "/bin/sh"},
                     [exit_status, binary, use_stdio,
                      {args, ["-c", "exec \"$@\" 2>>\"$0\"", Log, Chromium | Args]}]),
    Deadline = erlang:monotonic_time(millisecond) + ?BROWSER_TIMEOUT_MS,
    collect(Port, [], Deadline, Log).

collect(Port, Acc, Deadline, Log) ->
    receive
        {Port, {data, Data}} ->
            collect(Port, [Acc, Data], Deadline, Log);
        {Port, {exit_status, 0}} ->
            iolist_to_binary(Acc);
        {Port, {exit_status, Status}} ->
            erlang:error({chromium_failed, Status, file:read_file(Log)})
    after max(0, Deadline - erlang:monotonic_time(millisecond)) ->
            case erlang:port_info(Port, os_pid) of
                {os_pid, OsPid} -> os:cmd("kill -9 " ++ integer_to_list(OsPid));
                undefined -> ok
            end,
            port_close(Port),
            erlang:error({chromium_timeout, ?BROWSER_TIMEOUT_MS, file:read_file(Log)})
    end.

%%--------------------------------------------------------------------
%% Helpers
%%--------------------------------------------------------------------

cex(dining) ->
    {error, Cex} = mcerlang:check({dining, start, [2]}, #{progress => false}),
    Cex;
cex(world_hello) ->
    {error, Cex} = mcerlang:check({world_hello, worldhello, ?NODES},
                                  #{nodes => ?NODES, progress => false}),
    Cex;
cex(lost_by_crash) ->
    {error, Cex} = mcerlang:check({tprog_dist, disconnect_lost, [?N2]},
                                  #{nodes => ?NODES, faults => #{crash_node => 1}, progress => false}),
    Cex;
cex(lost_by_disconnect) ->
    {error, Cex} = mcerlang:check({tprog_dist, disconnect_lost, [?N2]},
                                  #{nodes => ?NODES, faults => #{disconnect => 1}, progress => false}),
    Cex;
cex(racy_child) ->
    %% The plain search's 4 steps (under symmetry reduction the mapped run
    %% of the representatives has 5: it starts the configurer first).
    {error, Cex} = mcerlang:check({racy_child, start, []}, #{progress => false, symmetry => false}),
    Cex.

%% One process spawns another and sends it Msg, which stays in its mailbox.
synthetic(Msg) ->
    P1 = list_to_pid("<0.1.0>"),
    P2 = list_to_pid("<0.2.0>"),
    #{violation => deadlock,
      trace => [#{kind => run, pid => P1, action => {start, {'mce$m', main, []}},
                  effects => [{spawn, P2, {'mce$m', sink, []}, false}, {send, P2, Msg}],
                  output => [], outcome => {exit, normal}}],
      final_state => [#{pid => P2, node => node(P2), name => undefined, status => init,
                        where => undefined, mailbox => [Msg], links => []}],
      stats => #{states => 2, transitions => 1, max_depth => 1, time_ms => 0, memory => 0}}.

%% The pids a counterexample's steps and final state name.
pids(#{trace := Trace, final_state := Final}) ->
    lists:usort([P || #{kind := run, pid := P} <- Trace]
                ++ [C || #{effects := Es} <- Trace, {spawn, C, _, _} <- Es]
                ++ [P || #{pid := P} <- Final]).

with_svg(Cex, Check) ->
    with_dir(fun(Dir) ->
                     File = filename:join(Dir, "chart.svg"),
                     ?assertEqual(ok, mcerlang:msc(Cex, File)),
                     {ok, Bin} = file:read_file(File),
                     {Svg, _Rest} = xmerl_scan:file(File, [{quiet, true}]),
                     Check(Svg, Bin)
             end).

with_dir(Fun) ->
    Dir = filename:join(os:getenv("TMPDIR", "/tmp"),
                        "mce_msc_tests_" ++ os:getpid() ++ "_"
                        ++ integer_to_list(erlang:unique_integer([positive]))),
    ok = file:make_dir(Dir),
    try
        Fun(Dir)
    after
        %% A browser's profile may still be settling: leftovers in /tmp are
        %% harmless, and the test's own verdict is what matters.
        _ = file:del_dir_r(Dir)
    end.

attr(#xmlElement{attributes = Attrs}, Name) ->
    case [V || #xmlAttribute{name = N, value = V} <- Attrs, N =:= Name] of
        [V] -> V;
        [] -> undefined
    end.

classes(E) ->
    case attr(E, class) of
        undefined -> [];
        V -> string:lexemes(V, " ")
    end.

%% Every element under (and including) E with the class.
with_class(#xmlElement{content = Content} = E, Class) ->
    [E || lists:member(Class, classes(E))]
        ++ lists:append([with_class(C, Class) || #xmlElement{} = C <- Content]).

count(E, Class) ->
    length(with_class(E, Class)).

children(#xmlElement{content = Content}, Name) ->
    [C || #xmlElement{name = N} = C <- Content, N =:= Name].

%% The text of an element and its descendants, titles excepted (they are
%% hover text, not drawn).
text(#xmlElement{content = Content}) ->
    lists:append([case C of
                      #xmlText{value = V} -> V;
                      #xmlElement{name = title} -> [];
                      #xmlElement{} -> text(C);
                      _ -> []
                  end || C <- Content]).

match_all(Bin, Re) ->
    case re:run(Bin, Re, [global, dotall, unicode, {capture, all_but_first, binary}]) of
        {match, Ms} -> Ms;
        nomatch -> []
    end.

%% `fold => otp' (mcerlang:msc/3): a gen_server call is one arrow for the
%% request and one for the reply; the call's monitor and demonitor arrows
%% are left out.
fold_otp_test() ->
    {error, Cex} = mcerlang:check({locker, start_buggy, [[{a, exclusive}, {a, shared}], 1]},
                                  #{progress => false}),
    Steps = maps:get(trace, Cex),
    Calls = [M || #{effects := Es} <- Steps, {send, _, {'$gen_call', _, _} = M} <- Es],
    ?assertEqual(4, length(Calls)),
    CallRefs = [R || {'$gen_call', {_, R}, _} <- Calls],
    Hidden = [E || #{effects := Es} <- Steps, E <- Es,
                   case E of
                       {monitor, _, R} -> lists:member(R, CallRefs);
                       {demonitor, R, _} -> lists:member(R, CallRefs);
                       _ -> false
                   end],
    ?assertEqual(8, length(Hidden)),
    Arrows = fun(Opts) ->
                     with_dir(fun(Dir) ->
                                      File = filename:join(Dir, "chart.svg"),
                                      ok = mcerlang:msc(Cex, File, Opts),
                                      {Svg, _} = xmerl_scan:file(File, [{quiet, true}]),
                                      Svg
                              end)
             end,
    Plain = Arrows(#{}),
    Folded = Arrows(#{fold => otp}),
    ?assertEqual(count(Plain, "msc-arrow") - length(Hidden), count(Folded, "msc-arrow")),
    Labels = [text(hd(children(A, text))) || A <- with_class(Folded, "msc-message")],
    ?assert(lists:member("call {request,a,exclusive}", Labels)),
    ?assert(lists:member("reply granted", Labels)),
    ?assertNot(lists:any(fun(L) -> string:find(L, "$gen_call") =/= nomatch end, Labels)),
    ?assertError({mcerlang, {bad_msc_option, fold, yes}},
                 mcerlang:msc(Cex, "/nonexistent/x.svg", #{fold => yes})).
