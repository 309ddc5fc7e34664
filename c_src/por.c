/*
** por.c: the safe-step test of partial-order reduction (por.h).  The
** rules and why each is needed are in docs/ARCHITECTURE.md, "Partial-order
** reduction"; here each test names its rule.
*/
#include "por.h"

#include <stddef.h>

#include "etf_scan.h"

/* Whether `key` is among the pids and refs of one of the term parts
** ids[0..n) (0 ids are [] and hold nothing).  The parts' lists are
** sorted (part_store.h), so each is a binary search. */
static int held_by(const part_store *ps, const part_id *ids, int n, uint32_t key)
{
    for (int i = 0; i < n; i++) {
        const part *p = ids[i] != 0 ? part_store_get(ps, ids[i]) : NULL;
        if (p == NULL)
            continue;
        size_t lo = 0, hi = p->npids;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (p->pids[mid] == key)
                return 1;
            if (p->pids[mid] < key)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    return 0;
}

/* Every pid and ref key of the parts from[0..nfrom) is the running
** process's own pid, is held by one of the parts to[0..nto), or (with
** `live`, NULL: none) is the pid of a process of that state, which keeps
** its number in use.  Up to a renaming of pid numbers and ref counters
** (por.h) the question is not asked: taking or freeing a number commutes
** with every other step. */
static int keys_within(const part_store *ps, const part_id *from, int nfrom,
                       const part_id *to, int nto, uint32_t self,
                       const sys_state *live)
{
    for (int i = 0; i < nfrom; i++) {
        const part *p = from[i] != 0 ? part_store_get(ps, from[i]) : NULL;
        if (from[i] != 0 && p == NULL)
            return 0;           /* not a part we know: not safe */
        for (uint32_t k = 0; p != NULL && k < p->npids; k++) {
            uint32_t key = p->pids[k];
            if (key == self || held_by(ps, to, nto, key))
                continue;
            if (live == NULL || (key & ETF_REF_TAG) || sys_state_find(live, key) < 0)
                return 0;
        }
    }
    return 1;
}

/* Whether one of keys[0..nkeys) is held by a term part `id`. */
static int holds_any(const part_store *ps, part_id id, const uint32_t *keys, int nkeys)
{
    for (int k = 0; k < nkeys; k++)
        if (held_by(ps, &id, 1, keys[k]))
            return 1;
    return 0;
}

/* Whether a mailbox's messages hold one of the keys. */
static int mailbox_holds(const part_store *ps, part_id mb, const uint32_t *keys, int nkeys)
{
    uint32_t n = mailbox_length(ps, mb);
    for (uint32_t i = 0; i < n; i++)
        if (holds_any(ps, mailbox_at(ps, mb, i), keys, nkeys))
            return 1;
    return 0;
}

/* Whether process o's terms hold one of the keys: its continuation (an
** init process's call), dictionary or mailbox. */
static int proc_holds(const part_store *ps, const proc *o, const uint32_t *keys, int nkeys)
{
    return holds_any(ps, o->cont, keys, nkeys) || holds_any(ps, o->dict, keys, nkeys) ||
           mailbox_holds(ps, o->mailbox, keys, nkeys);
}

/* Whether a term outside the processes holds one of the keys: a table's
** data or heir data, the application environment, or a signal in the
** ether (every word is tried as a term part: a word that is no term part
** can only make the answer "held"). */
static int held_outside_processes(const part_store *ps, const sys_state *st,
                                  const uint32_t *keys, int nkeys)
{
    for (uint32_t k = 0; k < st->ntables; k++)
        if (holds_any(ps, st->tables[k].data, keys, nkeys) ||
            holds_any(ps, st->tables[k].heir_data, keys, nkeys))
            return 1;
    if (holds_any(ps, st->app_env, keys, nkeys))
        return 1;
    for (uint32_t k = 0; k < st->nchans; k++) {
        const channel *ch = &st->chans[k];
        uint32_t n = mailbox_length(ps, ch->queue);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t sig[4];
            if (signal_get(ps, mailbox_at(ps, ch->queue, i), sig) != 0)
                return 1;
            for (int w = 1; w < 4; w++)
                if (sig[w] != 0 && holds_any(ps, sig[w], keys, nkeys))
                    return 1;
        }
    }
    return 0;
}

