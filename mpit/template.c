/* mpit/template.c — a stall source to copy when adding one.
 *
 * It is compiled (so it keeps up with the contract) but never selected: it
 * classifies nothing.  To add a real source: copy this file, fill in the
 * steps, give it a WAITPROF_SOURCE name in state/config.c and a place in
 * wp_source_select()'s order (mpit/source.c), most exact first.
 *
 * The contract is in mpit/source.h; in short, a source tells the sampler
 * two things about each application thread inside MPI: that it knows about
 * the current call (wp_src_hold() for each request the call waits on, or
 * wp_self.src_seen = 1 when the source tracks the call itself), and whether
 * the thread waits for a peer right now (the thread's counter in
 * wp_req_stall[], most simply through wp_req_posted()/wp_req_matched() on
 * the request table, mpit/requests.h).  Anything that runs inside the MPI
 * library's callbacks must be O(1), lock-free, allocation-free and MPI-free:
 * the table's functions are.
 */
#include "config.h"

#include <stdio.h>

#include "mpit/requests.h"
#include "mpit/source.h"

/* Say whether the runtime offers what the source needs, without changing
 * anything: look symbols up with dlsym (the library may lack them), query
 * MPI_T variables by name, try it on a private communicator.  On "no",
 * write a reason a user can act on. */
static int wp_template_probe(char *why, size_t cap)
{
    snprintf(why, cap, "the template source classifies nothing");
    return 0;
}

/* Attach to MPI_COMM_WORLD and MPI_COMM_SELF; later communicators arrive
 * through comm_new. */
static int wp_template_start(char *why, size_t cap)
{
    (void)why, (void)cap;
    return 0;
}

/* A new communicator, after the call that created it returned. */
static void wp_template_comm_new(MPI_Comm comm)
{
    (void)comm;
}

/* Before the program frees a communicator: detach from it. */
static void wp_template_comm_free(MPI_Comm comm)
{
    (void)comm;
}

/* Before PMPI_Finalize: detach from everything, finalize MPI_T if used. */
static void wp_template_stop(void)
{
}

/* A completion hook: keep the MPI semantics of the call it replaces.  A
 * source that learns about requests only when a thread waits on them marks
 * them here (the PERUSE source does this). */
static int wp_template_wait(MPI_Request *req, MPI_Status *st)
{
    if (wp_req_await((uintptr_t)*req, wp_req_thread_index()))
        wp_src_hold((uintptr_t)*req);
    return PMPI_Wait(req, st);
}

const struct wp_source wp_source_template = {
    .name = "template",
    .probe = wp_template_probe,
    .start = wp_template_start,
    .comm_new = wp_template_comm_new,
    .comm_free = wp_template_comm_free,
    .stop = wp_template_stop,
    .wait = wp_template_wait,
};
