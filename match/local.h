/* match/local.h — the rank-local steps of matching at MPI_Finalize
 * (match/local.c): the lookup table of the records received from the
 * partners, the matching loop over this rank's records, and the
 * propagation's bookkeeping between its rounds.  None of it calls MPI:
 * match/exchange.c moves the data between ranks, and bench/match_sim.c
 * calls these functions on synthetic records, so that what one rank does
 * can be measured apart from the messages. */
#ifndef WP_MATCH_LOCAL_H
#define WP_MATCH_LOCAL_H

#include <stddef.h>
#include <stdint.h>

#include "match/internal.h"

/* What a record tells its partner: a send its entry, a receive its post. */
struct wp_mwire {
    uint64_t chan, k;
    double t;      /* ns in the common time base (match/clock.c): a send's entry,
                    * a receive's post */
    double t0, t1; /* a receive's wait; a blocking send's entry and exit */
    uint64_t cause; /* what the sender or receiver computed before the call */
    uint32_t side, lr;
};

/* A record as its partner needs it, times in the common base. */
struct wp_mwire wp_mwire_of(const struct wp_mrec *r);

/* The partners' records by (channel, number, side), open addressing. */
struct wp_wtab {
    const struct wp_mwire *v;
    uint32_t *slot; /* index + 1; 0 free */
    size_t mask;
};

/* Index the nin records in in (kept, not copied).  Without memory (or
 * records) the table is empty and finds nothing. */
void wp_wtab_build(struct wp_wtab *t, const struct wp_mwire *in, size_t nin);
void wp_wtab_free(struct wp_wtab *t);
const struct wp_mwire *wp_wfind(const struct wp_wtab *t, uint64_t chan, uint64_t k, uint32_t side);

/* --- propagation ---------------------------------------------------------------------- */

#define WP_TERMS 4

/* A terminal delay: a rank and what it computed, and the part of a wait
 * (ns) it caused. */
struct wp_term {
    int32_t rank;
    uint32_t pad;
    uint64_t cause;
    double ns;
};

/* A Late Sender wait of this rank, until its terminal delays are known. */
struct wp_winst {
    uint64_t chan, k;   /* the record that decided its wait */
    size_t first, last; /* its records in the rank's record array */
    struct wp_mcat cat;
    double wait;        /* ns */
    int32_t delayer;
    int resolved, nt;
    uint64_t cause;
    struct wp_term t[WP_TERMS];
};

/* What a send tells its receiver: its predecessor's wait and terminal
 * delays (their shares of it). */
struct wp_pwire {
    uint64_t chan, k;
    double wait;
    uint32_t nt, pad;
    struct wp_term t[WP_TERMS];
};

/* A matched send of this rank whose receiver waited. */
struct wp_psend {
    uint64_t chan, k;
    int32_t peer;
    int sent;
    long pred; /* its predecessor's wp_winst, -1: none that waited */
};

/* (channel, number) of this rank's receive records -> wp_winst index. */
struct wp_itab {
    uint64_t *chan, *k;
    long *inst;
    size_t mask;
};

/* Resolve a wait: its direct part to its delayer, its propagated part
 * over the predecessor's terminal delays p (shares of pwait). */
void wp_resolve(struct wp_winst *w, double pwait, const struct wp_term *p, uint32_t np);

/* What the matching loop leaves for the propagation: the Late Sender waits
 * (wi, nw), the sends whose receivers waited (ps, nps; pred resolved
 * through it), and the receive records of the waits by (channel, number)
 * (it). */
struct wp_mlocal {
    struct wp_winst *wi;
    size_t nw;
    struct wp_psend *ps;
    size_t nps;
    struct wp_itab it;
    uint64_t inconsistent; /* receives whose message was sent after they returned */
    int nomem;             /* no memory for wi or ps: nothing is propagated */
};

/* Match this rank's nrec records (recs, in the order they were recorded)
 * with their partners' (tab): every instance's measured wait goes to the
 * measured table (wp_measured_add), Late Receiver waits and the waits no
 * propagation follows to the causes (wp_cause_add), and the Late Sender
 * waits and the sends that caused waits into m, with the table of the
 * waits' receive records and every send's predecessor looked up in it. */
void wp_match_local(const struct wp_mrec *recs, size_t nrec, const struct wp_wtab *tab, struct wp_mlocal *m);
void wp_mlocal_free(struct wp_mlocal *m);

/* One propagation round, this rank's part.  wp_prop_out writes to out
 * and peer (room for m->nps each) what the sends that may tell now (their
 * predecessor resolved, or none) tell their receivers, marks them sent and
 * returns how many; m->ps must be sorted by peer (wp_prop_sort).
 * wp_prop_in resolves the waits that in tells about.  wp_prop_open counts
 * the sends not yet sent and the waits not yet resolved.  wp_prop_direct
 * resolves every wait still open as direct (its sender will never tell). */
void wp_prop_sort(struct wp_mlocal *m);
size_t wp_prop_out(struct wp_mlocal *m, struct wp_pwire *out, int *peer);
void wp_prop_in(struct wp_mlocal *m, const struct wp_pwire *in, size_t nin);
long long wp_prop_open(const struct wp_mlocal *m);
void wp_prop_direct(struct wp_mlocal *m);

/* The propagation in one step, where every rank's waits and sends are few
 * enough to be gathered on every rank (match/exchange.c decides).  A
 * rank's block: a header (chan: its waits, k: its sends), then each wait
 * (its deciding record's channel and number, cause, wait, a: its delayer)
 * and each send (channel and number, a: its predecessor's index among the
 * rank's waits or -1, b: the receiver's rank). */
struct wp_gprop {
    uint64_t chan, k, cause;
    double wait;
    int32_t a, b;
};
/* Write m's block into blk (room for cap elements); returns its length. */
size_t wp_prop_pack(const struct wp_mlocal *m, struct wp_gprop *blk, size_t cap);
/* Run the rounds for all nranks ranks on their blocks (all: nranks blocks
 * of blk elements, rank me's included): every wait is resolved as the
 * rounds' messages would resolve it, this rank's in m (counted as causes),
 * and *rounds is the number of rounds the messages would have taken (at
 * most cap + 1).  Returns 0, or -1 without memory (m unchanged). */
int wp_prop_gathered(struct wp_mlocal *m, int me, const struct wp_gprop *all, int nranks, size_t blk,
                     uint64_t cap, uint64_t *rounds);

#endif
