#!/bin/sh
# The PERUSE stall source (mpit/peruse.c), on an Open MPI built with
# --enable-peruse (tests/peruse-openmpi builds one; ./quickstart check runs
# this test against it): a late sender with a small eager and a 16 MiB
# rendezvous message, a late receiver of a 16 MiB message (copy protocol,
# btl_vader_single_copy_mechanism none as wp_mpirun sets), a message already
# there at posting (16 MiB, and 8 bytes many times), MPI_ANY_SOURCE,
# MPI_Irecv + MPI_Waitall with staggered senders, 4 threads under
# MPI_THREAD_MULTIPLE and receives on eight kinds of communicators the
# program created: the sampled MPI-Stall
# share within 3 percentage points of the injected share
# (tests/mpi/ws_source.c), transfers of large messages in MPI-Work; five of
# the cases again with lean wrappers (WAITPROF_LEAN=1).
# Elsewhere, asking for PERUSE gives one line naming the reason and the
# source used instead, the one auto takes: the wrappers with matched
# instances, MPI_T on Open MPI with lean wrappers.
. "$(dirname "$0")/../lib.sh"
if [ "$WP_HAVE_PERUSE" = 1 ]; then
    wp_check_source peruse eager 2 0.03 ';measured;MPI_Recv$'
    wp_check_source peruse rndv 2 0.03 ';measured;MPI_Recv$' work
    wp_check_source peruse lrecv 2 0.03 ';measured;MPI_Send$' work
    wp_check_source peruse there 2 0.03 ';measured;MPI_Recv$' work
    # An 8-byte receive whose message is always there (truth 0), 300 000
    # times: the receive's set-up before PERUSE sees it, and ob1's posting
    # before its first pass reads the transport, are not waits.
    WP_SRC_ARGS="0 300000" wp_check_source peruse arrived 2 0.03 ';measured;MPI_Recv$'
    wp_check_source peruse any 2 0.03 ';measured;MPI_Recv$'
    wp_check_source peruse waitall 4 0.03 ';measured_waitall;MPI_Waitall$'
    wp_check_source peruse threads 2 0.03 ';measured;MPI_Recv$'
    # Registration on every kind of communicator the program creates: a
    # communicator without it would leave its receives to the estimator.
    wp_check_source peruse comms 2 0.03 ';measured;MPI_Recv$'
    # Lean wrappers (WAITPROF_LEAN=1: no clock, no per-call figures) leave
    # the classification to PERUSE alone, as exact: sends and receives,
    # Waitall, and threads (MPI_THREAD_MULTIPLE, where the request table
    # takes its locked path; the cases above run single-threaded).
    export WAITPROF_LEAN=1
    wp_check_source peruse eager 2 0.03 ';measured;MPI_Recv$'
    wp_check_source peruse lrecv 2 0.03 ';measured;MPI_Send$' work
    WP_SRC_ARGS="0 300000" wp_check_source peruse arrived 2 0.03 ';measured;MPI_Recv$'
    wp_check_source peruse waitall 4 0.03 ';measured_waitall;MPI_Waitall$'
    wp_check_source peruse threads 2 0.03 ';measured;MPI_Recv$'
    unset WAITPROF_LEAN
else
    # What auto takes instead: with matched instances (the default) the
    # wrappers; with lean wrappers, which keep none, MPI_T on Open MPI.
    wp_check_source_fallback peruse wrappers
    next=wrappers
    [ "$MPI_FLAVOR" = openmpi ] && next=mpit
    WAITPROF_LEAN=1 wp_check_source_fallback peruse "$next"
fi
