%% @doc Folds OTP's internal call protocol in a counterexample, for the
%% reports (`fold => otp' of mcerlang:format/2 and mcerlang:msc/3).
%%
%% A `gen_server:call' (and every call through `gen:call': gen_statem,
%% supervisor, ...) is, in the trace, a monitor of the server, maybe an
%% alias, the request `{'$gen_call', {Caller, Tag}, Request}', the server's
%% reply `{Tag, Reply}' and a demonitor.  Folded, the request reads as a
%% call and the reply as a reply, and the monitor, alias and demonitor of
%% the call (the effects whose ref is the call's tag) are left out: one
%% arrow for the call, one for its reply.
%%
%% Input: a counterexample; output: the same counterexample with every
%% message of a call rewritten, wherever it appears (sends, receives,
%% deliveries, mailboxes, the ether), to `{'$call', Caller, Request}' or
%% `{'$reply', Reply}', which mce_format and mce_msc print as calls and
%% replies.  Rewriting everywhere keeps a send and its delivery equal, as
%% the chart's matching of the two needs.  Pure.
-module(mce_fold).

-export([otp/1]).

%% @doc The counterexample with its OTP calls folded (see above).
-spec otp(map()) -> map().
otp(Cex) ->
    Steps = maps:get(trace, Cex, []) ++ maps:get(cycle, Cex, []),
    Tags = maps:from_keys(lists:usort(tags(Steps ++ [maps:get(final_state, Cex, []),
                                                     maps:get(ether, Cex, [])], [])), true),
    Refs = maps:from_keys([R || T <- maps:keys(Tags), R <- [tag_ref(T)], R =/= none], true),
    Msg = fun(M) -> message(M, Tags) end,
    Fold = fun(Step) -> step(Step, Msg, Refs) end,
    maps:map(fun(trace, Trace) -> [Fold(S) || S <- Trace];
                (cycle, Cycle) -> [Fold(S) || S <- Cycle];
                (final_state, Procs) ->
                    [case P of
                         #{mailbox := Box} -> P#{mailbox := [Msg(M) || M <- Box]};
                         _ -> P
                     end || P <- Procs];
                (ether, Channels) ->
                    [case C of
                         #{signals := Sigs} -> C#{signals := [signal(S, Msg) || S <- Sigs]};
                         _ -> C
                     end || C <- Channels];
                (_, V) -> V
             end, Cex).

%% The tags of the calls anywhere in the counterexample.
tags({'$gen_call', {_Caller, Tag}, _Request}, Acc) -> [Tag | Acc];
tags(T, Acc) when is_tuple(T) -> tags(tuple_to_list(T), Acc);
tags([H | T], Acc) -> tags(T, tags(H, Acc));
tags(M, Acc) when is_map(M) -> tags(maps:values(M), Acc);
tags(_, Acc) -> Acc.

%% The ref of a call's tag: a plain ref, or `[alias | Ref]' (OTP 24 on).
tag_ref(R) when is_reference(R) -> R;
tag_ref([alias | R]) when is_reference(R) -> R;
tag_ref(_) -> none.

message({'$gen_call', {Caller, Tag}, Request}, Tags) when is_map_key(Tag, Tags) ->
    {'$call', Caller, Request};
message({Tag, Reply}, Tags) when is_map_key(Tag, Tags) ->
    {'$reply', Reply};
message(M, _Tags) ->
    M.

signal({message, M}, Msg) -> {message, Msg(M)};
signal(S, _Msg) -> S.

step(#{kind := run} = Step, Msg, Refs) ->
    Effects = [effect(E, Msg) || E <- maps:get(effects, Step, []), not of_call(E, Refs)],
    S1 = Step#{effects => Effects},
    case S1 of
        #{action := {'receive', M}} -> S1#{action := {'receive', Msg(M)}};
        _ -> S1
    end;
step(#{kind := deliver, signal := Signal} = Step, Msg, _Refs) ->
    Step#{signal := signal(Signal, Msg)};
step(Step, _Msg, _Refs) ->
    Step.

effect({send, To, M}, Msg) -> {send, To, Msg(M)};
effect(E, _Msg) -> E.

%% The monitor, alias and demonitor of a call: their ref is the call's.
of_call({monitor, _What, Ref}, Refs) -> is_map_key(Ref, Refs);
of_call({demonitor, Ref, _Flush}, Refs) -> is_map_key(Ref, Refs);
of_call({alias, Ref}, Refs) -> is_map_key(Ref, Refs);
of_call({unalias, Ref}, Refs) -> is_map_key(Ref, Refs);
of_call(_, _Refs) -> false.
