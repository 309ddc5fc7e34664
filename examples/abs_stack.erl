%% A process whose stack grows through non-tail recursion around a
%% receive (Huch's stack process, paper 000_252f033da8c97ae1.txt; the
%% environment of ACCEPTANCE AC-19 made endless): every element pushed is
%% a call, `level(X)', that returns only when a pop takes X.  Concretely
%% the process's continuation grows without bound while the client
%% pushes.  Under an abstraction the interpreter folds the repeated frames
%% (paper 000's finite control for non-tail recursion) and the check ends:
%% the stack process never crashes and never deadlocks.
-module(abs_stack).
-export([start/0, stack/0, client/2]).

start() ->
    S = spawn(?MODULE, stack, []),
    spawn(?MODULE, client, [S, 0]),
    ok.

%% The empty stack.
stack() ->
    receive
        {push, X, From} -> From ! pushed, level(X), stack();
        {pop, From} -> From ! empty, stack()
    end.

%% X on top of the rest: a push makes a level above it, which returns when
%% its element is popped; a pop takes X.
level(X) ->
    receive
        {push, Y, From} -> From ! pushed, level(Y), level(X);
        {pop, From} -> From ! {popped, X}
    end.

client(S, N) ->
    case mcerlang:choice([fun() -> push end, fun() -> pop end]) of
        push ->
            S ! {push, N, self()},
            receive pushed -> client(S, N + 1) end;
        pop ->
            S ! {pop, self()},
            receive
                {popped, _} -> client(S, N);
                empty -> client(S, N)
            end
    end.
