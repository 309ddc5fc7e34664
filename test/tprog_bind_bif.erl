%% A match in the arguments of a call the checker refuses (issue 14 item 4):
%% the module still translates; see mce_translate_bind_tests.
-module(tprog_bind_bif).

-export([unsupported_bind/0, other/0]).

unsupported_bind() ->
    check_process_code(S = self(), tprog_bind_bif),
    exit({result, S}).

%% The rest of the module works.
other() ->
    exit({result, fine}).
