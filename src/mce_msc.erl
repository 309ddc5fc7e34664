%% @doc Message sequence charts of counterexamples (mcerlang:msc/2).
%%
%% Owns the chart's layout and its SVG and HTML markup: one column and
%% lifeline per process, grouped under a band per node; one row per step,
%% numbered as in the text report (mce_format), with a lane per arrow the
%% step draws; arrows for messages and signals (one that waited in the
%% ether runs slanted from its send to its delivery); spawns, exits,
%% crashes and faults marked; the mailboxes of the final state at the
%% bottom; an LTL lasso's cycle in a marked band.  Every label is
%% abbreviated; its element's `<title>' holds the whole term for hovering.
%% Elements carry `msc-*' classes (msc-lifeline, msc-arrow with
%% msc-message, msc-signal, msc-spawn or msc-timer, ...) so that tools and
%% tests can find them.
-module(mce_msc).

-export([write/2, write/3, render/2, render/3]).

%% Layout, in pixels.
-define(COL, 160).      % a process's column
-define(LANE, 26).      % a lane; a step has one per arrow or note it draws
-define(GUTTER, 48).    % left margin: step numbers
-define(NOTE_GAP, 70).  % between the last column and the descriptions
-define(DESC, 500).     % right column: step descriptions
-define(CAPTION, 54).   % title and violation
-define(BAND, 22).      % node band
-define(HEAD, 50).      % process header
-define(HALF_BOX, 34).  % half the width of a spawned process's head box
-define(MAIL_LINE, 13). % a line of a final mailbox
%% Text, in characters.
-define(LABEL, 40).     % an arrow's label
-define(NEAR, 24).      % a label beside a lifeline (fits its column)
-define(NOTE, 74).      % a step's description: at least this many fit
-define(NOTE_MAX, 180). % the description column grows to this many
-define(LABEL_MAX, 160).% an arrow's label on a long arrow
%% Average widths of a character, in tenths of a pixel: the labels' 10px
%% sans-serif and the descriptions' 10.5px monospace (DejaVu: 0.6 em).
-define(LABEL_CHAR, 60).
-define(NOTE_CHAR, 64).
-define(DEPTH, 6).      % term depth in labels
-define(NOTE_DEPTH, 12).% term depth in descriptions, as mce_format
-define(MAILBOX, 6).    % messages listed per final mailbox

%% A column: a process, as its pid and its incarnation (the checker
%% reuses the pid of a process that ended for a later spawn).
-type col() :: {pid(), non_neg_integer()}.

-record(proc, {start = top :: top | integer(),   % where its lifeline begins
               last :: integer(),                % its last activity
               stop = none :: none | integer(),  % where it ended, when seen
               name = undefined :: term(),
               call = undefined :: term()}).

%% A signal in the ether: sent at `at', not yet delivered.  `to' is a
%% column, or a name or alias that its delivery resolves.
-record(item, {from :: col(), to :: term(), signal :: term(),
               at :: {integer(), integer()}}).

