#!/bin/sh
# Fortran late senders, 'use mpi' and 'use mpi_f08'.  Open MPI's Fortran
# bindings call PMPI_Recv directly, MPICH's call the C MPI_Recv: either way
# the receive is seen once, as MPI_Recv, and its bytes and requests are
# counted once.  Frames carry the source's names (symbols/names.h): the
# receive is under main;late_sender;work::receive (the main program by its
# name from the DWARF, not MAIN__; the module procedure as module::procedure,
# not __work_MOD_receive), the computation under late_sender;work::compute_loop;
# report.txt names that path as the main waiting call path and its
# wait-state row reads "work::receive (late_sender.F90:LINE)", the line of
# the MPI_RECV call, as report.json's site does (on MPICH the mpi_f08
# receive's site is inside libmpichfort, which calls the C MPI_Recv); no
# output holds a compiler's name (MAIN__, _MOD_).  Every receive waits (a
# persistent late sender), and the Fortran wrappers number the messages as
# the C ones do (match/match.h): rank 0's MPI_Recv wait is measured from all
# five matched instances and lies between 90 % and 100 % (+5 ms) of the time
# the program spent in the receives (the rest is each receive's wake-up after
# the message came).
# With a runtime stall source that follows the receives (here MPI_T, asked
# for with WAITPROF_SOURCE=mpit on Open MPI), the 'use mpi' program's
# receives take the source's path as C calls do (wrap/wrap.h, wp_fsrc_*):
# most of rank 0's samples are classified by the source, not by the
# estimator.  (mpi_f08 calls keep the library's own path: its status type
# is not converted.)
. "$(dirname "$0")/../lib.sh"
[ -n "$MPIFC" ] || wp_skip "no MPI Fortran compiler"
for prog in late_sender_f late_sender_f08; do
    wp_check_late_sender 2 "$WP_BUILDDIR/tests/mpi/$prog" ';main;late_sender;work::receive;(.*;)?MPI_Recv$' \
        ';main;late_sender;work::compute_loop(;.*)?$'
    out=$WP_TMP/out-200
    line=$(grep -n 'call MPI_RECV' "$WP_SRCDIR/tests/mpi/late_sender.F90" | cut -d: -f1)
    grep -A1 '^main waiting call path' "$out/report.txt" | grep -Eq ';late_sender;work::receive;(.*;)?MPI_Recv$' ||
        { cat "$out/report.txt" >&2; wp_fail "$prog: report.txt's main waiting call path is not late_sender;work::receive;MPI_Recv"; }
    case $MPI_FLAVOR,${prog##*/} in
    mpich,late_sender_f08)
        # MPICH's mpi_f08 bindings call the C MPI_Recv from inside
        # libmpichfort, and the C wrapper's call site is its caller's
        # return address: the row names that library, not the program.
        site='libmpichfort[^ ]*' json_site='libmpichfort[^"]*' ;;
    *)
        site="work::receive \\(late_sender\\.F90:$line\\)" json_site="$site" ;;
    esac
    grep -Eq "^$site +MPI_Recv +late_sender " "$out/report.txt" ||
        { cat "$out/report.txt" >&2; wp_fail "$prog: no wait-state row /$site MPI_Recv late_sender/ in report.txt"; }
    grep -Eq "\"site\":\"$json_site\",\"function\":\"MPI_Recv\",\"pattern\":\"late_sender\"" "$out/report.json" ||
        wp_fail "$prog: report.json has no MPI_Recv late_sender site /$json_site/"
    for f in all.folded rank.0.folded rank.1.folded report.txt report.json waitstates.txt; do
        if grep -Eq 'MAIN__|_MOD_' "$out/$f"; then
            grep -E 'MAIN__|_MOD_' "$out/$f" | head -n 3 >&2
            wp_fail "$prog: $f holds a compiler's symbol name"
        fi
    done
    if grep -q 'MPI_Recv;.*MPI_Recv' "$WP_TMP/out-200/all.folded"; then
        wp_fail "$prog: a receive was counted twice (nested MPI_Recv frames)"
    fi
    # The report's traffic counts (profile/calls.h): five 4-byte messages
    # from rank 1 to rank 0, seen by the Fortran wrappers.
    sent=$(awk -F'\t' '$1 == "MPI_Send" { print $10 "/" $12 }' "$WP_TMP/out-200/rank.1.calls")
    recvd=$(awk -F'\t' '$1 == "MPI_Recv" { print $11 "/" $13 }' "$WP_TMP/out-200/rank.0.calls")
    [ "$sent" = 20/5 ] && [ "$recvd" = 20/5 ] ||
        wp_fail "$prog: bytes/requests sent by rank 1 '$sent', received by rank 0 '$recvd', expected 20/5"
    waits=$WP_TMP/out-200/rank.0.waits
    [ "$(wp_waits_method "$waits" MPI_Recv late_sender)" = measured ] &&
        [ "$(wp_waits_matched "$waits" MPI_Recv late_sender)" -eq 5 ] ||
        { cat "$waits" >&2; wp_fail "$prog: rank 0's MPI_Recv wait is not measured from 5 matched instances"; }
    in_recv=$(wp_truth "$WP_TMP/stdout" 0 in_recv)
    wp_check_between "$prog: rank 0 MPI_Recv measured late-sender wait, s (in the receives: $in_recv s)" \
        "$(wp_waits_sum "$waits" MPI_Recv late_sender)" "$(wp_calc "$in_recv * 0.9")" "$(wp_calc "$in_recv + 0.005")"
done
# The MPI_T source's path for the Fortran receives ('use mpi'), on Open
# MPI: rank 0's samples were classified mostly by the source.
if [ "$MPI_FLAVOR" = openmpi ]; then
    out=$WP_TMP/fsrc
    WAITPROF_SOURCE=mpit WAITPROF_HZ=200 wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/late_sender_f" 0.2 5 \
        >"$out.stdout" 2>"$out.stderr" || { cat "$out.stderr" >&2; wp_fail "late_sender_f, source mpit: the run failed"; }
    src=$(wp_meta "$out/rank.0.meta" source)
    by_src=$(wp_meta "$out/rank.0.meta" samples_by_source) by_est=$(wp_meta "$out/rank.0.meta" samples_by_estimate)
    wp_note "late_sender_f: source $src classified $by_src samples of rank 0, the estimator $by_est"
    [ "$src" = mpit ] && [ "${by_src:-0}" -gt "${by_est:-0}" ] ||
        wp_fail "late_sender_f: the Fortran receives did not take the MPI_T source's path (source $src, $by_src samples by it, $by_est by the estimator)"
fi
