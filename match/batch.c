/* match/batch.c — the collective instances: per communicator, a batch of
 * the chosen ones, reduced over the communicator when it is full, at
 * MPI_Comm_free and at MPI_Finalize.  See match/match.h and doc/design.md,
 * "Matched instances". */
#include <float.h>
#include <string.h>

#include "format/format.h"
#include "match/batch.h"
#include "match/clock.h"
#include "match/internal.h"
#include "match/measured.h"
#include "state/clock.h"
#include "state/functions.h"

void wp_match_coll_record(const struct wp_mcat *c, struct wp_mcomm *mc, uint64_t k, int is_root, uint64_t enter,
                          uint64_t cause)
{
    struct wp_cbatch *b = mc->batch;
    if (b == NULL)
        return;
    /* Only the thread calling a collective on mc touches its batch: MPI
     * requires the program to order collective calls on a communicator. */
    b->e[b->n++] = (struct wp_centry){.k = k, .t0 = enter, .t1 = wp_ticks(), .cat = *c, .is_root = is_root,
                                      .cause = cause};
    __atomic_fetch_add(&wp_match_cnt.coll_records, 1, __ATOMIC_RELAXED);
    if (b->n == WP_CBATCH)
        wp_match_flush(mc);
}

void wp_match_flush(struct wp_mcomm *mc)
{
    struct wp_cbatch *b = mc->batch;
    if (b == NULL || b->n == 0)
        return;
    uint32_t n = b->n;
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        double t = wp_match_ref_ns(e->t0);
        b->in[3 * i] = (struct wp_di){t, mc->rank};
        b->in[3 * i + 1] = (struct wp_di){e->is_root ? -DBL_MAX : t, mc->rank};
        b->in[3 * i + 2] = (struct wp_di){e->is_root ? t : -DBL_MAX, mc->rank};
    }
    b->n = 0;
    if (PMPI_Allreduce(b->in, b->out, (int)(3 * n), MPI_DOUBLE_INT, MPI_MAXLOC, mc->handle) != MPI_SUCCESS) {
        for (uint32_t i = 0; i < n; i++)
            wp_measured_add(&b->e[i].cat, wp_match_first(b->e[i].k), 0, 0, 0);
        return;
    }
    /* Who delayed each instance: the last to enter (NxN, barrier), the
     * root (broadcast), the last non-root (reduce).  A second reduction
     * tells every member what the delaying one computed before it came. */
    int delayer[WP_CBATCH], pattern[WP_CBATCH];
    for (uint32_t i = 0; i < n; i++) {
        switch (wp_fn_table[b->e[i].cat.fn].wclass) {
        case WP_CLASS_ONE2N:
            delayer[i] = b->out[3 * i + 2].r, pattern[i] = WP_PAT_LATE_BCAST;
            break;
        case WP_CLASS_N2ONE:
            delayer[i] = b->out[3 * i + 1].r, pattern[i] = WP_PAT_EARLY_REDUCE;
            break;
        case WP_CLASS_BARRIER:
            delayer[i] = b->out[3 * i].r, pattern[i] = WP_PAT_BARRIER;
            break;
        default:
            delayer[i] = b->out[3 * i].r, pattern[i] = WP_PAT_NXN;
            break;
        }
        b->cin[i] = delayer[i] == mc->rank ? b->e[i].cause : 0;
        if (delayer[i] == mc->rank)
            wp_cause_used(b->e[i].cause);
    }
    if (PMPI_Allreduce(b->cin, b->cout, (int)n, MPI_UINT64_T, MPI_BOR, mc->handle) != MPI_SUCCESS)
        memset(b->cout, 0, n * sizeof *b->cout);
    for (uint32_t i = 0; i < n; i++) {
        const struct wp_centry *e = &b->e[i];
        double own = b->in[3 * i].v;
        uint64_t dur = wp_ticks_duration_ns(e->t1 - e->t0);
        double w = 0;
        switch (pattern[i]) {
        case WP_PAT_LATE_BCAST:
            w = e->is_root ? 0 : b->out[3 * i + 2].v - own;
            break;
        case WP_PAT_EARLY_REDUCE:
            /* A communicator of one has no non-root. */
            w = e->is_root && b->out[3 * i + 1].v > -DBL_MAX ? b->out[3 * i + 1].v - own : 0;
            break;
        default:
            w = b->out[3 * i].v - own;
            break;
        }
        uint64_t wait = wp_match_clip(w, dur);
        wp_measured_add(&e->cat, wp_match_first(e->k), 1, wait, dur);
        if (wait > 0 && delayer[i] != mc->rank)
            wp_cause_add(&e->cat, pattern[i], wp_match_world_rank(mc, delayer[i]), b->cout[i], wait, 0);
    }
}

