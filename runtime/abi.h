/* runtime/abi.h — the program's MPI library against the build's.
 *
 * Contract: wp_abi_mismatch() is called at MPI_Init, after PMPI_Init and
 * before waitprof makes any MPI call that takes a handle.  It returns 1
 * (and says why in why) when the library the program runs on is not one
 * waitprof's build can talk to: then waitprof must make no MPI call of its
 * own and leave the wrappers in their lean, pass-through form. */
#ifndef WP_RUNTIME_ABI_H
#define WP_RUNTIME_ABI_H

#include <stddef.h>

int wp_abi_mismatch(char *why, size_t cap);

/* This process's rank as the launcher exported it (Open MPI, MPICH's
 * Hydra, PMIx, Slurm), for speaking once per job without MPI; -1 when no
 * launcher said. */
int wp_abi_launcher_rank(void);

#endif
