%% Differential tests of per-process group leaders (test/tprog_gl.erl):
%% each scenario runs on the real VM and under the checker, which must give
%% the real result and only that one over all interleavings.
-module(mce_gl_tests).
-include_lib("eunit/include/eunit.hrl").

differential_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> mce_otp_harness:same_result(tprog_gl, F) end}}
     || F <- [set_and_read, inherit_spawns, inherit_same_step, badargs, inherit_gen_server,
              output_to_user, capture_output, capture_explicit, capture_all, leader_dies,
              leader_is_self, unregistered_device, capture_indirect]].

%% erlang(3), spawn/2,4: "a process started by spawn gets the group leader
%% of its parent"; on another node too, where the leader stays a pid of the
%% spawner's node.
remote_inherit_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, {true, true}}}}},
                 mcerlang:check({tprog_gl, remote_inherit, []}, #{nodes => [a@h, b@h]})).

%% The default group leader's output is recorded with the step, as before
%% leaders were modelled.
default_output_recorded_test() ->
    {ok, _} = mcerlang:check({tprog_gl, output_default, []}),
    {error, #{trace := Trace}} = mcerlang:check({tprog_gl, output_default_fails, []}),
    ?assertEqual(["one 1\n", "two", "\n", "three"],
                 lists:append([O || #{output := O} <- Trace])).

%% The step that sets a leader shows it in the trace and its text.
trace_shows_group_leader_test() ->
    {error, #{trace := Trace} = Cex} = mcerlang:check({tprog_gl, set_then_fail, []}),
    ?assert(lists:any(fun(#{effects := Es}) ->
                              lists:any(fun({group_leader, P, L}) -> is_pid(P) andalso is_pid(L);
                                           (_) -> false
                                        end, Es);
                         (_) -> false
                      end, Trace)),
    Text = lists:flatten(io_lib:format("~s", [mcerlang:format(Cex)])),
    ?assertNotEqual(nomatch, string:find(Text, "sets the group leader of")).

%% erlang(3): the remote child's leader is its spawner's, so its io goes
%% back across the nodes to the collecting process, in order.
remote_capture_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _,
                                         {result, [{put_chars, unicode, io_lib, format, ["from ~p", [b]]},
                                                   {put_chars, unicode, "\n"}]}}}},
                 mcerlang:check({tprog_gl, remote_capture, []}, #{nodes => [a@h, b@h]})),
    ?assertEqual([{result, [{put_chars, unicode, io_lib, format, ["from ~p", [b]]},
                            {put_chars, unicode, "\n"}]}],
                 all_results(remote_capture, #{nodes => [a@h, b@h]})).

all_results(F, Opts) -> all_results(F, Opts, []).

all_results(F, Opts, Seen) ->
    case mcerlang:check({tprog_gl, F, []}, Opts#{treat_as_normal => [normal | Seen]}) of
        {ok, _} -> lists:reverse(Seen);
        {error, #{violation := {abnormal_exit, _, R}}} when length(Seen) < 5 ->
            all_results(F, Opts, [R | Seen])
    end.

%% Setting the leader of a system process stops the check, naming it.
system_process_leader_refused_test() ->
    ?assertError({mcerlang, {unsupported_system_process, {user, group_leader},
                             {tprog_gl, set_user_leader, 0, Line}}} when Line > 0,
                 mcerlang:check({tprog_gl, set_user_leader, []})).
