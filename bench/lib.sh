# bench/lib.sh — what the bench/ scripts share; sourced after the build's
# tests/env.sh (MPIEXEC, MPI_FLAVOR).

# bench_mpirun NP COMMAND... — COMMAND on NP ranks with the build's MPI,
# killed after BENCH_MPIRUN_TIMEOUT seconds (default 600).  Open MPI needs
# --allow-run-as-root as root and --oversubscribe on this project's
# 2-vCPU machines, and above 2 ranks mpi_yield_when_idle, so that waiting
# ranks let the others run; BENCH_MPIRUN_OMPI adds options of the
# caller's (Open MPI only).  MPICH's ranks poll without yielding.
bench_mpirun() {
    bench_np=$1
    shift
    case $MPI_FLAVOR in
    openmpi)
        set -- --oversubscribe ${BENCH_MPIRUN_OMPI:-} -np "$bench_np" "$@"
        [ "$bench_np" -gt 2 ] && set -- --mca mpi_yield_when_idle 1 "$@"
        [ "$(id -u)" = 0 ] && set -- --allow-run-as-root "$@"
        ;;
    *) set -- -n "$bench_np" "$@" ;;
    esac
    timeout -k 10 "${BENCH_MPIRUN_TIMEOUT:-600}" "$MPIEXEC" "$@"
}

# bench_median — the median of the numbers on standard input, one per line
# (the mean of the middle two for an even count; "-" for none).
bench_median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
