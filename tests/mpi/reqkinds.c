/* tests/mpi/reqkinds.c — completion calls on every kind of request the
 * wrappers' extra calls can meet, for t_reqkinds.sh to compare with and
 * without waitprof (2 ranks).  Each case prints what the program observes
 * (return codes, error classes, indices, counts, values); the output must
 * be the same.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "greq.h"

static int rank;

static void say(const char *what, int a, int b, int c)
{
    printf("rank %d %s %d %d %d\n", rank, what, a, b, c);
    fflush(stdout);
}

static int errclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

/* Completed requests whose entries waitprof's tables keep: MPI_Test
 * leaves them there (fallback/stats.h, wp_req_kind), and both MPIs hand
 * the handle values out again to the next requests, whatever call makes
 * them.  Such a call must drop the stale entries (wrap/mpi_functions.tbl,
 * req=unknown), or the completion calls take its request for a receive
 * or a send: MPICH 4.0.2 then aborted in the remedy's MPI_Testall over
 * the persistent collectives below. */
static void leave_stale(int tag)
{
    int peer = 1 - rank, out = rank + tag, in[4] = {0, 0, 0, 0}, flag = 0;
    MPI_Request r[8];
    for (int i = 0; i < 4; i++) {
        MPI_Irecv(&in[i], 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[2 * i]);
        MPI_Isend(&out, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &r[2 * i + 1]);
    }
    for (int i = 0; i < 8; i++)
        do
            MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE);
        while (!flag);
    say("stale_tested", tag, in[0] + in[1] + in[2] + in[3], 0);
}

/* Persistent collectives started in different orders on the two ranks
 * (MPI-4): the case MPICH's MPI_Testall aborts on. */
