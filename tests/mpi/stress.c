/* stress: NT threads per rank for S seconds, each mixing malloc/free,
 * dlopen/dlsym/dlclose of a system library, point-to-point exchanges with
 * the same thread of the partner rank and, on a per-thread communicator,
 * MPI_Allreduce.  Meant to run at a high sampling rate: it must finish,
 * with samples taken during dlopen/dlclose dropped and counted. */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 30;
static int rank, size;
static MPI_Comm comms[64];

#include "clock.h"

static void *worker(void *arg)
{
    int t = (int)(long)arg, peer = rank ^ 1;
    unsigned seed = (unsigned)(rank * 64 + t + 1);
    double t_end = now() + seconds;
    long rounds = 0, opened = 0;
    int go = 1;
    while (go) {
        for (int i = 0; i < 64; i++) {
            size_t n = (size_t)(rand_r(&seed) % 65536) + 1;
            char *p = malloc(n);
            if (p) {
                memset(p, i, n);
                free(p);
            }
        }
        if (rounds % 4 == 0) {
            void *h = dlopen(rounds % 8 ? "libm.so.6" : "libz.so.1", RTLD_NOW | RTLD_LOCAL);
            if (h) {
                opened += dlsym(h, rounds % 8 ? "cos" : "zlibVersion") != NULL;
                dlclose(h);
            }
        }
        int out = t, in = -1;
        if (peer < size)
            MPI_Sendrecv(&out, 1, MPI_INT, peer, t, &in, 1, MPI_INT, peer, t, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        /* Everyone agrees when to stop, so no thread is left waiting. */
        int mine = now() < t_end, all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comms[t]);
        go = all;
        rounds++;
    }
    if (t == 0)
        printf("stress rank=%d rounds=%ld dlopens=%ld\n", rank, rounds, opened);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, nt = argc > 1 ? atoi(argv[1]) : 4;
    seconds = argc > 2 ? atof(argv[2]) : 30;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (nt > 64)
        nt = 64;
    for (int t = 0; t < nt; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[64];
    for (int t = 0; t < nt; t++)
        pthread_create(&th[t], NULL, worker, (void *)(long)t);
    for (int t = 0; t < nt; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return 0;
}
