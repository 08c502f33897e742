/* report/calls.c — see report/calls.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "fallback/stats.h"
#include "report/calls.h"
#include "state/clock.h"
#include "state/functions.h"

struct wp_traffic {
    uint64_t bytes_sent, bytes_recv, req_sent, req_recv;
};

/* What the report shows per function: timing summed from the estimator's
 * categories when the file is written, traffic counted by the wrappers. */
struct wp_fncalls {
    uint64_t count, sum, min, max, max2; /* ticks */
    uint64_t min_ev, max_ev, max2_ev;    /* event numbers, from 1; 0: none */
    struct wp_traffic tr;
    uint32_t hist[WP_HIST_BINS];
};

/* Per thread, so that the counts need no atomic add. */
struct wp_calls_table {
    struct wp_traffic fn[WP_FN_COUNT];
};

#define WP_MAX_CALL_TABLES 1024
static struct wp_calls_table *wp_call_tables[WP_MAX_CALL_TABLES];
static int wp_ncall_tables;
static __thread struct wp_calls_table *wp_my_calls __attribute__((tls_model("initial-exec")));
static __thread int wp_my_calls_failed __attribute__((tls_model("initial-exec")));

/* The matrix row of this rank: bytes, requests, receive ticks per peer.
 * Shared by the threads, hence the atomic adds. */
static uint64_t *wp_mx;
static int wp_mx_size, wp_mx_rank;

