/* wrap/traffic.h — bytes and requests per MPI function, counted by the
 * wrappers, and this rank's row of the transfer matrices.
 *
 * Contract:
 * - wp_traffic_send()/wp_traffic_recv() are called by the generated C and
 *   Fortran wrappers of the point-to-point functions after a successful
 *   call (the C ones through the inline wp_traffic_send_in() and
 *   wp_traffic_recv_in(); a send's fast form tests wp_traffic_inline()
 *   first and then adds with wp_traffic_send_add(); an untimed C receive,
 *   whose source is known and which runs with the matrix off, counts
 *   before its call with wp_traffic_recv_known() and takes the count back
 *   with wp_traffic_recv_undo() if the call fails; a
 *   Fortran wildcard receive leaves the peer unknown): bytes and
 *   requests sent or received per MPI function, in a table per thread (so
 *   the counts need no atomic add), and with WAITPROF_MATRIX=1 the row of
 *   this rank in the transfer matrices SIZE(i,j) (bytes sent from i to j),
 *   REQUEST(i,j) (send calls from i to j) and TIME(i,j) (time rank i spent
 *   in blocking receives from j), shared by the threads.
 *   Receive sizes are the posted sizes (count x datatype), not the received
 *   ones: asking the status would cost a call per receive.
 * - The tables are read by the writer of rank.R.calls (profile/calls.h)
 *   after the program's last MPI call.
 */
#ifndef WP_WRAP_TRAFFIC_H
#define WP_WRAP_TRAFFIC_H

#include <mpi.h>
#include <stdint.h>

#include "state/functions.h"
#include "state/thread.h"

struct wp_traffic {
    uint64_t bytes_sent, bytes_recv, req_sent, req_recv;
};

/* One thread's counts. */
struct wp_traffic_table {
    struct wp_traffic fn[WP_FN_COUNT];
};

/* Every thread's table (state/thread.h, wp_table_count and wp_table_at). */
extern struct wp_table_list wp_traffic_list;

/* The matrix row: bytes, requests and receive ticks per peer (3 words a
 * peer), wp_mx_size peers; NULL with the matrix off. */
extern uint64_t *wp_mx;
extern int wp_mx_size;

/* Set up (normal context, from the MPI_Init hook): matrix on or off. */
void wp_traffic_init(int rank, int size, int matrix);

void wp_traffic_send(int fn, uint64_t bytes, int dest, MPI_Comm comm);
void wp_traffic_recv(int fn, uint64_t bytes, int source, MPI_Comm comm, uint64_t dur);

/* Whether the thread's counts are the inline ones: it has its table and
 * the matrix is off (a send to a rank, not MPI_PROC_NULL, then takes
 * wp_traffic_send_add). */
static inline __attribute__((always_inline)) int wp_traffic_inline(void)
{
    return wp_self.table[WP_TABLE_TRAFFIC] != NULL && wp_mx == NULL;
}
static inline __attribute__((always_inline)) void wp_traffic_send_add(int fn, uint64_t bytes)
{
    struct wp_traffic_table *t = wp_self.table[WP_TABLE_TRAFFIC];
    t->fn[fn].bytes_sent += bytes;
    t->fn[fn].req_sent++;
}
/* The C wrappers' forms, inline: there fn is a constant, so the thread's
 * count is two additions at a fixed offset from its table.  Everything
 * else takes the functions above: the thread's first count (no table
 * yet), the matrix, and a negative peer (MPI_PROC_NULL, which is not
 * counted, or a wildcard's unknown sender, which is). */
static inline __attribute__((always_inline)) void wp_traffic_send_in(int fn, uint64_t bytes, int dest, MPI_Comm comm)
{
    if (__builtin_expect(!wp_traffic_inline() || dest < 0, 0)) {
        wp_traffic_send(fn, bytes, dest, comm);
        return;
    }
    wp_traffic_send_add(fn, bytes);
}
/* The table's count of a receive, for a caller that found the table
 * (wrap/wrap.h, wp_recv_fast). */
static inline __attribute__((always_inline)) void wp_traffic_recv_table(int fn, uint64_t bytes)
{
    struct wp_traffic_table *t = wp_self.table[WP_TABLE_TRAFFIC];
    t->fn[fn].bytes_recv += bytes;
    t->fn[fn].req_recv++;
}
/* A receive whose caller knows the source (source >= 0) and the matrix
 * off (wp_mx NULL), as a receive counted before its call does (wrap/wrap.h,
 * wp_count_before): only the table is left to test. */
static inline __attribute__((always_inline)) void wp_traffic_recv_known(int fn, uint64_t bytes, int source,
                                                                        MPI_Comm comm, uint64_t dur)
{
    if (__builtin_expect(wp_self.table[WP_TABLE_TRAFFIC] == NULL, 0)) {
        wp_traffic_recv(fn, bytes, source, comm, dur);
        return;
    }
    wp_traffic_recv_table(fn, bytes);
}
static inline __attribute__((always_inline)) void wp_traffic_recv_in(int fn, uint64_t bytes, int source, MPI_Comm comm,
                                                                     uint64_t dur)
{
    if (__builtin_expect(wp_mx != NULL || source < 0, 0)) {
        wp_traffic_recv(fn, bytes, source, comm, dur);
        return;
    }
    wp_traffic_recv_known(fn, bytes, source, comm, dur);
}
/* Take back a receive counted by wp_traffic_recv_known() before a call that
 * then failed; only for one counted in the table (a known source, the
 * matrix off), as wrap/wrap.h's wp_count_before counts. */
static inline void wp_traffic_recv_undo(int fn, uint64_t bytes)
{
    struct wp_traffic_table *t = wp_self.table[WP_TABLE_TRAFFIC];
    if (t != NULL) {
        t->fn[fn].bytes_recv -= bytes;
        t->fn[fn].req_recv--;
    }
}

#endif
