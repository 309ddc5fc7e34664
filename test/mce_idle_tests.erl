%% The `idle' option (issue 19 item 3): a process waiting in an OTP
%% behaviour's main loop (gen_server, gen_statem, gen_event, supervisor)
%% at the end of a run is idle, not deadlocked; so is a process the user
%% names.  idle => none is the old rule: any blocked process is a deadlock.
-module(mce_idle_tests).
-include_lib("eunit/include/eunit.hrl").

check(F, Opts) ->
    mcerlang:check({tprog_idle, F, []}, maps:merge(#{timeouts => {infinite_above, 5000}}, Opts#{progress => false})).

warm_up_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [tprog_idle, gen_server, gen,
                                                               proc_lib, supervisor, gen_statem,
                                                               gen_event]] end}.

%% Each behaviour left running: idle by default, a deadlock with none.
behaviours_left_running_test_() ->
    [{atom_to_list(F), {timeout, 120,
                        fun() ->
                                ?assertMatch({ok, _}, check(F, #{})),
                                ?assertMatch({ok, _}, check(F, #{idle => otp})),
                                ?assertMatch({error, #{violation := deadlock}},
                                             check(F, #{idle => none}))
                        end}}
     || F <- [gen_server_left, hibernating_left, gen_statem_left, gen_event_left,
              supervisor_left]].

%% The same under the LTL search: its terminal states agree.
ltl_agrees_test_() ->
    {timeout, 120,
     fun() ->
             Ltl = #{ltl => "[] true", property => [deadlock]},
             ?assertMatch({ok, _}, check(gen_server_left, Ltl)),
             ?assertMatch({error, #{violation := deadlock}},
                          check(gen_server_left, Ltl#{idle => none}))
     end}.

%% A server blocked inside handle_call (waiting in a receive of its own
%% callback) is not idle: still a deadlock.
stuck_server_test_() ->
    {timeout, 60,
     fun() -> ?assertMatch({error, #{violation := deadlock}}, check(stuck_in_call, #{})) end}.

%% A plain process is idle only when the user names it.
named_processes_test_() ->
    {timeout, 60,
     fun() ->
             ?assertMatch({error, #{violation := deadlock}}, check(plain_registered, #{})),
             ?assertMatch({ok, _}, check(plain_registered, #{idle => {otp, [waiter]}})),
             ?assertMatch({ok, _}, check(plain_registered, #{idle => {otp, [{name, waiter}]}})),
             ?assertMatch({error, #{violation := deadlock}},
                          check(plain_registered, #{idle => {otp, [other]}})),
             ?assertMatch({ok, _}, check(plain_waiter, #{idle => {otp, [{module, tprog_idle}]}})),
             ?assertMatch({error, #{violation := deadlock}},
                          check(plain_waiter, #{idle => {otp, [{module, gen_server}]}})),
             Waiter = fun(#{initial_call := IC}) -> IC =:= {tprog_idle, waiter, 0} end,
             ?assertMatch({ok, _}, check(plain_waiter, #{idle => {otp, [{predicate, Waiter}]}})),
             %% The server is idle by itself; the waiter is not.
             ?assertMatch({error, #{violation := deadlock}}, check(server_and_waiter, #{})),
             ?assertMatch({ok, _}, check(server_and_waiter,
                                         #{idle => {otp, [{module, tprog_idle}]}}))
     end}.

bad_values_test() ->
    [?assertError({mcerlang, {bad_option_value, idle, _, _}}, check(plain_waiter, #{idle => V}))
     || V <- [all, {otp, waiter}, {otp, [{name, "waiter"}]}, {otp, [{predicate, fun() -> true end}]}]],
    ?assertError({mcerlang, {bad_option_value, idle, _, _}},
                 check(plain_waiter, #{idle => {otp, [{predicate, fun(_) -> maybe end}]}})).

cli_test_() ->
    {timeout, 120,
     fun() ->
             Args = ["--timeouts", "infinite_above:5000", "test/tprog_idle.erl"],
             {0, _} = mce_cli_tests:run_cli(["check" | Args ++ ["tprog_idle:gen_server_left()"]]),
             {1, Dead} = mce_cli_tests:run_cli(["check", "--idle", "none" | Args ++
                                                    ["tprog_idle:gen_server_left()"]]),
             ?assertNotEqual(nomatch, string:find(Dead, "deadlock")),
             {1, _} = mce_cli_tests:run_cli(["check" | Args ++ ["tprog_idle:plain_registered()"]]),
             {0, _} = mce_cli_tests:run_cli(["check", "--idle", "otp,name=waiter" | Args ++
                                                 ["tprog_idle:plain_registered()"]]),
             {0, _} = mce_cli_tests:run_cli(["check", "--idle", "otp,module=tprog_idle" | Args ++
                                                 ["tprog_idle:plain_waiter()"]]),
             {2, Bad} = mce_cli_tests:run_cli(["check", "--idle", "sometimes" | Args ++
                                                   ["tprog_idle:plain_waiter()"]]),
             ?assertNotEqual(nomatch, string:find(Bad, "--idle"))
     end}.

%% The main loops named in mce_marks are functions of the installed OTP
%% (they are found by name: a newer OTP that renames one would make its
%% servers look stuck).
otp_loops_exist_test() ->
    [?assert(lists:member({F, A}, M:module_info(functions))) || {M, F, A} <- mce_marks:otp_loops()].
