%% OTP's pg (process groups) under the checker: OTP's own pg.erl runs
%% translated, its scope process and ETS table part of the checked state,
%% its node events net_kernel:monitor_nodes's.  Each program runs on the
%% real VM and under the checker with the same result; two simulated nodes
%% see each other's members and lose them when a node crashes.
-module(mce_pg_tests).

-include_lib("eunit/include/eunit.hrl").

real(F, Args) ->
    {Pid, Ref} = spawn_monitor(tprog_pg, F, Args),
    receive {'DOWN', Ref, process, Pid, {result, R}} -> R
    after 10000 -> erlang:error(real_vm_timeout)
    end.

checked(F, Args) ->
    case mcerlang:check({tprog_pg, F, Args}, #{progress => false, property => abnormal_exit,
                                                treat_as_normal => [normal, killed]}) of
        {error, #{violation := {abnormal_exit, _, {result, R}}}} -> R;
        Other -> erlang:error({unexpected, Other})
    end.

differential_test_() ->
    [{timeout, 120, ?_assertEqual(real(F, Args), checked(F, Args))}
     || {F, Args} <- [{basic, []}, {members, [mce_pg_scope1]}, {monitors, [mce_pg_scope2]},
                      {member_death, [mce_pg_scope3]}]].

%% Every result of the two-node program over all interleavings, with B
%% crashing once at any point: the member is seen, then leaves (B's crash
%% may come before the members are read: then they are already gone).
two_nodes_test_() ->
    {timeout, 120,
     fun() ->
             Opts = #{progress => false, property => abnormal_exit, nodes => ['a@h', 'b@h'],
                      faults => #{crash_node => 1}},
             Results = mce_otp_harness:results({tprog_pg, two_nodes, [s, 'b@h']}, Opts),
             ?assertEqual([{remote, [], {left, [remote]}, []},
                           {remote, [remote], {left, [remote]}, []}], Results)
     end}.

%% A disconnection of the two nodes drops the remote member too (pg's
%% nodedown handling, from net_kernel:monitor_nodes); once they reconnect
%% the scopes discover each other again (nodeup) and the member is back.
disconnect_test_() ->
    {timeout, 120,
     fun() ->
             Opts = #{progress => false, property => abnormal_exit, nodes => ['a@h', 'b@h'],
                      faults => #{disconnect => 1}},
             ?assertEqual([{remote, [], {left, [remote]}, []},
                           {remote, [], {left, [remote]}, [remote]},
                           {remote, [remote], {left, [remote]}, []},
                           {remote, [remote], {left, [remote]}, [remote]}],
                          mce_otp_harness:results({tprog_pg, two_nodes, [s, 'b@h']}, Opts))
     end}.

