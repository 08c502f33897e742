#!/bin/sh
# The MPI_T stall source (mpit/mpit.c).  On Open MPI (ob1): late-sender
# receives from a specific source — small eager and 16 MiB rendezvous
# messages, MPI_Irecv + MPI_Waitall with staggered senders, 4 threads
# under MPI_THREAD_MULTIPLE, 40 receives at one call site (most of them
# read without a clock), 90 short receives and then 30 long ones at one
# call site, and 40 receives with lean wrappers — give a sampled MPI-Stall
# share within 5 percentage points of the injected share
# (tests/mpi/ws_source.c), and the
# transfers of large messages land in MPI-Work.  On an MPI without the
# variable (MPICH), asking for it gives one line naming the reason and the
# source used instead, and the run is classified by the wrappers.  The
# default source takes MPI_T with WAITPROF_MATCH=0.
. "$(dirname "$0")/../lib.sh"
if [ "$MPI_FLAVOR" = openmpi ]; then
    wp_check_source mpit eager 2 0.05 ';measured;MPI_Recv$'
    wp_check_source mpit rndv 2 0.05 ';measured;MPI_Recv$' work
    wp_check_source mpit waitall 4 0.05 ';measured_waitall;MPI_Waitall$'
    wp_check_source mpit threads 2 0.05 ';measured;MPI_Recv$'
    # 40 receives of 50 ms at one call site: after the site's first 16 the
    # receives that are not chosen matched instances read no clock, and the
    # source still classifies their samples itself.
    WP_SRC_ARGS="0.05 40" wp_check_source mpit eager 2 0.05 ';measured;MPI_Recv$'
    bs=$(wp_meta "$_so/rank.0.meta" samples_by_source) be=$(wp_meta "$_so/rank.0.meta" samples_by_estimate)
    wp_note "40 receives: rank 0 had $bs samples classified by the source, $be left to the estimator"
    wp_ge "$bs" "$(wp_calc "($bs + $be) * 0.9")" || wp_fail "40 receives: only $bs of $((bs + be)) samples classified by the source"
    # 90 short receives at the call site, then 30 of 50 ms: the site's
    # short receives are plain PMPI_Recv calls, and its long ones go
    # through the source again from the first that a sample dates or that
    # is timed (wrap/wrap.h, wp_src_recv_in), so nearly all their samples
    # are the source's.
    WP_SRC_ARGS="0.05 120" wp_check_source mpit mixed 2 0.05 ';measured;MPI_Recv$'
    bs=$(wp_meta "$_so/rank.0.meta" samples_by_source) be=$(wp_meta "$_so/rank.0.meta" samples_by_estimate)
    wp_note "short, then long receives: rank 0 had $bs samples classified by the source, $be left to the estimator"
    wp_ge "$bs" "$(wp_calc "($bs + $be) * 0.9")" || wp_fail "short, then long receives: only $bs of $((bs + be)) samples classified by the source"
    # Lean wrappers keep no categories: the thread's hint sends a receive
    # through the source once a sample fell in a plain one, and keeps
    # sending them while they last 20 µs or more (wrap/wrap.h,
    # wp_src_recv_lean).  So only the first of the 40 receives is plain,
    # its samples MPI-Work (about 50 of 2000).
    WAITPROF_LEAN=1 WP_SRC_ARGS="0.05 40" wp_check_source mpit eager 2 0.05 ';measured;MPI_Recv$'
    bs=$(wp_meta "$_so/rank.0.meta" samples_by_source) be=$(wp_meta "$_so/rank.0.meta" samples_by_estimate)
    wp_note "lean, 40 receives: rank 0 had $bs samples classified by the source"
    wp_ge "$bs" 1500 || wp_fail "lean, 40 receives: only $bs samples classified by the source"
    # auto takes MPI_T where no matched instances decide the samples:
    # with WAITPROF_MATCH=0 here (mpit/source.c), PERUSE where this Open
    # MPI has it.  The default settings (wrappers) and lean wrappers (MPI_T)
    # are checked on every rank by t_init.
    out=$WP_TMP/auto-nomatch
    want=mpit
    [ "$WP_HAVE_PERUSE" = 1 ] && want=peruse
    WAITPROF_MATCH=0 WAITPROF_HZ=10 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/ws_source" eager 0.05 2 >/dev/null \
        2>"$out.err" || { cat "$out.err" >&2; wp_fail "auto, WAITPROF_MATCH=0: the run failed"; }
    got=$(wp_meta "$out/rank.0.meta" source)
    [ "$got" = "$want" ] || wp_fail "auto, WAITPROF_MATCH=0: chose $got, not $want"
    wp_note "auto with WAITPROF_MATCH=0: $got"
else
    wp_check_source_fallback mpit wrappers
fi