static void persistent_collectives(void)
{
#if MPI_VERSION >= 4
    int v = rank == 0 ? 42 : 0;
    MPI_Request r[2];
    MPI_Bcast_init(&v, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    for (int it = 0; it < 3; it++) {
        v = rank == 0 ? 42 + it : 0;
        if (rank == 0) {
            MPI_Start(&r[0]);
            MPI_Start(&r[1]);
        } else {
            MPI_Start(&r[1]);
            MPI_Start(&r[0]);
        }
        if (rank == 1)
            usleep(50000); /* rank 0's requests may complete first, or not */
        MPI_Status st[2];
        int rc = MPI_Waitall(2, r, st);
        say("pcoll_waitall", errclass(rc), v, it);
    }
    /* The same requests through Wait, Waitany and Waitsome. */
    MPI_Startall(2, r);
    int rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    say("pcoll_wait", errclass(rc), 0, 0);
    int idx = -5;
    rc = MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
    say("pcoll_waitany", errclass(rc), idx, 0);
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
#else
    say("pcoll_skipped_mpi3", 0, 0, 0);
#endif
}

/* Persistent point-to-point requests, and an inactive one in the array. */
static void persistent_p2p(void)
{
    int peer = 1 - rank, out = rank + 10, in = -1, other = -1;
    MPI_Request r[3];
    MPI_Send_init(&out, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &r[0]);
    MPI_Recv_init(&in, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, &r[1]);
    MPI_Recv_init(&other, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, &r[2]); /* never started */
    for (int it = 0; it < 3; it++) {
        MPI_Startall(2, r);
        MPI_Status st[3];
        memset(st, 0, sizeof st); /* what the call leaves alone stays the same */
        int rc = MPI_Waitall(3, r, st);
        say("pp2p_waitall", errclass(rc), in, st[1].MPI_SOURCE);
        say("pp2p_inactive", st[2].MPI_SOURCE == MPI_ANY_SOURCE, st[2].MPI_TAG == MPI_ANY_TAG, other);
    }
    for (int k = 0; k < 3; k++)
        MPI_Request_free(&r[k]);
}

/* The null request in every completion call. */
static void null_requests(void)
{
    int peer = 1 - rank, out = rank, in = -1;
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Irecv(&in, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Send(&out, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
    MPI_Status st[3];
    memset(st, 0, sizeof st);
    int rc = MPI_Waitall(3, r, st);
    say("null_waitall", errclass(rc), in, r[1] == MPI_REQUEST_NULL);
    int idx = -5, count = -5, idxs[3];
    rc = MPI_Waitany(3, r, &idx, MPI_STATUS_IGNORE);
    say("null_waitany", errclass(rc), idx == MPI_UNDEFINED, 0);
    rc = MPI_Waitsome(3, r, &count, idxs, st);
    say("null_waitsome", errclass(rc), count == MPI_UNDEFINED, 0);
    MPI_Request one = MPI_REQUEST_NULL;
    MPI_Status s;
    rc = MPI_Wait(&one, &s);
    say("null_wait", errclass(rc), s.MPI_SOURCE == MPI_ANY_SOURCE, s.MPI_TAG == MPI_ANY_TAG);
}

/* A generalized request (greq.h): its callbacks are called as often as
 * without waitprof. */
static void generalized(void)
{
    MPI_Request g[2];
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g[0]);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, NULL, &g[1]);
    MPI_Grequest_complete(g[0]);
    MPI_Status st;
    int rc = MPI_Wait(&g[0], &st), n = -1;
    MPI_Get_elements(&st, MPI_INT, &n);
    say("greq_wait", errclass(rc), n, greq_nquery * 10 + greq_nfree);
    MPI_Grequest_complete(g[1]);
    rc = MPI_Waitall(1, &g[1], &st);
    say("greq_waitall", errclass(rc), greq_nquery, greq_nfree);
}

/* Partitioned communication (MPI-4). */
static void partitioned(void)
{
#if MPI_VERSION >= 4
    int buf[4] = {0, 0, 0, 0}, peer = 1 - rank;
    MPI_Request r;
    if (rank == 0) {
        for (int i = 0; i < 4; i++)
            buf[i] = 100 + i;
        MPI_Psend_init(buf, 4, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Start(&r);
        for (int p = 0; p < 4; p++)
            MPI_Pready(p, r);
    } else {
        MPI_Precv_init(buf, 4, 1, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Start(&r);
    }
    MPI_Status st;
    int rc = MPI_Waitall(1, &r, &st);
    say("part_waitall", errclass(rc), buf[0] + buf[3], 0);
    MPI_Request_free(&r);
#else
    say("part_skipped_mpi3", 0, 0, 0);
#endif
}

/* MPI-4's nonblocking exchanges, receives to the completion calls: one
 * whose partner sends late, next to one already complete. */
static void exchanges(void)
{
#if MPI_VERSION >= 4
    int peer = 1 - rank, out = rank + 30, in = -1, rep = rank + 40;
    MPI_Request r[2];
    if (rank == 1)
        usleep(50000);
    MPI_Isendrecv(&out, 1, MPI_INT, peer, 6, &in, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &r[0]);
    MPI_Isendrecv_replace(&rep, 1, MPI_INT, peer, 7, peer, 7, MPI_COMM_WORLD, &r[1]);
    MPI_Status st[2];
    int rc = MPI_Waitall(2, r, st);
    say("isendrecv_waitall", errclass(rc), in, rep);
    say("isendrecv_status", st[0].MPI_SOURCE, st[0].MPI_TAG, 0);
    MPI_Isendrecv(&out, 1, MPI_INT, peer, 8, &in, 1, MPI_INT, peer, 8, MPI_COMM_WORLD, &r[0]);
    rc = MPI_Wait(&r[0], &st[0]);
    say("isendrecv_wait", errclass(rc), in, st[0].MPI_SOURCE);
#else
    say("isendrecv_skipped_mpi3", 0, 0, 0);
#endif
}

/* An error handler that returns: a truncated receive next to a good one. */
static void errors_return(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    /* The handler of the requests' communicator decides in Open MPI; MPICH
     * 4.0 raises a wait's errors on MPI_COMM_SELF or MPI_COMM_WORLD. */
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int peer = 1 - rank;
    if (rank == 1) {
        int two[2] = {5, 6}, one = 7;
        MPI_Send(two, 2, MPI_INT, peer, 4, c);
        usleep(100000);
        MPI_Send(&one, 1, MPI_INT, peer, 5, c);
    } else {
        int small = -1, ok = -1;
        MPI_Request r[2];
        MPI_Irecv(&small, 1, MPI_INT, peer, 4, c, &r[0]);
        MPI_Irecv(&ok, 1, MPI_INT, peer, 5, c, &r[1]);
        MPI_Status st[2];
        memset(st, 0, sizeof st);
        int rc = MPI_Waitall(2, r, st);
        say("err_waitall", errclass(rc), errclass(st[0].MPI_ERROR), ok);
        say("err_waitall_status1", errclass(st[1].MPI_ERROR) == MPI_ERR_PENDING, 0, 0);
    }
    MPI_Barrier(c);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    persistent_collectives();
    leave_stale(20);
    persistent_collectives();
    persistent_p2p();
    null_requests();
    leave_stale(21);
    generalized();
    leave_stale(22);
    partitioned();
    exchanges();
    errors_return();
    MPI_Finalize();
    return 0;
}
