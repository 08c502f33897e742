#!/bin/sh
# WAITPROF_LEAN=1 (wrap/wrap.h): wrappers that read no clock and keep no
# per-call figures still track the MPI state exactly.  The C and Fortran late
# senders: rank 0's wait lands on its MPI_Recv path in an MPI state, rank 1's
# computation outside MPI, sample counts follow WAITPROF_HZ; the meta files
# say wrappers=lean; with the estimator's source (wrappers) nothing
# classifies a sample, so no sample is MPI-Stall; no call is recorded (no
# wait-state row, no per-function row), and the report says why.
. "$(dirname "$0")/../lib.sh"
export WAITPROF_LEAN=1 WAITPROF_SOURCE=wrappers
for prog in late_sender late_sender_f; do
    case $prog in
    late_sender) recv=';main;MPI_Recv$' comp=';main;compute_loop(;.*)?$' ;;
    *)
        [ -n "$MPIFC" ] || { wp_note "no MPI Fortran compiler in this build: C only"; continue; }
        recv=';main;late_sender;(.*;)?MPI_Recv$' comp=';main;late_sender;work::compute_loop(;.*)?$' ;;
    esac
    wp_check_late_sender 2 "$WP_BUILDDIR/tests/mpi/$prog" "$recv" "$comp" 200
    out=$WP_TMP/out-200
    for r in 0 1; do
        [ "$(wp_meta "$out/rank.$r.meta" wrappers)" = lean ] || wp_fail "$prog: rank.$r.meta does not say wrappers=lean"
    done
    stall=$(wp_folded sum "$out/all.folded" --state MPI-Stall)
    [ "$stall" = 0 ] || wp_fail "$prog: $stall MPI-Stall samples, but nothing classifies samples in lean mode"
    for f in "$out"/rank.*.waits "$out"/rank.*.calls; do
        rows=$(($(wc -l <"$f") - 2))
        [ "$rows" = 0 ] || { cat "$f" >&2; wp_fail "$prog: $(basename "$f") has $rows rows; lean wrappers record no call"; }
    done
    grep -q 'not estimated: the run used lean wrappers' "$out/report.txt" ||
        wp_fail "$prog: report.txt does not say why there is no estimate"
    wp_note "$prog: lean wrappers, $(wp_folded sum "$out/all.folded") samples, none classified, no call recorded"
done
