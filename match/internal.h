/* match/internal.h — what the files of match/ share: the
 * records and the tables the finalize step reads.  Not for other layers. */
#ifndef WP_MATCH_INTERNAL_H
#define WP_MATCH_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "match/types.h"

/* A chosen point-to-point instance on this rank. */
struct wp_mrec {
    uint64_t chan, k;
    uint64_t post;   /* a receive: when it was posted (ticks); a send: its entry */
    uint64_t t0, t1; /* a receive: its wait, from the completion call's entry to its
                      * exit; a send: its entry and (blocking) its exit */
    uint64_t cause;  /* what this thread computed before the call (wp_thread_t.
                      * last_compute): the cause of the partner's wait, if any */
    uint64_t call;   /* nonzero: the completion call that completed several
                      * chosen receives, whose wait is the longest of theirs */
    uint64_t pchan, pk; /* a send: the thread's last recorded receive before it
                         * (wp_mprev; pchan 0: none) */
    struct wp_mcat cat;
    int32_t peer;    /* the partner's rank in MPI_COMM_WORLD */
    uint8_t side;    /* 0 send, 1 receive */
    uint8_t lr;      /* a blocking send: its Late Receiver wait is measured */
    uint8_t first;   /* in the always-chosen stratum */
};

/* One chosen collective instance, until its batch is reduced. */
struct wp_centry {
    uint64_t k, t0, t1; /* entry and exit, ticks (a nonblocking one: its
                         * I-call's entry; its wait is in its completion) */
    uint64_t cause;     /* wp_thread_t.last_compute at entry */
    struct wp_mcat cat;
    int is_root;
    uint8_t cls;        /* its wait class (WP_CLASS_*): the pattern */
    uint8_t nb;         /* a nonblocking collective (match/batch.c) */
    uint32_t nbc;       /* nb: its slot in the table of followed ones, plus
                         * one; 0 when it is not followed to its completion */
};
#define WP_CBATCH 256
/* MPI_DOUBLE_INT, for MPI_MAXLOC. */
struct wp_di {
    double v;
    int r;
};
struct wp_cbatch {
    uint32_t n;
    struct wp_centry e[WP_CBATCH];
    /* The reduction's buffers, here so that no allocation can fail on one
     * member and leave the others waiting in the reduction: per instance,
     * the latest entry of all, the latest of the non-roots, and the
     * root's. */
    struct wp_di in[3 * WP_CBATCH], out[3 * WP_CBATCH];
    /* The second reduction: the delaying member's cause, the others 0. */
    uint64_t cin[WP_CBATCH], cout[WP_CBATCH];
};

extern pthread_mutex_t wp_match_mu;
extern struct wp_mrec *wp_match_recs;
extern size_t wp_match_nrec;

/* Every communicator still numbered, for the flushes at MPI_Finalize,
 * ordered by id (n set). */
struct wp_mcomm **wp_match_comms(int *n);

/* A wait of a category that a rank caused: its rank in MPI_COMM_WORLD and
 * what it computed before its late call (a store entry's hash on that
 * rank, 0 when it had no sample yet); pattern as format/format.h;
 * propagated: caused through ranks that waited for it, else directly. */
void wp_cause_add(const struct wp_mcat *c, int pattern, int delayer, uint64_t cause, uint64_t wait_ns,
                  int propagated);
/* This rank's computation (a store entry's hash) caused a wait elsewhere:
 * its call path is written for the report (rank.R.paths). */
void wp_cause_used(uint64_t cause);
/* A member's rank in MPI_COMM_WORLD; -1 when r is not a member. */
static inline int wp_match_world_rank(const struct wp_mcomm *mc, int r)
{
    if (mc->world)
        return r;
    return r >= 0 && r < mc->size ? mc->wranks[r] : -1;
}

/* A wait as nanoseconds, at least 0 and at most the call's duration. */
static inline uint64_t wp_match_clip(double w, uint64_t dur)
{
    if (!(w > 0))
        return 0;
    return w > (double)dur ? dur : (uint64_t)w;
}

/* Add one matched (or, with matched 0, unmatched) instance of a category;
 * blk is its block of numbers (k >> WP_MATCH_BLOCK_LOG2: the unit the
 * hashed choice takes or leaves whole), wait_ns its wait, dur_ns its
 * duration.  Takes wp_match_mu. */
void wp_measured_add(const struct wp_mcat *c, int first, uint64_t blk, int matched, uint64_t wait_ns,
                     uint64_t dur_ns);

#endif
