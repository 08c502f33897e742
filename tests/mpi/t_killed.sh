#!/bin/sh
# kill -TERM of the launcher during a 4-rank run, 20 times: every rank
# leaves a partial profile that `waitprof report` reads, every time.  The
# launchers forward SIGTERM to the ranks and kill the rest with SIGKILL as
# soon as one rank is gone (Open MPI's mpirun a few ms later), so a rank
# that got no CPU in between would lose its files; each rank waits after
# writing until every rank has written (runtime/lifecycle.c,
# wp_term_meet), and a meta file
# written at MPI_Init names a rank that was killed outright anyway.
. "$(dirname "$0")/../lib.sh"
prog=$WP_BUILDDIR/tests/mpi/ending
runs=${WP_KILLED_RUNS:-20}
profiles=0 symbolized_ranks=0
for run in $(seq 1 "$runs"); do
    out=$WP_TMP/run$run
    # The launcher as wp_mpirun starts it, but not in a function's
    # subshell, so that $! is its timeout process, whose child is the
    # launcher (signalled itself: timeout would also signal its process
    # group, and Open MPI's mpirun treats a second SIGTERM as "abort now").
    case $MPI_FLAVOR in
    openmpi)
        WAITPROF_OUT=$out timeout -k 10 60 "$MPIEXEC" --allow-run-as-root --oversubscribe \
            --mca mpi_yield_when_idle 1 --mca btl_vader_single_copy_mechanism none \
            -np 4 "$WP_LAUNCHER" "$prog" hang >"$WP_TMP/stdout" 2>&1 & ;;
    *)
        WAITPROF_OUT=$out timeout -k 10 60 "$MPIEXEC" -n 4 "$WP_LAUNCHER" "$prog" hang >"$WP_TMP/stdout" 2>&1 & ;;
    esac
    pid=$!
    i=0
    while [ "$(grep -c '^ready' "$WP_TMP/stdout")" -lt 4 ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    [ $i -lt 300 ] || wp_fail "run $run: the ranks did not start: $(cat "$WP_TMP/stdout")"
    sleep 0.5
    launcher=$(pgrep -P "$pid" | head -n 1)
    [ -n "$launcher" ] || wp_fail "run $run: launcher process not found"
    kill -TERM "$launcher"
    wait "$pid"
    timelines=0
    for r in 0 1 2 3; do
        st=$(wp_meta "$out/rank.$r.meta" status)
        case $st in
        partial*SIGTERM*) [ -s "$out/rank.$r.folded" ] || wp_fail "run $run: rank $r wrote its meta but no folded file"
            # The signal-time writer leaves the timeline too (profile/partial.h).
            head -n 1 "$out/rank.$r.timeline" 2>/dev/null | grep -q '^# waitprof-timeline 1$' ||
                wp_fail "run $run: rank $r wrote its meta at SIGTERM but no timeline"
            timelines=1
            symbolized_ranks=$((symbolized_ranks + 1)) ;;
        partial*) ;;
        *) wp_fail "run $run: rank $r left no partial profile (status '$st')" ;;
        esac
        profiles=$((profiles + 1))
    done
    # Each rank counted itself once before it died (runtime/lifecycle.c,
    # wp_term_meet), so none was still writing when the others ended.
    n=$(wc -c <"$out/.waitprof-ended" 2>/dev/null)
    [ "$n" = 4 ] || wp_fail "run $run: .waitprof-ended holds '$n' bytes, not one per rank"
    wp_folded check "$out"/rank.*.folded || wp_fail "run $run: folded format"
    "$WP_LAUNCHER" report "$out" >"$WP_TMP/report.out" 2>"$WP_TMP/report.err"
    rc=$?
    [ $rc = 0 ] || [ $rc = 1 ] || wp_fail "run $run: waitprof report exited with $rc: $(cat "$WP_TMP/report.err")"
    [ -s "$out/report.txt" ] || wp_fail "run $run: no report.txt"
    # The killed ranks' timelines are in the report, marked partial.
    if [ "$timelines" = 1 ]; then
        "$PYTHON" -c 'import json, sys; t = json.load(open(sys.argv[1]))["timeline"]
sys.exit(not (t and any(r["status"] == "partial" for r in t["ranks"])))' "$out/report.json" ||
            wp_fail "run $run: report.json has no timeline of a partial rank"
    fi
    # A rank killed before it wrote is named, and why.
    for r in 0 1 2 3; do
        case $(wp_meta "$out/rank.$r.meta" status) in
        *SIGKILL*) grep -q "rank.$r.meta: the rank ended before it could write its profile" "$WP_TMP/report.err" ||
            wp_fail "run $run: the report does not name rank $r, which was killed: $(cat "$WP_TMP/report.err")" ;;
        esac
    done
done
[ $profiles = $((runs * 4)) ] || wp_fail "$profiles partial profiles of $((runs * 4))"
wp_note "$profiles of $((runs * 4)) ranks left a partial profile; $symbolized_ranks wrote their samples at SIGTERM"
# Every rank wrote its samples, not only its meta file: the grace works.
[ $symbolized_ranks = $((runs * 4)) ] || wp_fail "only $symbolized_ranks of $((runs * 4)) ranks wrote their samples before the launcher killed them"