-record(s, {x :: #{col() => integer()},
            width :: integer(),
            note_x :: integer(),
            note_chars = ?NOTE :: pos_integer(),  % a description's room
            y :: integer(),
            ether_mode :: boolean(),
            normal :: [term()],                 % exit reasons taken as normal
            spawned = [] :: [col()],            % the current step's children
            procs :: #{col() => #proc{}},
            %% Each pid's current incarnation, and those of the spawns to
            %% come (counted by columns/3).
            cur = #{} :: #{pid() => non_neg_integer()},
            spawns :: [non_neg_integer()],
            names = #{} :: #{{term(), node()} => col()},
            aliases = #{} :: #{term() => col()},
            monitors = #{} :: #{term() => term()},
            links = [] :: [{col(), col()}],
            transit = [] :: [#item{}],
            timers = #{} :: #{term() => {integer(), integer()}},
            %% Exit signals that reached a process (its death, when it
            %% vanishes without a step saying so).
            hits = [] :: [{col(), integer()}],
            faults = [] :: [{integer(), term()}],
            bg = [] :: [iodata()],
            fg = [] :: [iodata()]}).

%%--------------------------------------------------------------------
%% API
%%--------------------------------------------------------------------

%% @doc Writes the chart of `Cex' to `File': a standalone SVG document if
%% the name ends in `.svg', else a self-contained HTML page holding the SVG.
-spec write(mcerlang:counterexample(), file:name_all()) -> ok | {error, term()}.
write(Cex, File) ->
    write(Cex, File, #{}).

%% @doc write/2 with options: `fold => otp' draws OTP's call protocol as
%% one arrow per call and one per reply (mce_fold), `none' (the default)
%% every message and signal.
-spec write(mcerlang:counterexample(), file:name_all(), map()) -> ok | {error, term()}.
write(Cex, File, Opts) ->
    Format = case string:equal(filename:extension(File), ".svg", true) of
                 true -> svg;
                 false -> html
             end,
    file:write_file(File, render(Cex, Format, Opts)).

%% @doc The chart of `Cex' as a UTF-8 SVG document or HTML page.
-spec render(mcerlang:counterexample(), svg | html) -> iodata().
render(Cex, Format) ->
    render(Cex, Format, #{}).

%% @doc render/2 with the options of write/3.
-spec render(mcerlang:counterexample(), svg | html, map()) -> iodata().
render(Cex0, Format, Opts) when Format =:= svg; Format =:= html ->
    Cex = case Opts of
              #{fold := otp} -> mce_fold:otp(Cex0);
              _ -> Cex0
          end,
    {Svg, Title} = chart(Cex),
    Doc = case Format of
              svg -> ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", Svg, "\n"];
              html -> html(Svg, Title)
          end,
    case unicode:characters_to_binary(Doc) of
        Bin when is_binary(Bin) -> Bin
    end.

html(Svg, Title) ->
    ["<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
     esc(Title), "</title>\n<style>body{margin:16px;background:#fff}</style>\n</head>\n<body>\n",
     Svg,
     %% Reports the laid-out size and the arrows in the page itself, so that
     %% a headless browser's DOM dump shows the chart was drawn (the tests).
     "\n<pre id=\"msc-check\" hidden></pre>\n<script>(function(){"
     %% Also the lost-message marks, and how many of them a fault's box or
     %% label overlaps (laid out by the browser's own text metrics).
     "var s=document.querySelector('svg.msc'),r=s.getBoundingClientRect(),"
     "m=s.querySelectorAll('.msc-lost-mark'),o=0;"
     "m.forEach(function(k){var a=k.getBBox();"
     "s.querySelectorAll('.msc-fault rect,.msc-fault .msc-fault-label').forEach(function(f){"
     "var b=f.getBBox();if(a.x<b.x+b.width&&b.x<a.x+a.width&&a.y<b.y+b.height&&b.y<a.y+a.height)o++;});});"
     "document.getElementById('msc-check').textContent=Math.round(r.width)+' '+"
     "Math.round(r.height)+' '+s.querySelectorAll('.msc-arrow').length+' '+m.length+' '+o;})();"
     "</script>\n"
     "</body>\n</html>\n"].

%%--------------------------------------------------------------------
%% The chart
%%--------------------------------------------------------------------

chart(#{violation := Violation, trace := Trace, final_state := Final} = Cex) ->
    Cycle = maps:get(cycle, Cex, []),
    Ether = maps:get(ether, Cex, []),
    {Cols, Spawns} = columns(Trace ++ Cycle, Final, Ether),
    Nodes = dedup([node(P) || {P, _} <- Cols]),
    ShowNodes = Nodes =/= [] andalso Nodes =/= [nonode@nohost],
    HeadTop = ?CAPTION + case ShowNodes of true -> ?BAND + 4; false -> 0 end,
    LifeTop = HeadTop + ?HEAD,
    NoteX = ?GUTTER + length(Cols) * ?COL + ?NOTE_GAP,
    %% The description column is as wide as the longest description needs
    %% (within bounds), so that descriptions are not cut where the chart
    %% can make room.
    Longest = lists:max([0 | [length(describe(St)) || St <- Trace ++ Cycle]]),
    NoteChars = min(?NOTE_MAX, max(?NOTE, Longest)),
    Width = NoteX + max(?DESC, NoteChars * ?NOTE_CHAR div 10 + 16),
    Xs = maps:from_list(lists:zip(Cols, [?GUTTER + I * ?COL + ?COL div 2
                                         || I <- lists:seq(0, length(Cols) - 1)])),
    S0 = #s{x = Xs, width = Width, note_x = NoteX, note_chars = NoteChars, y = LifeTop + 8,
            spawns = Spawns,
            ether_mode = ether_mode(Cex, Trace ++ Cycle),
            normal = case maps:get(options, Cex, #{}) of
                         #{treat_as_normal := Normal} when is_list(Normal) -> Normal;
                         _ -> [normal, shutdown]
                     end,
            procs = maps:from_list([{C, #proc{last = LifeTop}} || C <- Cols])},
    S1 = lists:foldl(fun step/2, S0, number(Trace, 1)),
    {CycleTop, S2} = case Cycle of
                         [] -> {none, S1};
                         _ -> {S1#s.y, lists:foldl(fun step/2, S1#s{y = S1#s.y + 20},
                                                   number(Cycle, length(Trace) + 1))}
                     end,
    EndY = S2#s.y,
    FinalTop = EndY + 26,
    S3 = leftovers(Ether, Cycle =/= [], EndY + 12, S2),
    FinalCols = [col(P, S3) || #{pid := P} <- Final],
    {Boxes, BoxesH} = final_boxes(Final, FinalTop + 18, S3),
    Height = FinalTop + 18 + BoxesH + 16,
    Title = flat(["Message sequence chart of ", entry_text(maps:get(entry, Cex, none))]),
    Steps = case Cycle of
                [] -> fmt(": ~b steps", [length(Trace)]);
                _ -> fmt(": ~b steps, then a cycle of ~b", [length(Trace), length(Cycle)])
            end,
    %% The caption's bold 14px letters are about 8px wide.
    Fit = max(?LABEL, (Width - 16) div 8),
    Viol = violation_text(Violation),
    Svg = ["<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"msc\" width=\"", i(Width),
           "\" height=\"", i(Height), "\" viewBox=\"0 0 ", i(Width), " ", i(Height), "\">\n",
           style(), defs(),
           rect("msc-background", 0, 0, Width, Height), "\n",
           text("msc-caption", 8, 20, "start", cut([Title, Steps], Fit), [Title, Steps]), "\n",
           text("msc-caption msc-violation", 8, 40, "start", cut(Viol, Fit), Viol), "\n",
           lists:reverse(S3#s.bg),
           cycle_band(CycleTop, EndY, Width),
           case ShowNodes of
               true -> node_bands(Nodes, Cols, Xs, ?CAPTION, LifeTop, FinalTop);
               false -> []
           end,
           [lifeline(C, LifeTop, EndY, FinalTop, FinalCols, S3) || C <- Cols],
           lists:reverse(S3#s.fg),
           [header(C, HeadTop, Final, S3) || C <- Cols],
           text("msc-heading", NoteX, HeadTop + 16, "start", "Steps"), "\n",
           text("msc-heading", 8, FinalTop + 10, "start",
                case {Cycle, Final} of
                    {[], []} -> "Final state: no processes";
                    {[], _} -> "Final state:";
                    {_, []} -> "State where the cycle starts: no processes";
                    {_, _} -> "State where the cycle starts:"
                end), "\n",
           Boxes,
           "</svg>"],
    {Svg, Title}.

%% The columns in order of first appearance, grouped by node (the nodes
%% also in order of first appearance); and the incarnation of each spawn's
%% child, in the order of the spawns.  A spawn of a pid seen before is a
%% new process that reuses it.
columns(Steps, Final, Ether) ->
    {Seen, Cur, Spawns} = lists:foldl(fun step_cols/2, {[], #{}, []}, Steps),
    Tail = [P || P <- [P || #{pid := P} <- Final]
                     ++ lists:append([[F, T] || #{from := F, to := T} <- Ether]),
                 is_pid(P)],
    Cols = dedup(lists:reverse(Seen) ++ [{P, maps:get(P, Cur, 0)} || P <- Tail]),
    {[C || N <- dedup([node(P) || {P, _} <- Cols]), {P, _} = C <- Cols, node(P) =:= N],
     lists:reverse(Spawns)}.

step_cols(Step, Acc) ->
    lists:foldl(fun({spawn, P}, {Seen, Cur, Spawns}) ->
                        N = case maps:find(P, Cur) of
                                {ok, K} -> K + 1;
                                error -> 0
                            end,
                        {[{P, N} | Seen], Cur#{P => N}, [N | Spawns]};
                   (P, {Seen, Cur, Spawns}) when is_pid(P) ->
                        case maps:find(P, Cur) of
                            {ok, N} -> {[{P, N} | Seen], Cur, Spawns};
                            error -> {[{P, 0} | Seen], Cur#{P => 0}, Spawns}
                        end;
                   (_, A) ->
                        A
                end, Acc, step_pids(Step)).

step_pids(#{kind := run, pid := P} = Step) ->
    [P | lists:flatmap(fun effect_pids/1, maps:get(effects, Step, []))];
step_pids(#{kind := deliver, from := F, to := T}) -> [F, T];
step_pids(#{kind := timer, to := T}) -> [T];
step_pids(#{kind := fault, fault := {kill, P}}) -> [P];
step_pids(_) -> [].

effect_pids({spawn, Child, _, _}) -> [{spawn, Child}];
effect_pids({send, To, _}) -> [To];
effect_pids({link, P}) -> [P];
effect_pids({unlink, P}) -> [P];
effect_pids({exit, P, _}) -> [P];
effect_pids({register, _, P}) -> [P];
effect_pids({monitor, What, _}) -> [What];
effect_pids({timer, _, Dest, _, _}) -> [Dest];
effect_pids(_) -> [].

%% Signals inside a node go through the ether only with `delivery =>
%% ether'; a delivery between two processes of one node shows it too, for
%% a counterexample that lost its options.
ether_mode(Cex, Steps) ->
    case maps:get(options, Cex, #{}) of
        #{delivery := ether} -> true;
        _ -> lists:any(fun(#{kind := deliver, from := F, to := T}) ->
                               is_pid(F) andalso is_pid(T) andalso F =/= T
                                   andalso node(F) =:= node(T);
                          (_) -> false
                       end, Steps)
    end.

number(Steps, First) ->
    lists:zip(lists:seq(First, First + length(Steps) - 1), Steps).

%%--------------------------------------------------------------------
%% Steps
%%--------------------------------------------------------------------

step({N, #{kind := run, pid := Pid} = Step}, S0) ->
    Action = maps:get(action, Step, none),
    Effects = maps:get(effects, Step, []),
    Output = maps:get(output, Step, []),
    Outcome = maps:get(outcome, Step, none),
    Drawn = [E || E <- Effects, drawn(E)],
    %% An exit with a reason other than normal tells it in a lane of its own.
    Reason = case Outcome of
                 {exit, normal} -> 0;
                 {exit, _} -> 1;
                 _ -> 0
             end,
    Lanes = 1 + length(Drawn) + length(Output) + Reason,
    Top = S0#s.y,
    S1 = row(N, Top, Lanes, Step, S0#s{spawned = []}),
    C = col(Pid, S1),
    X = x(C, S1),
    Y0 = lane_y(Top, 0),
    S2 = touch(C, Y0, action_call(Action), S1),
    S3 = fg([rect("msc-activation", X - 4, Top + 4, 8, Lanes * ?LANE - 8, describe(Step)),
             text(case Action of
                      {'receive', _} -> "msc-action msc-receive";
                      _ -> "msc-action"
                  end, X + 8, Y0 + 4, "start", cut(action_label(Action), ?NEAR),
                  action_full(Action))], S2),
    {S4, K} = lists:foldl(fun(E, {S, L}) ->
                                  case drawn(E) of
                                      true -> {effect(C, E, lane_y(Top, L), S), L + 1};
                                      false -> {bookkeep(C, E, S), L}
                                  end
                          end, {S3, 1}, Effects),
    {S5, K2} = lists:foldl(fun(O, {S, L}) ->
                                   Y = lane_y(Top, L),
                                   Full = "prints " ++ term(O),
                                   {fg(text("msc-output", X + 8, Y + 4, "start",
                                            cut(Full, ?NEAR), Full), S), L + 1}
                           end, {S4, K}, Output),
    S6 = outcome(C, Outcome, lane_y(Top, K2), Top + Lanes * ?LANE - 5, S5),
    S6#s{y = Top + Lanes * ?LANE};
step({N, #{kind := deliver, from := From, to := To, signal := Signal} = Step}, S0) ->
    Top = S0#s.y,
    S1 = row(N, Top, 1, Step, S0),
    Y = lane_y(Top, 0),
    Source = resolve(From, S1),
    Dest = resolve(To, S1),
    {Src, S2} = take_item(Source, To, Dest, Signal, Y, S1),
    S3 = arrive(["msc-deliver ", kind(Signal)], color(Signal), Src, Dest, To, Y, Signal,
                ["ether delivers ", signal_full(Signal), " from ", pid_text(From), " to ",
                 pid_text(To)], S2),
    S4 = case Signal of
             link -> link(Source, Dest, S3);
             unlink -> unlink(Source, Dest, S3);
             _ -> S3
         end,
    S4#s{y = Top + ?LANE};
step({N, #{kind := timer, ref := Ref, to := To, signal := Signal} = Step}, S0) ->
    Top = S0#s.y,
    S1 = row(N, Top, 1, Step, S0),
    Y = lane_y(Top, 0),
    Dest = resolve(To, S1),
    Src = case maps:find(Ref, S1#s.timers) of
              {ok, At} -> At;
              error -> {case x(Dest, S1) of undefined -> ?GUTTER; XD -> XD - 50 end, Y}
          end,
    S2 = arrive("msc-timer", "timer", Src, Dest, To, Y, Signal,
                ["timer ", term(Ref), " fires: delivers ", signal_full(Signal), " to ",
                 pid_text(To)], S1),
    S2#s{y = Top + ?LANE};
step({N, #{kind := fault, fault := Fault} = Step}, S0) ->
    Top = S0#s.y,
    Lanes = case Fault of
                {crash_node, _} -> 2;
                _ -> 1
            end,
    S1 = row(N, Top, Lanes, Step, S0),
    S2 = fault(Fault, lane_y(Top, 0), S1#s{faults = [{lane_y(Top, 0), Fault} | S1#s.faults]}),
    S2#s{y = Top + Lanes * ?LANE};
step({N, #{kind := stutter} = Step}, S0) ->
    Top = S0#s.y,
    S1 = row(N, Top, 1, Step, S0),
    S2 = fg(text("msc-stutter", (?GUTTER + S1#s.note_x) div 2, lane_y(Top, 0) + 4, "middle",
                 "(nothing moves: the run stays here)"), S1),
    S2#s{y = Top + ?LANE};
step({N, Step}, S0) ->
    Top = S0#s.y,
    S1 = row(N, Top, 1, Step, S0),
    S1#s{y = Top + ?LANE}.

%% The shaded band of a step, its number and its description.
row(N, Top, Lanes, Step, #s{width = W, note_x = NoteX, note_chars = NoteChars} = S) ->
    Y = lane_y(Top, 0) + 4,
    Class = case N rem 2 of
                0 -> "msc-row msc-row-even";
                1 -> "msc-row msc-row-odd"
            end,
    Full = describe(Step),
    S1 = bg([rect(Class, 0, Top, W, Lanes * ?LANE), "\n",
             text("msc-step-number", ?GUTTER - 10, Y, "end", integer_to_list(N))], S),
    fg(text("msc-note", NoteX, Y, "start", cut(Full, NoteChars), Full), S1).

lane_y(Top, K) ->
    Top + K * ?LANE + ?LANE div 2.

%% Effects that draw something in a lane of their own.
drawn({send, _, _}) -> true;
drawn({spawn, _, _, _}) -> true;
drawn({exit, _, _}) -> true;
drawn({link, _}) -> true;
drawn({unlink, _}) -> true;
drawn({monitor, _, _}) -> true;
drawn({demonitor, _, _}) -> true;
drawn({timer, _, _, _, _}) -> true;
drawn(_) -> false.

effect(Actor, {send, To, Msg}, Y, S) ->
    signal_out(Actor, To, {message, Msg}, Y, S);
effect(Actor, {exit, P, Reason}, Y, S) ->
    signal_out(Actor, P, {exit, Reason}, Y, S);
effect(Actor, {link, P}, Y, S) ->
    signal_out(Actor, P, link, Y, link(Actor, resolve(P, S), S));
effect(Actor, {unlink, P}, Y, S) ->
    signal_out(Actor, P, unlink, Y, unlink(Actor, resolve(P, S), S));
effect(Actor, {monitor, What, Ref}, Y, S) ->
    %% A monitor's ref may be an alias (gen:call's reply_demonitor).
    S1 = S#s{monitors = maps:put(Ref, What, S#s.monitors),
             aliases = maps:put(Ref, Actor, S#s.aliases)},
    signal_out(Actor, What, {monitor, Ref}, Y, S1);
effect(Actor, {demonitor, Ref, _Flush}, Y, S) ->
    signal_out(Actor, maps:get(Ref, S#s.monitors, {unknown, Ref}), {demonitor, Ref}, Y, S);
effect(Parent, {spawn, Child, Call, Link}, Y, #s{spawns = [K | Spawns]} = S0) ->
    C = {Child, K},
    S = S0#s{spawns = Spawns, cur = maps:put(Child, K, S0#s.cur), spawned = [C | S0#s.spawned]},
    XP = x(Parent, S),
    XC = x(C, S),
    Verb = case Link of true -> "spawn_link"; _ -> "spawn" end,
    End = case XC > XP of
              true -> XC - ?HALF_BOX;
              false -> XC + ?HALF_BOX
          end,
    Arrow = arrow("msc-spawn", "spawn", {XP, Y}, {End, Y}, [Verb, " ", call_label(Call)],
                  [pid_text(Parent), " ", Verb, "s ", pid_text(Child), " running ",
                   call_text(Call)]),
    Head = ["<g class=\"msc-head\">", title([pid_text(Child), " ", call_text(Call)]),
            rect("", XC - ?HALF_BOX, Y - 9, 2 * ?HALF_BOX, 18),
            text("", XC, Y + 4, "middle", pid_text(Child)), "</g>"],
    Procs = maps:update_with(C, fun(P) -> P#proc{start = Y + 9, last = Y + 9, call = Call}
                                end, S#s.procs),
    S1 = fg([Arrow, Head], S#s{procs = Procs}),
    case Link of
        true -> link(Parent, C, S1);
        _ -> S1
    end;
effect(Actor, {timer, Ref, Dest, Msg, Time}, Y, S) ->
    X = x(Actor, S),
    Full = fmt("starts a ~tp ms timer ~ts to send ~ts to ~ts",
               [Time, term(Ref), term(Msg), pid_text(Dest)]),
    fg(["<g class=\"msc-timer-set\">", title(Full),
        "<circle cx=\"", i(X), "\" cy=\"", i(Y), "\" r=\"5\"/>",
        text("", X + 10, Y + 4, "start", cut(fmt("timer ~tp ms", [Time]), ?NEAR)), "</g>"],
       S#s{timers = maps:put(Ref, {X, Y}, S#s.timers)}).

%% Effects that change only what later steps mean.
bookkeep(_Actor, {register, Name, Pid}, S) when is_pid(Pid) ->
    C = col(Pid, S),
    Procs = case maps:find(C, S#s.procs) of
                {ok, #proc{name = undefined} = P} -> maps:put(C, P#proc{name = Name}, S#s.procs);
                _ -> S#s.procs
            end,
    S#s{names = maps:put({Name, node(Pid)}, C, S#s.names), procs = Procs};
bookkeep({Pid, _}, {unregister, Name}, S) ->
    S#s{names = maps:remove({Name, node(Pid)}, S#s.names)};
bookkeep(Actor, {alias, Ref}, S) ->
    S#s{aliases = maps:put(Ref, Actor, S#s.aliases)};
bookkeep(_Actor, _Effect, S) ->
    S.

link({A, _} = CA, {B, _} = CB, S) when is_pid(A), is_pid(B) ->
    S#s{links = [{CA, CB} | S#s.links]};
link(_, _, S) ->
    S.

unlink(A, B, S) ->
    S#s{links = [L || L <- S#s.links, L =/= {A, B}, L =/= {B, A}]}.

linked(C, S) ->
    dedup([B || {A, B} <- S#s.links, A =:= C] ++ [A || {A, B} <- S#s.links, B =:= C]).

%% A signal leaves Actor: an arrow now when it arrives at once, else an
%% item in the ether that its delivery step (or the end) draws.
signal_out(Actor, To, Signal, Y, S) ->
    X = x(Actor, S),
    case target(Actor, To, Signal, S) of
        {col, C} ->
            case routed(Actor, C, S) andalso not at_once(Signal, C, S) of
                true -> into_ether(Actor, C, To, Signal, X, Y, S);
                false ->
                    arrive(["msc-instant ", kind(Signal)], color(Signal), {X, Y}, C, To, Y,
                           Signal, [pid_text(Actor), " sends ", signal_full(Signal), " to ",
                                    pid_text(To)], S)
            end;
        {later, T} ->
            into_ether(Actor, T, To, Signal, X, Y, S)
    end.

into_ether(Actor, Target, To, Signal, X, Y, S) ->
    Dot = ["<circle class=\"msc-send-point\" cx=\"", i(X), "\" cy=\"", i(Y), "\" r=\"3\">",
           title([pid_text(Actor), " sends ", signal_full(Signal), " to ", pid_text(To),
                  " (into the ether)"]), "</circle>"],
    fg(Dot, S#s{transit = S#s.transit ++ [#item{from = Actor, to = Target, signal = Signal,
                                                 at = {X, Y}}]}).

%% The runtime sets up a monitor of a process spawned in the same step at
%% once, wherever it is (as spawn_link links).
at_once({monitor, _}, C, S) -> lists:member(C, S#s.spawned);
at_once(_Signal, _C, _S) -> false.

%% Where a signal goes: a column, or a name or alias that the ether
%% resolves when it delivers (or that nothing resolves).  A monitor of a
%% name always goes through the ether.
target({Pid, _} = Actor, To, Signal, S) when is_atom(To) ->
    target(Actor, {To, node(Pid)}, Signal, S);
target({Pid, _}, {Name, Node} = To, Signal, S) when is_atom(Name), is_atom(Node) ->
    case Node =/= node(Pid) orelse S#s.ether_mode orelse is_monitor(Signal) of
        true -> {later, To};
        false ->
            case maps:find(To, S#s.names) of
                {ok, C} -> {col, C};
                error -> {later, To}
            end
    end;
target(_Actor, To, _Signal, S) ->
    case resolve(To, S) of
        {P, _} = C when is_pid(P) -> {col, C};
        _ -> {later, To}
    end.

is_monitor({monitor, _}) -> true;
is_monitor(_) -> false.

%% The column of a pid, name or alias (else the term itself).
resolve(P, S) when is_pid(P) ->
    col(P, S);
resolve({P, N} = C, _S) when is_pid(P), is_integer(N) ->
    C;
resolve(To, #s{names = Names, aliases = Aliases}) ->
    case maps:find(To, Names) of
        {ok, C} -> C;
        error -> maps:get(To, Aliases, To)
    end.

col(Pid, #s{cur = Cur}) ->
    {Pid, maps:get(Pid, Cur, 0)}.

routed({A, _} = From, {B, _} = To, #s{ether_mode = Ether}) ->
    From =/= To andalso (node(A) =/= node(B) orelse Ether).

%% The send of a delivered signal: the oldest in the ether from Source
%% with that signal to that destination.  Signals the runtime makes itself
%% (a link's exit signal, a 'DOWN') start where Source ended.
take_item(Source, To, Dest, Signal, Y, S) ->
    Match = fun(#item{from = F, to = T, signal = Sig}) ->
                    F =:= Source andalso Sig =:= Signal andalso
                        (T =:= To orelse T =:= Dest orelse not is_col(T))
            end,
    case lists:splitwith(fun(I) -> not Match(I) end, S#s.transit) of
        {Before, [#item{at = At} | After]} ->
            {At, S#s{transit = Before ++ After}};
        {_, []} ->
            At = case maps:find(Source, S#s.procs) of
                     {ok, #proc{stop = Stop}} when is_integer(Stop), Stop =< Y ->
                         {x(Source, S), Stop};
                     {ok, _} -> {x(Source, S), Y};
                     error -> {?GUTTER, Y}
                 end,
            {At, S}
    end.

is_col({P, N}) -> is_pid(P) andalso is_integer(N);
is_col(_) -> false.

%% The arrow of a signal arriving at Dest in lane Y, and what its arrival
%% means for the lifelines.
arrive(Classes, Color, Src, Dest, To, Y, Signal, Title, S) ->
    Label = case Color of
                "timer" -> ["timer: ", signal_label(Signal)];
                _ -> signal_label(Signal)
            end,
    case x(Dest, S) of
        undefined ->
            {X1, Y1} = Src,
            fg(arrow([Classes, " msc-unresolved"], "lost", Src, {X1 + 60, Y1},
                     [Label, " to ", short(To)], [Title, " (no such process)"]), S);
        XD ->
            S1 = fg(arrow(Classes, Color, Src, {XD, Y}, Label, Title), touch(Dest, Y, none, S)),
            case Signal of
                {exit, _} -> S1#s{hits = [{Dest, Y} | S1#s.hits]};
                {link_exit, _} -> S1#s{hits = [{Dest, Y} | S1#s.hits]};
                _ -> S1
            end
    end.

outcome(C, {exit, normal}, _LaneY, Bottom, S) ->
    X = x(C, S),
    fg(["<rect class=\"msc-end msc-normal\" x=\"", i(X - 10), "\" y=\"", i(Bottom - 2),
        "\" width=\"20\" height=\"4\">", title([pid_text(C), " exits normally"]), "</rect>"],
       stop(C, Bottom - 2, S));
outcome(C, {exit, Reason}, Y, Bottom, S) ->
    X = x(C, S),
    Full = [pid_text(C), " exits with reason ", full(Reason)],
    S1 = case expected(Reason, S) of
             true ->
                 fg(["<g class=\"msc-end msc-exit\">", title(Full),
                     rect("msc-normal", X - 10, Bottom - 2, 20, 4),
                     text("", X + 12, Y + 4, "start", cut(["exit: ", short(Reason)], ?LABEL)),
                     "</g>"], stop(C, Bottom - 2, S));
             false ->
                 fg(["<g class=\"msc-end msc-crash\">", title(Full), cross(X, Y),
                     text("", X + 12, Y + 4, "start", cut(["crash: ", short(Reason)], ?LABEL)),
                     "</g>"], stop(C, Y, S))
         end,
    killed(C, Y, S1);
outcome(_C, _Outcome, _LaneY, _Bottom, S) ->
    S.

%% An exit reason the check treats as normal (its treat_as_normal option,
%% as mce_search judges them); the result an rpc process carries.
expected(Reason, #s{normal = Normal}) ->
    mce_search:normal_reason(Reason, Normal).

%% C ended with a reason other than normal at Y: its links carry the exit signal, at once to
%% the processes whose signals do not go through the ether.
killed(C, Y, S) ->
    Hits = [{Q, Y} || Q <- linked(C, S), not routed(C, Q, S)],
    S#s{hits = Hits ++ S#s.hits}.

fault({crash_node, Node}, Y, S) ->
    Victims = [C || {P, _} = C <- alive(Y, S), node(P) =:= Node],
    S1 = lists:foldl(fun(C, Acc) -> killed(C, Y + ?LANE, stop(C, Y + ?LANE, Acc)) end,
                     S, Victims),
    {X1, X2} = span([C || {P, _} = C <- maps:keys(S#s.x), node(P) =:= Node], S),
    Text = fmt("FAULT: node ~tp crashes", [Node]),
    fg(["<g class=\"msc-fault msc-crash-node\">", title(Text),
        rect("", X1 - ?COL div 2 + 4, Y - 10, X2 - X1 + ?COL - 8, ?LANE + 20),
        text("msc-fault-label", (X1 + X2) div 2, Y + 4, "middle", Text),
        [cross(x(C, S), Y + ?LANE) || C <- Victims], "</g>"], S1);
fault({kill, Pid}, Y, S) ->
    C = col(Pid, S),
    X = x(C, S),
    Text = ["FAULT: process ", pid_text(Pid), " is killed"],
    S1 = case lists:member(C, alive(Y, S)) of
             true -> killed(C, Y, stop(C, Y, S));
             false -> S
         end,
    fg(["<g class=\"msc-fault msc-kill\">", title(Text), cross(X, Y),
        text("msc-fault-label", X + 12, Y + 4, "start", "killed (fault)"), "</g>"], S1);
fault({Kind, A, B} = Fault, Y, S) when Kind =:= disconnect; Kind =:= reconnect ->
    {X1, X2} = span([C || {P, _} = C <- maps:keys(S#s.x), node(P) =:= A orelse node(P) =:= B],
                    S),
    Text = fault_text(Fault),
    fg(["<g class=\"msc-fault msc-", atom_to_list(Kind), "\">", title(Text),
        line("", X1, Y + 6, X2, Y + 6),
        text("msc-fault-label", (X1 + X2) div 2, Y + 2, "middle", Text), "</g>"], S);
fault(Fault, Y, #s{note_x = NoteX} = S) ->
    Text = fault_text(Fault),
    fg(["<g class=\"msc-fault\">", title(Text),
        text("msc-fault-label", (?GUTTER + NoteX) div 2, Y + 4, "middle", cut(Text, ?NOTE)),
        "</g>"], S).

%% The leftmost and rightmost lifelines among Cols (all when none).
span([], #s{x = Xs}) when map_size(Xs) =:= 0 ->
    {?GUTTER + ?COL div 2, ?GUTTER + ?COL div 2};
span([], #s{x = Xs} = S) ->
    span(maps:keys(Xs), S);
span(Cols, S) ->
    Xs = [x(C, S) || C <- Cols],
    {lists:min(Xs), lists:max(Xs)}.

alive(Y, #s{procs = Procs}) ->
    [C || {C, #proc{start = Start, stop = none}} <- maps:to_list(Procs),
          Start =:= top orelse Start =< Y].

touch(C, Y, Call, S) ->
    case maps:find(C, S#s.procs) of
        {ok, #proc{last = Last, call = Old} = P} ->
            New = case Old of undefined -> Call; _ -> Old end,
            S#s{procs = maps:put(C, P#proc{last = max(Last, Y), call = New}, S#s.procs)};
        error ->
            S
    end.

stop(C, Y, S) ->
    S#s{procs = maps:update_with(C, fun(P) -> P#proc{stop = Y} end, S#s.procs)}.

%% The signals still in the ether at the end: those the final state holds
%% (and, in a lasso, those the cycle keeps sending) are in transit; a
%% fault lost the others.  Then what the ether holds that no step sent
%% (signals the runtime makes).
leftovers(Ether, Lasso, Bottom, S) ->
    Held = [{resolve(F, S), T, Sig} || #{from := F, to := T, signals := Sigs} <- Ether,
                                        Sig <- Sigs],
    {S1, Rest} = lists:foldl(fun(Item, {Acc, H}) -> leftover(Item, Lasso, Bottom, H, Acc) end,
                             {S, Held}, S#s.transit),
    lists:foldl(
      fun({From, To, Signal}, Acc) ->
              {At, _} = take_item(From, To, To, Signal, Bottom, Acc#s{transit = []}),
              arrive(["msc-transit ", kind(Signal)], color(Signal), At, resolve(To, Acc), To,
                     Bottom, Signal, [signal_full(Signal), " from ", pid_text(From), " to ",
                                      pid_text(To), " (still in the ether)"], Acc)
      end, S1#s{transit = []}, Rest).

leftover(#item{from = From, to = To, signal = Signal, at = {X, Y} = At}, Lasso, Bottom, Held,
         S) ->
    Dest = resolve(To, S),
    {InEther, Held1} = case [H || {F, _, Sig} = H <- Held, F =:= From, Sig =:= Signal] of
                           [H | _] -> {true, lists:delete(H, Held)};
                           [] -> {false, Held}
                       end,
    Title = [pid_text(From), " sends ", signal_full(Signal), " to ", pid_text(To)],
    Lost = [FY || {FY, Fault} <- lists:reverse(S#s.faults), FY > Y, loses(Fault, From, Dest)],
    S1 = case x(Dest, S) of
             undefined ->
                 fg(arrow(["msc-unresolved ", kind(Signal)], "lost", At, {X + 60, Y},
                          [signal_label(Signal), " to ", short(To)],
                          [Title, " (no such process)"]), S);
             XD when InEther; Lasso; Lost =:= [] ->
                 fg(arrow(["msc-transit ", kind(Signal)], color(Signal), At, {XD, Bottom},
                          signal_label(Signal), [Title, " (still in the ether)"]), S);
             XD ->
                 %% The mark stands just above the fault's row, clear of
                 %% its box and label (a crash's box starts 10 above its
                 %% lane's middle; the cross is 12 high).
                 XL = X + (XD - X) div 2,
                 YL = hd(Lost) - 18,
                 fg(["<g class=\"msc-lost-mark\">", title([Title, " (lost)"]), cross(XL, YL),
                     "</g>"],
                    fg(arrow(["msc-lost ", kind(Signal)], "lost", At, {XL, YL},
                             signal_label(Signal), [Title, " (lost)"]), S))
         end,
    {S1, Held1}.

%% A fault that may lose a signal between two columns' nodes.
loses({crash_node, N}, {A, _}, {B, _}) -> N =:= node(A) orelse N =:= node(B);
loses({disconnect, N1, N2}, {A, _}, {B, _}) ->
    lists:sort([N1, N2]) =:= lists:sort([node(A), node(B)]);
loses({kill, P}, _From, {B, _}) -> P =:= B;
loses(_Fault, _From, _To) -> false.

%%--------------------------------------------------------------------
%% Lifelines, headers, the final state
%%--------------------------------------------------------------------

lifeline(C, LifeTop, EndY, FinalTop, FinalCols, S) ->
    #proc{start = Start, last = Last, stop = Stop} = maps:get(C, S#s.procs),
    X = x(C, S),
    Y1 = case Start of
             top -> LifeTop;
             _ -> Start
         end,
    {Y2, Mark} =
        case Stop of
            none ->
                case lists:member(C, FinalCols) of
                    true -> {FinalTop, []};
                    false -> gone(C, X, Last, EndY, S)
                end;
            _ -> {Stop, []}
        end,
    [case Y1 > LifeTop of
         true -> [line("msc-guide", X, LifeTop, X, Y1), "\n"];
         false -> []
     end,
     "<line class=\"msc-lifeline\" x1=\"", i(X), "\" y1=\"", i(Y1), "\" x2=\"", i(X),
     "\" y2=\"", i(max(Y1, Y2)), "\">", title(pid_text(C)), "</line>\n", Mark].

%% A process that is not in the final state though no step ended it: an
%% exit signal that reached it after its last step killed it; else it
%% ended somewhere the trace does not show.
gone(C, X, Last, EndY, S) ->
    case lists:sort([Y || {Q, Y} <- S#s.hits, Q =:= C, Y >= Last]) of
        [Y | _] ->
            {Y, ["<g class=\"msc-end msc-gone\">",
                 title([pid_text(C), " ends: an exit signal killed it"]), cross(X, Y),
                 text("", X + 12, Y + 4, "start", "killed by exit signal"), "</g>\n"]};
        [] ->
            Y = EndY - 4,
            {Y, ["<g class=\"msc-end msc-gone\">",
                 title([pid_text(C), " is not alive at the end"]), cross(X, Y), "</g>\n"]}
    end.

header({Pid, K} = C, Top, Final, S) ->
    #proc{name = Name0, call = Call} = maps:get(C, S#s.procs),
    X = x(C, S),
    Name = case [N || #{pid := P, name := N} <- Final, col(P, S) =:= C, N =/= undefined] of
               [N | _] -> N;
               [] -> Name0
           end,
    NameText = case Name of
                   undefined -> "";
                   _ -> fmt("~tp", [Name])
               end,
    CallText = case Call of
                   undefined -> "";
                   _ -> call_text(Call)
               end,
    Reused = case K of
                 0 -> [];
                 _ -> [fmt("(process ~b with this pid)", [K + 1])]
             end,
    ["<g class=\"msc-header\">",
     title(lists:join(" ", [pid_text(Pid) | [T || T <- [NameText, CallText], T =/= ""]]
                      ++ Reused)),
     rect("", X - ?COL div 2 + 6, Top + 4, ?COL - 12, ?HEAD - 8),
     text("msc-pid", X, Top + 18, "middle", [pid_text(Pid) | lists:duplicate(K, $')]),
     text("msc-name", X, Top + 31, "middle", cut(NameText, ?NEAR)),
     text("msc-call", X, Top + 43, "middle", cut(CallText, ?NEAR + 2)),
     "</g>\n"].

node_bands(Nodes, Cols, Xs, Top, LifeTop, FinalTop) ->
    [begin
         Cs = [maps:get(C, Xs) || {P, _} = C <- Cols, node(P) =:= Node],
         X1 = lists:min(Cs) - ?COL div 2 + 2,
         X2 = lists:max(Cs) + ?COL div 2 - 2,
         ["<g class=\"msc-node\">", title(fmt("node ~tp", [Node])),
          rect("msc-node-band", X1, Top, X2 - X1, ?BAND),
          line("msc-node-edge", X1, LifeTop, X1, FinalTop),
          text("msc-node-name", (X1 + X2) div 2, Top + 15, "middle",
               cut(fmt("~tp", [Node]), 2 * ?NEAR)), "</g>\n"]
     end || Node <- Nodes].

cycle_band(none, _EndY, _Width) ->
    [];
cycle_band(Top, EndY, Width) ->
    ["<g class=\"msc-cycle\">", title("these steps repeat forever"),
     rect("msc-cycle-band", 1, Top, Width - 2, EndY - Top + 2),
     text("msc-cycle-label", ?GUTTER, Top + 14, "start",
          [8635, " cycle: the steps below repeat forever"]),
     "<path class=\"msc-cycle-back\" d=\"M14 ", i(EndY - 4), " V", i(Top + 24),
     "\" marker-end=\"url(#msc-head-cycle)\"/>",
     "</g>\n"].

%% The processes of the final state: where each stands, its mailbox.
final_boxes(Final, Top, S) ->
    Boxes = [final_box(F, col(P, S), Top, S) || #{pid := P} = F <- Final,
                                               x(col(P, S), S) =/= undefined],
    {[B || {B, _} <- Boxes], lists:max([0 | [H || {_, H} <- Boxes]])}.

final_box(#{pid := Pid} = F, C, Top, S) ->
    X = x(C, S),
    Status = status_lines(maps:get(status, F, undefined), maps:get(where, F, undefined)),
    Mailbox = maps:get(mailbox, F, []),
    Shown = lists:sublist(Mailbox, ?MAILBOX),
    More = case length(Mailbox) - length(Shown) of
               0 -> [];
               K -> [{"msc-mailbox", fmt("+~b more", [K]), ""}]
           end,
    StatusTitle = case maps:get(status, F, undefined) of
                      waiting -> flat([pid_text(Pid), " blocked in receive",
                                       where_text(maps:get(where, F, undefined))]);
                      _ -> flat([pid_text(Pid), " ", lists:join(" ", Status)])
                  end,
    Lines = [{"msc-status", L, StatusTitle} || L <- Status]
        ++ [case Mailbox of
                [] -> {"msc-mailbox-head", "mailbox empty", ""};
                _ -> {"msc-mailbox-head", "mailbox:", ""}
            end]
        ++ [{"msc-mailbox", short(M), full(M)} || M <- Shown] ++ More,
    H = 10 + length(Lines) * ?MAIL_LINE,
    Texts = [text(Class, X - ?COL div 2 + 12, Top + 4 + K * ?MAIL_LINE, "start",
                  cut(Short, ?NEAR), Full)
             || {K, {Class, Short, Full}} <- number(Lines, 1)],
    {["<g class=\"msc-final\">", rect("", X - ?COL div 2 + 6, Top, ?COL - 12, H), Texts,
      "</g>\n"], H}.

%%--------------------------------------------------------------------
%% SVG pieces
%%--------------------------------------------------------------------

style() ->
    ["<style>\n",
     ".msc text{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;font-size:11px;fill:#222}\n"
     ".msc .msc-background{fill:#fff}\n"
     ".msc .msc-caption{font-size:14px;font-weight:bold}\n"
     ".msc .msc-violation{fill:#b00000}\n"
     ".msc .msc-heading{font-weight:bold;fill:#444}\n"
     ".msc .msc-row-odd{fill:#f4f6f9}.msc .msc-row-even{fill:#fff}\n"
     ".msc .msc-step-number{fill:#777}\n"
     ".msc .msc-note{font-family:'DejaVu Sans Mono',monospace;font-size:10.5px}\n"
     ".msc .msc-node-band{fill:#e2ebf6;stroke:#8ea8cc}\n"
     ".msc .msc-node-edge{stroke:#c9d6e8;stroke-dasharray:8 4}\n"
     ".msc .msc-node-name{font-weight:bold;fill:#2c4a75}\n"
     ".msc .msc-header rect{fill:#fff;stroke:#333}\n"
     ".msc .msc-pid{font-weight:bold}.msc .msc-name{fill:#1a5a1a}.msc .msc-call{fill:#555;font-size:10px}\n"
     ".msc .msc-lifeline{stroke:#555;stroke-width:1.5}\n"
     ".msc .msc-guide{stroke:#bbb;stroke-dasharray:2 4}\n"
     ".msc .msc-activation{fill:#dbe6f6;stroke:#5a7bb0}\n"
     ".msc .msc-action{font-size:10px;fill:#333}\n"
     ".msc .msc-output{font-size:10px;font-style:italic;fill:#0a6a0a}\n"
     ".msc .msc-head rect{fill:#fff;stroke:#555}.msc .msc-head text{font-size:10px}\n"
     ".msc .msc-arrow line,.msc .msc-arrow path{fill:none;stroke-width:1.4}\n"
     ".msc .msc-message line,.msc .msc-message path{stroke:#1f5fbf}\n"
     ".msc .msc-signal line,.msc .msc-signal path{stroke:#c05a00;stroke-dasharray:5 2}\n"
     ".msc .msc-spawn line,.msc .msc-spawn path{stroke:#666;stroke-dasharray:6 3}\n"
     ".msc .msc-timer line,.msc .msc-timer path{stroke:#7b3fa0;stroke-dasharray:2 2}\n"
     ".msc .msc-transit line{stroke-dasharray:3 3;opacity:.75}\n"
     ".msc .msc-lost line,.msc .msc-unresolved line{stroke:#c00}\n"
     ".msc .msc-arrow:hover line,.msc .msc-arrow:hover path{stroke-width:3}\n"
     ".msc .msc-label{font-size:10px;paint-order:stroke;stroke:#fff;stroke-width:3px;"
     "stroke-linejoin:round}\n"
     ".msc .msc-send-point{fill:#1f5fbf}\n"
     ".msc .msc-timer-set circle{fill:none;stroke:#7b3fa0}.msc .msc-timer-set text{font-size:10px;"
     "fill:#7b3fa0}\n"
     ".msc .msc-normal{fill:#222}\n"
     ".msc .msc-cross{stroke:#d00000;stroke-width:3}\n"
     ".msc .msc-crash text{fill:#b00000;font-weight:bold;font-size:10px}\n"
     ".msc .msc-gone .msc-cross{stroke:#999}\n"
     ".msc .msc-fault rect{fill:#ffd6d6;stroke:#d00000}\n"
     ".msc .msc-fault line{stroke:#d00000;stroke-width:2;stroke-dasharray:6 3}\n"
     ".msc .msc-reconnect line{stroke:#2a8a2a}\n"
     ".msc .msc-fault-label{fill:#b00000;font-weight:bold}\n"
     ".msc .msc-reconnect .msc-fault-label{fill:#2a6a2a}\n"
     ".msc .msc-stutter{fill:#888;font-style:italic}\n"
     ".msc .msc-cycle-band{fill:#fff3c4;fill-opacity:.55;stroke:#d9a800;stroke-dasharray:6 3}\n"
     ".msc .msc-cycle-label{fill:#8a6a00;font-weight:bold}\n"
     ".msc .msc-cycle-back{fill:none;stroke:#d9a800;stroke-width:2}\n"
     ".msc .msc-final rect{fill:#fffbe6;stroke:#b8a040}\n"
     ".msc .msc-status{font-size:10px;font-weight:bold}.msc .msc-mailbox{font-size:10px}\n",
     "</style>\n"].

defs() ->
    ["<defs>",
     [["<marker id=\"msc-head-", Name, "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
       "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
       "<path d=\"M0,0 L10,5 L0,10 z\" fill=\"", Color, "\"/></marker>"]
      || {Name, Color} <- [{"message", "#1f5fbf"}, {"signal", "#c05a00"}, {"spawn", "#666"},
                           {"timer", "#7b3fa0"}, {"lost", "#c00"}, {"cycle", "#d9a800"}]],
     "</defs>\n"].

arrow(Classes, Color, {X1, Y1}, {X2, Y2}, Label, Title) ->
    Marker = ["url(#msc-head-", Color, ")"],
    {Shape, LX, LY, Anchor, Fit} =
        case X1 =:= X2 of
            true ->
                %% To itself: a loop on the right of the lifeline.
                {Ya, Yb} = case Y1 =:= Y2 of
                               true -> {Y1 - 6, Y1 + 6};
                               false -> {Y1, Y2}
                           end,
                {["<path d=\"M", i(X1), " ", i(Ya), " h36 V", i(Yb), " h-34\" marker-end=\"",
                  Marker, "\"/>"], X1 + 42, (Ya + Yb) div 2 + 4, "start", ?LABEL};
            false ->
                {["<line x1=\"", i(X1), "\" y1=\"", i(Y1), "\" x2=\"", i(X2), "\" y2=\"", i(Y2),
                  "\" marker-end=\"", Marker, "\"/>"],
                 (X1 + X2) div 2, (Y1 + Y2) div 2 - 4, "middle",
                 %% as much as the arrow's length holds, at least ?LABEL
                 min(?LABEL_MAX, max(?LABEL, (abs(X2 - X1) - 16) * 10 div ?LABEL_CHAR))}
        end,
    ["<g class=\"msc-arrow ", Classes, "\">", title(Title), Shape,
     text("msc-label", LX, LY, Anchor, cut(Label, Fit)), "</g>\n"].

cross(X, Y) ->
    ["<path class=\"msc-cross\" d=\"M", i(X - 6), " ", i(Y - 6), " l12 12 M", i(X + 6), " ",
     i(Y - 6), " l-12 12\"/>"].

rect(Class, X, Y, W, H) ->
    ["<rect", class(Class), " x=\"", i(X), "\" y=\"", i(Y), "\" width=\"", i(W),
     "\" height=\"", i(H), "\"/>"].

rect(Class, X, Y, W, H, Title) ->
    ["<rect", class(Class), " x=\"", i(X), "\" y=\"", i(Y), "\" width=\"", i(W),
     "\" height=\"", i(H), "\">", title(Title), "</rect>"].

line(Class, X1, Y1, X2, Y2) ->
    ["<line", class(Class), " x1=\"", i(X1), "\" y1=\"", i(Y1), "\" x2=\"", i(X2),
     "\" y2=\"", i(Y2), "\"/>"].

text(Class, X, Y, Anchor, Text) ->
    ["<text", class(Class), " x=\"", i(X), "\" y=\"", i(Y), "\" text-anchor=\"", Anchor, "\">",
     esc(Text), "</text>"].

text(Class, X, Y, Anchor, Text, Title) ->
    ["<text", class(Class), " x=\"", i(X), "\" y=\"", i(Y), "\" text-anchor=\"", Anchor, "\">",
     title(Title), esc(Text), "</text>"].

title(Text) ->
    ["<title>", esc(Text), "</title>"].

class("") -> "";
class(Class) -> [" class=\"", Class, "\""].

i(N) -> integer_to_list(N).

bg(Elem, S) -> S#s{bg = [Elem | S#s.bg]}.
fg(Elem, S) -> S#s{fg = [Elem | S#s.fg]}.

x(Pid, #s{x = Xs}) ->
    maps:get(Pid, Xs, undefined).

%%--------------------------------------------------------------------
%% Text
%%--------------------------------------------------------------------

describe(#{kind := run, pid := Pid} = Step) ->
    Parts = [action_text(maps:get(action, Step, none))]
        ++ [effect_text(E) || E <- maps:get(effects, Step, [])]
        ++ ["prints " ++ term(O) || O <- maps:get(output, Step, [])]
        ++ [["probe ", term(L), ": ", term(T)] || {L, T} <- maps:get(probes, Step, [])]
        ++ [outcome_text(maps:get(outcome, Step, none))],
    flat([pid_text(Pid), " ", lists:join("; ", Parts)]);
describe(#{kind := deliver, from := From, to := To, signal := Signal}) ->
    flat(["ether delivers ", signal_text(Signal), " from ", pid_text(From), " to ",
          pid_text(To)]);
describe(#{kind := timer, ref := Ref, to := To, signal := Signal}) ->
    flat(["timer ", term(Ref), " fires: delivers ", signal_text(Signal), " to ", pid_text(To)]);
describe(#{kind := fault, fault := Fault}) ->
    fault_text(Fault);
describe(#{kind := stutter}) ->
    "(no process or channel can move: the run stays here)";
describe(Step) ->
    term(Step).

action_text({start, Call}) -> ["starts ", call_text(Call)];
action_text(timeout) -> "times out in receive";
action_text(resume) -> "continues";
action_text({choice, I}) -> fmt("takes alternative ~tp of mcerlang:choice/1", [I]);
action_text({prop_passed, T}) -> ["passes mcerlang:prop(", term(T), ")"];
action_text({'receive', {'$call', Caller, Request}}) ->
    ["receives call ", term(Request), " from ", pid_text(Caller)];
action_text({'receive', {'$reply', Reply}}) -> ["gets reply ", term(Reply)];
action_text({'receive', Msg}) -> ["receives ", term(Msg)];
action_text(Other) -> term(Other).

action_full({'receive', Msg}) -> ["receives ", full(Msg)];
action_full(Action) -> action_text(Action).

action_label({start, Call}) -> ["start ", call_label(Call)];
action_label({'receive', {'$call', _Caller, Request}}) -> ["recv call ", short(Request)];
action_label({'receive', {'$reply', Reply}}) -> ["recv reply ", short(Reply)];
action_label({'receive', Msg}) -> ["recv ", short(Msg)];
action_label({choice, I}) -> fmt("choice ~tp", [I]);
action_label({prop_passed, T}) -> ["prop ", short(T)];
action_label(timeout) -> "timeout";
action_label(resume) -> "continues";
action_label(Other) -> short(Other).

action_call({start, Call}) -> Call;
action_call(_) -> undefined.

effect_text({send, To, {'$call', _Caller, Request}}) ->
    ["calls ", pid_text(To), " with ", term(Request)];
effect_text({send, To, {'$reply', Reply}}) -> ["replies ", term(Reply), " to ", pid_text(To)];
effect_text({send, To, Msg}) -> ["sends ", term(Msg), " to ", pid_text(To)];
effect_text({spawn, Child, Call, Link}) ->
    [case Link of true -> "spawn_links "; _ -> "spawns " end, pid_text(Child), " running ",
     call_text(Call)];
effect_text({link, Pid}) -> ["links to ", pid_text(Pid)];
effect_text({unlink, Pid}) -> ["unlinks from ", pid_text(Pid)];
effect_text({exit, Pid, Reason}) -> ["sends exit signal ", term(Reason), " to ", pid_text(Pid)];
effect_text({register, Name, Pid}) -> ["registers ", pid_text(Pid), " as ", term(Name)];
effect_text({unregister, Name}) -> ["unregisters ", term(Name)];
effect_text({monitor, What, _Ref}) -> ["monitors ", pid_text(What)];
effect_text({demonitor, _Ref, _Flush}) -> "demonitors";
effect_text({monitor_node, Node, true}) -> ["monitors node ", term(Node)];
effect_text({monitor_node, Node, false}) -> ["stops monitoring node ", term(Node)];
effect_text({timer, _Ref, Dest, Msg, Time}) ->
    ["starts a ", term(Time), " ms timer to send ", term(Msg), " to ", pid_text(Dest)];
effect_text({cancel_timer, Ref}) -> ["cancels timer ", term(Ref)];
effect_text({alias, Ref}) -> ["makes alias ", term(Ref)];
effect_text({unalias, Ref}) -> ["removes alias ", term(Ref)];
effect_text({unique, _}) -> "takes a unique integer";
effect_text({trap_exit, Flag}) -> ["sets trap_exit to ", term(Flag)];
effect_text({group_leader, Pid, Leader}) -> ["sets the group leader of ", pid_text(Pid), " to ", pid_text(Leader)];
effect_text(Other) -> term(Other).

outcome_text({waiting, Where}) -> ["waits in receive", where_text(Where)];
outcome_text(yielded) -> "yields (granularity small)";
outcome_text({choosing, N}) -> fmt("reaches mcerlang:choice/1 with ~tp alternatives", [N]);
outcome_text({prop, T}) -> ["stands at mcerlang:prop(", term(T), ")"];
outcome_text({exit, normal}) -> "exits normally";
outcome_text({exit, Reason}) -> ["exits with reason ", term(Reason)];
outcome_text(Other) -> term(Other).

status_lines(init, _Where) -> ["not started yet"];
status_lines(choosing, _Where) -> ["at mcerlang:choice/1"];
status_lines(waiting, {_M, _F, _A, File, Line}) when is_integer(Line), Line > 0 ->
    ["blocked in receive", fmt("at ~ts:~b", [filename:basename(File), Line])];
status_lines(waiting, {M, F, A, _, _}) ->
    ["blocked in receive", fmt("in ~tp:~tp/~tp", [M, F, A])];
status_lines(waiting, _Where) -> ["blocked in receive"];
status_lines(Other, _Where) -> [term(Other)].

where_text({M, F, A, File, Line}) when is_integer(Line), Line > 0 ->
    fmt(" at ~ts:~b (~tp:~tp/~tp)", [filename:basename(File), Line, M, F, A]);
where_text({M, F, A, _, _}) ->
    fmt(" in ~tp:~tp/~tp", [M, F, A]);
where_text(_) ->
    "".

signal_text(Signal) -> signal_text(Signal, fun term/1).

%% For hovering: every term whole.
signal_full(Signal) -> signal_text(Signal, fun full/1).

signal_text({message, {'$call', _Caller, Request}}, T) -> ["call ", T(Request)];
signal_text({message, {'$reply', Reply}}, T) -> ["reply ", T(Reply)];
signal_text({message, Msg}, T) -> ["message ", T(Msg)];
signal_text({exit, Reason}, T) -> ["exit signal ", T(Reason)];
signal_text({link_exit, Reason}, T) -> ["exit signal (link) ", T(Reason)];
signal_text(link, _T) -> "link request";
signal_text(unlink, _T) -> "unlink request";
signal_text({monitor, Ref}, T) -> ["monitor request ", T(Ref)];
signal_text({demonitor, Ref}, T) -> ["demonitor request ", T(Ref)];
signal_text({down, Ref, Reason}, T) -> ["'DOWN' ", T(Ref), " ", T(Reason)];
signal_text(Other, T) -> T(Other).

%% The label on an arrow; its title carries the whole signal.
signal_label({message, {'$call', _Caller, Request}}) -> ["call ", long(Request)];
signal_label({message, {'$reply', Reply}}) -> ["reply ", long(Reply)];
signal_label({message, Msg}) -> long(Msg);
signal_label({exit, Reason}) -> ["exit ", long(Reason)];
signal_label({link_exit, Reason}) -> ["EXIT (link) ", long(Reason)];
signal_label({down, _Ref, Reason}) -> ["DOWN ", long(Reason)];
signal_label({Kind, _Ref}) when Kind =:= monitor; Kind =:= demonitor -> atom_to_list(Kind);
signal_label(Other) -> short(Other).

kind({message, _}) -> "msc-message";
kind(_) -> "msc-signal".

color({message, _}) -> "message";
color(_) -> "signal".

fault_text({crash_node, Node}) -> fmt("FAULT: node ~tp crashes", [Node]);
fault_text({disconnect, A, B}) -> fmt("FAULT: nodes ~tp and ~tp disconnect", [A, B]);
fault_text({reconnect, A, B}) -> fmt("FAULT: nodes ~tp and ~tp reconnect", [A, B]);
fault_text({kill, Pid}) -> flat(["FAULT: process ", pid_text(Pid), " is killed"]);
fault_text(Other) -> flat(["FAULT: ", term(Other)]).

violation_text(deadlock) ->
    "Violation: deadlock (processes are alive but none can move)";
violation_text({abnormal_exit, Pid, Reason}) ->
    flat(["Violation: process ", pid_text(Pid), " exited abnormally: ",
          cut(term(Reason), 3 * ?LABEL)]);
violation_text({ltl, Formula}) ->
    flat(["Violation: the LTL property ", cut(fmt("~ts", [Formula]), 3 * ?LABEL),
          " fails on this run (the cycle repeats forever)"]);
violation_text({invariant, F}) ->
    flat(["Violation: invariant ", term(F), " does not hold"]);
violation_text({monitor, M, Verdict}) ->
    flat(["Violation: monitor ", term(M), " says ", cut(term(Verdict), 3 * ?LABEL)]);
violation_text(Other) ->
    flat(["Violation: ", cut(term(Other), 3 * ?LABEL)]).

entry_text({M, F, Args}) when is_atom(M), is_atom(F), is_list(Args) ->
    fmt("~tp:~tp(~ts)", [M, F, lists:join(",", [fmt("~0tP", [A, ?DEPTH]) || A <- Args])]);
entry_text(none) ->
    "a counterexample";
entry_text(Other) ->
    short(Other).

%% What a process runs: its initial call; for a process proc_lib starts,
%% what it starts (a gen_server, gen_statem or supervisor: the behaviour
%% and the callback module).
call_text({M, init_p, [_Parent, _Ancestors | Start]}) when M =:= proc_lib; M =:= 'mce$proc_lib' ->
    case Start of
        [gen, init_it, [GenMod, _Starter, _Parent2 | Rest]]
          when length(Rest) =:= 3; length(Rest) =:= 4 ->
            case lists:nthtail(length(Rest) - 3, Rest) of
                [supervisor, {_, Mod, _}, _] when GenMod =:= gen_server, is_atom(Mod) ->
                    fmt("supervisor ~tp", [original(Mod)]);
                [Mod, _, _] when is_atom(GenMod), is_atom(Mod) ->
                    fmt("~tp ~tp", [original(GenMod), original(Mod)]);
                _ -> fmt("gen:init_it/~b", [3 + length(Rest)])
            end;
        [Mod, F, Args] when is_atom(Mod), is_atom(F), is_list(Args) -> call_text({Mod, F, Args});
        [Fun] when is_function(Fun) -> call_text(Fun);
        _ -> fmt("proc_lib:init_p/~b", [2 + length(Start)])
    end;
call_text({M, F, Args}) when is_atom(M), is_list(Args) ->
    fmt("~tp:~tp/~b", [original(M), F, length(Args)]);
call_text(Fun) when is_function(Fun) ->
    {module, M} = erlang:fun_info(Fun, module),
    {name, Name0} = erlang:fun_info(Fun, name),
    %% The translation moves funs into generated functions; the translated
    %% module knows their original names (as in mce_format).
    {OM, Name} = case erlang:function_exported(M, '$mce_info', 1) of
                     true ->
                         case M:'$mce_info'({'fun', Name0}) of
                             {OrigM, OrigName, _, _, _} when is_atom(OrigM), is_atom(OrigName) ->
                                 {OrigM, OrigName};
                             _ -> {original(M), Name0}
                         end;
                     false -> {original(M), Name0}
                 end,
    %% The compiler names a fun after the function it is in: -F/A-fun-N-.
    case is_atom(Name) andalso re:run(atom_to_list(Name), "^-(.+)/([0-9]+)-fun-[0-9]+-$",
                                      [unicode, {capture, all_but_first, list}]) of
        {match, [F, A]} when hd(F) =/= $$ -> fmt("fun in ~tp:~ts/~ts", [OM, F, A]);
        _ -> fmt("fun in ~tp", [OM])
    end;
call_text(Other) ->
    short(Other).

%% A call without its module, where the column's header names it.
call_label({M, init_p, Args} = Call) when is_list(Args), (M =:= proc_lib orelse
                                                          M =:= 'mce$proc_lib') ->
    call_text(Call);
call_label({_M, F, Args}) when is_list(Args) -> fmt("~tp/~b", [F, length(Args)]);
call_label(Fun) when is_function(Fun) -> "fun";
call_label(Other) -> short(Other).

%% Translated modules are named mce$Module; users know them as Module.
original(M) ->
    case atom_to_list(M) of
        "mce$" ++ Orig -> list_to_atom(Orig);
        _ -> M
    end.

%% Pids of other nodes read node-qualified (mce_pid_text), in labels and
%% in the terms they hold alike.
pid_text(Pid) when is_pid(Pid) -> mce_pid_text:pid(Pid);
pid_text({Pid, K}) when is_pid(Pid), is_integer(K) -> mce_pid_text:pid(Pid);
pid_text(Other) -> term(Other).

term(T) -> flat(mce_pid_text:rewrite(fmt("~0tP", [T, ?NOTE_DEPTH]), T)).
short(T) -> cut(mce_pid_text:rewrite(fmt("~0tP", [T, ?DEPTH]), T), ?LABEL).
%% An arrow's label: arrow/6 cuts it to the room the arrow has.
long(T) -> cut(mce_pid_text:rewrite(fmt("~0tP", [T, ?DEPTH]), T), ?LABEL_MAX).
full(T) -> flat(mce_pid_text:rewrite(fmt("~0tp", [T]), T)).

cut(Text, N) ->
    case flat(Text) of
        L when length(L) > N -> lists:sublist(L, N - 1) ++ [16#2026];
        L -> L
    end.

fmt(Format, Args) ->
    flat(io_lib:format(Format, Args)).

flat(Text) ->
    case unicode:characters_to_list(Text) of
        L when is_list(L) -> L
    end.

%% Text for SVG and HTML alike: markup characters as references, and
%% control characters (not allowed in XML) as U+FFFD.
esc(Text) ->
    [esc_char(C) || C <- flat(Text)].

esc_char($&) -> "&amp;";
esc_char($<) -> "&lt;";
esc_char($>) -> "&gt;";
esc_char($") -> "&quot;";
esc_char($') -> "&#39;";
esc_char(C) when C < 32, C =/= $\t, C =/= $\n, C =/= $\r -> 16#FFFD;
esc_char(C) -> C.

dedup(List) ->
    dedup(List, #{}).

dedup([X | Xs], Seen) when is_map_key(X, Seen) -> dedup(Xs, Seen);
dedup([X | Xs], Seen) -> [X | dedup(Xs, Seen#{X => true})];
dedup([], _Seen) -> [].