void wp_calls_init(int rank, int size, int matrix)
{
    wp_mx_rank = rank;
    if (!matrix || size <= 0)
        return;
    void *m = mmap(NULL, (size_t)size * 3 * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    wp_mx = m;
    wp_mx_size = size;
}

static struct wp_calls_table *wp_calls_mine(void)
{
    struct wp_calls_table *t = wp_my_calls;
    if (__builtin_expect(t != NULL, 1))
        return t;
    if (wp_my_calls_failed)
        return NULL;
    void *m = mmap(NULL, sizeof *t, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    int i = m != MAP_FAILED ? __atomic_fetch_add(&wp_ncall_tables, 1, __ATOMIC_ACQ_REL) : WP_MAX_CALL_TABLES;
    if (i >= WP_MAX_CALL_TABLES) {
        if (m != MAP_FAILED)
            munmap(m, sizeof *t);
        wp_my_calls_failed = 1;
        return NULL;
    }
    t = m;
    __atomic_store_n(&wp_call_tables[i], t, __ATOMIC_RELEASE);
    wp_my_calls = t;
    return t;
}

/* The peer's rank in MPI_COMM_WORLD; -1 when unknown (MPI_ANY_SOURCE,
 * MPI_PROC_NULL, an intercommunicator).  Only asked with the matrix on. */
static int wp_world_rank(int peer, MPI_Comm comm)
{
    if (peer < 0)
        return -1;
    if (comm == MPI_COMM_WORLD)
        return peer;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return -1;
    MPI_Group g, w;
    int out = -1;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return -1;
    if (PMPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS) {
        if (PMPI_Group_translate_ranks(g, 1, &peer, w, &out) != MPI_SUCCESS || out == MPI_UNDEFINED)
            out = -1;
        PMPI_Group_free(&w);
    }
    PMPI_Group_free(&g);
    return out;
}

void wp_traffic_send(int fn, uint64_t bytes, int dest, MPI_Comm comm)
{
    struct wp_calls_table *t = wp_calls_mine();
    if (t == NULL || fn <= 0 || fn >= WP_FN_COUNT || dest == MPI_PROC_NULL)
        return;
    t->fn[fn].bytes_sent += bytes;
    t->fn[fn].req_sent++;
    if (wp_mx) {
        int j = wp_world_rank(dest, comm);
        if (j >= 0 && j < wp_mx_size) {
            __atomic_fetch_add(&wp_mx[3 * (size_t)j], bytes, __ATOMIC_RELAXED);
            __atomic_fetch_add(&wp_mx[3 * (size_t)j + 1], 1, __ATOMIC_RELAXED);
        }
    }
}

void wp_traffic_recv(int fn, uint64_t bytes, int source, MPI_Comm comm, uint64_t ticks)
{
    struct wp_calls_table *t = wp_calls_mine();
    if (t == NULL || fn <= 0 || fn >= WP_FN_COUNT || source == MPI_PROC_NULL)
        return;
    t->fn[fn].bytes_recv += bytes;
    t->fn[fn].req_recv++;
    /* ticks is the receive's entry time: TIME(i,j) adds its duration.  The
     * clock is read only with the matrix on. */
    if (wp_mx && ticks) {
        int j = wp_world_rank(source, comm);
        if (j >= 0 && j < wp_mx_size)
            __atomic_fetch_add(&wp_mx[3 * (size_t)j + 2], wp_ticks() - ticks, __ATOMIC_RELAXED);
    }
}

static void wp_merge(struct wp_fncalls *into, const struct wp_fncalls *c)
{
    if (c->count) {
        /* Event numbers are per thread; the longest calls of the thread
         * that had them keep theirs. */
        if (into->count == 0 || c->min < into->min)
            into->min = c->min, into->min_ev = c->min_ev;
        uint64_t v[4] = {into->max, into->max2, c->max, c->max2};
        uint64_t e[4] = {into->count ? into->max_ev : 0, into->count ? into->max2_ev : 0, c->max_ev, c->max2_ev};
        int a = -1, b = -1;
        for (int i = 0; i < 4; i++) {
            if (e[i] == 0)
                continue;
            if (a < 0 || v[i] > v[a])
                b = a, a = i;
            else if (b < 0 || v[i] > v[b])
                b = i;
        }
        into->max = a >= 0 ? v[a] : 0, into->max_ev = a >= 0 ? e[a] : 0;
        into->max2 = b >= 0 ? v[b] : 0, into->max2_ev = b >= 0 ? e[b] : 0;
        into->count += c->count;
        into->sum += c->sum;
        for (int i = 0; i < WP_HIST_BINS; i++)
            into->hist[i] += c->hist[i];
    }
}

/* A category's calls as one function's figures: its shortest call is the
 * shorter of the calls that waited (min) and those complete on entry
 * (early_min). */
static void wp_merge_cat(struct wp_fncalls *into, const struct wp_cat *c)
{
    struct wp_fncalls one = {.count = c->count, .sum = c->sum, .max = c->max, .max_ev = c->max_ev,
                             .max2 = c->max2, .max2_ev = c->max2_ev, .min = c->min, .min_ev = c->min_ev};
    if (c->early_count && (c->min == UINT64_MAX || c->early_min < c->min))
        one.min = c->early_min, one.min_ev = c->early_min_ev;
    memcpy(one.hist, c->hist, sizeof one.hist);
    wp_merge(into, &one);
}

static int wp_write_matrix(const char *dir, int rank)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/rank.%d.matrix", dir, rank);
    FILE *f = fopen(path, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "# waitprof-matrix 1\npeer\tbytes_sent\trequests_sent\trecv_time_ns\n");
    for (int j = 0; j < wp_mx_size; j++) {
        const uint64_t *m = &wp_mx[3 * (size_t)j];
        if (m[0] || m[1] || m[2])
            fprintf(f, "%d\t%llu\t%llu\t%llu\n", j, (unsigned long long)m[0], (unsigned long long)m[1],
                    (unsigned long long)wp_ticks_duration_ns(m[2]));
    }
    return fclose(f);
}

int wp_calls_write(const char *dir, int rank)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/rank.%d.calls", dir, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    fprintf(f, "# waitprof-calls 1\n");
    fprintf(f, "function\tcalls\ttime_ns\tmin_ns\tmin_event\tmax_ns\tmax_event\tmax2_ns\tmax2_event"
               "\tbytes_sent\tbytes_recv\trequests_sent\trequests_recv\thistogram\n");
    /* All functions at once: one pass over each thread's categories.
     * mmap, not malloc: this also runs at an abnormal exit. */
    size_t bytes = WP_FN_COUNT * sizeof(struct wp_fncalls);
    struct wp_fncalls *all = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (all == MAP_FAILED) {
        int e = errno;
        fclose(f);
        remove(tmp);
        errno = e;
        return -1;
    }
    int nt = __atomic_load_n(&wp_stats_ntables, __ATOMIC_ACQUIRE);
    if (nt > WP_MAX_STATS_TABLES)
        nt = WP_MAX_STATS_TABLES;
    for (int t = 0; t < nt; t++) {
        const struct wp_stats *st = __atomic_load_n(&wp_stats_tables[t], __ATOMIC_ACQUIRE);
        for (uint32_t i = 0; st && i < st->nslots; i++) {
            const struct wp_cat *c = &st->cats[i];
            if (c->site && c->fn > 0 && c->fn < WP_FN_COUNT && c->count)
                wp_merge_cat(&all[c->fn], c);
        }
    }
    int n = __atomic_load_n(&wp_ncall_tables, __ATOMIC_ACQUIRE);
    if (n > WP_MAX_CALL_TABLES)
        n = WP_MAX_CALL_TABLES;
    for (int i = 0; i < n; i++) {
        const struct wp_calls_table *ct = __atomic_load_n(&wp_call_tables[i], __ATOMIC_ACQUIRE);
        for (int fn = 1; ct && fn < WP_FN_COUNT; fn++) {
            struct wp_traffic *a = &all[fn].tr;
            const struct wp_traffic *c = &ct->fn[fn];
            a->bytes_sent += c->bytes_sent, a->bytes_recv += c->bytes_recv;
            a->req_sent += c->req_sent, a->req_recv += c->req_recv;
        }
    }
    for (int fn = 1; fn < WP_FN_COUNT; fn++) {
        const struct wp_fncalls m = all[fn];
        if (m.count == 0 && m.tr.req_sent == 0 && m.tr.req_recv == 0)
            continue;
        fprintf(f, "%s\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t%llu\t",
                wp_fn_table[fn].name, (unsigned long long)m.count,
                (unsigned long long)wp_ticks_duration_ns(m.sum), (unsigned long long)wp_ticks_duration_ns(m.min),
                (unsigned long long)m.min_ev, (unsigned long long)wp_ticks_duration_ns(m.max),
                (unsigned long long)m.max_ev, (unsigned long long)wp_ticks_duration_ns(m.max2),
                (unsigned long long)m.max2_ev, (unsigned long long)m.tr.bytes_sent,
                (unsigned long long)m.tr.bytes_recv, (unsigned long long)m.tr.req_sent,
                (unsigned long long)m.tr.req_recv);
        /* Histogram: the non-empty bins as bin:count, comma separated. */
        int any = 0;
        for (int b = 0; b < WP_HIST_BINS; b++)
            if (m.hist[b])
                fprintf(f, "%s%d:%u", any++ ? "," : "", b, m.hist[b]);
        fprintf(f, "%s\n", any ? "" : "-");
    }
    munmap(all, bytes);
    int err = 0;
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        err = errno;
        remove(tmp);
    }
    if (!err && wp_mx && wp_write_matrix(dir, rank) != 0)
        err = errno ? errno : EIO;
    errno = err;
    return err ? -1 : 0;
}
