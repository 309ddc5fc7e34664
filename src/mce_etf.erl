%% @doc Decoding an untrusted external term (a counterexample file).
%%
%% `binary_to_term/1' on a hostile binary can inflate a small compressed
%% term to gigabytes, and create atoms without bound (atoms are never
%% collected: the VM dies when the table is full).  `[safe]' alone refuses
%% every new atom, but a counterexample saved by another node names atoms
%% a fresh node lacks (the translated module `mce$bank', step and stats
%% keys) until it has checked something.  So: inflate with a bound,
%% list the term's atoms without creating them, create the few that are
%% new (at most a bound), then decode with `[safe]'.
-module(mce_etf).

-export([decode/2]).

-define(COMPRESSED, 80).

%% @doc The term in `Bin' (external term format), or why not.
-spec decode(binary(), #{max_inflated := pos_integer(), max_new_atoms := non_neg_integer()}) ->
          {ok, term()} | {error, string()}.
decode(<<131, ?COMPRESSED, Size:32, Z/binary>>, #{max_inflated := Max} = Bounds) ->
    case Size > Max of
        true -> {error, io_lib:format("the term inflates to more than ~b MiB", [Max bsr 20])};
        false ->
            case inflate(Z, Size) of
                {ok, Plain} -> decode_plain(<<131, Plain/binary>>, Bounds);
                error -> {error, "damaged contents"}
            end
    end;
decode(<<131, _/binary>> = Bin, Bounds) ->
    decode_plain(Bin, Bounds);
decode(_, _) ->
    {error, "damaged contents"}.

decode_plain(<<131, Body/binary>> = Bin, #{max_new_atoms := MaxNew}) ->
    case atoms(Body) of
        {ok, Atoms} ->
            New = [A || A <- Atoms, not existing(A)],
            case length(New) > MaxNew of
                true -> {error, io_lib:format("names more than ~b atoms this node does not know",
                                              [MaxNew])};
                false ->
                    %% badarg: not a term after all; system_limit: a name
                    %% longer than an atom can be.
                    try
                        _ = [binary_to_atom(Name, Enc) || {Name, Enc} <- New],
                        {ok, binary_to_term(Bin, [safe])}
                    catch error:Why when Why =:= badarg; Why =:= system_limit ->
                            {error, "damaged contents"}
                    end
            end;
        error ->
            {error, "damaged contents"}
    end.

existing({Name, Enc}) ->
    try binary_to_existing_atom(Name, Enc) of
        _ -> true
    catch error:badarg -> false
    end.

%% Inflates at most Size bytes (the declared size, which binary_to_term
%% checks too): a stream that would inflate further is stopped there.
inflate(Z, Size) ->
    S = zlib:open(),
    try
        ok = zlib:inflateInit(S),
        inflate_loop(S, zlib:safeInflate(S, Z), Size, [])
    catch
        error:_ -> error
    after
        zlib:close(S)
    end.

inflate_loop(S, {continue, Out}, Left, Acc) ->
    case iolist_size(Out) of
        N when N > Left -> error;
        N -> inflate_loop(S, zlib:safeInflate(S, []), Left - N, [Acc | Out])
    end;
inflate_loop(_S, {finished, Out}, Left, Acc) ->
    case iolist_size(Out) of
        Left -> {ok, iolist_to_binary([Acc | Out])};
        _ -> error
    end;
inflate_loop(_S, {need_dictionary, _, _}, _Left, _Acc) ->
    error.

%% The distinct atom names of one encoded term, as {Name, Encoding},
%% without creating them.  A work list of `{terms, N}' (N terms follow)
%% and `{skip, Bytes}' keeps it iterative: a deep term cannot exhaust the
%% stack, and a length that lies runs out of input.
atoms(Bin) ->
    try {ok, lists:usort(scan(Bin, [{terms, 1}], []))}
    catch error:_ -> error
    end.

scan(_Bin, [], Acc) -> Acc;
scan(Bin, [{terms, 0} | Work], Acc) -> scan(Bin, Work, Acc);
scan(Bin, [{skip, N} | Work], Acc) ->
    <<_:N/binary, Rest/binary>> = Bin,
    scan(Rest, Work, Acc);
scan(<<Tag, Rest/binary>>, [{terms, N} | Work0], Acc) ->
    Work = [{terms, N - 1} | Work0],
    case {Tag, Rest} of
        {97, _} -> scan(Rest, [{skip, 1} | Work], Acc);                   % small integer
        {98, _} -> scan(Rest, [{skip, 4} | Work], Acc);                   % integer
        {99, _} -> scan(Rest, [{skip, 31} | Work], Acc);                  % old float
        {70, _} -> scan(Rest, [{skip, 8} | Work], Acc);                   % float
        {106, _} -> scan(Rest, Work, Acc);                                % []
        {T, <<L:16, Name:L/binary, R/binary>>} when T =:= 100; T =:= 118 ->
            scan(R, Work, [{Name, encoding(T)} | Acc]);
        {T, <<L:8, Name:L/binary, R/binary>>} when T =:= 115; T =:= 119 ->
            scan(R, Work, [{Name, encoding(T)} | Acc]);
        {104, <<A:8, R/binary>>} -> scan(R, [{terms, A} | Work], Acc);    % tuple
        {105, <<A:32, R/binary>>} -> scan(R, [{terms, A} | Work], Acc);
        {116, <<A:32, R/binary>>} -> scan(R, [{terms, 2 * A} | Work], Acc);   % map
        {108, <<L:32, R/binary>>} -> scan(R, [{terms, L + 1} | Work], Acc);   % list and tail
        {107, <<L:16, R/binary>>} -> scan(R, [{skip, L} | Work], Acc);        % string
        {109, <<L:32, R/binary>>} -> scan(R, [{skip, L} | Work], Acc);        % binary
        {77, <<L:32, R/binary>>} -> scan(R, [{skip, L + 1} | Work], Acc);     % bitstring
        {110, <<L:8, R/binary>>} -> scan(R, [{skip, L + 1} | Work], Acc);     % bignum
        {111, <<L:32, R/binary>>} -> scan(R, [{skip, L + 1} | Work], Acc);
        %% Pids, ports and references: a node atom, then fixed fields.
        {103, _} -> scan(Rest, [{terms, 1}, {skip, 9} | Work], Acc);
        {88, _} -> scan(Rest, [{terms, 1}, {skip, 12} | Work], Acc);
        {102, _} -> scan(Rest, [{terms, 1}, {skip, 5} | Work], Acc);
        {89, _} -> scan(Rest, [{terms, 1}, {skip, 8} | Work], Acc);
        {120, _} -> scan(Rest, [{terms, 1}, {skip, 12} | Work], Acc);
        {101, _} -> scan(Rest, [{terms, 1}, {skip, 5} | Work], Acc);
        {114, <<L:16, R/binary>>} -> scan(R, [{terms, 1}, {skip, 1 + 4 * L} | Work], Acc);
        {90, <<L:16, R/binary>>} -> scan(R, [{terms, 1}, {skip, 4 + 4 * L} | Work], Acc);
        {113, _} -> scan(Rest, [{terms, 3} | Work], Acc);                 % fun M:F/A
        %% A fun: arity, uniq, index, free count; then module, old index,
        %% old uniq, pid and the free variables.
        {112, <<_Size:32, _Arity:8, _Uniq:16/binary, _Index:32, NumFree:32, R/binary>>} ->
            scan(R, [{terms, 4 + NumFree} | Work], Acc)
    end.

encoding(T) when T =:= 100; T =:= 115 -> latin1;
encoding(_) -> utf8.
