%% @doc How a pid reads in what a person sees (the text report, the
%% chart): a pid of the simulated nodes as `node/<0.N.S>', never the raw
%% `<8349.N.S>' whose first number is only this VM's index of the node.
%%
%% The checker gives each simulated node's processes pids of that node
%% (mce_pid:term/1): N and S are the process's number and serial, as a
%% local pid shows them on its own node, so `n2@host/<0.3.0>' is what an
%% `erlang:pid_to_list/1' on n2@host would print after the node's name.
%% Pure: a pid in, text out; terms printed elsewhere are rewritten pid by
%% pid (the pids they hold tell their nodes).
-module(mce_pid_text).

-export([pid/1, pid/2, rewrite/2]).

%% @equiv pid(Pid, false)
-spec pid(pid()) -> string().
pid(Pid) ->
    pid(Pid, false).

%% @doc A pid as text: node-qualified when it is of another node than this
%% VM's, or when `Always' (a run that spans nodes shows every pid's node).
-spec pid(pid(), boolean()) -> string().
pid(Pid, Always) when is_pid(Pid), is_boolean(Always) ->
    case node(Pid) =:= node() andalso not Always of
        true -> pid_to_list(Pid);
        false -> atom_to_list(node(Pid)) ++ "/" ++ local_form(Pid)
    end.

%% @doc `Text' (a term printed with ~p or ~P) with each pid of `Term' that
%% belongs to another node written node-qualified.  The printed form of a
%% pid ends in `>', so no pid's text is a prefix of another's.
-spec rewrite(unicode:chardata(), term()) -> unicode:chardata().
rewrite(Text, Term) ->
    case lists:usort([P || P <- pids(Term, []), node(P) =/= node()]) of
        [] -> Text;
        Remote ->
            lists:foldl(fun(P, T) -> string:replace(T, pid_to_list(P), pid(P), all) end,
                        Text, Remote)
    end.

local_form(Pid) ->
    [_Node, N, S] = string:lexemes(string:trim(pid_to_list(Pid), both, "<>"), "."),
    "<0." ++ N ++ "." ++ S ++ ">".

pids(P, Acc) when is_pid(P) -> [P | Acc];
pids([H | T], Acc) -> pids(T, pids(H, Acc));
pids(T, Acc) when is_tuple(T) -> pids(tuple_to_list(T), Acc);
pids(M, Acc) when is_map(M) -> pids(maps:to_list(M), Acc);
pids(_, Acc) -> Acc.
