/*
** search_reduce.c: the search's reduction decisions, beside the search
** order of search.c.  Partial-order reduction (por.h, issue 18): which
** process a frame tries first (search_safe_first), whether an applied run
** is a safe step and passes the cycle proviso, so that its frame is cut
** (search_reduced_successor), and the run-time guards that void a reduced
** search (search_por_hazard and the effects it watches).  Symmetry
** reduction (symmetry.h): a successor made its orbit's representative
** (search_canonical), `auto`'s judgement of whether that pays
** (search_sym_judge), and the guards of pid and key order.
**
** Invariant: nothing here changes the order in which search.c enumerates a
** state's transitions; a decision only cuts a frame (`reduced`) or
** replaces a successor by its representative before it is committed.
** With `cfg.reduction` off and no symmetry every function but the guards'
** setters is a no-op or is never called, so counts are those of the plain
** search (docs/ARCHITECTURE.md, "Exactness with it off").
*/
#include <stdlib.h>

#include "match_memo.h"
#include "por.h"
#include "search_internal.h"

/* Reduction: the index of the process the top state's frame tries first:
** the first, in pid order, whose next request (a start, a one-way resume,
** or a receive of the first message the match memo knows to match) was
** safe the last time a step was applied under it (por_hint.h); else the
** first one-way resume no step was applied under yet, else under small
** steps the first such start, else 0.  A resume is often the effect-free
** walk from a send to the receive after it (gen:do_call's), and its
** process is not blocked until it is taken: tried late, the frame first
** takes the steps that answer it, which are unsafe only because it is not
** blocked yet.  Under small steps a start runs only to its first effect,
** mostly a safe one (a monitor, a spawn, a send to a blocked process); a
** big start runs a whole step.  A resume or start that turns out unsafe
** only moves where the frame's round begins (counter_server(8,2) small:
** 400 states kept with hints alone, 244 with both). */
uint32_t search_safe_first(const search *s)
{
    uint32_t resume = UINT32_MAX, start = UINT32_MAX;
    for (uint32_t i = 0; i < s->cur.nprocs; i++) {
        const proc *p = &s->cur.procs[i];
        step_key k = { .pid = p->pid, .flags = p->flags & ~PF_GUARD_MARKS,
                       .cont = p->cont, .dict = p->dict };
        if (p->status == PROC_INIT) {
            k.run = RUN_START;
        } else if (p->status == PROC_CHOICE) {
            if ((p->flags >> PF_CHOICE_SHIFT) != 1)
                continue;
            k.run = RUN_CHOICE;
        } else {
            uint32_t n = mailbox_length(s->ps, p->mailbox);
            int m = 0;
            for (uint32_t j = 0; j < n && m == 0; j++) {
                k.msg = mailbox_at(s->ps, p->mailbox, j);
                m = match_memo_get(&s->memo, p->cont, k.msg);
            }
            if (m != 1)
                continue;   /* none matches, or the memo does not know */
            k.run = RUN_RECEIVE;
        }
        int hint = por_hint_get(&s->hint, &k);
        if (hint == 1)
            return i;
        if (hint < 0 && resume == UINT32_MAX && k.run == RUN_CHOICE)
            resume = i;
        if (hint < 0 && start == UINT32_MAX && k.run == RUN_START && s->cfg.small_steps)
            start = i;
    }
    return resume != UINT32_MAX ? resume : start != UINT32_MAX ? start : 0;
}

