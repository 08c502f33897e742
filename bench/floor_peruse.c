/* bench/floor_peruse.c — what Open MPI's PERUSE costs by itself: a preload
 * library that, after MPI_Init, registers and activates on MPI_COMM_WORLD
 * the five ob1 events waitprof's PERUSE source follows (mpit/peruse.c) with a
 * callback that does nothing.  No wrapper state, no request table.
 * bench/run.sh runs the ping-pong under it (configuration floor-peruse) on a
 * PERUSE-enabled Open MPI: the runtime's own share of the PERUSE source's
 * cost on this machine.  Events that cannot be registered are skipped; the
 * library prints how many were, so a run that measured nothing shows it. */
#include <mpi.h>
#include <peruse.h>
#include <stdio.h>

static int fp_nothing(peruse_event_h h, MPI_Aint id, peruse_comm_spec_t *spec, void *param)
{
    (void)h;
    (void)id;
    (void)spec;
    (void)param;
    return MPI_SUCCESS;
}

__attribute__((visibility("default"))) int MPI_Init(int *argc, char ***argv)
{
    static const char *const names[] = {"PERUSE_COMM_REQ_ACTIVATE", "PERUSE_COMM_REQ_INSERT_IN_POSTED_Q",
                                        "PERUSE_COMM_REQ_REMOVE_FROM_POSTED_Q", "PERUSE_COMM_REQ_XFER_CONTINUE",
                                        "PERUSE_COMM_REQ_COMPLETE"};
    int rc = PMPI_Init(argc, argv), n = 0, rank = 0;
    if (rc != MPI_SUCCESS || PERUSE_Init() != PERUSE_SUCCESS)
        return rc;
    for (int i = 0; i < 5; i++) {
        int ev;
        peruse_event_h h;
        if (PERUSE_Query_event(names[i], &ev) == PERUSE_SUCCESS &&
            PERUSE_Event_comm_register(ev, MPI_COMM_WORLD, fp_nothing, NULL, &h) == PERUSE_SUCCESS &&
            PERUSE_Event_activate(h) == PERUSE_SUCCESS)
            n++;
    }
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "floor_peruse: %d of 5 events active\n", n);
    return rc;
}
