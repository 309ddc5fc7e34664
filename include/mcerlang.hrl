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
-ifndef(MCERLANG_HRL).
-define(MCERLANG_HRL, true).

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
