/* mpit/source.c — choosing a stall source, and what all sources share. */
#include "config.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "mpit/requests.h"
#include "mpit/source.h"

/* The estimator alone: nothing to probe, start or hook. */
static int wp_wrappers_probe(char *why, size_t cap)
{
    (void)why, (void)cap;
    return 1;
}

static int wp_wrappers_start(char *why, size_t cap)
{
    (void)why, (void)cap;
    return 0;
}

const struct wp_source wp_source_wrappers = {
    .name = "wrappers",
    .probe = wp_wrappers_probe,
    .start = wp_wrappers_start,
};

const struct wp_source *wp_src = &wp_source_wrappers;

/* Would auto try this source?  MPI_T only where nothing else decides the
 * samples of a blocking call: with matched instances on, the held samples
 * of every recorded call are decided at the profile by the partner's
 * measured arrival (doc/design.md, "Samples"), which came within about a
 * point of MPI_T in most of the stall-source benchmark's cases, and a few
 * points of MPI-Stall too many where a long transfer did not wait
 * (doc/sources.md); MPI_T would add Open MPI's MPI_T_init_thread to
 * MPI_Init (tens of ms of CPU per rank: every component of every framework
 * is loaded) and its polling to long receives.  PERUSE costs nothing at
 * MPI_Init and also sees sends, so auto keeps it. */
static int wp_auto_tries(const struct wp_source *s, int matched)
{
    return s != &wp_source_mpit || !matched;
}

const struct wp_source *wp_source_select(int want, int matched, void (*report)(const char *line))
{
    /* Most exact first: PERUSE sees every matching event of ob1; MPI_T
     * sees specific-source receives by polling; the estimator sees only
     * durations (and, with matching on, the matched instances). */
    static const struct wp_source *const order[] = {&wp_source_peruse, &wp_source_mpit, &wp_source_wrappers};
    const struct wp_source *asked = want == WP_SOURCE_PERUSE ? &wp_source_peruse
                                    : want == WP_SOURCE_MPIT ? &wp_source_mpit
                                    : want == WP_SOURCE_WRAPPERS ? &wp_source_wrappers
                                                                 : NULL;
    char why[256] = "", line[512];
    if (asked != NULL) {
        if (asked->probe(why, sizeof why) && asked->start(why, sizeof why) == 0) {
            wp_src = asked;
            return wp_src;
        }
    }
    /* What auto takes, also when the source asked for is not available. */
    for (int i = 0; i < 3; i++) {
        char why2[256] = "";
        if (order[i] == asked || !wp_auto_tries(order[i], matched))
            continue;
        if (order[i]->probe(why2, sizeof why2) && order[i]->start(why2, sizeof why2) == 0) {
            wp_src = order[i];
            break;
        }
    }
    if (asked != NULL && report != NULL) {
        snprintf(line, sizeof line, "waitprof: WAITPROF_SOURCE=%s is not available here (%s); using %s instead",
                 asked->name, why[0] ? why : "it did not start", wp_src->name);
        report(line);
    }
    return wp_src;
}

/* Before PMPI_Init: start what a source that may be chosen needs started
 * before MPI is, so that the probe after PMPI_Init costs less.  Only
 * MPI_T has such a step (mpit/mpit.c, wp_mpit_preinit).  It is taken when
 * MPI_T may be probed: the source asked for is mpit, or auto (or peruse,
 * which falls back as auto chooses) would try it on an Open MPI without
 * PERUSE (PERUSE_Init is looked up: the library is loaded before
 * MPI_Init).  With WAITPROF_SOURCE=wrappers, where PERUSE will be used,
 * where matched instances decide the samples, or on another MPI
 * (wp_mpit_possible), MPI_T is never initialised. */
void wp_source_preinit(int want, int matched)
{
    int mpit = want == WP_SOURCE_MPIT || ((want == WP_SOURCE_AUTO || want == WP_SOURCE_PERUSE) &&
                                          wp_auto_tries(&wp_source_mpit, matched) &&
                                          dlsym(RTLD_DEFAULT, "PERUSE_Init") == NULL);
    if (mpit && wp_mpit_possible(NULL, 0))
        wp_mpit_preinit();
}

void wp_source_stop(void)
{
    if (wp_src->stop)
        wp_src->stop();
    wp_src = &wp_source_wrappers;
}

/* Communicators the program creates or frees (directives newcomm= and
 * freecomm in the table).  Only the outermost wrapper calls these. */
void wp_src_comm_new(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL && wp_src->comm_new)
        wp_src->comm_new(comm);
}

void wp_src_comm_free(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL && wp_src->comm_free)
        wp_src->comm_free(comm);
}

/* --- what the calling thread awaits in its current call ------------------- */

#define WP_HOLD_MAX 64

static __thread uintptr_t wp_held[WP_HOLD_MAX] __attribute__((tls_model("initial-exec")));
__thread int wp_src_nheld __attribute__((tls_model("initial-exec")));

void wp_src_hold(uintptr_t id)
{
    wp_self.src_seen = 1;
    if (wp_src_nheld < WP_HOLD_MAX)
        wp_held[wp_src_nheld++] = id;
    else
        __atomic_fetch_add(&wp_req_untracked, 1, __ATOMIC_RELAXED);
}

void wp_src_release(void)
{
    int me = wp_req_thread_index();
    for (int i = 0; i < wp_src_nheld; i++)
        wp_req_unawait(wp_held[i], me);
    wp_src_nheld = 0;
}

int wp_src_stalled_sig(void)
{
    if (!wp_self.src_seen)
        return -1;
    /* The call's own requests (serial mode), then the table's counter;
     * either counts once it lasted wp_req_need progress passes. */
    if (__atomic_load_n(&wp_mine.nposted, __ATOMIC_RELAXED) > 0 &&
        wp_req_counts(__atomic_load_n(&wp_mine.since, __ATOMIC_RELAXED)))
        return 1;
    int me = wp_req_me;
    return me >= 0 && __atomic_load_n(&wp_req_stall[me], __ATOMIC_RELAXED) > 0 &&
           wp_req_counts(__atomic_load_n(&wp_req_since[me], __ATOMIC_RELAXED));
}
