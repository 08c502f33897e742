/* bench/workload.c — a fixed amount of compute and MPI, for measuring the
 * run-time dilation waitprof causes in a program that does real work.
 *
 * usage: workload [iterations [columns [rows_per_rank]]]
 *        (defaults 7000, 1024, 256)
 *
 * Each rank owns a band of rows of a 2-D grid and runs a fixed number of
 * Jacobi sweeps of the 5-point Laplacian; every sweep first exchanges halo
 * rows with its neighbours (MPI_Irecv/MPI_Isend/MPI_Waitall) and ends with
 * an MPI_Allreduce of the residual, the shape of most stencil codes.  The
 * work is the same in every run (no convergence test), so only the time may
 * change.  Rank 0 prints one line:
 *   workload seconds=<s> iterations=N residual=<r>
 * seconds is the maximum over ranks of the time from after MPI_Init to
 * before MPI_Finalize; residual lets a reader check that every run computed
 * the same thing.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? atol(argv[1]) : 7000;
    int nx = argc > 2 ? atoi(argv[2]) : 1024;
    int ny = argc > 3 ? atoi(argv[3]) : 256;
    if (iters < 1 || nx < 3 || ny < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: workload [iterations [columns [rows_per_rank]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Rows 0 and ny+1 are halos; the outer columns are a fixed boundary. */
    size_t cells = (size_t)(ny + 2) * (size_t)nx;
    double *u = calloc(cells, sizeof *u), *v = calloc(cells, sizeof *v);
    if (u == NULL || v == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* A hot left edge gives the sweeps something to do. */
    for (int j = 0; j < ny + 2; j++)
        u[(size_t)j * nx] = v[(size_t)j * nx] = 1.0;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double res = 0.0;
    for (long it = 0; it < iters; it++) {
        MPI_Request rq[4];
        /* A real status array, not MPI_STATUSES_IGNORE: GCC 12 warns about
         * MPICH's (MPI_Status *)1 as an array of size 0. */
        MPI_Status st[4];
        MPI_Irecv(&u[0], nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&u[(size_t)(ny + 1) * nx], nx, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &rq[1]);
        MPI_Isend(&u[(size_t)1 * nx], nx, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &rq[2]);
        MPI_Isend(&u[(size_t)ny * nx], nx, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rq[3]);
        MPI_Waitall(4, rq, st);
        double local = 0.0;
        for (int j = 1; j <= ny; j++)
            for (int i = 1; i < nx - 1; i++) {
                size_t k = (size_t)j * nx + i;
                double n = 0.25 * (u[k - 1] + u[k + 1] + u[k - nx] + u[k + nx]);
                local += (n - u[k]) * (n - u[k]);
                v[k] = n;
            }
        double *w = u;
        u = v;
        v = w;
        MPI_Allreduce(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double mine = MPI_Wtime() - t0, worst = 0.0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("workload seconds=%.4f iterations=%ld residual=%.10e\n", worst, iters, res);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
