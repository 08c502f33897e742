/* state/run.h — what waitprof knows about the current run.
 *
 * Contract: filled by the MPI_Init hook (runtime/lifecycle.c) before sampling
 * starts and read-only afterwards except end_ns and status, so the writers,
 * including the async-signal-safe ones, may read it at any time.
 */
#ifndef WP_STATE_RUN_H
#define WP_STATE_RUN_H

#include <stdint.h>

#include "state/config.h"

struct wp_run {
    int active;            /* MPI_Init hook completed */
    int rank, size;
    int sampling;          /* the sampler is running on this rank */
    int have_dir;          /* dir is usable */
    int selected;          /* WAITPROF_RANKS selects this rank: it samples and
                            * writes per-rank files */
    long nselected;        /* how many ranks are selected */
    struct wp_config cfg;
    uint64_t start_ns, end_ns;
    uint64_t init_ns;      /* waitprof's own time in MPI_Init, before and
                            * after PMPI_Init (set at the hook's end) */
    char dir[4096];
    char mpi_version[256];
    char host[256];
};

extern struct wp_run wp_run;

#endif
