%% @doc How many distinct step inputs do the process steps of a check come
%% from?  A measurement for issue 17's step cache (docs/STEP_CACHE.md).
%%
%% A process step's outcome (new continuation, dictionary, effects, exit)
%% depends only on what the step reads: the request the C search sends
%% (`{run, Pid, How, Cont, Dict, TrapExit}': pid, how it runs - start,
%% receive of a message, timeout, choice -, continuation, dictionary,
%% trap_exit flag) and the answers of the NIF reads of the stored state
%% it makes while running (fresh pids and refs, whereis, is_process_alive,
%% process_info, monitors and aliases, timers, unique integers, node
%% status, ETS tables, application environment, group leader, ...).
%%
%% The tool watches a check with Erlang's call tracing, so no checker
%% module is changed and nothing costs anything when the tool does not
%% run: `mce_exec:run/6' and `mce_exec:matches/2' with their return
%% values, every read function of `mce_nif' with its answer, and the
%% simulated process dictionary's functions where the translator sends
%% `put/2', `get/1', ... (which keys a step reads).  The trace messages of one traced process arrive in the order
%% the calls were made, so the reads between a `run' call and its return
%% are that step's reads.  A collector process turns each step into keys
%% under several definitions and counts distinct keys, checks that every
%% key determines its outcome (a key that misses an input shows as two
%% outcomes for one key), and simulates LRU caches in the search's order.
%% When the collector falls behind, it suspends the check worker until it
%% has caught up, so its mailbox stays bounded.
%%
%% Pids and refs are compared as keys (`{'$P', Key}', `{'$R', Key}'),
%% wherever they occur: inside terms (continuation, message, dictionary,
%% the environments of funs) and in the integer positions of reads and
%% effects.
%%
%% Key definitions (each also applied to the outcome, so that the
%% determinism check is meaningful):
%%   a: exact: pid, how (with the message), continuation, dictionary,
%%      trap_exit, and the sequence of (read, arguments, answer);
%%   b: a, with the pids and refs the step was handed by fresh_pid and
%%      fresh_ref renamed by their order in the step (fresh pid 1, 2, ...);
%%   c: b, without the own pid: the own pid, and refs the process created
%%      (ref numbers carry their creator's pid number), renamed to self;
%%   d: c, with every other pid and ref renamed by first appearance in the
%%      key (an upper bound on what pid symmetry could give; sound only
%%      for programs that do not compare pids by order);
%%   e: b, with only the dictionary entries the step read (rand_seed
%%      always, since rand reads it outside the model), and the outcome's
%%      dictionary as the entries that changed.
%% `pre' is the request alone (a without the reads): how much the read
%% answers split the keys.
%%
%% `timing/2' is separate: it traces only the boundaries of each request,
%% with CPU timestamps, to split a check's CPU between the Erlang step, the
%% C search and the driver.
%%
%% Usage (the results and their reading are in docs/STEP_CACHE.md):
%% `mce_step_inputs:main()' measures every model of models/0 (about 25
%% minutes on a quiet machine, most of it door(4) and locker(aEx5,1));
%% `main(["door(4)"])' one of them; `print(Label, measure(Entry, Opts))'
%% any check.
-module(mce_step_inputs).

-export([main/0, main/1, models/0, measure/2, print/2, timing/2]).

-define(LRU_SIZES, [64, 512, 4096, 65536]).
%% The collector suspends the worker above HIGH queued trace messages and
%% resumes it below LOW.
-define(HIGH, 4000).
-define(LOW, 500).

%% The NIF calls that read the stored state during a step.
-define(READS, [fresh_pid, fresh_ref, node_status, process, monitor_active, alias_active,
                timer, unique, whereis, registered, alive, group_leader, processes,
                ets_tables, ets_named, ets_table, app_env]).
-define(DICT_FUNS, [{put, 2}, {get, 0}, {get, 1}, {erase, 0}, {erase, 1}, {get_keys, 0},
                    {get_keys, 1}]).

%% @doc The models measured by `main/0': bench rows (bench/mce_bench.erl)
%% that finish in minutes under the trace, and the gen_server counter.
%% counter_server(4,3) is not among them: under `timeouts => when_idle'
%% it has more than 2.4 million states (not the issue's 161,455).
-spec models() -> [{string(), mcerlang:entry(), map()}].
models() ->
    [{"counter_server(3,2)", {counter_server, start, [3, 2]}, #{timeouts => when_idle}},
     {"counter_server(3,3)", {counter_server, start, [3, 3]}, #{timeouts => when_idle}},
     {"client_server(4,3)", {client_server, start, [4, 3]}, #{}},
     {"client_server(5,2)", {client_server, start, [5, 2]}, #{}},
     {"locker(aEaEaS,1)", {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], 1]},
      #{timeouts => when_idle, property => abnormal_exit}},
     {"locker(aEaEaS,forever)",
      {locker, start, [[{a, exclusive}, {a, exclusive}, {a, shared}], forever]},
      #{timeouts => when_idle, property => abnormal_exit}},
     {"locker(aEx5,1)", {locker, start, [lists:duplicate(5, {a, exclusive}), 1]},
      #{timeouts => when_idle, property => abnormal_exit}},
     {"door(4)", {door, start, [4]}, #{treat_as_normal => [normal, pushed_locked_door]}},
     {"sup_worker(4,4)", {sup_worker, start, [4, 4]}, #{timeouts => when_idle}},
     {"dining(3)", {dining, start, [3]}, #{property => deadlock}}].

%% @doc Measures every model of models/0 and prints the tables.
-spec main() -> ok.
main() ->
    main([Label || {Label, _, _} <- models()]).

%% @doc Measures the models of models/0 with these labels.
-spec main([string()]) -> ok.
main(Labels) ->
    lists:foreach(fun({Label, Entry, Opts}) ->
                          case lists:member(Label, Labels) of
                              true -> print(Label, measure(Entry, Opts));
                              false -> ok
                          end
                  end, models()).

%% @doc Checks `Entry' with `Opts' under the trace and returns the counts.
-spec measure(mcerlang:entry(), map()) -> map().
measure(Entry, Opts) ->
    [{module, _} = code:ensure_loaded(M) || M <- [mce_nif, mce_exec]],
    Nodes = maps:get(nodes, Opts, [mce_pid:node_name()]),
    Self = self(),
    Collector = spawn_link(fun() -> collector_init(Self, Nodes) end),
    Spec = [{'_', [], [{return_trace}]}],
    1 = erlang:trace_pattern({mce_exec, run, 6}, Spec, [local]),
    1 = erlang:trace_pattern({mce_exec, matches, 2}, Spec, [local]),
    [1 = erlang:trace_pattern({mce_nif, F, '_'}, Spec, [local]) || F <- ?READS],
    [begin
         {module, _} = code:ensure_loaded(M),
         1 = erlang:trace_pattern({M, F, A}, true, [local])
     end || {M, F, A} <- dict_funs()],
    erlang:trace(new_processes, true, [call, {tracer, Collector}]),
    T0 = erlang:monotonic_time(millisecond),
    Result = try mcerlang:check(Entry, Opts#{progress => false, max_time => infinity})
             after
                 erlang:trace(new_processes, false, [call]),
                 erlang:trace_pattern({'_', '_', '_'}, false, [local])
             end,
    Ms = erlang:monotonic_time(millisecond) - T0,
    %% The worker has ended: every trace message it made is on its way.
    Ref = erlang:trace_delivered(all),
    receive {trace_delivered, all, Ref} -> ok end,
    Collector ! {done, Self},
    receive
        {counts, Collector, Counts} ->
            unlink(Collector),
            Counts#{result => result_line(Result), traced_ms => Ms}
    end.

result_line({ok, Stats}) ->
    {ok, maps:get(states, Stats), maps:get(transitions, Stats)};
result_line({error, #{stats := Stats, violation := V}}) ->
    {violation, if is_tuple(V) -> element(1, V); true -> V end,
     maps:get(states, Stats), maps:get(transitions, Stats)};
result_line({inconclusive, Why, Stats}) ->
    {inconclusive, Why, maps:get(states, Stats), maps:get(transitions, Stats)}.

%%-------------------------------------------------------------------- timing

%% @doc Where a check's CPU time goes between Erlang and C, per request:
%% the thread CPU time inside `mce_exec:run/6' (the step: executor,
%% program, its NIF reads), inside the `mce_nif:ran/5' and
%% `mce_nif:match/2' NIFs (C: applying the step, the search up to the next
%% request and building it, term conversion both ways) and the rest of the
%% driver loop.  Four trace events per step add their own cost to each
%% part (about a microsecond each), so the figures are shares, not timings.
-spec timing(mcerlang:entry(), map()) -> map().
timing(Entry, Opts) ->
    [{module, _} = code:ensure_loaded(M) || M <- [mce_nif, mce_exec]],
    Self = self(),
    Collector = spawn_link(fun() -> process_flag(message_queue_data, off_heap),
                                    timing_loop(Self, undefined, #{}) end),
    Spec = [{'_', [], [{return_trace}]}],
    1 = erlang:trace_pattern({mce_exec, run, 6}, Spec, [local]),
    1 = erlang:trace_pattern({mce_nif, ran, 5}, Spec, [local]),
    1 = erlang:trace_pattern({mce_nif, match, 2}, Spec, [local]),
    1 = erlang:trace_pattern({mce_nif, resume, 1}, Spec, [local]),
    %% CPU timestamps are per scheduler thread: with one scheduler online
    %% the worker's are all from one clock.
    Online = erlang:system_flag(schedulers_online, 1),
    erlang:trace(all, true, [call, timestamp, cpu_timestamp, {tracer, Collector}]),
    Result = try mcerlang:check(Entry, Opts#{progress => false, max_time => infinity})
             after
                 erlang:trace(all, false, [call, timestamp, cpu_timestamp]),
                 erlang:trace_pattern({'_', '_', '_'}, false, [local]),
                 erlang:system_flag(schedulers_online, Online)
             end,
    Ref = erlang:trace_delivered(all),
    receive {trace_delivered, all, Ref} -> ok end,
    Collector ! {done, Self},
    receive
        {timing, Collector, T} ->
            unlink(Collector),
            Total = lists:sum(maps:values(T)),
            T#{result => result_line(Result), total_us => Total,
               shares => maps:map(fun(_, V) -> round(1000 * V / max(Total, 1)) / 10 end, T)}
    end.

%% Attributes the CPU time between two events to what ran between them.
timing_loop(Parent, Last, Acc) ->
    receive
        {trace_ts, _, return_from, MFA, _, TS} ->
            timing_loop(Parent, TS, add(inside(MFA), Last, TS, Acc));
        {trace_ts, _, call, _MFA, TS} ->
            timing_loop(Parent, TS, add(driver, Last, TS, Acc));
        {done, Parent} ->
            Parent ! {timing, self(), Acc};
        _ ->
            timing_loop(Parent, Last, Acc)
    end.

inside({mce_exec, run, _}) -> erlang_step;
inside({mce_nif, ran, _}) -> c_ran;
inside({mce_nif, match, _}) -> c_match;
inside({mce_nif, resume, _}) -> c_resume.

add(_, undefined, _, Acc) -> Acc;
add(What, {M0, S0, U0}, {M1, S1, U1}, Acc) ->
    Us = ((M1 - M0) * 1000000 + (S1 - S0)) * 1000000 + (U1 - U0),
    maps:update_with(What, fun(X) -> X + Us end, Us, Acc).

%%-------------------------------------------------------------------- collector

-define(VARIANTS, [pre, a, b, c, d, e]).
-define(LRU_VARIANTS, [b, c]).

collector_init(Parent, Nodes) ->
    %% Queued trace messages hold continuations: off the heap, so that a
    %% garbage collection does not copy the whole queue.
    process_flag(message_queue_data, off_heap),
    process_flag(priority, high),
    %% mce_pid and mce_ref read the check's nodes from the dictionary.
    mce_pid:set_nodes(Nodes),
    Tabs = maps:from_list([{V, ets:new(V, [set, private])} || V <- ?VARIANTS]),
    put(tabs, Tabs),
    put(match_tab, ets:new(match, [set, private])),
    put(match_tab_d, ets:new(match_d, [set, private])),
    put(pre_reads, ets:new(pre_reads, [set, private])),
    put(lrus, maps:from_list([{{V, S}, lru_new(S)} || V <- ?LRU_VARIANTS, S <- ?LRU_SIZES])),
    put(counts, #{}),
    put(conflict_examples, []),
    collector(#{parent => Parent, step => undefined, pending => undefined, suspended => none,
                seen => 0}).

collector(St0) ->
    St = flow(St0),
    receive
        {trace, W, call, {mce_exec, run, [_S, Pid, How, Cont, Dict, Trap]}} ->
            collector(St#{worker => W, step := #{pid => Pid, how => How, cont => Cont,
                                    dict => Dict, trap => Trap, reads => [],
                                    dict_reads => []}});
        {trace, _, return_from, {mce_exec, run, 6}, Result} ->
            #{step := Step} = St,
            step_done(Step, Result),
            collector(St#{step := undefined});
        {trace, _, call, {mce_exec, matches, [Cont, Msg]}} ->
            collector(St#{pending := {matches, Cont, Msg}});
        {trace, _, return_from, {mce_exec, matches, 2}, Bool} ->
            #{pending := {matches, Cont, Msg}} = St,
            match_done(Cont, Msg, Bool),
            collector(St#{pending := undefined});
        {trace, _, call, {mce_nif, F, [_Search | Args]}} ->
            collector(St#{pending := {F, Args}});
        {trace, _, return_from, {mce_nif, F, _}, Answer} ->
            #{pending := {F, Args}, step := Step} = St,
            case Step of
                undefined ->
                    bump({read_outside_step, F}, 1),
                    collector(St#{pending := undefined});
                #{reads := Reads} ->
                    collector(St#{pending := undefined,
                                  step := Step#{reads := [{F, Args, Answer} | Reads]}})
            end;
        {trace, _, call, {_DictModule, F, Args}} ->
            case St of
                #{step := #{dict_reads := DR} = Step} ->
                    collector(St#{step := Step#{dict_reads := [dict_read(F, Args) | DR]}});
                _ ->
                    collector(St)
            end;
        {done, Parent} ->
            resume(St),
            Parent ! {counts, self(), final_counts()};
        _Other ->
            collector(St)
    end.

%% Keeps the mailbox bounded: the worker waits while the collector is
%% behind (between any two of its instructions; the watchdog only counts
%% reductions, which a suspended process does not use).
flow(#{seen := N} = St) when N < 256 ->
    St#{seen := N + 1};
flow(#{suspended := Susp} = St) ->
    {message_queue_len, Len} = process_info(self(), message_queue_len),
    Worker = maps:get(worker, St, none),
    if
        Susp =:= none, Len > ?HIGH, Worker =/= none ->
            case catch erlang:suspend_process(Worker) of
                true -> bump(suspensions, 1), St#{seen := 0, suspended := Worker};
                _ -> St#{seen := 0}
            end;
        Susp =/= none, Len < ?LOW ->
            resume(St),
            St#{seen := 0, suspended := none};
        true ->
            St#{seen := 0}
    end.

resume(#{suspended := none}) -> ok;
resume(#{suspended := W}) -> catch erlang:resume_process(W), ok.

%% Where translated code's put/2, get/1, ... go (the translator's own
%% classification, so that the runtime may move them).
dict_funs() ->
    [{M, F, A} || {F0, A} <- ?DICT_FUNS,
                  {redirect, M, F} <- [mce_translate:classify_call(erlang, F0, A)]].

dict_read(put, [K, _]) -> K;
dict_read(get, [K]) -> K;
dict_read(erase, [K]) -> K;
dict_read(_, _) -> '$all'.

bump(K, N) ->
    C = get(counts),
    put(counts, maps:update_with(K, fun(X) -> X + N end, N, C)).

%%-------------------------------------------------------------------- a step

step_done(#{pid := Pid, how := How, cont := Cont, dict := Dict, trap := Trap,
            reads := Reads0, dict_reads := DictReads}, {Outcome, Effects, Label}) ->
    Reads = lists:reverse(Reads0),
    bump(steps, 1),
    bump({how, how_kind(How)}, 1),
    bump({reads_per_step, min(length(Reads), 5)}, 1),
    [bump({read, F}, 1) || {F, _, _} <- Reads],
    DictReads =/= [] andalso bump(dict_touching_steps, 1),
    In = byte_size(term_to_binary({How, Cont, Dict, Trap, Reads})),
    ContB = byte_size(term_to_binary(Cont)),
    OutRaw = {Outcome, Effects, maps:get(output, Label), maps:get(probes, Label, [])},
    Out = byte_size(term_to_binary(OutRaw)),
    bump(in_bytes, In),
    bump(cont_bytes, ContB),
    bump(out_bytes, Out),
    max_of(in_bytes_max, In),
    max_of(out_bytes_max, Out),
    NReads = [norm_read(R) || R <- Reads],
    Pre = {{'$P', Pid}, norm(How), norm(Cont), norm(Dict), Trap},
    NOut = {norm(Outcome), [norm_effect(E) || E <- Effects], element(3, OutRaw),
            norm(element(4, OutRaw))},
    KeyA = {Pre, NReads},
    Fresh = fresh_map(NReads),
    KeyB = ren(KeyA, Fresh),
    OutB = ren(NOut, Fresh),
    SelfSub = self_sub(Pid),
    KeyC = ren(KeyB, SelfSub),
    OutC = ren(OutB, SelfSub),
    Canon = canon_map(KeyC),
    KeyD = ren(KeyC, Canon),
    OutD = ren(OutC, Canon),
    {KeyE, OutE} = dict_only_read(KeyB, OutB, Dict, DictReads),
    Hashes = #{pre => {hash(Pre), hash(KeyA)}, a => {hash(KeyA), hash(NOut)},
               b => {hash(KeyB), hash(OutB)}, c => {hash(KeyC), hash(OutC)},
               d => {hash(KeyD), hash(OutD)}, e => {hash(KeyE), hash(OutE)}},
    Tabs = get(tabs),
    maps:foreach(fun(V, {K, O}) -> distinct(V, maps:get(V, Tabs), K, O, In + Out, KeyA) end,
                 Hashes),
    pre_reads(Pre, NReads),
    Lrus = get(lrus),
    put(lrus, maps:map(fun({V, _Size}, L) ->
                               {K, _} = maps:get(V, Hashes),
                               {Hit, L1} = lru_access(K, L),
                               Hit andalso bump({lru_hit, V, lru_cap(L)}, 1),
                               L1
                       end, Lrus)),
    ok.

how_kind({'receive', _}) -> 'receive';
how_kind({choice, _}) -> choice;
how_kind(H) -> H.

max_of(K, V) ->
    C = get(counts),
    put(counts, C#{K => max(V, maps:get(K, C, 0))}).

%% A key met before must come with the outcome it came with then; the
%% bytes of each new key's input and outcome are what an unbounded cache
%% would hold.  For `pre', the "outcome" is the reads' answers: a second
%% value means the reads must be re-asked to tell the steps apart.
distinct(V, Tab, K, O, Bytes, KeyA) ->
    case ets:insert_new(Tab, {K, O}) of
        true ->
            bump({distinct, V}, 1),
            bump({distinct_bytes, V}, Bytes);
        false when V =:= pre ->
            ok;
        false ->
            case ets:lookup_element(Tab, K, 2) of
                O -> ok;
                _ ->
                    bump({conflict, V}, 1),
                    Ex = get(conflict_examples),
                    length([x || {V1, _} <- Ex, V1 =:= V]) < 3 andalso
                        put(conflict_examples, [{V, KeyA} | Ex])
            end
    end.

%% Which read first differs between two steps with the same request.
pre_reads(Pre, NReads) ->
    Tab = get(pre_reads),
    K = hash(Pre),
    Sig = [{F, hash(R)} || {F, _, _} = R <- NReads],
    case ets:lookup(Tab, K) of
        [] -> ets:insert(Tab, {K, Sig});
        [{_, Sig}] -> ok;
        [{_, Other}] -> bump({reads_differ, first_difference(Sig, Other)}, 1)
    end,
    ok.

first_difference([{F, H} | A], [{F, H} | B]) -> first_difference(A, B);
first_difference([{F, _} | _], [{F, _} | _]) -> F;
first_difference([{F, _} | _], [{G, _} | _]) -> {F, G};
first_difference(_, _) -> length.

match_done(Cont, Msg, _Bool) ->
    bump(matches, 1),
    K = {norm(Cont), norm(Msg)},
    ets:insert_new(get(match_tab), {hash(K)}) andalso bump(match_distinct, 1),
    ets:insert_new(get(match_tab_d), {hash(ren(K, canon_map(K)))}) andalso
        bump(match_distinct_d, 1).

%%-------------------------------------------------------------------- keys

hash(T) ->
    <<H:59, _/bitstring>> = erlang:md5(term_to_binary(T)),
    H.

%% Pids and refs of the simulated nodes as keys, maps sorted, funs as
%% their code and environment.
norm(T) when is_pid(T) ->
    case mce_pid:number(T) of
        {ok, K} -> {'$P', K};
        error -> T
    end;
norm(T) when is_reference(T) ->
    case mce_ref:number(T) of
        {ok, K} -> {'$R', K};
        error ->
            case mce_ref:tid_number(T) of
                {ok, K} -> {'$R', K};
                error -> T
            end
    end;
norm([H | T]) -> [norm(H) | norm(T)];
norm(T) when is_tuple(T) -> list_to_tuple(norm(tuple_to_list(T)));
norm(M) when is_map(M) -> {'$map', lists:sort([{norm(K), norm(V)} || {K, V} <- maps:to_list(M)])};
norm(F) when is_function(F) ->
    case erlang:fun_info(F, type) of
        {type, external} -> F;
        {type, local} ->
            Info = [element(2, erlang:fun_info(F, I)) || I <- [module, index, uniq, arity]],
            {env, Env} = erlang:fun_info(F, env),
            {'$fun', Info, norm(Env)}
    end;
norm(T) -> T.

p(K) when is_integer(K) -> {'$P', K};
p(Other) -> Other.
r(K) when is_integer(K) -> {'$R', K};
r(Other) -> Other.

%% Reads with their pid and ref integers as keys.
norm_read({F, Args, Answer}) ->
    {NArgs, NAnswer} =
        case {F, Args} of
            {fresh_pid, _} -> {Args, p(Answer)};
            {fresh_ref, _} -> {Args, r(Answer)};
            {alive, [P]} -> {[p(P)], Answer};
            {process, [P]} -> {[p(P)], norm_process(Answer)};
            {group_leader, [P]} -> {[p(P)], Answer};
            {monitor_active, [P, R]} -> {[p(P), r(R)], Answer};
            {alias_active, [P, R]} -> {[p(P), r(R)], Answer};
            {timer, [R]} -> {[r(R)], Answer};
            {whereis, _} -> {Args, p(Answer)};
            {processes, _} when is_list(Answer) -> {Args, [p(P) || P <- Answer]};
            {ets_table, [T]} -> {[r(T)], norm(Answer)};
            {ets_named, _} -> {Args, r(Answer)};
            {ets_tables, _} when is_list(Answer) -> {Args, [r(T) || T <- Answer]};
            _ -> {norm(Args), norm(Answer)}
        end,
    {F, NArgs, NAnswer}.

norm_process({St, Msgs, Links, Mons, MonBy, Name, Trap, Dict}) ->
    {St, norm(Msgs), [p(L) || L <- Links], [{r(R), p(P), norm(I)} || {R, P, I} <- Mons],
     [{r(R), p(P), norm(I)} || {R, P, I} <- MonBy], Name, Trap, norm(Dict)};
norm_process(Other) ->
    norm(Other).

%% Effects with their pid and ref integers as keys (see mce_search:effect/1).
norm_effect({send, N, Msg}) -> {send, p(N), norm(Msg)};
norm_effect({send_name, N, Name, Msg}) -> {send_name, N, Name, norm(Msg)};
norm_effect({spawn, N, Call, Link}) -> {spawn, p(N), norm(Call), Link};
norm_effect({link, N}) -> {link, p(N)};
norm_effect({unlink, N}) -> {unlink, p(N)};
norm_effect({exit, N, Reason}) -> {exit, p(N), norm(Reason)};
norm_effect({register, N, Name}) -> {register, p(N), Name};
norm_effect({monitor, N, R, Item}) -> {monitor, p(N), r(R), norm(Item)};
norm_effect({monitor, N, R, Item, Name}) -> {monitor, N, r(R), norm(Item), Name};
norm_effect({spawn_monitor, N, R, Item}) -> {spawn_monitor, p(N), r(R), norm(Item)};
norm_effect({demonitor, R, Flush}) -> {demonitor, r(R), Flush};
norm_effect({send_alias, R, Msg}) -> {send_alias, r(R), norm(Msg)};
norm_effect({alias, R, Mode}) -> {alias, r(R), Mode};
norm_effect({unalias, R}) -> {unalias, r(R)};
norm_effect({timer, R, N, Name, Msg, Time}) -> {timer, r(R), p(N), Name, norm(Msg), Time};
norm_effect({cancel_timer, R}) -> {cancel_timer, r(R)};
norm_effect({ets_put, T, Owner, Heir, Name, Data, HeirData}) ->
    {ets_put, r(T), p(Owner), norm(Heir), Name, norm(Data), norm(HeirData)};
norm_effect({ets_delete, T}) -> {ets_delete, r(T)};
norm_effect(Other) -> norm(Other).

%% The pids and refs the step was handed, by their order in the step.
fresh_map(NReads) ->
    {Map, _, _} = lists:foldl(
                    fun({fresh_pid, _, {'$P', _} = P}, {M, NP, NR}) ->
                            {M#{P => {'$fresh_pid', NP}}, NP + 1, NR};
                       ({fresh_ref, _, {'$R', _} = R}, {M, NP, NR}) ->
                            {M#{R => {'$fresh_ref', NR}}, NP, NR + 1};
                       (_, Acc) -> Acc
                    end, {#{}, 1, 1}, NReads),
    Map.

%% The own pid, and the refs it created, relative to itself.  A ref's
%% number is Creator << 10 | Counter within its node's 24 bits.
self_sub(Pid) ->
    Node = Pid bsr 24,
    Num = Pid band 16#ffffff,
    fun({'$P', P}) when P =:= Pid -> {ok, '$self'};
       ({'$R', R}) when R bsr 24 =:= Node, (R band 16#ffffff) bsr 10 =:= Num ->
            {ok, {'$self_ref', R band 16#3ff}};
       (_) -> no
    end.

%% Every pid and ref left, by first appearance.
canon_map(Key) ->
    {Map, _} = canon(Key, {#{}, 0}),
    Map.

canon({'$P', _} = P, {M, N} = Acc) ->
    case M of
        #{P := _} -> Acc;
        _ -> {M#{P => {'$pid', N}}, N + 1}
    end;
canon({'$R', _} = R, {M, N} = Acc) ->
    case M of
        #{R := _} -> Acc;
        _ -> {M#{R => {'$ref', N}}, N + 1}
    end;
canon([H | T], Acc) -> canon(T, canon(H, Acc));
canon(T, Acc) when is_tuple(T) -> canon(tuple_to_list(T), Acc);
canon(_, Acc) -> Acc.

%% Renames keys by a map or a function.
ren(T, Map) when is_map(Map), map_size(Map) =:= 0 -> T;
ren(T, Map) when is_map(Map) ->
    ren(T, fun(K) -> case Map of #{K := V} -> {ok, V}; _ -> no end end);
ren({Tag, _} = T, Sub) when Tag =:= '$P'; Tag =:= '$R' ->
    case Sub(T) of
        {ok, V} -> V;
        no -> T
    end;
ren([H | T], Sub) -> [ren(H, Sub) | ren(T, Sub)];
ren(T, Sub) when is_tuple(T) -> list_to_tuple(ren(tuple_to_list(T), Sub));
ren(T, _Sub) -> T.

%% Key e: b with the dictionary cut to the entries read; the outcome's
%% dictionary as what changed.
dict_only_read({{P, How, Cont, _NDict, Trap}, Reads}, Out, Dict, DictReads) ->
    Read = case lists:member('$all', DictReads) of
               true -> Dict;
               false -> [KV || {K, _} = KV <- Dict,
                               K =:= rand_seed orelse lists:member(K, DictReads)]
           end,
    Key = {{P, How, Cont, norm(Read), Trap}, Reads},
    NOut = case Out of
               {{wait, T, C, Final}, E, O, Pr} -> {{wait, T, C, delta(Dict, Final)}, E, O, Pr};
               {{choice, N, C, Final}, E, O, Pr} -> {{choice, N, C, delta(Dict, Final)}, E, O, Pr};
               _ -> Out
           end,
    {Key, NOut}.

%% Entries that changed or appeared, and keys that went.  Both sides are
%% in the key normal form already except Dict (the raw input).
delta(Dict, Final) ->
    NDict = norm(Dict),
    {[KV || KV <- Final, not lists:member(KV, NDict)],
     [K || {K, _} <- NDict, not lists:keymember(K, 1, Final)]}.

%%-------------------------------------------------------------------- LRU

lru_new(Cap) -> {Cap, 0, #{}, gb_trees:empty()}.

lru_cap({Cap, _, _, _}) -> Cap.

lru_access(K, {Cap, Tick, Map, Tree}) ->
    case Map of
        #{K := Old} ->
            Tree1 = gb_trees:insert(Tick, K, gb_trees:delete(Old, Tree)),
            {true, {Cap, Tick + 1, Map#{K := Tick}, Tree1}};
        _ ->
            Map1 = Map#{K => Tick},
            Tree1 = gb_trees:insert(Tick, K, Tree),
            case map_size(Map1) > Cap of
                true ->
                    {_, Evicted, Tree2} = gb_trees:take_smallest(Tree1),
                    {false, {Cap, Tick + 1, maps:remove(Evicted, Map1), Tree2}};
                false ->
                    {false, {Cap, Tick + 1, Map1, Tree1}}
            end
    end.

%%-------------------------------------------------------------------- report

final_counts() ->
    (get(counts))#{conflict_examples => lists:reverse(get(conflict_examples))}.

%% @doc Prints one model's counts.
-spec print(string(), map()) -> ok.
print(Label, C) ->
    G = fun(K) -> maps:get(K, C, 0) end,
    Steps = G(steps),
    Pct = fun(N) -> 100 * N / max(Steps, 1) end,
    io:format("~n== ~s: ~p, ~.1f s under the trace~n", [Label, G(result), G(traced_ms) / 1000]),
    io:format("steps run in Erlang ~b; match requests ~b (distinct (cont, msg) ~b, "
              "~b with all pids renamed)~n", [Steps, G(matches), G(match_distinct),
                                              G(match_distinct_d)]),
    io:format("how: ~s~n", [kinds(C, how)]),
    io:format("key   distinct  hit% unbounded  conflicts  bytes held (in+out of distinct)~n"),
    [io:format("~-5w ~8b  ~6.1f          ~9b  ~b~n",
               [V, G({distinct, V}), 100 - Pct(G({distinct, V})), G({conflict, V}),
                G({distinct_bytes, V})])
     || V <- ?VARIANTS],
    [io:format("LRU ~b on key ~w: hit ~.1f%~n", [S, V, Pct(G({lru_hit, V, S}))])
     || V <- ?LRU_VARIANTS, S <- ?LRU_SIZES],
    io:format("reads: ~s~n", [kinds(C, read)]),
    io:format("reads per step (5 = 5 or more): ~s~n", [kinds(C, reads_per_step)]),
    io:format("requests seen again with other read answers, by first differing read: ~s~n",
              [kinds(C, reads_differ)]),
    io:format("steps touching the dictionary ~b~n", [G(dict_touching_steps)]),
    io:format("bytes of ETF per step: input ~b (continuation ~b), outcome ~b; "
              "max input ~b, max outcome ~b~n",
              [G(in_bytes) div max(Steps, 1), G(cont_bytes) div max(Steps, 1),
               G(out_bytes) div max(Steps, 1), G(in_bytes_max), G(out_bytes_max)]),
    io:format("collector suspended the worker ~b times~n", [G(suspensions)]),
    [io:format("conflict example on key ~w: ~P~n", [V, K, 40])
     || {V, K} <- maps:get(conflict_examples, C, [])],
    ok.

kinds(C, Tag) ->
    L = lists:sort([{K, N} || {{T, K}, N} <- maps:to_list(C), T =:= Tag]),
    string:join([io_lib:format("~p ~b", [K, N]) || {K, N} <- L], ", ").