/* Rule 7c: no one but P (index ip) and Q (index iq) can write Q's
** mailbox before P's step, nor learn how to.  Conservative: any doubt is
** "not exclusive". */
static int exclusive(const part_store *ps, const por_sends *c, int ip, int iq)
{
    const sys_state *st = c->before;
    const proc *p = &st->procs[ip], *q = &st->procs[iq];
    /* Q's pid and its active aliases are what a writer must hold. */
    uint32_t keys[17];
    int nkeys = 0;
    keys[nkeys++] = q->pid;
    if (q->aliases.n > 16)
        return 0;
    for (uint32_t k = 0; k < q->aliases.n; k++)
        keys[nkeys++] = q->aliases.m[k].ref | ETF_REF_TAG;
    /* Links, monitors both ways and node monitors bring exit signals,
    ** 'DOWN's and nodedowns, and process_info(self(), links | monitors |
    ** monitored_by) tells the other end Q's pid: only P may be there. */
    for (uint32_t k = 0; k < q->nlinks; k++)
        if (q->links[k] != p->pid)
            return 0;
    for (uint32_t k = 0; k < q->mons.n; k++)
        if (q->mons.m[k].pid != p->pid || q->mons.m[k].item != 0)
            return 0;
    for (uint32_t k = 0; k < q->monby.n; k++)
        if (q->monby.m[k].pid != p->pid)
            return 0;
    for (uint32_t k = 0; k < st->nnodemons; k++)
        if (st->nodemons[k].pid == q->pid)
            return 0;
    /* Every other process's terms: continuation (an init process's call),
    ** dictionary, mailbox; and no group leader is set (a process's io
    ** goes to its group leader). */
    for (uint32_t i = 0; i < st->nprocs; i++) {
        const proc *o = &st->procs[i];
        if ((int)i == ip || (int)i == iq)
            continue;
        if (o->gl != 0 || proc_holds(ps, o, keys, nkeys))
            return 0;
    }
    /* ETS: a table Q owns (ets:info(T, owner)) or inherits (an
    ** 'ETS-TRANSFER'); the ether: a channel from or to Q (timers to Q
    ** among them) or a node-pair channel (envelopes); and the keys held
    ** by a table, the application environment or a signal. */
    for (uint32_t k = 0; k < st->ntables; k++)
        if (st->tables[k].owner == q->pid || st->tables[k].heir == q->pid)
            return 0;
    for (uint32_t k = 0; k < st->nchans; k++) {
        const channel *ch = &st->chans[k];
        if (ch->from == q->pid || ch->to == q->pid ||
            KEY_NUM(ch->from) == KEY_NODE_CHAN || KEY_NUM(ch->to) == KEY_NODE_CHAN)
            return 0;
    }
    return !held_outside_processes(ps, st, keys, nkeys);
}

/* Rule 7b: Q waits in a receive that nothing in its mailbox matches (as
** far as the memo knows), and no timeout of its can fire before t. */
static int blocked(const part_store *ps, const por_sends *c, const proc *q)
{
    if (q->status != PROC_WAITING || q->name != 0)
        return 0;
    if ((q->flags & PF_TIMEOUT) &&
        (!c->timeouts_when_idle || (q->flags & PF_TIMEOUT_ZERO)))
        return 0;
    uint32_t n = mailbox_length(ps, q->mailbox);
    for (uint32_t i = 0; i < n; i++)
        if (match_memo_get(c->memo, q->cont, mailbox_at(ps, q->mailbox, i)) != 0)
            return 0;
    return 1;
}

