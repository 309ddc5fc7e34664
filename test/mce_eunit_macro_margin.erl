%% A module that sets include/mcerlang.hrl's timeout macros before the
%% include, as a user's test module may (mce_eunit_macro_tests).
-module(mce_eunit_macro_margin).

-export([objects/0]).

-define(MCERLANG_TIMEOUT_MARGIN, 5).
-define(MCERLANG_TIMEOUT, 7).
-include("../include/mcerlang.hrl").

-spec objects() -> {timeout, number(), ok}.
objects() ->
    {timeout, 7, _} = ?_assertHolds({pingpong, start, [3]}),
    {timeout, 7, _} = ?_assertHolds({pingpong, start, [3]}, #{max_time => 1500}),
    {timeout, ?mcerlangTimeout(#{}), ok}.
