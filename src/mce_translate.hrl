%% The records the translator's passes hand each other (mce_translate and
%% mce_translate_*): one module as the analysis sees it.  `forms' are the
%% module's forms after the source rewrites (mce_translate_expand); `calls'
%% and `receives' are what mce_translate_blocking needs, per function;
%% `md5' identifies the original the translation was made from (the cache
%% key's value, <<>> until known).

-record(mod, {name :: module(),
              forms :: [erl_parse:abstract_form()],
              defs :: sets:set({atom(), arity()}),
              calls :: #{{atom(), arity()} => [callee()]},
              receives :: sets:set({atom(), arity()}),
              md5 :: binary()}).

-type callee() :: {local, atom(), arity()} | {remote, module(), atom(), arity()}.
