/* replace: the message traffic of MPI_Sendrecv_replace, of known size.
 *
 *   replace [CALLS, default 100] [COUNT, default 1000] [MODE]
 *
 * On 2 ranks: each rank exchanges its buffer of COUNT doubles with the
 * other rank CALLS times with MPI_Sendrecv_replace, naming the other rank
 * as the source in the first half of the calls and MPI_ANY_SOURCE (with a
 * status, which names the sender) in the second half, so that both ways
 * of knowing the sender are counted.  Every call sends and receives
 * COUNT x 8 bytes: each rank sends CALLS x COUNT x 8 bytes to the other in
 * CALLS messages and receives as many.  The program checks what it
 * received (the sender's rank and the call's number in every element) and
 * each rank prints "truth rank=R sent=B calls=N"; it exits 1 when the data
 * or the status is wrong.
 *
 * MODE "pairs": the same traffic in blocking MPI_Send and MPI_Recv calls
 * instead (rank 0 sends first, rank 1 receives first; the receives name
 * their source as above).  The wrappers count most of the sends and the
 * first half of the receives without a clock read (wrap/wrap.h,
 * wp_untimed_cat), and the wildcard ones from the status.
 *
 * MODE "trunc": as "pairs", with MPI_ERRORS_RETURN on MPI_COMM_WORLD, and
 * rank 0's last receive from a named source (call CALLS/2 - 1) posted one
 * element short: it must fail with MPI_ERR_TRUNCATE.  Rank 0 prints
 * failed=1, and received CALLS - 1 messages.  (Other modes: failed=0.)
 */
#include <string.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int calls = argc > 1 ? atoi(argv[1]) : 100;
    int count = argc > 2 ? atoi(argv[2]) : 1000;
    int trunc = argc > 3 && strcmp(argv[3], "trunc") == 0;
    int pairs = trunc || (argc > 3 && strcmp(argv[3], "pairs") == 0);
    if (size != 2 || calls < 2 || count < 1) {
        if (rank == 0)
            fprintf(stderr, "replace: run on 2 ranks with CALLS >= 2 and COUNT >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int peer = 1 - rank, bad = 0, failed = 0;
    if (trunc)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double *buf = malloc((size_t)count * sizeof *buf);
    if (buf == NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int c = 0; c < calls; c++) {
        for (int i = 0; i < count; i++)
            buf[i] = rank * 1e6 + c;
        MPI_Status st;
        int src = c < calls / 2 ? peer : MPI_ANY_SOURCE;
        /* pairs: one tag, so that the calls share their channel and most
         * are not chosen instances (its first 16 are) */
        int tag = pairs ? 0 : c;
        if (!pairs) {
            MPI_Sendrecv_replace(buf, count, MPI_DOUBLE, peer, c, src, c, MPI_COMM_WORLD, &st);
        } else if (rank == 0) {
            MPI_Send(buf, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
            /* trunc: the last receive from a named source is one element
             * short, and fails with MPI_ERR_TRUNCATE */
            int cut = trunc && c == calls / 2 - 1;
            int rc = MPI_Recv(buf, count - cut, MPI_DOUBLE, src, tag, MPI_COMM_WORLD, &st);
            if (cut) {
                int cls = MPI_SUCCESS;
                if (rc != MPI_SUCCESS)
                    MPI_Error_class(rc, &cls);
                if (cls != MPI_ERR_TRUNCATE)
                    bad = 1;
                failed++;
                continue;
            }
        } else {
            double *in = malloc((size_t)count * sizeof *in);
            if (in == NULL)
                MPI_Abort(MPI_COMM_WORLD, 2);
            MPI_Recv(in, count, MPI_DOUBLE, src, tag, MPI_COMM_WORLD, &st);
            MPI_Send(buf, count, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD);
            memcpy(buf, in, (size_t)count * sizeof *in);
            free(in);
        }
        int got;
        MPI_Get_count(&st, MPI_DOUBLE, &got);
        if (st.MPI_SOURCE != peer || got != count)
            bad = 1;
        for (int i = 0; i < count; i++)
            if (buf[i] != peer * 1e6 + c)
                bad = 1;
    }
    free(buf);
    printf("truth rank=%d sent=%llu calls=%d failed=%d\n", rank,
           (unsigned long long)calls * (unsigned long long)count * 8, calls, failed);
    fflush(stdout);
    MPI_Finalize();
    return bad;
}
