%% EUnit helpers for mcerlang (include_lib("mcerlang/include/mcerlang.hrl")).
%%
%% ?assertHolds(Entry) and ?assertHolds(Entry, Options) pass when
%% mcerlang:check/2 returns {ok, _}.  ?assertViolation(Entry, Options)
%% passes when it returns {error, Counterexample} and evaluates to the
%% counterexample; ?assertViolation(Pattern, Entry, Options) also requires
%% the violation to match Pattern.  A failing assertion prints the
%% formatted counterexample (or the inconclusive reason) on the console,
%% where EUnit does not capture it, and raises an error naming the
%% module, line and entry, with the counterexample's text in it.
%%
%% ?_assertHolds(Entry[, Options]) and ?_assertViolation([Pattern, ]Entry,
%% Options) are the same assertions as EUnit test objects (as EUnit's
%% ?_assert... are), wrapped in {timeout, Seconds, ...}: EUnit's default 5 s
%% per test is shorter than most checks.  Seconds is ?mcerlangTimeout(Options):
%% the check's max_time (in ms) rounded up to seconds plus
%% ?MCERLANG_TIMEOUT_MARGIN (default 60) when Options set max_time, otherwise
%% ?MCERLANG_TIMEOUT (default 600).  Define either macro before the include
%% to change it.  Options is evaluated twice: give a literal or a variable.
-ifndef(MCERLANG_HRL).
-define(MCERLANG_HRL, true).

-ifndef(MCERLANG_TIMEOUT).
-define(MCERLANG_TIMEOUT, 600).
-endif.
-ifndef(MCERLANG_TIMEOUT_MARGIN).
-define(MCERLANG_TIMEOUT_MARGIN, 60).
-endif.

-define(mcerlangTimeout(Options),
        mcerlang_eunit:timeout(Options, ?MCERLANG_TIMEOUT_MARGIN, ?MCERLANG_TIMEOUT)).

-define(_assertHolds(Entry), ?_assertHolds(Entry, #{})).
-define(_assertHolds(Entry, Options),
        {timeout, ?mcerlangTimeout(Options), {?LINE, fun() -> ?assertHolds(Entry, Options) end}}).
-define(_assertViolation(Entry, Options), ?_assertViolation(_, Entry, Options)).
-define(_assertViolation(Pattern, Entry, Options),
        {timeout, ?mcerlangTimeout(Options),
         {?LINE, fun() -> _ = ?assertViolation(Pattern, Entry, Options), ok end}}).

-define(assertHolds(Entry), ?assertHolds(Entry, #{})).

-define(assertHolds(Entry, Options),
        ((fun() ->
                  case mcerlang:check(Entry, Options) of
                      {ok, _} ->
                          ok;
                      {error, __McerlangCex} ->
                          __McerlangText = lists:flatten(io_lib:format("~ts", [mcerlang:format(__McerlangCex)])),
                          io:format(user, "~n~s:~b: ?assertHolds(~s) failed:~n~ts", [?FILE, ?LINE, (??Entry), __McerlangText]),
                          erlang:error({assertHolds, [{module, ?MODULE}, {line, ?LINE}, {entry, (??Entry)},
                                                      {violation, maps:get(violation, __McerlangCex)},
                                                      {counterexample, __McerlangText}]});
                      {inconclusive, __McerlangWhy, __McerlangStats} ->
                          io:format(user, "~n~s:~b: ?assertHolds(~s) is inconclusive: ~tp~n", [?FILE, ?LINE, (??Entry), __McerlangWhy]),
                          erlang:error({assertHolds, [{module, ?MODULE}, {line, ?LINE}, {entry, (??Entry)},
                                                      {inconclusive, __McerlangWhy}, {stats, __McerlangStats}]})
                  end
          end)())).

-define(assertViolation(Entry, Options), ?assertViolation(_, Entry, Options)).

-define(assertViolation(Pattern, Entry, Options),
        ((fun() ->
                  case mcerlang:check(Entry, Options) of
                      {error, #{violation := Pattern} = __McerlangCex} ->
                          __McerlangCex;
                      {error, __McerlangCex} ->
                          __McerlangText = lists:flatten(io_lib:format("~ts", [mcerlang:format(__McerlangCex)])),
                          io:format(user, "~n~s:~b: ?assertViolation(~s, ~s): another violation:~n~ts",
                                    [?FILE, ?LINE, (??Pattern), (??Entry), __McerlangText]),
                          erlang:error({assertViolation, [{module, ?MODULE}, {line, ?LINE}, {entry, (??Entry)},
                                                          {expected, (??Pattern)},
                                                          {violation, maps:get(violation, __McerlangCex)},
                                                          {counterexample, __McerlangText}]});
                      {ok, __McerlangStats} ->
                          io:format(user, "~n~s:~b: ?assertViolation(~s): the property holds~n", [?FILE, ?LINE, (??Entry)]),
                          erlang:error({assertViolation, [{module, ?MODULE}, {line, ?LINE}, {entry, (??Entry)},
                                                          {expected, (??Pattern)}, holds, {stats, __McerlangStats}]});
                      {inconclusive, __McerlangWhy, __McerlangStats} ->
                          io:format(user, "~n~s:~b: ?assertViolation(~s) is inconclusive: ~tp~n", [?FILE, ?LINE, (??Entry), __McerlangWhy]),
                          erlang:error({assertViolation, [{module, ?MODULE}, {line, ?LINE}, {entry, (??Entry)},
                                                          {expected, (??Pattern)},
                                                          {inconclusive, __McerlangWhy}, {stats, __McerlangStats}]})
                  end
          end)())).

-endif.
