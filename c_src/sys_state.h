/*
** sys_state.h: the decoded (working) form of one system state.
**
** The visited set keeps states as interned part vectors; the search decodes
** the state it is expanding into this struct, edits a copy to build a
** successor, and interns the copy back.  Processes are kept sorted by pid,
** links sorted within each process: that is the canonical order, so equal
** states intern to the same root id.
**
** Process record layout (PART_PROC, 32-bit words):
**   pid, status, cont, mailbox, flags, dict, name, nlinks, links[nlinks],
**   nmons, mons[nmons] (3 words each), nmonby, monby[nmonby] (3 words each)
** mons are the monitors this process holds, monby those held on it, each
** (ref number, the other process, item) sorted by ref; item is the PART_TERM
** the 'DOWN' message names (a registered name's {Name, Node}), 0: the pid.
** dict is the PART_TERM of the process dictionary (0: empty); name is the
** PART_TERM of its registered name (0: none).  The registry is the set of
** names held by live processes, so a process's death unregisters it.
*/
#ifndef MCE_SYS_STATE_H
#define MCE_SYS_STATE_H

#include "part_store.h"

enum proc_status {
    PROC_INIT = 0,      /* spawned, not yet run: cont is the initial call */
    PROC_WAITING = 1,   /* suspended in receive: cont is the continuation */
    PROC_CHOICE = 2     /* suspended in mcerlang:choice/1: one transition per
                           alternative, their count in flags >> PF_CHOICE_SHIFT */
};

#define PF_CHOICE_SHIFT 8

enum proc_flag {
    PF_TIMEOUT = 1,     /* the receive has a finite `after` */
    PF_TRAP_EXIT = 2    /* process_flag(trap_exit, true) */
};

typedef struct monitor {
    uint32_t ref;
    uint32_t pid;
    part_id item;
} monitor;

typedef struct monitor_set {
    uint32_t n, cap;
    monitor *m;         /* sorted by ref, owned */
} monitor_set;

typedef struct proc {
    uint32_t pid;
    uint32_t status;
    part_id cont;
    part_id mailbox;
    uint32_t flags;
    part_id dict;
    part_id name;
    uint32_t nlinks, caplinks;
    uint32_t *links;    /* sorted pids, owned by this struct */
    monitor_set mons;
    monitor_set monby;
} proc;

typedef struct sys_state {
    proc *procs;
    uint32_t nprocs, cap;
} sys_state;

void sys_state_clear(sys_state *s);          /* frees and empties */
int sys_state_copy(sys_state *dst, const sys_state *src);
int sys_state_decode(const part_store *ps, part_id root, sys_state *out);
/* Interns the state's parts; returns the root id (0: out of memory). */
part_id sys_state_encode(part_store *ps, const sys_state *s, int *is_new);

/* Index of the process with `pid`, or -1. */
int sys_state_find(const sys_state *s, uint32_t pid);
/* Index of the process registered as `name` (a PART_TERM id), or -1. */
int sys_state_find_name(const sys_state *s, part_id name);
/* Inserts a process in pid order; returns its index or -1. */
int sys_state_insert(sys_state *s, const proc *p);
void sys_state_remove(sys_state *s, uint32_t index);

int monitor_add(monitor_set *ms, monitor m);
/* Removes the monitor with `ref`; 1 if there was one (copied to *out). */
int monitor_remove(monitor_set *ms, uint32_t ref, monitor *out);
void proc_free(proc *p);   /* frees what the record owns */

int proc_link_add(proc *p, uint32_t pid);
void proc_link_remove(proc *p, uint32_t pid);

/* Mailbox parts are vectors of message term ids. */
part_id mailbox_append(part_store *ps, part_id mailbox, part_id msg);
part_id mailbox_remove(part_store *ps, part_id mailbox, uint32_t index);
uint32_t mailbox_length(const part_store *ps, part_id mailbox);
part_id mailbox_at(const part_store *ps, part_id mailbox, uint32_t index);

#endif
