/* ws_callpath: two callers of one helper that calls MPI_Recv, for
 * WAITPROF_CALLPATH_DEPTH.  2 ranks: rank 0 receives ITER messages through
 * caller_a() -> helper() and ITER through caller_b() -> helper(); rank 1
 * sends them.  With depth 1 the receives are one call site (the MPI_Recv in
 * helper), with depth 2 two (helper < caller_a, helper < caller_b).
 * noinline keeps every frame. */
#include <mpi.h>
#include <stdlib.h>

__attribute__((noinline)) static int helper(int tag)
{
    int v = 0;
    MPI_Recv(&v, 1, MPI_INT, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return v;
}

__attribute__((noinline)) static int caller_a(void)
{
    return helper(1) + 1;
}

__attribute__((noinline)) static int caller_b(void)
{
    return helper(2) + 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, iter = argc > 1 ? atoi(argv[1]) : 5, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < iter; i++) {
        if (rank == 0) {
            sum += caller_a();
            sum += caller_b();
        } else {
            MPI_Send(&i, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
            MPI_Send(&i, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        }
    }
    MPI_Finalize();
    return sum < 0;
}
