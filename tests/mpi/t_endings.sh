#!/bin/sh
# Runs that end without MPI_Finalize still leave readable per-rank files,
# marked partial in rank.R.meta: exit(), MPI_Abort, and SIGTERM (where the
# frames are module+offset but the MPI call and state are named).  The
# launcher's exit code is the one the run has without waitprof.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ending

baseline() { code=0; wp_mpirun 2 "$prog" "$@" >/dev/null 2>&1 || code=$?; echo $code; }

# with_codes DIR command... — run the command on 2 ranks, each under a shell
# that writes the rank's own exit status to DIR/code.R before it exits with
# it; prints the launcher's exit code.  The shell holds the rank's pipes and
# PMI socket until the status is written, so the launcher cannot kill it
# first for the rank's exit; it may still kill the other rank.
with_codes() {
    dir=$1; shift
    mkdir -p "$dir"
    code=0
    WP_CODES=$dir wp_mpirun 2 sh -c '"$@"; c=$?; echo $c >"$WP_CODES/code.${PMI_RANK:-$OMPI_COMM_WORLD_RANK}"; exit $c' \
        sh "$@" >/dev/null 2>"$dir/stderr" || code=$?
    echo $code
}

# exit() without MPI_Finalize.  What must not change is each rank's own exit
# status.  The launcher's code is compared on Open MPI only: MPICH's mpiexec
# returns the rank's code, 1, or (code << 8 | 9) & 0xff depending on a race
# inside Hydra (whether its proxy sees the rank's pipes close or its SIGCHLD
# first, and whether it reaps the rank it killed), which runs without
# waitprof show as well (9 and 1 under strace, at 1 and 2 ranks).
want=$(with_codes "$WP_TMP/exit-base" "$prog" exit 4)
[ "$(cat "$WP_TMP/exit-base/code.0" 2>/dev/null)" = 4 ] || wp_fail "exit: without waitprof rank 0 did not exit with 4"
code=$(WAITPROF_OUT=$WP_TMP/exit with_codes "$WP_TMP/exit-codes" "$WP_LAUNCHER" "$prog" exit 4)
[ -f "$WP_TMP/exit-codes/code.0" ] || { cat "$WP_TMP/exit-codes/stderr" >&2; wp_fail "exit: rank 0's exit status not recorded"; }
for f in "$WP_TMP"/exit-codes/code.*; do
    [ "$(cat "$f")" = 4 ] || { cat "$WP_TMP/exit-codes/stderr" >&2; wp_fail "exit: ${f##*/} is $(cat "$f"), expected 4"; }
done
if [ "$MPI_FLAVOR" = openmpi ]; then
    [ "$code" = "$want" ] || { cat "$WP_TMP/exit-codes/stderr" >&2; wp_fail "exit: launcher code $code, expected $want"; }
fi
# Both ranks call exit(); a launcher may kill the slower one as soon as the
# first is gone (MPICH's does, with SIGKILL, though each rank waits a moment
# after writing), so at least one rank's files must be there, and every
# meta file must be marked partial: by the exit, or as killed outright.
found=0
for r in 0 1; do
    [ -f "$WP_TMP/exit/rank.$r.meta" ] || continue
    found=$((found + 1))
    st=$(wp_meta "$WP_TMP/exit/rank.$r.meta" status)
    case $st in
    partial*without\ MPI_Finalize*) ;;
    partial*killed\ by\ SIGKILL*) found=$((found - 1)) ;;
    *) wp_fail "exit: rank $r status '$st'" ;;
    esac
done
[ $found -gt 0 ] || wp_fail "exit: no rank left a profile"
wp_folded check "$WP_TMP"/exit/rank.*.folded || wp_fail "exit: folded format"
n=0
for f in "$WP_TMP"/exit/rank.*.folded; do
    n=$((n + $(wp_folded sum "$f" --state Not-in-MPI --path ';compute_phase$')))
done
[ "$n" -gt 20 ] || wp_fail "exit: only $n samples in compute_phase (0.5 s at 100 Hz)"
wp_note "exit: $found partial profiles, $n samples in compute_phase, rank 0 exit status $(cat "$WP_TMP/exit-codes/code.0"), launcher code $code (without waitprof $want)"

# A child made by fork() that calls exit() is not the rank: it writes nothing.
wp_profile 2 "$WP_TMP/fork" "$prog" fork 0 >"$WP_TMP/stdout" 2>"$WP_TMP/stderr" || wp_fail "fork run failed"
[ "$(grep -c 'child_wrote=0' "$WP_TMP/stdout")" = 2 ] || wp_fail "fork: a child wrote a profile: $(grep fork "$WP_TMP/stdout")"
[ "$(wp_meta "$WP_TMP/fork/rank.0.meta" status)" = complete ] || wp_fail "fork: rank 0 not complete"
wp_note "fork: children wrote nothing, ranks complete"

# MPI_Finalize, then every rank returns 3.  Open MPI's mpirun kills the
# ranks still running once one has returned non-zero; rank 0 writes the
# report before PMPI_Finalize (runtime/lifecycle.c), so the run is complete
# and reported all the same.  4 ranks, so that the others can be done
# before rank 0 on 2 cores.
want=0
wp_mpirun 4 "$prog" finalize 3 >/dev/null 2>&1 || want=$?
code=0; wp_profile 4 "$WP_TMP/fincode" "$prog" finalize 3 >/dev/null 2>"$WP_TMP/stderr" || code=$?
[ "$code" = "$want" ] || { cat "$WP_TMP/stderr" >&2; wp_fail "finalize 3: launcher code $code, without waitprof $want"; }
for r in 0 1 2 3; do
    [ "$(wp_meta "$WP_TMP/fincode/rank.$r.meta" status)" = complete ] || wp_fail "finalize 3: rank $r not complete"
