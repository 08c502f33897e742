/* runtime/abi.c — is the program's MPI library the one waitprof was built
 * for?  (runtime/abi.h)
 *
 * The wrappers pass the program's handles through untouched, so they work
 * with any library of the same family; what breaks is waitprof's own MPI
 * use, which is compiled against the build's <mpi.h>: Open MPI's
 * MPI_COMM_WORLD is the address of a structure in libmpi, MPICH's an int,
 * and either one handed to the other library is an invalid handle (MPICH
 * aborts with "Invalid communicator", Open MPI dereferences the int).
 * MPI_Get_library_version takes no handle, so it can be asked first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "runtime/abi.h"

/* The family this library was compiled for, and a word that the version
 * string of every library of that family contains. */
#if defined(OPEN_MPI)
#define WP_BUILT_FOR "Open MPI"
#elif defined(MPICH_VERSION) || defined(MPICH)
#define WP_BUILT_FOR "MPICH"
#else
#define WP_BUILT_FOR NULL
#endif

int wp_abi_mismatch(char *why, size_t cap)
{
    static char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    const char *built = WP_BUILT_FOR;
    if (built == NULL || PMPI_Get_library_version(version, &len) != MPI_SUCCESS)
        return 0;
    version[strcspn(version, "\n")] = '\0';
    for (char *c = version; *c; c++) /* MPICH's string holds a tab */
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    /* An Open MPI build needs Open MPI.  An MPICH build works with every
     * library of the MPICH ABI (Intel MPI, MVAPICH, Cray MPICH: their
     * strings need not say MPICH), so there only Open MPI is refused. */
    int bad = strcmp(built, "Open MPI") == 0 ? strstr(version, "Open MPI") == NULL
                                            : strstr(version, "Open MPI") != NULL;
    if (bad)
        snprintf(why, cap, "this program runs on \"%.120s\", but this waitprof was built for %s", version, built);
    return bad;
}

int wp_abi_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}