/* Rule 7: a step whose effects are all sends, to processes that are
** blocked and that no one else can write to before it; with the renaming
** (rule 8) plain spawns on P's node too.  The verdict, POR_UNSAFE when
** not safe. */
static int sends_safe(const part_store *ps, const por_step *t)
{
    const por_sends *c = t->sends;
    const sys_state *st = c->before;
    int ip = sys_state_find(st, t->pid);
    if (ip < 0 || !c->instant || c->faults_left)
        return 0;
    const proc *p = &st->procs[ip];
    /* 7a: nothing kills P before t: no fault, no link whose exit signal
    ** is not a message, no exit signal to P already in the ether (a later
    ** exit/2 or link by another process is the guard's). */
    if (p->nlinks != 0 && !(p->flags & PF_TRAP_EXIT))
        return 0;
    for (uint32_t k = 0; k < st->nchans; k++)
        if (st->chans[k].to == p->pid && !(st->chans[k].from & KEY_TIMER))
            return 0;
    /* At most 8 sends, a bound on the work per step, not on soundness. */
    if (t->neffects > 8)
        return 0;
    part_id to[2 + 8] = { t->new_cont, t->new_dict };
    int nto = 2, spawned = 0;
    for (size_t e = 0; e < t->neffects; e++) {
        const effect *ef = &c->effects[e];
        /* Rule 8: a plain spawn on P's node makes a process only P knows,
        ** whose start comes after t.  Its one dependency, the fresh pid
        ** number, commutes up to a renaming of pids.  Not absorbed by P's
        ** death (the child would live on): 7a keeps P alive until t. */
        if (ef->kind == EFFECT_SPAWN) {
            if (!t->renaming || ef->link || KEY_NODE(ef->pid) != KEY_NODE(p->pid))
                return 0;
            spawned = 1;
            if (ef->term.id != 0)
                to[nto++] = ef->term.id;    /* what the child is given */
            continue;
        }
        if ((ef->kind != EFFECT_SEND && ef->kind != EFFECT_SEND_ALIAS) || ef->term.id == 0)
            return 0;
        /* A send to an alias (a gen_server reply) reaches the process
        ** whose alias it is while active: the same rule, with Q that
        ** process (exclusive counts its aliases among what a writer must
        ** hold). */
        int iq = ef->kind == EFFECT_SEND ? sys_state_find(st, ef->pid)
                                         : sys_state_find_alias(st, ef->ref);
        if (iq < 0 || st->procs[iq].pid == p->pid ||
            KEY_NODE(st->procs[iq].pid) != KEY_NODE(p->pid))
            return 0;
        if (!blocked(ps, c, &st->procs[iq]) || !exclusive(ps, c, ip, iq))
            return 0;
        to[nto++] = ef->term.id;
    }
    /* A fresh pid is taken by a spawn, and by nothing else safe. */
    if (t->read_fresh_pid && !spawned)
        return POR_UNSAFE;
    /* 7d (rule 5 generalised): the step takes no number (what it leaves
    ** and sends holds only keys it had), and frees none: every key it
    ** consumed is still held by what it leaves or sends, or is the pid of
    ** a live process.  7d': up to a renaming, no question. */
    part_id before[3] = { t->msg, t->old_cont, t->old_dict };
    if (!spawned && !t->read_fresh_ref && keys_within(ps, to, nto, before, 3, t->pid, NULL) &&
        keys_within(ps, before, 3, to, nto, t->pid, c->after))
        return POR_SAFE_SENDS;
    return t->renaming ? POR_SAFE_SENDS | POR_RENAMED : POR_UNSAFE;
}

/* Rule 9 (with the renaming): P's normal end, when nothing of the state
** is tied to P but its pid.  Its death then shows only to a step aimed at
** P's pid: a send (dropped, or appended to a mailbox that goes with P: the
** same state) or a link, monitor, exit signal or liveness test, which the
** search's guard watches (search_dead_target); its freed number only up to
** the renaming; and it is not absorbed by a kill (a death judged
** otherwise), so 7a must hold. */
static int exit_safe(const por_step *t)
{
    const por_sends *c = t->sends;
    if (c == NULL || !t->renaming || t->neffects != 0 || t->read_fresh_pid ||
        !c->instant || c->faults_left)
        return POR_UNSAFE;
    const sys_state *st = c->before;
    int ip = sys_state_find(st, t->pid);
    if (ip < 0 || t->pid == c->entry)
        return POR_UNSAFE;
    const proc *p = &st->procs[ip];
    /* Links and monitors carry its death as signals, aliases and names
    ** reach it without its pid. */
    if (p->nlinks != 0 || p->mons.n != 0 || p->monby.n != 0 || p->aliases.n != 0 ||
        p->name != 0)
        return POR_UNSAFE;
    for (uint32_t k = 0; k < st->nnodemons; k++)
        if (st->nodemons[k].pid == p->pid)
            return POR_UNSAFE;
    /* Its tables go with it (or to their heir); a group leader set
    ** anywhere may be P (the stored key is xor'ed, rule 7c's caution). */
    for (uint32_t k = 0; k < st->ntables; k++)
        if (st->tables[k].owner == p->pid || st->tables[k].heir == p->pid)
            return POR_UNSAFE;
    for (uint32_t i = 0; i < st->nprocs; i++)
        if ((int)i != ip && st->procs[i].gl != 0)
            return POR_UNSAFE;
    /* A signal on its way to or from P, a timer, or a node-pair channel
    ** (which may carry a link or monitor signal to P). */
    for (uint32_t k = 0; k < st->nchans; k++) {
        const channel *ch = &st->chans[k];
        if (ch->from == p->pid || ch->to == p->pid ||
            KEY_NUM(ch->from) == KEY_NODE_CHAN || KEY_NUM(ch->to) == KEY_NODE_CHAN)
            return POR_UNSAFE;
    }
    /* What goes with P (its continuation, dictionary, the message the step
    ** took, its mailbox) frees pid numbers and ref counters: a renaming. */
    return POR_SAFE_SENDS | POR_RENAMED | POR_EXIT;
}

