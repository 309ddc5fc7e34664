%% Differential tests of per-process group leaders (test/tprog_gl.erl):
%% each scenario runs on the real VM and under the checker, which must give
%% the real result and only that one over all interleavings.
-module(mce_gl_tests).
-include_lib("eunit/include/eunit.hrl").

differential_test_() ->
    [{atom_to_list(F), {timeout, 60, fun() -> mce_otp_harness:same_result(tprog_gl, F) end}}
     || F <- [set_and_read, inherit_spawns, inherit_same_step, badargs, inherit_gen_server,
              output_to_user]].

%% erlang(3), spawn/2,4: "a process started by spawn gets the group leader
%% of its parent"; on another node too, where the leader stays a pid of the
%% spawner's node.
remote_inherit_test() ->
    ?assertMatch({error, #{violation := {abnormal_exit, _, {result, {true, true}}}}},
                 mcerlang:check({tprog_gl, remote_inherit, []}, #{nodes => [a@h, b@h]})).

%% What the real VM's io sends to a group leader that is a process: the
%% request the model refuses (below) is the Erlang I/O protocol's.
real_io_requests_test() ->
    ?assertEqual({result, [{put_chars, unicode, io_lib, format, ["hello ~p~n", [1]]}]},
                 mce_otp_harness:real(tprog_gl, capture_output)),
    ?assertEqual({result, [{put_chars, unicode, <<"hi">>}]},
                 mce_otp_harness:real(tprog_gl, capture_explicit)).

%% Output to a program process (group leader or explicit device) is not
%% modelled: the check stops naming the call and where it is, never a run
%% without the io_request the VM would send.
capture_refused_test() ->
    ?assertError({mcerlang, {unsupported_call, {io, format, 2}, {tprog_gl, _, _, Line},
                             {io_request_to, _, _}}} when Line > 0,
                 mcerlang:check({tprog_gl, capture_output, []})),
    ?assertError({mcerlang, {unsupported_call, {io, put_chars, 2}, {tprog_gl, _, _, Line},
                             {io_request_to, _, _}}} when Line > 0,
                 mcerlang:check({tprog_gl, capture_explicit, []})).
