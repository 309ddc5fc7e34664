%% @doc Application environments for checked code.
%%
%% The translator redirects application:get_env/1,2,3, get_all_env/0,1,
%% set_env/1,2,3,4, unset_env/2,3 and get_application/0,1 here.  Each
%% simulated node starts with the environments of the check's `env' option
%% (#{App => #{Key => Value}}); set_env and unset_env change the node's
%% copy, which is part of the checked state (a term in the C world).
%% Checked processes belong to no application, so get_env/1 and
%% get_application/0 answer undefined.
-module(mce_app).

-export([shared/0, store_shared/1]).
-export([get_env/1, get_env/2, get_env/3, get_all_env/0, get_all_env/1,
         set_env/1, set_env/2, set_env/3, set_env/4, unset_env/2, unset_env/3,
         get_application/0, get_application/1]).

-spec get_env(atom()) -> undefined.
get_env(_Key) -> undefined.

-spec get_env(atom(), atom()) -> {ok, term()} | undefined.
get_env(App, Key) ->
    case node_env() of
        #{App := #{Key := V}} -> {ok, V};
        #{} -> undefined
    end.

-spec get_env(atom(), atom(), term()) -> term().
get_env(App, Key, Default) ->
    case get_env(App, Key) of
        {ok, V} -> V;
        undefined -> Default
    end.

-spec get_all_env() -> [].
get_all_env() -> [].

-spec get_all_env(atom()) -> [{atom(), term()}].
get_all_env(App) ->
    maps:to_list(maps:get(App, node_env(), #{})).

-spec set_env([{atom(), [{atom(), term()}]}]) -> ok.
set_env(Config) ->
    set_env(Config, []).

-spec set_env([{atom(), [{atom(), term()}]}], list()) -> ok.
set_env(Config, _Opts) when is_list(Config) ->
    lists:foreach(fun({App, Pairs}) when is_atom(App), is_list(Pairs) ->
                          [set_env(App, K, V) || {K, V} <- Pairs];
                     (_) -> erlang:error(badarg, [Config])
                  end, Config);
set_env(Config, Opts) ->
    erlang:error(badarg, [Config, Opts]).

-spec set_env(atom(), atom(), term()) -> ok.
set_env(App, Key, Value) when is_atom(App) ->
    Env = node_env(),
    store(Env#{App => (maps:get(App, Env, #{}))#{Key => Value}});
set_env(App, Key, Value) ->
    erlang:error(badarg, [App, Key, Value]).

-spec set_env(atom(), atom(), term(), list()) -> ok.
set_env(App, Key, Value, _Opts) ->
    set_env(App, Key, Value).

-spec unset_env(atom(), atom()) -> ok.
unset_env(App, Key) ->
    Env = node_env(),
    store(Env#{App => maps:remove(Key, maps:get(App, Env, #{}))}).

-spec unset_env(atom(), atom(), list()) -> ok.
unset_env(App, Key, _Opts) ->
    unset_env(App, Key).

-spec get_application() -> undefined.
get_application() -> undefined.

-spec get_application(pid() | module()) -> undefined.
get_application(_PidOrModule) -> undefined.

%% @doc The shared term of the state (the C world's app_env): a map with
%% each node's application environments (keyed by node index) and the
%% global name registry (key `global'); this step's own change first.
-spec shared() -> map().
shared() ->
    case maps:get(app_env, erlang:get('$mce_overlay'), stored) of
        stored ->
            case mce_nif:app_env(erlang:get('$mce_search')) of
                M when is_map(M) -> M;
                _ -> #{}
            end;
        All -> All
    end.

%% @doc Records a new shared term as an effect of the step.
-spec store_shared(map()) -> ok.
store_shared(New) ->
    erlang:put('$mce_overlay', (erlang:get('$mce_overlay'))#{app_env => New}),
    erlang:put('$mce_effects', [{app_env, New} | erlang:get('$mce_effects')]),
    ok.

%% The running process's node's environments: the state's, else the
%% option's.
node_env() ->
    Node = erlang:get('$mce_pid') bsr 24,
    maps:get(Node, shared(), initial()).

initial() ->
    case erlang:get('$mce_app_env') of
        undefined -> #{};
        E -> E
    end.

store(Env) ->
    Node = erlang:get('$mce_pid') bsr 24,
    store_shared((shared())#{Node => Env}).