/* Symmetry reduction (symmetry.h): st becomes the representative of its
** orbit, and the renaming waits in s->sym_perm for the frame or node
** pushed for it (a state already seen leaves it to the next call, which
** frees it).  A state the search stops at keeps its pids: the violation
** the driver reports names the pids of the step into it, which are those
** of its parent's state, so the counterexample keeps one naming to map
** back to concrete pids. */
int search_canonical(search *s, sys_state *st, int stop)
{
    free(s->sym_perm);
    s->sym_perm = NULL;
    s->sym_nperm = 0;
    if (s->cfg.dead_payload && !stop &&
        payload_rewrite(&s->payloads, &s->tx, st, &s->st.dead_payloads) != 0)
        return -1;
    if (s->sym == NULL || s->st.symmetry_stopped != 0 || stop)
        return 0;
    if (!s->cfg.dead_payload || s->payloads.n == 0)
        return symmetry_canon(s->sym, &s->tx, st, &s->sym_perm, &s->sym_nperm);
    /* The representative's continuations are renamed parts: they keep
    ** their originals' descriptors, which name free variables by
    ** position, not by value. */
    struct had_cont { uint32_t pid; part_id cont; } few[32], *had = few;
    uint32_t n = st->nprocs, k = 0, len;
    if (n > 32 && (had = malloc(n * sizeof *had)) == NULL)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        if (st->procs[i].status == PROC_WAITING &&
            payload_table_get(&s->payloads, st->procs[i].cont, &len) != NULL)
            had[k++] = (struct had_cont){ st->procs[i].pid, st->procs[i].cont };
    int r = symmetry_canon(s->sym, &s->tx, st, &s->sym_perm, &s->sym_nperm);
    for (uint32_t i = 0; r == 0 && i < k; i++) {
        uint32_t to = had[i].pid;
        for (uint32_t j = 0; j < s->sym_nperm; j++)
            if (s->sym_perm[j].from == had[i].pid)
                to = s->sym_perm[j].to;
        int at = sys_state_find(st, to);
        const uint8_t *desc = payload_table_get(&s->payloads, had[i].cont, &len);
        if (at >= 0 && st->procs[at].cont != had[i].cont &&
            payload_table_put(&s->payloads, st->procs[at].cont, desc, len) != 0)
            r = -1;
    }
    if (had != few)
        free(had);
    return r;
}

/* symmetry => auto pays a canonicalisation per successor, which on a program
** whose processes are seldom interchangeable buys nothing (door(4): 5 times
** the CPU for 0.1% fewer states; the locker: twice, for none).  When the
** search has found SYM_SAMPLE_STATES states and fewer than a quarter of its
** successors were renamed to a representative other than themselves
** (measured: door(3) 14%, locker(aEaEaS,1) 0.1%; the identical clients of
** client_server and counter_server 74-110%), the search is void
** (SYM_VOID_FEW_RENAMED) and the check runs again without symmetry: it
** used to stop canonicalising and go on, the states met so far staying
** representatives and later ones stored as they are, and the two namings
** of an orbit were then both stored and explored, which cost more than
** the sample (door(3) small: 54,072 states instead of 26,658, 2.2 times
** the CPU; now 1.2 times).  Judged again at ten times the sample in a
** search that passes states (the first states are often the symmetric
** part: door(4), a quarter renamed at 5,000, a seventh in the end), it
** then stops and goes on as it used to: a run again would repeat 50,000
** states met (door(4) big: 1.4 times the CPU of going on).  Only a matter
** of cost: every orbit reached is still explored from one of its states,
** so the search finds what the plain one finds; the pid-order guard stays
** armed, since the first part was symmetric. */
#define SYM_SAMPLE_STATES 5000
void search_sym_judge(search *s, int is_new)
{
    /* Not in a distributed search: a participant that stopped would route
    ** states that are not their orbit's representative, so an orbit would
    ** have several owners and the counts would change from run to run.
    ** A state passed through (pass_cut) was canonicalised too: it counts
    ** among the successors met (each cut moved one from `states` to
    ** `passed_states`).  Judged twice: in a search that passes states the
    ** first states are often the symmetric part (door(4): a quarter
    ** renamed at 5,000, a seventh in the end). */
    uint64_t met = s->st.states + s->st.passed_states;
    if (is_new && s->sym != NULL && (s->cfg.symmetry == 1 || s->cfg.symmetry == 3) &&
        s->cfg.cluster_n <= 1 && s->sym_judged < 2 &&
        met >= (s->sym_judged == 0 ? SYM_SAMPLE_STATES : 10 * SYM_SAMPLE_STATES)) {
        s->sym_judged++;
        if (symmetry_renamed(s->sym) * 4 < met) {
            s->st.symmetry_stopped = s->st.states;
            if (s->sym_judged == 1 && s->sym_void == 0)
                s->sym_void = 3;
            s->sym_judged = 2;
        } else if (s->st.passed_states == 0) {
            s->sym_judged = 2;  /* once, as before, when nothing is passed */
        }
    }
}

