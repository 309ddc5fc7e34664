%% Katoen, Noll and Rieger's producer/consumer (paper
%% 001_21fecfa948db1449.txt, Fig. 1 and Example 4.5; ACCEPTANCE AC-25),
%% rendered in Erlang: the queue is a list held by a process; the producer
%% appends new cells at its end forever, the consumer takes them from its
%% front and waits while it is empty.  Concretely the queue grows without
%% bound; under `abstraction => {chain, M}' a queue longer than M + 3
%% cells is one summary, so there are M + 5 queue shapes (6 for M = 1,
%% the six configurations of the paper's Fig. 4) and the check ends:
%%   - no deadlock and no crash (the paper's not F (dl or err));
%%   - `[]<> new': new cells are made infinitely often (weak fairness);
%%   - the queue stays a proper list of cells (the paper's property 3).
%% Each state of the queue process carries the prop {queue, Q}.
-module(abs_queue).
-export([start/0, queue/1, producer/1, consumer/1]).

start() ->
    Q = spawn(?MODULE, queue, [[]]),
    spawn(?MODULE, producer, [Q]),
    spawn(?MODULE, consumer, [Q]),
    ok.

queue(Cells) ->
    mcerlang:prop({queue, Cells}),
    receive
        {put, Cell, From} ->
            From ! ok,
            queue(Cells ++ [Cell]);
        {get, From} when Cells =/= [] ->
            [Cell | Rest] = Cells,
            From ! {cell, Cell},
            queue(Rest)
    end.

%% Each new cell is handed over before the next is made (the paper's
%% atomic insertion), so only the queue grows, not a mailbox.
producer(Q) ->
    mcerlang:prop(new),
    Q ! {put, cell, self()},
    receive ok -> producer(Q) end.

consumer(Q) ->
    Q ! {get, self()},
    receive
        {cell, cell} -> consumer(Q)
    end.