done
[ -s "$WP_TMP/fincode/report.txt" ] && [ -s "$WP_TMP/fincode/all.folded" ] ||
    { cat "$WP_TMP/stderr" >&2; wp_fail "finalize 3: no report.txt or all.folded"; }
grep -q "^waitprof: 4 ranks" "$WP_TMP/stderr" || { cat "$WP_TMP/stderr" >&2; wp_fail "finalize 3: no summary line"; }
wp_note "finalize 3: 4 complete ranks, report and summary line written, launcher code $code (without waitprof $want)"

# MPI_Abort on rank 1
want=$(baseline abort 6)
code=0; wp_profile 2 "$WP_TMP/abort" "$prog" abort 6 >/dev/null 2>"$WP_TMP/stderr" || code=$?
[ "$code" = "$want" ] || { cat "$WP_TMP/stderr" >&2; wp_fail "abort: code $code, expected $want"; }
st=$(wp_meta "$WP_TMP/abort/rank.1.meta" status)
case $st in partial*MPI_Abort*) ;; *) wp_fail "abort: rank 1 status '$st'" ;; esac
wp_folded check "$WP_TMP/abort/rank.1.folded" || wp_fail "abort: folded format"
wp_note "abort: rank 1 partial profile, exit code $code"

# SIGTERM while rank 0 waits in MPI_Recv and rank 1 computes.  Rank 0 is
# signalled first and its files awaited; then rank 1, unless the launcher
# has already killed it (MPICH's does, with SIGKILL, once rank 0 is gone:
# nothing can be written then, so rank 1 is checked on Open MPI only).
WAITPROF_OUT=$WP_TMP/term WP_TIMEOUT=60 wp_mpirun 2 "$WP_LAUNCHER" "$prog" hang >"$WP_TMP/stdout" 2>&1 &
pid=$!
i=0
while [ "$(grep -c '^ready' "$WP_TMP/stdout")" -lt 2 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
sleep 1.5
rank_pid() {
    for p in $(pgrep -f "$prog hang"); do
        if tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -Eq "^(OMPI_COMM_WORLD_RANK|PMI_RANK)=$1\$"; then
            echo "$p"; return
        fi
    done
}
p0=$(rank_pid 0); p1=$(rank_pid 1)
[ -n "$p0" ] && [ -n "$p1" ] || wp_fail "term: rank processes not found"
kill -TERM "$p0"
i=0
# (rank.0.meta exists from MPI_Init on: wait for the one SIGTERM writes)
while ! grep -q '^status=.*SIGTERM' "$WP_TMP/term/rank.0.meta" 2>/dev/null && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
kill -TERM "$p1" 2>/dev/null
wait $pid
ranks=0
[ "$MPI_FLAVOR" = openmpi ] && ranks="0 1"
for r in $ranks; do
    st=$(wp_meta "$WP_TMP/term/rank.$r.meta" status)
    case $st in partial*SIGTERM*) ;; *) wp_fail "term: rank $r status '$st'" ;; esac
done
wp_folded check "$WP_TMP"/term/rank.*.folded || wp_fail "term: folded format"
# No symbols at a signal: the program's own frames are named by its file and
# the offset from its load address (sampler/unwind.h, wp_cfi_object_sig).
grep -q ';ending+0x[0-9a-f]*;' "$WP_TMP/term/rank.0.folded" ||
    wp_fail "term: rank 0's frames in the program are not 'ending+0x...': $(head -c 300 "$WP_TMP/term/rank.0.folded")"
# MPI-Stall: a runtime stall source (mpit/) sees the receive wait; the
# estimator, whose rule needs the call's end (which never comes), counts the
# samples taken more than MPI_Recv's minimum (the program's first receive)
# before the end of the run as waiting (sampler/store.h, wp_pending_split).
stall=$(wp_folded sum "$WP_TMP/term/rank.0.folded" --state MPI-Stall --path ';MPI_Recv$')
n=$((stall + $(wp_folded sum "$WP_TMP/term/rank.0.folded" --state MPI-Work --path ';MPI_Recv$')))
[ "$n" -gt 50 ] || wp_fail "term: rank 0 has $n samples in MPI_Recv (waited > 1 s at 100 Hz)"
[ $((stall * 10)) -ge $((n * 9)) ] || wp_fail "term: rank 0 has $stall of its $n samples in MPI_Recv in MPI-Stall, expected 90 %"
# The meta file counts what the folded file holds, the samples of the
# receive that never returned included.
all0=$(wp_folded sum "$WP_TMP/term/rank.0.folded")
[ "$(wp_meta "$WP_TMP/term/rank.0.meta" samples)" = "$all0" ] ||
    wp_fail "term: rank.0.meta says samples=$(wp_meta "$WP_TMP/term/rank.0.meta" samples), its folded file holds $all0"
n1=-
if [ -f "$WP_TMP/term/rank.1.folded" ]; then
    n1=$(wp_folded sum "$WP_TMP/term/rank.1.folded" --state Not-in-MPI)
    [ "$n1" -gt 100 ] || wp_fail "term: rank 1 has $n1 samples outside MPI (computed > 2 s at 100 Hz)"
fi
wp_note "term: partial profiles, rank 0 $n samples in MPI_Recv ($stall MPI-Stall), rank 1 $n1 outside MPI"