/* Whether no term outside process ip holds `key` (any process's
** continuation, dictionary or mailbox, a table, the application
** environment, a signal in the ether): no one else can send to it. */
static int key_private(const part_store *ps, const sys_state *st, int ip, uint32_t key)
{
    for (uint32_t i = 0; i < st->nprocs; i++)
        if ((int)i != ip && proc_holds(ps, &st->procs[i], &key, 1))
            return 0;
    return !held_outside_processes(ps, st, &key, 1);
}

/* Rule 10 (with the renaming): a step whose effects are all
** `demonitor(Ref, [flush])` (gen:do_call after its reply).  Against the
** target's death it commutes: dying first, the target sends a 'DOWN' that
** the flush removes; dying after, it sends none; either way P's monitor,
** the target's record and P's mailbox end the same.  A kill of P absorbs
** it (P's death removes its monitors).  The alias tied to the monitor ends
** with it: a race with a send to that alias, unless no one but P holds
** the ref.  Instant delivery and one node, so no 'DOWN' or demonitor
** signal is on its way; the freed ref counts up to the renaming. */
static int demonitor_safe(const part_store *ps, const por_step *t)
{
    const por_sends *c = t->sends;
    if (c == NULL || !t->renaming || !c->instant)
        return POR_UNSAFE;
    const sys_state *st = c->before;
    int ip = sys_state_find(st, t->pid);
    if (ip < 0)
        return POR_UNSAFE;
    const proc *p = &st->procs[ip];
    for (size_t e = 0; e < t->neffects; e++) {
        const effect *ef = &c->effects[e];
        if (ef->kind != EFFECT_DEMONITOR || !ef->link)
            return POR_UNSAFE;
        for (uint32_t k = 0; k < p->mons.n; k++)
            if (p->mons.m[k].ref == ef->ref &&
                (KEY_NODE(p->mons.m[k].pid) != KEY_NODE(p->pid) || p->mons.m[k].item != 0))
                return POR_UNSAFE;      /* another node's, or by name */
        for (uint32_t k = 0; k < p->aliases.n; k++)
            if (p->aliases.m[k].ref == ef->ref &&
                !key_private(ps, st, ip, ef->ref | ETF_REF_TAG))
                return POR_UNSAFE;
    }
    return POR_SAFE_LOCAL | POR_RENAMED | POR_DEMONITOR;
}

/* Rule 11 (with the renaming): a step whose effects are all monitors of
** live processes on P's node by pid (gen:do_call's, before its request),
** each with its alias.  Against every step of another process but the
** target's death it commutes: it changes only P's monitors and aliases and
** the target's watchers, which no other step reads without voiding the
** reduction (another's record: peek.c; its own: search_monby_read); the
** fresh ref only up to the renaming, and only P holds it, so no one sends
** to the alias.  A kill of P absorbs it.  The target's death does not
** commute ('DOWN' with its reason after, noproc before), and no test at s
** can rule it out for a server every client knows; the run-time guard
** does (search_transition_guards): P stays armed (PF_MON_ARMED) until it
** sends to the target, and a death of the target while P is armed voids.  A
** death that could come first comes, in the reduced search, while P is
** armed: P's send to the target is cut only when the target is blocked and
** no one else can reach it (rule 7), and otherwise waits for a full
** expansion, which explores the death first (docs/ARCHITECTURE.md, "Rule
** 11").  Instant delivery, one node, no fault left: no signal carries the
** monitor, and no crash kills the target unseen. */
static int monitor_safe(const por_step *t)
{
    const por_sends *c = t->sends;
    if (c == NULL || !t->renaming || !t->monitor_rule || !c->instant || c->faults_left)
        return POR_UNSAFE;
    const sys_state *st = c->before;
    int ip = sys_state_find(st, t->pid);
    if (ip < 0)
        return POR_UNSAFE;
    uint32_t node = KEY_NODE(t->pid);
    for (size_t e = 0; e < t->neffects; e++) {
        const effect *ef = &c->effects[e];
        if (ef->kind == EFFECT_ALIAS) {
            /* Only the alias of one of the step's monitors. */
            size_t m = 0;
            while (m < t->neffects && !(c->effects[m].kind == EFFECT_MONITOR &&
                                        c->effects[m].ref == ef->ref))
                m++;
            if (m == t->neffects)
                return POR_UNSAFE;
            continue;
        }
        if (ef->kind != EFFECT_MONITOR || ef->link || ef->pid == t->pid ||
            KEY_NUM(ef->pid) == KEY_BY_NAME || KEY_NODE(ef->pid) != node ||
            sys_state_find(st, ef->pid) < 0)
            return POR_UNSAFE;
    }
    return POR_SAFE_LOCAL | POR_RENAMED | POR_MONITOR;
}

