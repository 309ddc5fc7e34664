%% The README's tutorial, run as written: every command of its `console'
%% blocks (lines starting with "$ ") runs in the checkout, and its output
%% must be what the README shows after it.  Timings ("3 ms") may differ;
%% a line "..." in the README stands for any number of lines.
-module(mce_tutorial_tests).

-include_lib("eunit/include/eunit.hrl").

tutorial_test_() ->
    Root = mce_cli_tests:root(),
    {ok, Readme} = file:read_file(filename:join(Root, "README.md")),
    Commands = commands(Readme),
    %% The tutorial is there, and says what it runs.
    [?_assert(length(Commands) >= 5)
     | [{timeout, 300, {Command, fun() -> run(Root, Command, Expected) end}}
        || {Command, Expected} <- Commands]].

%% The commands of the tutorial section, in order, each with the lines
%% shown after it.
commands(Readme) ->
    [_, Section | _] = string:split(unicode:characters_to_list(Readme), "## Ten minutes with mcerlang"),
    Tutorial = hd(string:split(Section, "\n## ")),
    Blocks = blocks(string:split(Tutorial, "\n", all), none, []),
    lists:append([pairs(B) || B <- Blocks]).

blocks([], _, Acc) -> lists:reverse(Acc);
blocks(["```console" | Rest], none, Acc) -> blocks(Rest, [], Acc);
blocks(["```" | Rest], Block, Acc) when is_list(Block) -> blocks(Rest, none, [lists:reverse(Block) | Acc]);
blocks([Line | Rest], Block, Acc) when is_list(Block) -> blocks(Rest, [Line | Block], Acc);
blocks([_ | Rest], none, Acc) -> blocks(Rest, none, Acc).

pairs([]) -> [];
pairs(["$ " ++ Command | Rest]) ->
    {Output, Next} = lists:splitwith(fun(L) -> not lists:prefix("$ ", L) end, Rest),
    [{Command, Output} | pairs(Next)].

run(Root, Command, Expected) ->
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", Command]}, {cd, Root}, exit_status, stderr_to_stdout, binary]),
    Output = collect(Port, []),
    Got = [normal(L) || L <- string:split(string:trim(Output, trailing, "\n"), "\n", all)],
    Want = [normal(L) || L <- Expected],
    case matches(Want, Got) of
        true -> ok;
        false -> erlang:error({tutorial_output_differs, Command,
                               {readme, Expected}, {got, string:split(Output, "\n", all)}})
    end.

collect(Port, Acc) ->
    receive
        {Port, {data, Data}} -> collect(Port, [Data | Acc]);
        {Port, {exit_status, _}} -> unicode:characters_to_list(lists:reverse(Acc))
    after 240000 -> erlang:error(tutorial_command_timeout)
    end.

%% Timings vary from run to run.
normal(Line) ->
    re:replace(string:trim(Line, trailing), "[0-9]+ ms", "N ms", [global, {return, list}, unicode]).

matches([], []) -> true;
matches(["..."], _) -> true;
matches(["..." | Want], Got) ->
    lists:any(fun(N) -> matches(Want, lists:nthtail(N, Got)) end, lists:seq(0, length(Got)));
matches([Line | Want], [Line | Got]) -> matches(Want, Got);
matches(_, _) -> false.
