/* bench/peruse_cost.c — what Open MPI's PERUSE costs an 8-byte ping-pong by
 * itself, measured inside one run: the five ob1 events waitprof's PERUSE
 * source follows (mpit/peruse.c) are registered and active on
 * MPI_COMM_WORLD with a callback that does nothing, and each timed repeat of
 * 5000 round trips runs once on MPI_COMM_WORLD and once on a duplicate made
 * before the registration, which has no PERUSE handles at all (as
 * bench/pingpong.c's PMPI half), alternating which goes first.  No
 * waitprof.  This is the floor any PERUSE-based tool pays on this machine
 * before it does any work in its callbacks.
 *
 * usage: peruse_cost [round_trips [repeats]]     (defaults 5000, 181)
 * Output, rank 0:
 *   peruse_cost lat_on_us=<median> lat_off_us=<median> ratio=<median of on/off>
 *               added_ns=<median of on - off per one-way trip> events=<registered of 5>
 * Needs an Open MPI built with --enable-peruse (bench/run.sh runs it when
 * the build has peruse.h). */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>
#include <stdlib.h>

static int pc_nothing(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t *spec, void *param)
{
    (void)h;
    (void)id;
    (void)spec;
    (void)param;
    return MPI_SUCCESS;
}

static peruse_event_h pc_ev[5];
static int pc_nev;
static MPI_Comm pc_bare; /* no PERUSE handles */

/* Seconds per one-way trip over n round trips of 8 bytes on MPI_COMM_WORLD
 * (events active) or on pc_bare (none). */
static double pc_run(int rank, long n, int on)
{
    MPI_Comm comm = on ? MPI_COMM_WORLD : pc_bare;
    char buf[8] = {0};
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, 8, MPI_BYTE, 1, 1, comm);
            MPI_Recv(buf, 8, MPI_BYTE, 1, 2, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 1, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, 8, MPI_BYTE, 0, 2, comm);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * (double)n);
}

static int pc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, pc_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"PERUSE_COMM_REQ_ACTIVATE", "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q",
                                        "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q", "PERUSE_COMM_REQ_XFER_CONTINUE",
                                        "PERUSE_COMM_REQ_COMPLETE"};
    MPI_Init(&argc, &argv);
    long n = argc > 1 ? atol(argv[1]) : 5000;
    int repeats = argc > 2 ? atoi(argv[2]) : 181, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || n < 1 || repeats < 1 || repeats > 10000) {
        if (rank == 0)
            fprintf(stderr, "peruse_cost: needs 2 ranks, round_trips >= 1, 1 <= repeats <= 10000\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &pc_bare);
    if (PERUSE_Init() == PERUSE_SUCCESS)
        for (int i = 0; i < 5; i++) {
            int ev;
            if (PERUSE_Query_event(names[i], &ev) == PERUSE_SUCCESS &&
                PERUSE_Event_comm_register(ev, MPI_COMM_WORLD, pc_nothing, NULL, &pc_ev[pc_nev]) == PERUSE_SUCCESS &&
                PERUSE_Event_activate(pc_ev[pc_nev]) == PERUSE_SUCCESS)
                pc_nev++;
        }
    double *on = malloc(sizeof(double) * (size_t)repeats), *off = malloc(sizeof(double) * (size_t)repeats);
    double *ratio = malloc(sizeof(double) * (size_t)repeats), *diff = malloc(sizeof(double) * (size_t)repeats);
    pc_run(rank, n / 10 + 1, 1);
    pc_run(rank, n / 10 + 1, 0);
    for (int r = 0; r < repeats; r++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int active = (k + r) % 2;
            t[active] = pc_run(rank, n, active);
        }
        on[r] = t[1] * 1e6;
        off[r] = t[0] * 1e6;
        ratio[r] = t[1] / t[0];
        diff[r] = (t[1] - t[0]) * 1e9;
    }
    for (int i = 0; i < pc_nev; i++) {
        PERUSE_Event_deactivate(pc_ev[i]);
        PERUSE_Event_release(&pc_ev[i]);
    }
    MPI_Comm_free(&pc_bare);
    if (rank == 0)
        printf("peruse_cost lat_on_us=%.4f lat_off_us=%.4f ratio=%.4f added_ns=%.2f events=%d\n",
               pc_median(on, repeats), pc_median(off, repeats), pc_median(ratio, repeats), pc_median(diff, repeats),
               pc_nev);
    free(on);
    free(off);
    free(ratio);
    free(diff);
    MPI_Finalize();
    return pc_nev == 5 ? 0 : 1;
}
