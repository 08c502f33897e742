/* tests/mpi/ctr_hw.c — a known number of instructions under a known
 * function, for the hardware counters (t_counters_hw.sh): rank 1 sleeps a
 * little (so that the sample before the loop has almost nothing to carry
 * in), then runs known_loop(N), whose loop is two instructions an
 * iteration (a decrement and a conditional jump, in assembly so that no
 * compiler changes it), and prints "truth rank=1 instructions=2N"; rank 0
 * waits for it in MPI_Recv.  On an architecture without the loop here it
 * prints "truth rank=1 unsupported=1" and the test skips. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_LOOP 1
#endif

__attribute__((noinline, noclone)) static void known_loop(unsigned long n)
{
#if defined(__x86_64__)
    __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
    __asm__ volatile("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
    (void)n;
#endif
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000000ul;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int token = 0;
    if (rank == 1) {
        struct timespec nap = {0, 50 * 1000 * 1000};
        nanosleep(&nap, NULL);
#ifdef HAVE_LOOP
        known_loop(n);
        printf("truth rank=1 instructions=%lu\n", 2 * n);
#else
        printf("truth rank=1 unsupported=1\n");
#endif
        fflush(stdout);
        MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
        MPI_Recv(&token, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
