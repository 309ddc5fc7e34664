%% @doc logger and error_logger for checked code: reports are recorded as
%% the step's output (shown in counterexamples), never printed or sent to
%% the real logger process.  The translator redirects the calls here.
-module(mce_logger).
-compile({no_auto_import, [error/2, error/3]}).

-export([allow/2, macro_log/3, macro_log/4, macro_log/5, log/2, log/3, log/4,
         emergency/1, emergency/2, emergency/3, alert/1, alert/2, alert/3,
         critical/1, critical/2, critical/3, error/1, error/2, error/3,
         warning/1, warning/2, warning/3, notice/1, notice/2, notice/3,
         info/1, info/2, info/3, debug/1, debug/2, debug/3,
         get_format_depth/0, error_msg/1, error_msg/2, error_report/1, error_report/2,
         warning_msg/1, warning_msg/2, warning_report/1, warning_report/2,
         info_msg/1, info_msg/2, info_report/1, info_report/2, limit_term/1]).

%% @doc Events below OTP's default primary level (notice) are dropped, as
%% they are by default on the VM (supervisor progress reports are info).
-spec allow(logger:level(), module()) -> boolean().
allow(Level, _Module) ->
    logger:compare_levels(Level, notice) =/= lt.

-spec macro_log(map(), logger:level(), term()) -> ok.
macro_log(_Location, Level, Report) -> record(Level, [Report]).
-spec macro_log(map(), logger:level(), term(), term()) -> ok.
macro_log(_Location, Level, A, B) -> record(Level, [A, B]).
-spec macro_log(map(), logger:level(), term(), term(), term()) -> ok.
macro_log(_Location, Level, A, B, C) -> record(Level, [A, B, C]).

-spec log(logger:level(), term()) -> ok.
log(Level, A) -> record(Level, [A]).
-spec log(logger:level(), term(), term()) -> ok.
log(Level, A, B) -> record(Level, [A, B]).
-spec log(logger:level(), term(), term(), term()) -> ok.
log(Level, A, B, C) -> record(Level, [A, B, C]).

-spec emergency(term()) -> ok.
emergency(A) -> record(emergency, [A]).
-spec emergency(term(), term()) -> ok.
emergency(A, B) -> record(emergency, [A, B]).
-spec emergency(term(), term(), term()) -> ok.
emergency(A, B, C) -> record(emergency, [A, B, C]).

-spec alert(term()) -> ok.
alert(A) -> record(alert, [A]).
-spec alert(term(), term()) -> ok.
alert(A, B) -> record(alert, [A, B]).
-spec alert(term(), term(), term()) -> ok.
alert(A, B, C) -> record(alert, [A, B, C]).

-spec critical(term()) -> ok.
critical(A) -> record(critical, [A]).
-spec critical(term(), term()) -> ok.
critical(A, B) -> record(critical, [A, B]).
-spec critical(term(), term(), term()) -> ok.
critical(A, B, C) -> record(critical, [A, B, C]).

-spec error(term()) -> ok.
error(A) -> record(error, [A]).
-spec error(term(), term()) -> ok.
error(A, B) -> record(error, [A, B]).
-spec error(term(), term(), term()) -> ok.
error(A, B, C) -> record(error, [A, B, C]).

-spec warning(term()) -> ok.
warning(A) -> record(warning, [A]).
-spec warning(term(), term()) -> ok.
warning(A, B) -> record(warning, [A, B]).
-spec warning(term(), term(), term()) -> ok.
warning(A, B, C) -> record(warning, [A, B, C]).

-spec notice(term()) -> ok.
notice(A) -> record(notice, [A]).
-spec notice(term(), term()) -> ok.
notice(A, B) -> record(notice, [A, B]).
-spec notice(term(), term(), term()) -> ok.
notice(A, B, C) -> record(notice, [A, B, C]).

-spec info(term()) -> ok.
info(A) -> record(info, [A]).
-spec info(term(), term()) -> ok.
info(A, B) -> record(info, [A, B]).
-spec info(term(), term(), term()) -> ok.
info(A, B, C) -> record(info, [A, B, C]).

-spec debug(term()) -> ok.
debug(A) -> record(debug, [A]).
-spec debug(term(), term()) -> ok.
debug(A, B) -> record(debug, [A, B]).
-spec debug(term(), term(), term()) -> ok.
debug(A, B, C) -> record(debug, [A, B, C]).


-spec limit_term(T) -> T.
limit_term(Term) -> Term.

-spec get_format_depth() -> unlimited.
get_format_depth() -> unlimited.

-spec error_msg(io:format()) -> ok.
error_msg(F) -> record(error, [F, []]).
-spec error_msg(io:format(), [term()]) -> ok.
error_msg(F, A) -> record(error, [F, A]).
-spec error_report(term()) -> ok.
error_report(R) -> record(error, [R]).
-spec error_report(term(), term()) -> ok.
error_report(T, R) -> record(error, [#{type => T, report => R}]).
-spec warning_msg(io:format()) -> ok.
warning_msg(F) -> record(warning, [F, []]).
-spec warning_msg(io:format(), [term()]) -> ok.
warning_msg(F, A) -> record(warning, [F, A]).
-spec warning_report(term()) -> ok.
warning_report(R) -> record(warning, [R]).
-spec warning_report(term(), term()) -> ok.
warning_report(T, R) -> record(warning, [#{type => T, report => R}]).
-spec info_msg(io:format()) -> ok.
info_msg(F) -> record(info, [F, []]).
-spec info_msg(io:format(), [term()]) -> ok.
info_msg(F, A) -> record(info, [F, A]).
-spec info_report(term()) -> ok.
info_report(R) -> record(info, [R]).
-spec info_report(term(), term()) -> ok.
info_report(T, R) -> record(info, [#{type => T, report => R}]).

%% The text of a log event: a format and its arguments, or a report (with
%% its report_cb when the metadata gives one, as OTP's reports do).
record(Level, Args) ->
    case allow(Level, ?MODULE) of
        true -> record_text(Level, Args);
        false -> ok
    end.

record_text(Level, Args) ->
    %% The text goes to the output, never into a state: the report
    %% callback (translated code) may print pids without observing them.
    Text = try mce_rt_order:quiet(fun() -> text(Args) end)
           catch _:_ -> lists:flatten(io_lib:format("~tp", [Args]))
           end,
    erlang:put('$mce_output', [lists:flatten(io_lib:format("[~p] ~ts", [Level, Text]))
                               | erlang:get('$mce_output')]),
    ok.

text([Fmt, Args | _]) when is_list(Args), (is_list(Fmt) orelse is_atom(Fmt) orelse is_binary(Fmt)) ->
    lists:flatten(io_lib:format(Fmt, Args));
text([Report, #{report_cb := Cb} | _]) when is_function(Cb, 1) ->
    {Fmt, Args} = Cb(Report),
    lists:flatten(io_lib:format(Fmt, Args));
text([Report, #{report_cb := Cb} | _]) when is_function(Cb, 2) ->
    unicode:characters_to_list(Cb(Report, #{depth => unlimited, chars_limit => unlimited,
                                            single_line => false}));
text([Report | _]) ->
    lists:flatten(io_lib:format("~tp", [Report])).
