/* bench/sleeps_cost.c — what sampler/sleeps.c adds to a call that does not
 * wait: poll() with a timeout on a readable pipe (answered by the probe
 * with no timeout), ppoll() with a timeout and no mask on the same pipe
 * (the path that blocks SIGPROF around the call: what every sleep pays)
 * and recv() on a socket with data (the socket path: one TLS load and a
 * compare), each against the same system call made with syscall(2), which
 * waitprof does not see, alternately in the same process.  Run it under waitprof (the sampler must be running for the
 * wrapper to do its work):  sleeps_cost [calls] [repeats]
 * Prints "CALL ns_wrapped ns_raw" for poll, ppoll and recv, medians of the
 * repeats. */
#define _GNU_SOURCE /* ppoll */
#include <mpi.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 200000;
    int reps = argc > 2 ? atoi(argv[2]) : 11;
    int fds[2], sp[2];
    if (pipe(fds) != 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
        return 2;
    char c = 'x';
    if (write(fds[1], &c, 1) != 1)
        return 2;
    double pw[64], pr[64], qw[64], qr[64], rw[64], rr[64], buf[1];
    struct timespec second = {1, 0};
    if (reps > 64)
        reps = 64;
    struct pollfd p = {fds[0], POLLIN, 0};
    for (int k = 0; k < reps; k++) {
        double t0 = now();
        for (long i = 0; i < calls; i++)
            poll(&p, 1, 1000);
        double t1 = now();
        for (long i = 0; i < calls; i++)
            syscall(SYS_poll, &p, 1, 1000);
        double t2 = now();
        pw[k] = (t1 - t0) / calls * 1e9, pr[k] = (t2 - t1) / calls * 1e9;
        t0 = now();
        for (long i = 0; i < calls; i++)
            ppoll(&p, 1, &second, NULL);
        t1 = now();
        for (long i = 0; i < calls; i++)
            syscall(SYS_ppoll, &p, 1, &second, NULL, (size_t)8);
        t2 = now();
        qw[k] = (t1 - t0) / calls * 1e9, qr[k] = (t2 - t1) / calls * 1e9;
        /* One byte in, one byte out: the receive never waits. */
        t0 = now();
        for (long i = 0; i < calls; i++) {
            send(sp[1], &c, 1, 0);
            recv(sp[0], buf, 1, 0);
        }
        t1 = now();
        for (long i = 0; i < calls; i++) {
            send(sp[1], &c, 1, 0);
            syscall(SYS_recvfrom, sp[0], buf, 1, 0, NULL, NULL);
        }
        t2 = now();
        rw[k] = (t1 - t0) / calls * 1e9, rr[k] = (t2 - t1) / calls * 1e9;
    }
    printf("poll %.1f %.1f\n", median(pw, reps), median(pr, reps));
    printf("ppoll %.1f %.1f\n", median(qw, reps), median(qr, reps));
    printf("recv %.1f %.1f\n", median(rw, reps), median(rr, reps));
    MPI_Finalize();
    return 0;
}