static enum por_verdict step_safe(const part_store *ps, const por_step *t)
{
    /* Rule 1: a start, a receive (one per process: the first matching
    ** message), the resume of a one-way choice, or the `after 0` of a
    ** receive without clauses (erlang:yield(): no message matches it).
    ** Never another timeout (a send to the process disables it), never
    ** one of several alternatives (the others are not in the set). */
    if (t->run != RUN_START && t->run != RUN_RECEIVE &&
        !(t->run == RUN_CHOICE && t->choices == 1) &&
        !(t->run == RUN_TIMEOUT && t->poll))
        return POR_UNSAFE;
    /* Rule 2: the process lives on (an exit frees its pid and signals
    ** its links and monitors), or, with the renaming, rule 9. */
    if (t->outcome == OUTCOME_EXIT && !t->read_shared && !t->stop)
        return (enum por_verdict)exit_safe(t);
    if (t->outcome != OUTCOME_WAIT && t->outcome != OUTCOME_CHOICE)
        return POR_UNSAFE;
    /* Rule 4: no read of shared state, so nothing another process does
    ** changes the step's outcome; with the renaming, a fresh ref, or a
    ** fresh pid for a spawn (rule 8), is allowed. */
    if (t->read_shared || ((t->read_fresh_pid || t->read_fresh_ref) && !t->renaming))
        return POR_UNSAFE;
    if (t->stop)
        return POR_UNSAFE;
    /* Rule 3: no effect of any kind, or else rule 7: only sends (rule 8:
    ** and spawns). */
    if (t->neffects != 0 && t->sends != NULL && t->sends->effects[0].kind == EFFECT_DEMONITOR)
        return (enum por_verdict)demonitor_safe(ps, t);
    if (t->neffects != 0 && t->sends != NULL && t->sends->effects[0].kind == EFFECT_MONITOR)
        return (enum por_verdict)monitor_safe(t);
    if (t->neffects != 0)
        return t->sends != NULL ? (enum por_verdict)sends_safe(ps, t) : POR_UNSAFE;
    if (t->read_fresh_pid)
        return POR_UNSAFE;
    /* Rule 5: the step frees no pid or ref number and takes none: the
    ** keys of what it consumed (message, continuation, dictionary) are
    ** those of what it leaves (continuation, dictionary), its own pid
    ** aside, so least-fresh numbering (canon.c) gives every other step
    ** the same numbers before and after it. */
    part_id before[3] = { t->msg, t->old_cont, t->old_dict };
    part_id after[2] = { t->new_cont, t->new_dict };
    if (!t->read_fresh_ref && keys_within(ps, before, 3, after, 2, t->pid, NULL) &&
        keys_within(ps, after, 2, before, 3, t->pid, NULL))
        return POR_SAFE_LOCAL;
    /* Up to a renaming of numbers they do not count (por.h). */
    return t->renaming ? POR_SAFE_LOCAL | POR_RENAMED : POR_UNSAFE;
}

/* Rule 12 (with the renaming's guard machinery): a step that looked up
** names registered to live processes (whereis, gen_server:call to a name)
** is as safe as the same step without those reads.  A lookup of a taken
** name commutes with every step of another process but one that frees the
** name: unregister/1 by its holder, or the holder's end (a register of the
** name fails while it is taken, and leaves it as it is).  The guard
** (search_transition_guards, took_armed_end) voids the search when, after
** such a cut, a name is freed while a process that found a name lives
** (PF_NAME_ARMED), or after such a process's end was taken as safe; a
** freeing that could come before the lookup is explored in the reduced
** search after it, while its reader is armed, since the lookup changes
** nothing. */
enum por_verdict por_step_safe(const part_store *ps, const por_step *t)
{
    enum por_verdict v = step_safe(ps, t);
    if (v == POR_UNSAFE || !t->read_names)
        return v;
    return t->renaming && t->name_rule ? (enum por_verdict)(v | POR_NAMED) : POR_UNSAFE;
}
