/* bench/calls_cost.c — the instructions the report's per-call recording
 * (wrap/traffic.h: wp_traffic_send, wp_traffic_recv) adds to a recorded MPI
 * call.  The per-function statistics of rank.R.calls cost nothing here:
 * they are summed from the estimator's categories when the file is
 * written.
 *
 * usage: calls_cost [calls]     (default 100000), one rank
 *
 * One rank exchanges one double with itself calls times with
 * MPI_Sendrecv, a call the estimator records and whose wrapper also counts
 * traffic.  Run under callgrind with --collect-atstart=no
 * --toggle-collect=cc_loop and read the inclusive instruction counts of
 * wp_traffic_send and wp_traffic_recv against those of cc_loop
 * (callgrind_annotate --inclusive=yes), each divided by calls.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double cc_loop(long calls)
{
    double out = 1, in = 0, sum = 0;
    for (long i = 0; i < calls; i++) {
        MPI_Sendrecv(&out, 1, MPI_DOUBLE, 0, 1, &in, 1, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        sum += in;
    }
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    long calls = argc > 1 ? atol(argv[1]) : 100000;
    double s = cc_loop(calls);
    printf("calls_cost calls=%ld check=%g\n", calls, s);
    MPI_Finalize();
    return 0;
}
