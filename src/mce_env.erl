%% @doc Read-only queries of the node's environment in checked code:
%% file:get_cwd/0 and init's arguments and status.  They answer fixed
%% values (docs/USER_GUIDE.md), the same on every node, in every run and on
%% every host, so that a check's result does not depend on where the
%% checker was started.  Calls in user code are redirected here.
-module(mce_env).

-export([get_cwd/0, get_argument/1, get_arguments/0, get_plain_arguments/0, get_status/0]).

-define(CWD, "/").
-define(HOME, "/").

-spec get_cwd() -> {ok, string()}.
get_cwd() ->
    {ok, ?CWD}.

%% @doc init:get_argument/1: the flags every node has (root, progname,
%% home); no other flag was given.
-spec get_argument(atom()) -> {ok, [[string()]]} | error.
get_argument(Flag) when is_atom(Flag) ->
    case lists:keyfind(Flag, 1, get_arguments()) of
        {Flag, Values} -> {ok, [Values]};
        false -> error
    end;
get_argument(Flag) ->
    erlang:error(badarg, [Flag]).

-spec get_arguments() -> [{atom(), [string()]}].
get_arguments() ->
    %% root is the checker's OTP, as code:root_dir/0 and code:lib_dir/0
    %% (called directly) say.
    [{root, [code:root_dir()]}, {progname, ["erl"]}, {home, [?HOME]}].

-spec get_plain_arguments() -> [string()].
get_plain_arguments() ->
    [].

-spec get_status() -> {started, started}.
get_status() ->
    {started, started}.
