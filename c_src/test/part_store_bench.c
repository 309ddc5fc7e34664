/*
** part_store_bench.c: the single-threaded cost of the part store.
**
** Interns a few million parts the way a search does (short vectors of
** ids, most interned again and again), then reads them all back, and
** prints the CPU seconds of each phase (best of three runs).  The parts'
** bytes come from their number, so every run, before and after a change
** to part_store.c, interns the same sequence.  Built and run by
** `make -C c_src store-bench` (-O2, no sanitizers).
**
** `part_store_bench threads` instead races 1, 2 and 4 threads on one shared
** store: 4 M interns of 1 M parts in all (each thread takes the 1 M parts
** 4 / threads times, each time in its own order, so most interns find what
** some thread added), and prints the wall time; the unshared store with one
** thread is the baseline.
*/
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "part_store.h"

#define DISTINCT 2000000u

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Part number i: 2 to 17 words, a kind from 1 to 4. */
static uint32_t make_part(uint32_t i, uint32_t *w, uint8_t *kind)
{
    uint64_t r = mix(i);
    uint32_t n = 2 + (uint32_t)(r & 15);
    for (uint32_t k = 0; k < n; k++)
        w[k] = (uint32_t)mix(r + k) & 0xfffff;
    w[0] = i;
    *kind = (uint8_t)(1 + ((r >> 8) & 3));
    return 4 * n;
}

static double cpu(void)
{
    return (double)clock() / CLOCKS_PER_SEC;
}

static int run(double t[4])
{
    part_store *ps = part_store_new();
    if (ps == NULL)
        return -1;
    uint32_t w[17];
    uint8_t kind;
    int fresh;
    unsigned long news = 0;
    /* 1: every part new. */
    double t0 = cpu();
    for (uint32_t i = 0; i < DISTINCT; i++) {
        uint32_t len = make_part(i, w, &kind);
        if (part_store_intern(ps, kind, w, len, NULL, 0, &fresh) == 0)
            return -1;
        news += (unsigned long)fresh;
    }
    /* 2: all found again, in a scattered order; every fourth hinted
    ** with its id (ids are i + 1 here). */
    double t1 = cpu();
    for (uint32_t j = 0; j < 2 * DISTINCT; j++) {
        uint32_t i = (uint32_t)(mix(j + 0x5eed) % DISTINCT);
        uint32_t len = make_part(i, w, &kind);
        part_id id = (j & 3) == 0
                         ? part_store_intern_hinted(ps, i + 1, kind, w, len, &fresh)
                         : part_store_intern(ps, kind, w, len, NULL, 0, &fresh);
        if (id != i + 1 || fresh)
            return -1;
    }
    /* 3: half new, half old. */
    double t2 = cpu();
    for (uint32_t j = 0; j < DISTINCT; j++) {
        uint32_t i = (j & 1) ? DISTINCT + j : (uint32_t)(mix(j) % DISTINCT);
        uint32_t len = make_part(i, w, &kind);
        if (part_store_intern(ps, kind, w, len, NULL, 0, &fresh) == 0)
            return -1;
        news += (unsigned long)fresh;
    }
    /* 4: every part read back. */
    double t3 = cpu();
    uint64_t sum = 0;
    for (uint32_t r = 0; r < 4; r++)
        for (part_id id = 1; id <= part_store_count(ps); id++)
            sum += part_store_get(ps, id)->len;
    double t4 = cpu();
    if (news != DISTINCT + DISTINCT / 2 || part_store_count(ps) != news || sum == 0)
        return -1;
    t[0] = t1 - t0, t[1] = t2 - t1, t[2] = t3 - t2, t[3] = t4 - t3;
    printf("  run: new %.3f  found %.3f  mixed %.3f  get %.3f  total %.3f s  (%zu parts, %zu MB used)\n",
           t[0], t[1], t[2], t[3], t[0] + t[1] + t[2] + t[3], part_store_count(ps),
           part_store_used_bytes(ps) >> 20);
    part_store_free(ps);
    return 0;
}

typedef struct racer {
    part_store *ps;
    uint32_t seed;
    int passes;
    int ok;
} racer;

#define RACED (DISTINCT / 2)

static void *race(void *v)
{
    racer *r = v;
    uint32_t w[17];
    uint8_t kind;
    int fresh;
    r->ok = 1;
    /* i -> (i * odd + seed) mod 2^k is a permutation of 0 .. 2^k - 1. */
    uint32_t mask = 1;
    while (mask < RACED)
        mask = mask * 2 + 1;
    for (int pass = 0; pass < r->passes; pass++) {
        uint32_t seed = r->seed + 104729u * (uint32_t)pass;
        for (uint32_t j = 0; j <= mask; j++) {
            uint32_t i = (j * 2654435761u + seed) & mask;
            if (i >= RACED)
                continue;
            uint32_t len = make_part(i, w, &kind);
            if (part_store_intern(r->ps, kind, w, len, NULL, 0, &fresh) == 0)
                r->ok = 0;
        }
    }
    return NULL;
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int threads(void)
{
    const int counts[] = { 1, 1, 2, 4 };
    for (int c = 0; c < 4; c++) {
        int n = counts[c], shared = c > 0;
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            part_store *ps = part_store_new();
            if (ps == NULL || (shared && part_store_set_concurrent(ps) != 0))
                return 1;
            racer r[4];
            pthread_t th[4];
            double t0 = wall();
            for (int t = 0; t < n; t++) {
                r[t] = (racer){ .ps = ps, .seed = 7919u * (uint32_t)t, .passes = 4 / n };
                if (pthread_create(&th[t], NULL, race, &r[t]) != 0)
                    return 1;
            }
            for (int t = 0; t < n; t++)
                pthread_join(th[t], NULL);
            double dt = wall() - t0;
            for (int t = 0; t < n; t++)
                if (!r[t].ok)
                    return 1;
            if (part_store_count(ps) != RACED)
                return 1;
            part_store_free(ps);
            best = dt < best ? dt : best;
        }
        printf("%s store, %d thread%s: %u interns in %.3f s wall, %.2f M interns/s\n",
               shared ? "shared  " : "unshared", n, n > 1 ? "s" : " ", 4 * RACED, best,
               4 * RACED / best / 1e6);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "threads") == 0) {
        if (threads() != 0) {
            fprintf(stderr, "part_store_bench: wrong result or out of memory\n");
            return 1;
        }
        return 0;
    }
    double best[4] = { 1e9, 1e9, 1e9, 1e9 };
    for (int r = 0; r < 3; r++) {
        double t[4];
        if (run(t) != 0) {
            fprintf(stderr, "part_store_bench: wrong result or out of memory\n");
            return 1;
        }
        for (int k = 0; k < 4; k++)
            best[k] = t[k] < best[k] ? t[k] : best[k];
    }
    printf("best: new %.3f  found %.3f  mixed %.3f  get %.3f  total %.3f CPU s\n", best[0],
           best[1], best[2], best[3], best[0] + best[1] + best[2] + best[3]);
    return 0;
}
