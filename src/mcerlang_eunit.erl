%% @doc The run-time half of include/mcerlang.hrl's EUnit test objects:
%% how long EUnit lets a check run (?mcerlangTimeout).  A function rather
%% than a fun in the macro: the compiler would inline a fun applied to a
%% literal options map and warn of the clauses that cannot match.
-module(mcerlang_eunit).

-export([timeout/3]).

%% @doc Seconds for a check with these options: max_time (ms) rounded up
%% plus Margin when the options set it, otherwise Default.
-spec timeout(mcerlang:options() | [{atom(), term()}], non_neg_integer(), pos_integer()) ->
          pos_integer().
timeout(Options, Margin, Default) when is_map(Options) ->
    seconds(maps:get(max_time, Options, infinity), Margin, Default);
timeout(Options, Margin, Default) when is_list(Options) ->
    seconds(proplists:get_value(max_time, Options, infinity), Margin, Default).

seconds(Ms, Margin, _Default) when is_integer(Ms), Ms > 0 -> (Ms + 999) div 1000 + Margin;
seconds(_, _Margin, Default) -> Default.
