/* sampler/ctr_split.c — see sampler/ctr_split.h. */
#include "sampler/ctr_split.h"

#include "sampler/counters.h"
#include "sampler/internal.h"
#include "sampler/store.h"

int wp_ctr_split;

/* Per thread, by registry index: the counts at the split's previous read.
 * Apart from the samples' baseline (sampler/counters.c), so that a read at
 * MPI entry or exit does not take its counts from the next sample's call
 * path.  Zero when the group opens, as its counts are.  Written by the
 * thread only, by its wrapper or, when no wrapper reads, its handler. */
static uint64_t wp_split_last[WP_MAX_THREADS][WP_CTR_MAX];

void wp_ctr_split_abs_sig(struct wp_slot *slot, int in_mpi, const uint64_t *abs)
{
    if (slot->index < 0 || slot->index >= WP_MAX_THREADS || slot->store == NULL)
        return;
    uint64_t d[WP_CTR_MAX];
    wp_ctr_since_sig(wp_split_last[slot->index], abs, d);
    struct wp_store *s = slot->store;
    uint32_t n = s->nctr < WP_CTR_MAX ? s->nctr : WP_CTR_MAX;
    for (uint32_t c = 0; c < n; c++)
        s->split[in_mpi != 0][c] += d[c];
}

void wp_ctr_split_read(int in_mpi)
{
    struct wp_slot *slot = wp_self.slot;
    if (slot == NULL || slot->store == NULL || slot->store->nctr == 0)
        return;
    /* Mark, then check that sampling still runs: with wp_sampler_stop_sig's
     * clear-then-wait this is a Dekker pair, so the stopper either waits
     * for this read or this read sees the groups going and stays away. */
    __atomic_store_n(&slot->ctr_busy, 1, __ATOMIC_SEQ_CST);
    uint64_t abs[WP_CTR_MAX];
    if (__atomic_load_n(&wp_ctr_split, __ATOMIC_SEQ_CST) && wp_ctr_read_abs_sig(slot->index, abs) == 0)
        wp_ctr_split_abs_sig(slot, in_mpi, abs);
    __atomic_store_n(&slot->ctr_busy, 0, __ATOMIC_SEQ_CST);
}
