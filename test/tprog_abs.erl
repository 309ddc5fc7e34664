%% Programs for the abstract mode's soundness test (mce_abs_soundness_tests)
%% whose violation lies behind an undecided receive match: under every
%% abstraction the test uses, the payload `[1, 2, 3, 4, 5, X]' is abstract
%% (X's parity or sign, the list cut below the depth, the chain's summary),
%% so whether a message matches `[1, 2, 3, 4, 5, 3]' is `maybe', and the
%% abstract system must explore both: the message taken, and the scan going
%% on past it.  Checked with `property => [abnormal_exit]', so that a
%% receive that wrongly matches nothing ends quietly instead of deadlocking.
-module(tprog_abs).
-export([past_first/0, only_one/0, server/0]).

%% Concretely the first message does not match and the second does: the
%% server crashes.  An interpreter that never looks past a message that may
%% match, or never takes one, proves the program safe.
past_first() ->
    S = spawn(?MODULE, server, []),
    S ! {req, [1, 2, 3, 4, 5, 1], first},
    S ! {req, [1, 2, 3, 4, 5, 3], second},
    ok.

%% One message, which concretely matches: the server crashes.  An
%% interpreter that answers "no" to a match that may succeed proves it safe.
only_one() ->
    S = spawn(?MODULE, server, []),
    S ! {req, [1, 2, 3, 4, 5, 3], second},
    ok.

server() ->
    receive
        {req, [1, 2, 3, 4, 5, 3], Tag} ->
            case Tag of
                second -> erlang:error(second_taken);
                first -> ok
            end
    end.
