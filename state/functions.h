/* state/functions.h — the MPI function table as the rest of waitprof sees it.
 *
 * Contract: every wrapped MPI function has a stable id (enum wp_fn, generated
 * from wrap/mpi_functions.tbl) and an entry in wp_fn_table giving its name and
 * wait class.  The table is constant data, safe to read from a signal handler.
 */
#ifndef WP_STATE_FUNCTIONS_H
#define WP_STATE_FUNCTIONS_H

#include "state/functions.gen.h"

enum wp_class {
    WP_CLASS_ENV, WP_CLASS_SEND, WP_CLASS_RECV, WP_CLASS_SENDRECV, WP_CLASS_PROBE,
    WP_CLASS_WAIT, WP_CLASS_TEST, WP_CLASS_START, WP_CLASS_NXN, WP_CLASS_BARRIER,
    WP_CLASS_ONE2N, WP_CLASS_N2ONE, WP_CLASS_RMA, WP_CLASS_FILE, WP_CLASS_COMM,
    WP_CLASS_COUNT
};

struct wp_fn_info {
    const char *name;    /* canonical C name, e.g. "MPI_Recv" */
    enum wp_class wclass;
    int wrapped;         /* declared by the mpi.h this build was made for */
    int waits;           /* blocking and may wait for another rank: the
                          * estimator records it (fallback/stats.h) */
};

extern const struct wp_fn_info wp_fn_table[WP_FN_COUNT];

/* Name of a wait class, e.g. "recv". */
const char *wp_class_name(enum wp_class c);

/* The id of an MPI function named in any binding's spelling ("MPI_Send",
 * "mpi_send_", "MPI_SEND", "mpi_send_f08_", "MPI_Send_c"), or WP_FN_NONE. */
int wp_fn_lookup(const char *symbol);

#endif
