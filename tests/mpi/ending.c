/* ending: an MPI program that ends in the way its first argument names,
 * after computing for a while in compute_phase:
 *   finalize CODE   MPI_Finalize, then return CODE
 *   exit CODE       exit(CODE) without MPI_Finalize
 *   abort CODE      rank 1 calls MPI_Abort(MPI_COMM_WORLD, CODE); rank 0 waits in MPI_Recv
 *   hang            rank 1 sends rank 0 one message, which rank 0 receives,
 *                   then computes; rank 0 waits in MPI_Recv for a second one
 *                   until killed
 *   fork CODE       each rank forks a child that calls exit(); then prints
 *                   "fork rank=R child_wrote=0|1" (whether a rank.R.meta
 *                   was written in $WAITPROF_OUT meanwhile) and ends with
 *                   MPI_Finalize
 * Prints "ready rank=R" once computing has started (for tests that signal). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

__attribute__((noinline)) static double compute_phase(double sec)
{
    double t0 = now(), x = 0;
    while (now() - t0 < sec)
        for (int i = 0; i < 1000; i++)
            x += i * 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, buf = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *how = argc > 1 ? argv[1] : "finalize";
    int code = argc > 2 ? atoi(argv[2]) : 0;
    printf("ready rank=%d\n", rank);
    fflush(stdout);
    volatile double sink = compute_phase(0.5);
    (void)sink;
    /* Rank 0 first, the others 0.3 s later: when both ended at once,
     * MPICH's launcher returned 1 in about one run of twelve, and 4 in
     * the others, without waitprof. */
    if (strcmp(how, "exit") == 0) {
        if (rank > 0)
            sink = compute_phase(0.3);
        exit(code);
    }
    if (strcmp(how, "abort") == 0) {
        if (rank == 1)
            MPI_Abort(MPI_COMM_WORLD, code);
        MPI_Recv(&buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (strcmp(how, "fork") == 0) {
        /* The meta file waitprof wrote at MPI_Init: a new one (a new inode,
         * since files are renamed into place) would be the child's. */
        char path[4200];
        snprintf(path, sizeof path, "%s/rank.%d.meta", getenv("WAITPROF_OUT") ? getenv("WAITPROF_OUT") : ".",
                 rank);
        struct stat before, after;
        int had = stat(path, &before) == 0;
        pid_t child = fork();
        if (child == 0)
            exit(9); /* runs the atexit handlers the child inherited */
        waitpid(child, NULL, 0);
        int has = stat(path, &after) == 0;
        printf("fork rank=%d child_wrote=%d\n", rank, has && (!had || after.st_ino != before.st_ino));
    }
    if (strcmp(how, "hang") == 0) {
        /* One receive that returns first, so that MPI_Recv has a minimum
         * duration (the estimator's, for the receive that never returns). */
        if (rank == 1)
            MPI_Send(&buf, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        if (rank == 0) {
            MPI_Recv(&buf, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (;;)
            sink = compute_phase(1.0);
    }
    MPI_Finalize();
    return code;
}
