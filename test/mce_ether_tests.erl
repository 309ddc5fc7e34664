%% @doc The ether and the limits: a search whose work is all deliveries
%% computed in C still answers max_time, memory and stop/1 promptly.
-module(mce_ether_tests).

-include_lib("eunit/include/eunit.hrl").

-define(FLOOD, {tprog_ether, flood, [6, 8]}).
-define(ETHER, #{delivery => ether, property => [abnormal_exit], progress => false}).

setup_test_() ->
    {timeout, 120, fun() -> mce_translate:ensure(tprog_ether) end}.

%% (9^6 states, almost all reached by deliveries, which the C search
%% computes without Erlang.)  Before the C search yielded, the whole space
%% was explored inside one NIF call and max_time was looked at only after.
max_time_holds_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             T0 = erlang:monotonic_time(millisecond),
             R = mcerlang:check(?FLOOD, ?ETHER#{max_time => 500}),
             Ms = erlang:monotonic_time(millisecond) - T0,
             ?assertMatch({inconclusive, max_time, _}, R),
             ?assert(Ms < 3000)
     end}.

memory_cap_holds_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 8 bsl 20,
             R = mcerlang:check(?FLOOD, ?ETHER#{memory => Cap}),
             ?assertMatch({inconclusive, {memory, Cap}, _}, R),
             {_, _, #{memory_used := Used}} = R,
             %% Checked at least every SEARCH_WORK_BUDGET deliveries: far less
             %% than a megabyte past the cap.
             ?assert(Used < Cap + (1 bsl 20))
     end}.

stop_answered_under_ether_test_() ->
    {timeout, 60,
     fun() ->
             Self = self(),
             Checker = spawn(fun() -> Self ! {self(), mcerlang:check(?FLOOD, ?ETHER)} end),
             timer:sleep(300),
             T0 = erlang:monotonic_time(millisecond),
             ok = mcerlang:stop(Checker),
             R = receive {Checker, Res} -> Res after 10000 -> timeout end,
             Ms = erlang:monotonic_time(millisecond) - T0,
             ?assertMatch({inconclusive, stopped, _}, R),
             ?assert(Ms < 500)
     end}.

%%--------------------------------------------------------------------
%% ordering => process_pair | node_pair
%%--------------------------------------------------------------------

-define(N1, 'n1@sim').
-define(N2, 'n2@sim').
-define(N3, 'n3@sim').

world_hello_setup_test_() ->
    {timeout, 120, fun() -> [mce_translate:ensure(M) || M <- [world_hello, tprog_dist]] end}.

%% World Hello with A and B on node n1 and C on n2 (paper 004, Fig. 1): A
%% sends hello to C, then world to B, which forwards it to C.  Per pair of
%% processes (the language's only guarantee) world may overtake hello; on
%% one connection between n1 and n2, as BEAM sends everything between two
%% nodes, it cannot: hello was sent first from n1 to n2.
world_hello_ordering_test() ->
    Entry = {world_hello, worldhello, [?N1, ?N1, ?N2]},
    Opts = #{nodes => [?N1, ?N2]},
    ?assertMatch({error, #{violation := {abnormal_exit, _, {wrong_order, world, hello}}}},
                 mcerlang:check(Entry, Opts)),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {wrong_order, world, hello}}}},
                 mcerlang:check(Entry, Opts#{ordering => process_pair})),
    ?assertMatch({ok, _}, mcerlang:check(Entry, Opts#{ordering => node_pair})),
    %% A to B inside n1 through the ether too: still in order at C.
    ?assertMatch({ok, _}, mcerlang:check(Entry, Opts#{ordering => node_pair,
                                                      delivery => ether})),
    %% With three nodes hello (n1 to n3) and world (n2 to n3) use two
    %% connections: world hello under both orderings.
    ?assertMatch({error, #{violation := {abnormal_exit, _, {wrong_order, world, hello}}}},
                 mcerlang:check({world_hello, worldhello, [?N1, ?N2, ?N3]},
                                #{nodes => [?N1, ?N2, ?N3], ordering => node_pair})),
    ?assertError({mcerlang, {bad_option_value, ordering, per_node}},
                 mcerlang:check(Entry, Opts#{ordering => per_node})).

%% The ether as users see it names the processes a signal travels between,
%% in send order, also on a node-pair channel.
node_pair_ether_view_test() ->
    Entry = {world_hello, worldhello, [?N1, ?N1, ?N2]},
    TwoInFlight = fun(#{ether := Ether}) -> length(Ether) < 2 end,
    {error, Cex} = mcerlang:check(Entry, #{nodes => [?N1, ?N2], ordering => node_pair,
                                           invariant => TwoInFlight}),
    #{violation := {invariant, _}, ether := Ether, final_state := Procs} = Cex,
    Pid = fun(Where) -> hd([P || #{pid := P, where := {world_hello, F, _, _, _}} <- Procs,
                                 F =:= Where])
          end,
    C = Pid(procC),
    ?assertMatch([#{to := C, signals := [{message, hello}]},
                  #{to := C, signals := [{message, world}]}], Ether),
    [#{from := A}, #{from := B}] = Ether,
    ?assertEqual([?N1, ?N1, ?N2], [node(A), node(B), node(C)]),
    ?assertNotEqual(A, B).

%% Faults act on node-pair channels as on the others.
node_pair_faults_test() ->
    Opts = #{nodes => [?N1, ?N2, ?N3], ordering => node_pair},
    ?assertMatch({ok, _}, mcerlang:check({tprog_dist, disconnect_lost, [?N2]}, Opts)),
    ?assertMatch({error, #{violation := deadlock}},
                 mcerlang:check({tprog_dist, disconnect_lost, [?N2]},
                                Opts#{faults => #{disconnect => 1}})),
    ?assertMatch({error, #{violation := {abnormal_exit, _, {{badmatch, noconnection}, _}}}},
                 mcerlang:check({tprog_dist, crash_watch, [?N2]},
                                Opts#{faults => #{crash_node => 1}})).

%%--------------------------------------------------------------------
%% Mailbox appends
%%--------------------------------------------------------------------

%% A step that sends N messages to one process: each append interned a new
%% mailbox vector, 2·N² bytes (1.8 GB for 30,000).  The appends of a step
%% are now interned once: about 93 bytes a message (the message term, its
%% index slot, the vector word), measured on OTP 25.
burst_appends_take_linear_memory_test_() ->
    {timeout, 60,
     fun() ->
             N = 30000,
             {ok, #{memory_used := Used, states := 4}} =
                 mcerlang:check({tprog_ether, burst, [N]}, #{progress => false}),
             ?assert(Used < 200 * N)
     end}.

%% Through the ether the N deliveries are N states, each holding its own
%% mailbox and queue vectors (quadratic in all); the memory cap ends it.
burst_through_the_ether_stops_at_memory_cap_test_() ->
    {timeout, 60,
     fun() ->
             Cap = 50 bsl 20,
             T0 = erlang:monotonic_time(millisecond),
             R = mcerlang:check({tprog_ether, burst, [30000]},
                                #{progress => false, delivery => ether, memory => Cap}),
             Ms = erlang:monotonic_time(millisecond) - T0,
             ?assertMatch({inconclusive, {memory, Cap}, _}, R),
             {_, _, #{memory_used := Used}} = R,
             ?assert(Used < Cap + (8 bsl 20)),
             ?assert(Ms < 5000)
     end}.

%% A node_pair counterexample replays (the session's expand-only search
%% takes the option from the counterexample), and an LTL check sees the
%% node-pair channel as one agent under weak fairness.
node_pair_replay_and_ltl_test() ->
    Entry = {world_hello, worldhello, [?N1, ?N1, ?N2]},
    TwoInFlight = fun(#{ether := Ether}) -> length(Ether) < 2 end,
    {error, Cex} = mcerlang:check(Entry, #{nodes => [?N1, ?N2], ordering => node_pair,
                                           invariant => TwoInFlight}),
    ?assertMatch({ok, #{violation := {invariant, _}}}, mcerlang:replay(Cex)),
    %% The LTL search (expand-only, node-pair channels as fairness agents)
    %% gives the same verdicts: world reaches C first only per process pair.
    %% C waits in its first receive with world at the head of its mailbox.
    {ok, Src} = file:read_file(proplists:get_value(source, world_hello:module_info(compile))),
    Lines = binary:split(Src, <<"\n">>, [global]),
    First = length(lists:takewhile(fun(L) -> binary:match(L, <<"X = receive">>) =:= nomatch end,
                                   Lines)) + 1,
    WorldFirst = fun(#{processes := Ps}) ->
                         lists:any(fun(#{mailbox := [world | _],
                                         where := {world_hello, procC, _, _, Line}}) ->
                                           Line =:= First;
                                      (_) -> false
                                   end, Ps)
                 end,
    Ltl = #{nodes => [?N1, ?N2], ltl => "[] not world_first",
            predicates => #{world_first => WorldFirst}},
    ?assertMatch({error, #{violation := {ltl, _}}}, mcerlang:check(Entry, Ltl)),
    ?assertMatch({ok, _}, mcerlang:check(Entry, Ltl#{ordering => node_pair})).

%% resume/1 is an answer like the others: refused when the search has not
%% yielded, badarg for what is not a search; node_pair is a 0/1 flag.
resume_protocol_test() ->
    ?assertError(badarg, mce_nif:resume(make_ref())),
    Config = #{node => n, creation => 1},
    ?assertError(badarg, mce_nif:new(Config#{node_pair => 2})),
    S = mce_nif:new(Config#{node_pair => 1}),
    ?assertMatch({error, {_, _}, _}, mce_nif:resume(S)),
    ?assertMatch({run, 1, start, {m, f, []}, [], false}, mce_nif:start(S, {m, f, []}, 1)),
    ?assertMatch({error, {_, _}, _}, mce_nif:resume(S)).

%% bin/mcerlang --ordering (mce_cli:run/1 is what the escript runs).
cli_ordering_test() ->
    Args = ["check", "--quiet", "--no-progress", "--nodes", "n1@sim,n2@sim", "examples/world_hello.erl",
            "world_hello:worldhello('n1@sim', 'n1@sim', 'n2@sim')"],
    ?assertEqual(1, mce_cli:run(Args)),
    ?assertEqual(0, mce_cli:run(Args ++ ["--ordering", "node_pair"])).
