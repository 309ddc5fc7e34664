%% The project's EUnit suite, with include/mcerlang.hrl's test objects.
-module(tally_tests).
-include_lib("eunit/include/eunit.hrl").
-include_lib("mcerlang/include/mcerlang.hrl").

safe_test_() -> ?_assertHolds({tally, safe, []}, #{max_time => 60000}).

racy_test_() -> ?_assertViolation({abnormal_exit, _, {lost_update, 1}}, {tally, racy, []}, #{}).
