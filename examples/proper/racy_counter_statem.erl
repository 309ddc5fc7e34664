%% @doc A proper_statem model of examples/racy_counter.erl and two
%% properties of it: prop_parallel/1 runs each generated parallel test
%% case under mcerlang (every interleaving), prop_parallel_plain/1 the
%% way PropEr alone does (run_parallel_commands/2: one schedule, the real
%% VM's).  Compiled by test/mce_proper_tests.erl when PropEr is present:
%%
%%   proper:quickcheck(racy_counter_statem:prop_parallel(racy), 20)
%%
%% finds the lost update in a few test cases; prop_parallel(fixed) holds.
-module(racy_counter_statem).

-include_lib("proper/include/proper.hrl").

-export([prop_parallel/1, prop_parallel_plain/1]).
-export([initial_state/0, command/1, precondition/2, postcondition/3, next_state/3]).

prop_parallel(Mode) ->
    ?FORALL(Cmds, parallel_commands(?MODULE, initial(Mode)),
            begin
                Result = mcerlang_proper:check_parallel(?MODULE, Cmds, #{}),
                ?WHENFAIL(io:put_chars(mcerlang_proper:format(Result)),
                          mcerlang_proper:passed(Result))
            end).

prop_parallel_plain(Mode) ->
    ?FORALL(Cmds, parallel_commands(?MODULE, initial(Mode)),
            begin
                {Seq, Par, Result} = run_parallel_commands(?MODULE, Cmds),
                ?WHENFAIL(io:format("~p~n~p~n~p~n", [Seq, Par, Result]), Result =:= ok)
            end).

%% The model: the counter's value, once the prefix has started it.
initial(Mode) -> #{mode => Mode, counter => none, value => 0}.

initial_state() -> initial(racy).

command(#{counter := none, mode := Mode}) ->
    {call, racy_counter, start_link, [Mode]};
command(#{counter := C}) ->
    oneof([{call, racy_counter, incr, [C]},
           {call, racy_counter, read, [C]}]).

precondition(#{counter := none}, {call, _, start_link, _}) -> true;
precondition(#{counter := none}, _) -> false;
precondition(_, {call, _, start_link, _}) -> false;
precondition(_, _) -> true.

postcondition(_, {call, _, start_link, _}, _) -> true;
postcondition(#{value := V}, {call, _, incr, _}, Res) -> Res =:= V + 1;
postcondition(#{value := V}, {call, _, read, _}, Res) -> Res =:= V.

next_state(S, Res, {call, _, start_link, _}) -> S#{counter => Res};
next_state(S = #{value := V}, _Res, {call, _, incr, _}) -> S#{value => V + 1};
next_state(S, _Res, {call, _, read, _}) -> S.