/* Reduction: whether the outstanding run, answered by res and giving st
** (its successor, the running process still in it unless it exited), is
** a safe step (por.h). */
static enum por_verdict step_is_safe(const search *s, const run_result *res,
                                     const sys_state *st)
{
    /* An exit (rule 9) leaves no record: nothing is left of P. */
    int i = sys_state_find(st, s->run_pid);
    if (i < 0 && res->outcome != OUTCOME_EXIT)
        return POR_UNSAFE;
    const trans_ctx *cx = &s->tx;
    por_sends sends = { .before = &s->cur, .after = st, .memo = &s->memo,
                        .effects = res->effects, .instant = !cx->delivery_ether,
                        .timeouts_when_idle = cx->timeouts_when_idle,
                        .faults_left = s->cur.crashes < cx->max_crashes ||
                                       s->cur.kills < cx->max_kills,
                        .entry = cx->entry_pid };
    por_step t = { .run = s->run, .choices = s->run_flags >> PF_CHOICE_SHIFT,
                   .poll = s->run == RUN_TIMEOUT && (s->run_flags & PF_POLL) != 0,
                   .pid = s->run_pid,
                   .msg = s->run == RUN_RECEIVE ? s->run_msg : 0,
                   .old_cont = s->run_cont, .old_dict = s->run_dict,
                   .new_cont = i >= 0 ? st->procs[i].cont : 0,
                   .new_dict = i >= 0 ? st->procs[i].dict : 0,
                   .outcome = res->outcome, .neffects = res->neffects,
                   .read_shared = s->run_reads, .read_names = s->run_name_reads,
                   .read_fresh_pid = s->run_fresh_pid,
                   .read_fresh_ref = s->run_fresh_ref,
                   .renaming = s->cfg.reduction == 2, .stop = res->stop,
                   .monitor_rule = s->cfg.monitor_rule, .name_rule = s->cfg.name_rule,
                   .sends = &sends };
    return por_step_safe(s->ps, &t);
}

void search_pid_order(search *s)
{
    search_numbers_observed(s);
    if (s->sym != NULL && (s->cfg.symmetry == 1 || s->cfg.symmetry == 3))
        s->sym_void = 1;
}

void search_key_order(search *s)
{
    search_numbers_observed(s);
    if (s->sym != NULL && s->cfg.symmetry == 1 && s->sym_void == 0)
        s->sym_void = 2;
}

/* The guards of the steps safe up to a renaming (por.h) have two halves:
** a frame cut by such a step (a *cut* half), and a step that could tell
** the renaming or the early end apart (a *hazard* half).  Each pair voids
** the search, whichever half comes first:
**  - POR_VOID_NUMBERS: a cut by a step safe up to the renaming; a step
**    observed pid numbers or the order of refs (search_numbers_observed:
**    pid or key order, the order of refs, a pid number past the refs'
**    creator regions);
**  - POR_VOID_DEAD_TARGET: a cut by an end (rule 9); a step aimed at a
**    process that is gone (search_dead_target);
**  - POR_VOID_MONITOR_RACE: a cut by a monitor (rule 11); a watched
**    process died while its watcher was armed (PF_MON_ARMED), or an armed
**    process demonitored without flush; and a cut by a monitor or a
**    demonitor (rule 10); a process read its own watchers;
**  - POR_VOID_NAME_FREED: a cut by a lookup that found a name (rule 12);
**    a registered name was freed while a process that had found a name
**    (PF_NAME_ARMED) lived.  And the end of such a process taken as safe
**    (rule 9); any name freed.
** Rule 7's guard is one more pair: a cut by a sending step (GH_SENT); a
** step that sent an exit signal to another process, linked to one or
** listed the processes (the void's reason is the hazard's). */
enum guard_half {
    GH_RENAMED = 1 << 0,  GH_NUMBERS_SEEN = 1 << 1,
    GH_EXITED = 1 << 2,   GH_DEAD_TARGET = 1 << 3,
    GH_MONITORED = 1 << 4, GH_DEMONITORED = 1 << 5,
    GH_MONITOR_RACE = 1 << 6, GH_MONBY_READ = 1 << 7,
    GH_NAMED = 1 << 8,    GH_FREED_ARMED = 1 << 9,
    GH_ARMED_END = 1 << 10, GH_NAME_FREED = 1 << 11,
    GH_SENT = 1 << 12,
    GH_EXIT_SIGNAL = 1 << 13, GH_LINKED = 1 << 14, GH_LISTED = 1 << 15
};
#define GH_HAZARDS (GH_EXIT_SIGNAL | GH_LINKED | GH_LISTED)

/* Half `mine` was met: the search is void (`why`) if one of `others` was
** met before, by this search or, with workers, by another worker's: each
** worker publishes a half the first time it meets it, and of two workers
** publishing the two halves of a pair, the later sees the earlier's
** (search_pool_guard).  The halves seen, `mine' among them. */
static uint32_t guard_half(search *s, uint32_t mine, uint32_t others, int why)
{
    uint32_t seen = s->guard_halves;
    if (!(seen & mine)) {
        s->guard_halves |= mine;
        seen |= mine;
        if (s->cfg.workers > 1)
            seen |= search_pool_guard(s->pool, mine);
    }
    if ((seen & others) && s->por_void == 0)
        s->por_void = why;
    return seen;
}

