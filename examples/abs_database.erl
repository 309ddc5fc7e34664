%% Huch's database (paper 003_7dd3bcd1accd73d3.txt, example 1 and section
%% 9; papers 000/003, ACCEPTANCE AC-17 and AC-22): a process storing key
%% value pairs, allocated in two steps, with two clients and the main
%% process as a third, each guessing its requests.  Mutual exclusion: the
%% client that allocates a key also sets its value,
%%
%%   forall P, Q: P != Q -> [] (alloc(P) -> (!value(Q) U (value(P) || allocated)))
%%
%% with alloc(P) the prop {allocate, P}, value(P) the prop {value, P}.  It
%% holds concretely (the database list is bounded by the two keys) and is
%% proved under the depth-2 abstraction, which cuts the stored pairs.
%% start_mutant/0 (AC-18) takes any client's value and has an eager
%% client: the property fails.
-module(abs_database).
-export([start/0, start_mutant/0, database/1, mutant_database/1, client/1, eager_client/1]).

start() ->
    DB = spawn(?MODULE, database, [[]]),
    spawn(?MODULE, client, [DB]),
    spawn(?MODULE, client, [DB]),
    client(DB).

start_mutant() ->
    DB = spawn(?MODULE, mutant_database, [[]]),
    spawn(?MODULE, eager_client, [DB]),
    client(DB).

database(L) ->
    serve(L, from_the_allocator).

%% The mutant's inner receive takes a value from anyone.
mutant_database(L) ->
    serve(L, from_anyone).

serve(L, Values) ->
    mcerlang:prop(top),
    receive
        {allocate, Key, P} ->
            mcerlang:prop({allocate, P}),
            case lookup(Key, L) of
                fail ->
                    P ! free,
                    {V, From} = value(P, Values),
                    mcerlang:prop({value, From}),
                    serve([{Key, V} | L], Values);
                {succ, _V} ->
                    P ! mcerlang:prop(allocated),
                    serve(L, Values)
            end;
        {lookup, Key, P} ->
            mcerlang:prop(lookup),
            P ! lookup(Key, L),
            serve(L, Values)
    end.

%% Huch's database accepts the value of the client that allocated (P is
%% bound in the pattern); the mutant's of anyone.
value(P, from_the_allocator) ->
    receive {value, V, P} -> {V, P} end;
value(_P, from_anyone) ->
    receive {value, V, Q} -> {V, Q} end.

lookup(_Key, []) -> fail;
lookup(Key, [{Key, V} | _]) -> {succ, V};
lookup(Key, [_ | L]) -> lookup(Key, L).

client(DB) ->
    Key = guess([k1, k2]),
    case guess([allocate, lookup]) of
        allocate ->
            DB ! {allocate, Key, self()},
            receive
                free ->
                    DB ! {value, guess([v1, v2]), self()},
                    client(DB);
                allocated ->
                    client(DB)
            end;
        lookup ->
            DB ! {lookup, Key, self()},
            receive
                _Answer -> client(DB)
            end
    end.

%% Sends its value right after its allocation, without waiting for free.
eager_client(DB) ->
    Key = guess([k1, k2]),
    DB ! {allocate, Key, self()},
    DB ! {value, guess([v1, v2]), self()},
    receive
        _ -> ok
    end.

guess(Values) ->
    mcerlang:choice([fun() -> V end || V <- Values]).
