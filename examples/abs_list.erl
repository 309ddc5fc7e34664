%% The false negative of Katoen, Noll and Rieger (paper
%% 001_21fecfa948db1449.txt, section 5, "Limitations"; ACCEPTANCE AC-26):
%% a process builds a list of N cells and then deletes them again;
%% `<> empty' (the list becomes empty) holds concretely.  Under a chain
%% abstraction that summarises the list (N more than M + 3 under
%% `{chain, M}'), taking a cell off the summary may leave a summary
%% behind, forever: the abstract system has a run on which the list never
%% empties.  That counterexample does not replay concretely, so the
%% verdict is `{inconclusive, {possibly_spurious, Cex}, Stats}'.
-module(abs_list).
-export([start/1]).

start(N) ->
    build(N, []).

build(0, Cells) ->
    delete(Cells);
build(N, Cells) ->
    build(N - 1, [cell | Cells]).

delete([]) ->
    mcerlang:prop(empty),
    ok;
delete([_ | Cells]) ->
    mcerlang:prop(nonempty),
    delete(Cells).
