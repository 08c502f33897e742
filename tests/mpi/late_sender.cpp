// late_sender.cpp: the C++ form of late_sender.c.  Rank 1 computes in a
// class method, then sends; rank 0 waits in MPI_Recv inside another method.
// Prints "truth rank=R in_recv=S in_compute=S" (CLOCK_MONOTONIC seconds).
#include <mpi.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace demo {
class Exchanger {
  public:
    __attribute__((noinline)) void receive(int *buf)
    {
        MPI_Recv(buf, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    __attribute__((noinline)) double compute(double sec)
    {
        auto t0 = std::chrono::steady_clock::now();
        volatile double x = 0;
        while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < sec)
            for (int i = 0; i < 1000; i++)
                x = x + i * 1e-9;
        return x;
    }
};
} // namespace demo

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double delay = argc > 1 ? std::atof(argv[1]) : 0.2;
    int iter = argc > 2 ? std::atoi(argv[2]) : 5;
    demo::Exchanger ex;
    double in_recv = 0, in_compute = 0;
    int buf = 0;
    for (int it = 0; it < iter; it++) {
        double t0 = now();
        if (rank == 0) {
            ex.receive(&buf);
            in_recv += now() - t0;
        } else if (rank == 1) {
            ex.compute(delay);
            in_compute += now() - t0;
            MPI_Send(&buf, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        }
    }
    std::printf("truth rank=%d in_recv=%.6f in_compute=%.6f\n", rank, in_recv, in_compute);
    MPI_Finalize();
    return 0;
}