/* Rule 7's hazard (por.h): the first one met is kept (a distributed
** search pairs its participants' at the end: mce_cluster, from
** search_cluster_stats); with a sending step taken, by this search or
** another worker, the search is void. */
void search_por_hazard(search *s, int why)
{
    if (!s->cfg.reduction || s->por_hazard != 0)
        return;
    s->por_hazard = why;
    guard_half(s, why == POR_VOID_EXIT ? GH_EXIT_SIGNAL : why == POR_VOID_LINK ? GH_LINKED : GH_LISTED,
               GH_SENT, why);
}

void search_numbers_observed(search *s)
{
    if (s->cfg.reduction == 2)
        guard_half(s, GH_NUMBERS_SEEN, GH_RENAMED, POR_VOID_NUMBERS);
}

static void took_renamed_step(search *s)
{
    guard_half(s, GH_RENAMED, GH_NUMBERS_SEEN, POR_VOID_NUMBERS);
}

/* Rule 9's: a step aimed a link, a monitor, an exit signal, a group leader
** or a liveness test at a process that is gone, which would have met it
** alive had an end taken as safe waited. */
void search_dead_target(search *s)
{
    if (s->cfg.reduction == 2)
        guard_half(s, GH_DEAD_TARGET, GH_EXITED, POR_VOID_DEAD_TARGET);
}

static void took_exit_step(search *s)
{
    guard_half(s, GH_EXITED, GH_DEAD_TARGET, POR_VOID_DEAD_TARGET);
}

/* Rules 10 and 11's: a process read its own record, which shows who
** monitors it (process_info(self(), monitored_by)): a monitor or demonitor
** taken as safe changed that. */
void search_monby_read(search *s)
{
    if (s->cfg.reduction == 2)
        guard_half(s, GH_MONBY_READ, GH_MONITORED | GH_DEMONITORED, POR_VOID_MONITOR_RACE);
}

/* Rule 11's: a process died watched by an armed process (PF_MON_ARMED),
** whose monitor a death now may have preceded; rule 12's: a registered
** name was freed (unregister/1, or the end of its process) while a
** process that had found a name lived, whose lookup, if taken as safe,
** the freeing may have preceded. */
void search_transition_guards(search *s)
{
    if (s->cfg.reduction != 2)
        return;
    if (s->tx.monitor_race)
        guard_half(s, GH_MONITOR_RACE, GH_MONITORED, POR_VOID_MONITOR_RACE);
    if (s->tx.name_freed)
        guard_half(s, GH_NAME_FREED, GH_ARMED_END, POR_VOID_NAME_FREED);
    if (s->tx.name_freed_armed)
        guard_half(s, GH_FREED_ARMED, GH_NAMED, POR_VOID_NAME_FREED);
}

static void took_named_step(search *s)
{
    guard_half(s, GH_NAMED, GH_FREED_ARMED, POR_VOID_NAME_FREED);
}

/* Rule 9 took the end of a process that had found a name, before or in
** this step: a name freed later may have come before its lookup, and no
** process is left to be armed when it is freed, so any freeing voids. */
static void took_armed_end(search *s)
{
    int i = sys_state_find(&s->cur, s->run_pid);
    if (s->run_name_reads || (i >= 0 && (s->cur.procs[i].flags & PF_NAME_ARMED)))
        guard_half(s, GH_ARMED_END, GH_NAME_FREED, POR_VOID_NAME_FREED);
}

static void took_monitor_step(search *s, enum por_verdict safe)
{
    if (safe & POR_MONITOR)
        guard_half(s, GH_MONITORED, GH_MONITOR_RACE | GH_MONBY_READ, POR_VOID_MONITOR_RACE);
    if (safe & POR_DEMONITOR)
        guard_half(s, GH_DEMONITORED, GH_MONBY_READ, POR_VOID_MONITOR_RACE);
}

/* Whether the step spawned the process `pid` (spawn_monitor's target). */
static int spawned_by(const run_result *res, uint32_t pid)
{
    for (size_t e = 0; e < res->neffects; e++)
        if (res->effects[e].kind == EFFECT_SPAWN && res->effects[e].pid == pid)
            return 1;
    return 0;
}

