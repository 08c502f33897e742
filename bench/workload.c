/* bench/workload.c — a fixed amount of compute and MPI, for measuring the
 * run-time dilation waitprof causes in a program that does real work.
 *
 * usage: workload [iterations [columns [rows_per_rank [block [paused|direct]]]]]
 *        (defaults 7000, 1024, 256, 0, paused)
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
 *
 * With block > 0 the sweeps also run in blocks of that many, and every
 * rank calls MPI_Pcontrol(1) before one block and MPI_Pcontrol(0) before
 * the next: under waitprof, sampling is on and off in alternate blocks of
 * the same run (a pause stops the timers, so a paused block pays the
 * wrappers only).  Blocks go in pairs, on-off then off-on, so that a
 * steady drift of the machine's speed cancels.  Rank 0 then also prints
 *   workload_blocks pairs=P on_s=<s> off_s=<s> ratio_median=<r> ratio_sum=<r>
 *                   ratio_q1=<r> ratio_q3=<r> median_se=<r>
 * with each block's time the maximum over ranks; ratio_median is the
 * median over pairs of on/off (robust against a block that some other
 * process slowed), ratio_sum the sum of on over the sum of off, q1 and q3
 * the quartiles of the pair ratios and median_se the standard error of
 * their median estimated from them.  Without waitprof MPI_Pcontrol does
 * nothing, and the same figures show how far two halves of one run differ
 * by chance.
 *
 * direct: the off blocks also make their MPI calls through the PMPI names,
 * so they bypass waitprof's wrappers as well as its sampling, and on/off
 * is all of waitprof's cost measured inside one run.  (The library stays
 * loaded with its timers stopped; a PMPI call reaches the MPI library
 * without passing through any wrapper.)
 */
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iters = argc > 1 ? atol(argv[1]) : 7000;
    int nx = argc > 2 ? atoi(argv[2]) : 1024;
    int ny = argc > 3 ? atoi(argv[3]) : 256;
    long block = argc > 4 ? atol(argv[4]) : 0;
    int direct_off = argc > 5 && strcmp(argv[5], "direct") == 0;
    if (iters < 1 || nx < 3 || ny < 1 || block < 0 || (argc > 5 && !direct_off && strcmp(argv[5], "paused") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: workload [iterations [columns [rows_per_rank [block [paused|direct]]]]]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Rows 0 and ny+1 are halos; the outer columns are a fixed boundary. */
    size_t cells = (size_t)(ny + 2) * (size_t)nx;
    double *u = calloc(cells, sizeof *u), *v = calloc(cells, sizeof *v);
    long nblocks = block > 0 ? iters / block : 0;
    double *bt = calloc((size_t)nblocks + 1, sizeof *bt), *bmax = calloc((size_t)nblocks + 1, sizeof *bmax);
    if (u == NULL || v == NULL || bt == NULL || bmax == NULL)
        MPI_Abort(MPI_COMM_WORLD, 1);
    /* A hot left edge gives the sweeps something to do. */
    for (int j = 0; j < ny + 2; j++)
        u[(size_t)j * nx] = v[(size_t)j * nx] = 1.0;
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    double res = 0.0, tb = t0;
    int direct = 0; /* this sweep calls the PMPI names */
    for (long it = 0; it < iters; it++) {
        /* Block b is on when b mod 4 is 0 or 3: pairs on-off, off-on;
         * sweeps after the last whole pair are on. */
        if (block > 0 && it % block == 0) {
            long b = it / block;
            if (b > 0 && b <= nblocks) {
                double now = MPI_Wtime();
                bt[b - 1] = now - tb;
                tb = now;
            }
            int on = b >= nblocks || b % 4 == 0 || b % 4 == 3;
            MPI_Pcontrol(on);
            direct = direct_off && !on;
        }
        MPI_Request rq[4];
        /* A real status array, not MPI_STATUSES_IGNORE: GCC 12 warns about
         * MPICH's (MPI_Status *)1 as an array of size 0. */
        MPI_Status st[4];
        /* The same calls, through waitprof or past it (direct). */
        int (*irecv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = direct ? PMPI_Irecv : MPI_Irecv;
        int (*isend)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = direct ? PMPI_Isend
                                                                                               : MPI_Isend;
        irecv(&u[0], nx, MPI_DOUBLE, up, 1, MPI_COMM_WORLD, &rq[0]);
        irecv(&u[(size_t)(ny + 1) * nx], nx, MPI_DOUBLE, down, 2, MPI_COMM_WORLD, &rq[1]);
        isend(&u[(size_t)1 * nx], nx, MPI_DOUBLE, up, 2, MPI_COMM_WORLD, &rq[2]);
        isend(&u[(size_t)ny * nx], nx, MPI_DOUBLE, down, 1, MPI_COMM_WORLD, &rq[3]);
        (direct ? PMPI_Waitall : MPI_Waitall)(4, rq, st);
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
        (direct ? PMPI_Allreduce : MPI_Allreduce)(&local, &res, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    double mine = MPI_Wtime() - t0, worst = 0.0;
    if (block > 0 && iters % block == 0 && nblocks > 0)
        bt[nblocks - 1] = MPI_Wtime() - tb;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("workload seconds=%.4f iterations=%ld residual=%.10e\n", worst, iters, res);
    long pairs = nblocks / 2;
    if (pairs > 0) {
        MPI_Reduce(bt, bmax, (int)nblocks, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            double on = 0, off = 0, *r = calloc((size_t)pairs, sizeof *r);
            for (long k = 0; k < pairs; k++) {
                double a = bmax[2 * k], b = bmax[2 * k + 1];
                double t_on = k % 2 == 0 ? a : b, t_off = k % 2 == 0 ? b : a;
                on += t_on;
                off += t_off;
                r[k] = t_on / t_off;
            }
            qsort(r, (size_t)pairs, sizeof *r, cmp_double);
            double med = pairs % 2 ? r[pairs / 2] : 0.5 * (r[pairs / 2 - 1] + r[pairs / 2]);
            /* The quartiles give the median's standard error, about
             * 1.253 * (q3 - q1) / 1.349 / sqrt(pairs) for a normal
             * spread: what bench/run.sh reports as median_se. */
            double q1 = r[pairs / 4], q3 = r[(3 * pairs) / 4];
            printf("workload_blocks pairs=%ld on_s=%.4f off_s=%.4f ratio_median=%.5f ratio_sum=%.5f ratio_q1=%.5f "
                   "ratio_q3=%.5f median_se=%.5f\n",
                   pairs, on, off, med, on / off, q1, q3, 1.253 * (q3 - q1) / 1.349 / sqrt((double)pairs));
            free(r);
        }
    }
    free(bt);
    free(bmax);
    free(u);
    free(v);
    MPI_Finalize();
    return 0;
}
