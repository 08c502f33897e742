/* tests/mpi/ws_fforget_c.c — ws_fforget.F90's unseen completion: the
 * request of a Fortran handle completed through the C PMPI_Wait, which no
 * waitprof wrapper sees with either MPI (MPICH's Fortran PMPI_WAIT would
 * call the C MPI_Wait, which waitprof sees). */
#include <mpi.h>

void ws_unseen_wait(MPI_Fint *freq)
{
    MPI_Request r = MPI_Request_f2c(*freq);
    PMPI_Wait(&r, MPI_STATUS_IGNORE);
    *freq = MPI_Request_c2f(r);
}
