/* tests/mpi/initq.c — what a program learns from MPI about its thread level,
 * and a late sender, for tests/mpi/t_init.sh.
 *
 * usage: initq LEVEL [mpit]
 *   LEVEL: init (MPI_Init), or single, funneled, serialized, multiple
 *          (MPI_Init_thread with that level)
 *   mpit:  the program uses MPI_T itself after MPI_Init, as a tool built
 *          into it would: MPI_T_init_thread, the performance variables'
 *          names, MPI_T_finalize
 * Then rank 1 sleeps 0.1 s before it sends 8 bytes to rank 0, which waits
 * in MPI_Recv, twice (a late sender a stall source can see).
 * Each rank prints after MPI_Finalize:
 *   initq rank=R provided=P query=Q query_after_mpit=Q2 mpit_pvars=N mpit_ob1=B
 * P is what MPI_Init_thread provided (MPI_Query_thread for MPI_Init), Q
 * what MPI_Query_thread says right after, Q2 what it says after the
 * program's own MPI_T calls (Q without them), N the number of performance
 * variables MPI_T_pvar_get_info describes (-1 without the calls), B 1 when
 * Open MPI ob1's pml_ob1_posted_recvq_length is among them.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    static const char *const names[] = {"single", "funneled", "serialized", "multiple"};
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    const char *want = argc > 1 ? argv[1] : "init";
    int provided = -1, query = -1, query2 = -1, pvars = -1, ob1 = 0, rank = 0, size = 1;
    int level = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(want, names[i]) == 0)
            level = levels[i];
    if (level < 0)
        MPI_Init(&argc, &argv);
    else
        MPI_Init_thread(&argc, &argv, level, &provided);
    MPI_Query_thread(&query);
    if (level < 0)
        provided = query;
    query2 = query;
    if (argc > 2 && strcmp(argv[2], "mpit") == 0) {
        int p = 0, n = 0;
        if (MPI_T_init_thread(MPI_THREAD_SINGLE, &p) == MPI_SUCCESS) {
            pvars = 0;
            MPI_T_pvar_get_num(&n);
            for (int i = 0; i < n; i++) {
                char name[256], desc[16];
                int nl = sizeof name, dl = sizeof desc, verb, cls, bind, ro, cont, atomic;
                MPI_Datatype dt;
                MPI_T_enum en;
                if (MPI_T_pvar_get_info(i, name, &nl, &verb, &cls, &dt, &en, desc, &dl, &bind, &ro, &cont,
                                        &atomic) != MPI_SUCCESS)
                    continue;
                pvars++;
                if (strcmp(name, "pml_ob1_posted_recvq_length") == 0)
                    ob1 = 1;
            }
            MPI_T_finalize();
        }
        MPI_Query_thread(&query2);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double x = 0;
    for (int k = 0; k < 2 && size > 1; k++) {
        if (rank == 1) {
            struct timespec ts = {0, 100000000};
            nanosleep(&ts, NULL);
            x = k;
            MPI_Send(&x, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
        } else if (rank == 0) {
            MPI_Recv(&x, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    printf("initq rank=%d provided=%d query=%d query_after_mpit=%d mpit_pvars=%d mpit_ob1=%d\n", rank, provided,
           query, query2, pvars, ob1);
    return 0;
}