/* The run-time guard of sending safe steps (rule 7, por.h): a step that
** sends an exit signal to another existing process or links to one; and
** that of exits (rule 9): one aimed at a process that is gone. */
static void guard_effects(search *s, const run_result *res)
{
    for (size_t e = 0; e < res->neffects; e++) {
        const effect *ef = &res->effects[e];
        int signal = ef->kind == EFFECT_EXIT || ef->kind == EFFECT_LINK;
        if ((!signal && ef->kind != EFFECT_MONITOR && ef->kind != EFFECT_GROUP_LEADER) ||
            ef->pid == s->run_pid)
            continue;
        if (sys_state_find(&s->cur, ef->pid) >= 0) {
            if (signal)
                search_por_hazard(s, ef->kind == EFFECT_EXIT ? POR_VOID_EXIT : POR_VOID_LINK);
        } else if (KEY_NUM(ef->pid) != KEY_BY_NAME && !spawned_by(res, ef->pid)) {
            search_dead_target(s);
        }
    }
}

/* A sending safe step (rule 7) was taken, or marked for the LTL product:
** from now on the first hazard met voids the search (search_por_hazard),
** and one met before, by this search or another worker, voids it now. */
static void took_sending_step(search *s)
{
    s->por_sent = 1;
    uint32_t seen = guard_half(s, GH_SENT, 0, 0);
    if ((seen & GH_HAZARDS) && s->por_void == 0)
        s->por_void = seen & GH_EXIT_SIGNAL ? POR_VOID_EXIT
                      : seen & GH_LINKED     ? POR_VOID_LINK
                                             : POR_VOID_PROCESSES;
}

/* The reduction in an expand-only search (the LTL product's program
** graph, docs/ARCHITECTURE.md "Partial-order reduction of the LTL
** check"): nothing is cut, the successor is only marked with the verdict
** of por_step_safe, and the caller decides.  The run-time guards stay:
** the reads of another process's record void the search (peek.c), and
** since which marked step the caller takes is not known here, a sending
** safe step counts as taken once it is marked (por_sent), so that a later
** exit signal, link or list of the processes voids it too (conservative:
** a void only costs a rerun without the reduction).  As successor. */
int search_expand_flagged(search *s, const run_result *res, sys_state *st,
                          uint8_t *label, size_t label_len, request *req)
{
    guard_effects(s, res);
    enum por_verdict safe = step_is_safe(s, res, st);
    if (safe & POR_SAFE_SENDS)
        took_sending_step(s);
    s->exp_safe = safe;
    return search_successor(s, st, label, label_len, res->stop, req);
}

/* Reduction, "commit, then decide", on a run just applied (st, its
** successor; the label taken): the successor is committed, and a safe step
** that passes the cycle proviso (docs/ARCHITECTURE.md) is a persistent set
** of the state being expanded on its own, so its frame explores nothing
** more.  Depth-first the proviso is Holzmann & Peled's: the successor is
** not on the stack; breadth-first it is new (committing it counted a
** state), fully expanded or finished (search_pool_expanded).  As
** search_successor. */
int search_reduced_successor(search *s, const run_result *res, sys_state *st,
                             uint8_t *label, size_t label_len, request *req)
{
    guard_effects(s, res);
    enum por_verdict safe = step_is_safe(s, res, st);
    step_key k = search_run_key(s);
    por_hint_set(&s->hint, &k, safe != POR_UNSAFE);
    size_t fi = s->depth - 1;
    uint64_t states = s->st.states;
    s->last_successor = 0;
    int r = search_successor(s, st, label, label_len, res->stop, req);
    int proviso = s->st.states > states ||
                  (s->stack_proviso && s->last_successor != 0 &&
                   !stack_set_has(&s->on_stack, s->last_successor)) ||
                  (s->cfg.breadth_first && s->last_successor != 0 &&
                   (search_pool_is_full(s->pool, (part_id)s->last_successor) ||
                    search_pool_is_finished(s->pool, (part_id)s->last_successor)));
    if (r >= 0 && safe != POR_UNSAFE && proviso && fi < s->depth &&
        !s->stack[fi].reduced) {
        s->stack[fi].reduced = 1;
        s->st.reduced_states++;
        if (safe & POR_SAFE_SENDS)
            took_sending_step(s);
        if (safe & POR_RENAMED) {
            s->st.renamed_states++;
            took_renamed_step(s);
        }
        if (safe & POR_EXIT) {
            took_exit_step(s);
            took_armed_end(s);
        }
        if (safe & (POR_MONITOR | POR_DEMONITOR))
            took_monitor_step(s, safe);
        if (safe & POR_NAMED)
            took_named_step(s);
        search_pass_cut(s, fi);
    }
    return r;
}
