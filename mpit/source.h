/* mpit/source.h — stall sources: who tells MPI-Work from MPI-Stall.
 *
 * Contract for a source (struct wp_source; mpit/template.c is a documented
 * example to copy):
 * - probe(why): called once on the thread that initialized MPI, right after
 *   PMPI_Init returned, in normal context.  Returns 1 when the source can
 *   classify in this process, else 0 with a short reason in `why` ("this
 *   Open MPI was built without --enable-peruse").  Must leave nothing
 *   behind when it says no.
 * - start(): begin classifying; attach to MPI_COMM_WORLD and MPI_COMM_SELF.
 *   Returns 0 on success, else -1 with a reason (the next source is tried).
 * - comm_new(comm) / comm_free(comm): a communicator the program created
 *   (after it exists) or is about to free (before PMPI_Comm_free).  Normal
 *   context, any application thread.
 * - stop(): before PMPI_Finalize; detach everything.
 * - The optional completion hooks (recv, irecv, wait, waitall) replace the
 *   PMPI call inside the wrappers when present; they must keep its exact
 *   MPI semantics.  A source whose hooks poll says so (polls): short calls
 *   may then bypass them.
 * A source publishes what it knows through mpit/requests.h: the calling
 * thread is marked as seen by the source (wp_self.src_seen) and its stall
 * counter says whether it waits.  The SIGPROF handler then classifies the
 * sample at once by that counter; samples in calls the source did not see
 * are classified by the estimator's rule when the call returns.
 *
 * Selection: WAITPROF_SOURCE=auto|peruse|mpit|wrappers; auto takes the most
 * exact source that probes and starts (peruse, then mpit, then wrappers),
 * but tries mpit only where matched instances do not decide the samples
 * (lean wrappers, WAITPROF_MATCH=0 or WAITPROF_ESTIMATE=0: mpit/source.c
 * says why).  A source asked for by name that is unavailable gets one line
 * saying why and which source is used instead, the one auto would take.
 * "wrappers" (no runtime source) is always available.
 */
#ifndef WP_MPIT_SOURCE_H
#define WP_MPIT_SOURCE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mpit/requests.h"
#include "state/thread.h"

struct wp_source {
    const char *name;
    int (*probe)(char *why, size_t cap);
    int (*start)(char *why, size_t cap);
    void (*comm_new)(MPI_Comm comm);
    void (*comm_free)(MPI_Comm comm);
    void (*stop)(void);
    int (*recv)(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Status *st);
    int (*irecv)(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm, MPI_Request *req);
    int (*wait)(MPI_Request *req, MPI_Status *st);
    int (*waitall)(int n, MPI_Request *reqs, MPI_Status *sts);
    /* 1: the completion hooks poll, and a call shorter than WP_SRC_POLL_NS
     * is never classified by them, so the wrappers may give such calls the
     * PMPI call instead (wrap/wrap.h, wp_src_recv_in, wp_src_recv_lean).
     * 0: the hooks must see every call (PERUSE marks the awaited
     * requests). */
    int polls;
    /* 1: the source follows a call it sees from before the call's first
     * request could wait (PERUSE: from REQ_ACTIVATE, or from the entry of
     * MPI_Wait/MPI_Waitall), so the samples the call took before the
     * source saw it are MPI-Work (wrap/wrap.h, wp_settle_recorded).
     * 0: such samples are left to the wrappers' rules (MPI_T cannot tell
     * before its first read of the queue). */
    int whole;
};

/* A polling source (mpit/mpit.c) first reads the runtime's queue this far
 * into a call, and again as often after that: a sample taken before the
 * first read is left to the estimator, so a shorter call is never
 * classified by the source (wrap/wrap.h, wp_src_recv_in, relies on it). */
#define WP_SRC_POLL_NS 20000
/* Lean wrappers keep no categories, so the thread keeps the hint
 * (wp_thread_t's src_long): a call the source polled past its first read
 * sets it to WP_SRC_LONG_KEEP, a shorter one wears it down by one, and a
 * sample that falls in a receive or wait the source did not take sets it
 * to 1, so that the next one goes through the source and is measured
 * (wrap/wrap.h, wp_src_recv_lean). */
#define WP_SRC_LONG_KEEP 64

enum { WP_SOURCE_AUTO = -1, WP_SOURCE_WRAPPERS = 0, WP_SOURCE_MPIT = 1, WP_SOURCE_PERUSE = 2 };

/* The source in use; wp_source_wrappers until wp_source_select() ran. */
extern const struct wp_source *wp_src;
extern const struct wp_source wp_source_wrappers, wp_source_mpit, wp_source_peruse;

/* Choose and start a source (WAITPROF_SOURCE value `want`), after PMPI_Init.
 * `matched`: matched instances will decide the samples of recorded calls
 * (wp_config_matched).  Messages go through report(); returns the source
 * chosen. */
const struct wp_source *wp_source_select(int want, int matched, void (*report)(const char *line));
void wp_source_stop(void);
/* Before PMPI_Init, on the thread that calls MPI_Init, with the
 * WAITPROF_SOURCE value and `matched` as for wp_source_select: initialise
 * MPI_T now if the mpit source may be probed after PMPI_Init (mpit/mpit.c
 * says why it is cheaper before).  Calls no other MPI function. */
void wp_source_preinit(int want, int matched);
void wp_mpit_preinit(void);
/* Can the MPI_T source work with this library at all?  Its variable is
 * Open MPI ob1's; elsewhere MPI_T is left alone (with a reason in why). */
int wp_mpit_possible(char *why, size_t cap);
/* When MPI_T was initialised (for the meta file): never, before PMPI_Init
 * (wp_source_preinit) or after it (the probe, when it was not before), and
 * the time MPI_T_init_thread took.  Written in normal context at MPI_Init,
 * read by the meta writer. */
enum { WP_MPIT_NONE, WP_MPIT_BEFORE, WP_MPIT_AFTER };
extern int wp_mpit_when;
extern uint64_t wp_mpit_init_ns;

/* Remember that the calling thread awaits request id during the current
 * call (it is released when the call returns) and mark the call seen. */
void wp_src_hold(uintptr_t id);
/* End of a call the source saw: release what it awaited.  Inline, and the
 * table is only called when the call held requests in it: a serial
 * program's blocking calls keep theirs in the thread's set
 * (mpit/requests.h), which is cleared here without a lookup. */
extern __thread int wp_src_nheld __attribute__((tls_model("initial-exec")));
void wp_src_release(void);
static inline void wp_src_leave(wp_thread_t *t)
{
    if (wp_src_nheld)
        wp_src_release();
    wp_req_mine_clear();
    t->src_seen = 0;
}
/* Did the source classify this thread's current call, and is it waiting?
 * Async-signal-safe: TLS loads and one load from a static array. */
int wp_src_stalled_sig(void);

/* Samples classified by a runtime source (sampler/store.h counts them). */

#endif
