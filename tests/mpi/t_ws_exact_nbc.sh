#!/bin/sh
# Exact wait states of nonblocking collectives, persistent requests and
# matched probes (match/batch.c, match/numbering.h), against PERSISTENT
# waits injected by tests/mpi/ws_exact.c as t_ws_exact.sh checks the
# blocking calls: every one of the 10 calls of a call site waits about the
# same, so only matching both sides of each instance can measure it.
# The modes:
# - iallreduce (4 ranks): rank 1 enters MPI_Iallreduce 0.2 s late; every
#   rank works 20 ms and completes it with MPI_Wait: Wait at NxN in MPI_Wait
#   is the last I-call's entry minus the Wait's entry;
# - ibcast (4 ranks): the same with a late root's MPI_Ibcast: Late
#   Broadcast in the non-roots' MPI_Wait;
# - persist (2 ranks): MPI_Send_init and MPI_Recv_init once, MPI_Start and
#   MPI_Wait in every iteration, the sender 0.1 s late: Late Sender in the
#   receiver's MPI_Wait;
# - mprobe (2 ranks): MPI_Mprobe (MPI_ANY_SOURCE, status ignored) takes a
#   message sent 0.1 s late, then MPI_Recv takes the next one of the same
#   channel, sent 0.1 s later still, and only then MPI_Mrecv receives the
#   first: Late Sender in MPI_Mprobe and in MPI_Recv (the probe numbers the
#   message it takes, so the receive in between is matched with its own).
# Each runs with WAITPROF_SOURCE=wrappers and with the default source; for
# every truth line the rows of that rank, function and pattern must be
# within 5 % or 5 ms of the truth, say method=measured and count at least
# one matched instance, and the largest truth must be at least 0.8 s
# (mprobe: 0.6 s, 8 iterations).  iallreduce and ibcast inject 0.2 s, not
# 0.1 s: each wait is that less the work before the MPI_Wait (a tenth of
# it), and with 4 ranks on 2 CPUs the waiting ranks leave the per-iteration
# barrier later than the late one, by up to 50 ms seen here on a loaded
# machine, which took 0.1 s waits down to 0.05 s.
# Every instance of these runs is in the always-chosen stratum (the first
# 16 of a channel or communicator: ws_exact's per-iteration barrier is on a
# communicator of its own in the iallreduce and ibcast modes, mprobe's 8
# iterations send 16 messages), so the figures are exact, not extrapolated
# from a sample: the waits here vary from call to call by up to a third
# with the scheduling of 4 ranks on 2 CPUs.
# Besides, a batch of collective instances that fills at an I-call must
# not be reduced there: in ws_exact's ifill mode rank 0 sends to rank 1
# after its MPI_Ibarrier and rank 1 receives before its own, which a
# blocking reduction in rank 0's MPI_Ibarrier would deadlock.  With
# WAITPROF_MATCH=1 every instance is chosen, so the batch (256) fills at
# the 255th MPI_Ibarrier of 300: the run must end, rank 0 must count the
# MPI_Ibarrier instances it could not keep until its next blocking
# collective as dropped, and the MPI_Wait rows must still be measured.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ws_exact
WP_WAITS_REL=0.05 WP_WAITS_ABS=0.005
export WP_WAITS_REL WP_WAITS_ABS

out=$WP_TMP/ifill
WAITPROF_MATCH=1 WP_TIMEOUT=120 wp_profile 3 "$out" "$prog" ifill 0 300 >"$out.stdout" 2>"$out.stderr" ||
    { cat "$out.stderr" >&2; wp_fail "ifill exited with $? (a deadlock ends at the 120 s timeout)"; }
dropped=$(wp_meta "$out/rank.0.meta" match_dropped)
wp_check_between "ifill: rank 0's match_dropped (MPI_Ibarrier instances after the batch filled)" "${dropped:-0}" 40 60
m=$(wp_waits_method "$out/rank.0.waits" MPI_Wait wait_barrier) ||
    { cat "$out/rank.0.waits" >&2; wp_fail "ifill: rank.0.waits has no MPI_Wait wait_barrier row"; }
[ "$m" = measured ] || { cat "$out/rank.0.waits" >&2; wp_fail "ifill: rank 0 MPI_Wait wait_barrier is '$m', not measured"; }

for src in wrappers default; do
    if [ "$src" = wrappers ]; then
        WAITPROF_SOURCE=wrappers
        export WAITPROF_SOURCE
    else
        unset WAITPROF_SOURCE
    fi
    wp_note "--- source: $src"
    # All ranks; the non-roots; rank 0; rank 0 (MPI_Mprobe, MPI_Recv).
    wp_check_exact 4 4 0.8 "$prog" iallreduce 0.2
    wp_check_exact 4 3 0.8 "$prog" ibcast 0.2
    wp_check_exact 2 1 0.8 "$prog" persist
    wp_check_exact 2 2 0.6 "$prog" mprobe 0.1 8
done
