%% @doc Simulated refs as real Erlang reference terms.
%%
%% make_ref/0 and monitor/2 in checked code return genuine references on
%% the simulated node (so is_reference/1, matching and printing work), whose
%% number the runtime allocates least-fresh, as it does pids: a program
%% that makes a ref per request does not make the state space infinite.
%% Refs are named by keys like pids (see mce_pid).
-module(mce_ref).

-export([term/1, number/1, tid_term/1, tid_number/1]).

%% A ref's number is Creator << COUNTER_BITS | Counter: refs are numbered
%% least-fresh among those of the process that made them, so that other
%% processes making refs in between does not rename them.  In the term the
%% counter is ID word 0 and the creator word 1: #Ref<0.0.Creator.Counter>.
%% Keep in step with ETF_REF_COUNTER_BITS in c_src/etf_scan.h.
-define(COUNTER_BITS, 10).
-define(COUNTER_MASK, 16#3ff).
%% ID word 2 of an ETS tid, 0 in other refs: ETF_REF_TID_MARK in
%% c_src/etf_scan.h.
-define(TID_MARK, 1).

-spec term(non_neg_integer()) -> reference().
term(Key) ->
    term(Key, 0).

%% @doc The tid of the ETS table whose key is Key: a ref of that number
%% that no make_ref/0 gives, as OTP tells tids from other refs.
-spec tid_term(non_neg_integer()) -> reference().
tid_term(Key) ->
    term(Key, ?TID_MARK).

term(Key, Mark) when is_integer(Key), Key >= 0 ->
    Node = mce_pid:node_bin(Key bsr 24),
    N = Key band 16#ffffff,
    binary_to_term(<<131, 90, 3:16, 100, (byte_size(Node)):16, Node/binary,
                     (mce_pid:cached_creation()):32, (N band ?COUNTER_MASK):32,
                     (N bsr ?COUNTER_BITS):32, Mark:32>>).

%% @doc The key of a simulated ref (not a tid), or `error' for any other
%% term.
-spec number(term()) -> {ok, non_neg_integer()} | error.
number(Ref) ->
    number(Ref, 0).

%% @doc The key of a simulated ETS tid, or `error' for any other term.
-spec tid_number(term()) -> {ok, non_neg_integer()} | error.
tid_number(Ref) ->
    number(Ref, ?TID_MARK).

number(Ref, Mark) when is_reference(Ref) ->
    Cr = mce_pid:cached_creation(),
    case term_to_binary(Ref) of
        <<131, 90, 3:16, Tag, Size:16, Node:Size/binary, Cr:32, Counter:32, Creator:32, Mark:32>>
          when Tag =:= 100; Tag =:= 118 ->
            case mce_pid:bin_index(Node) of
                {ok, I} when Counter =< ?COUNTER_MASK, Creator < 1 bsl (24 - ?COUNTER_BITS) ->
                    {ok, mce_pid:key(I, Creator bsl ?COUNTER_BITS bor Counter)};
                _ -> error
            end;
        _ -> error
    end;
number(_, _) ->
    error.
