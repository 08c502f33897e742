#!/bin/sh
# The message traffic of MPI_Sendrecv_replace (wrap/gen_wrappers.py
# TRAFFIC): tests/mpi/replace.c on 2 ranks, 100 calls of 1000 doubles each
# (half of them receiving from MPI_ANY_SOURCE), with the transfer matrices
# on.  Each rank sent 800 000 bytes to the other in 100 messages and
# received as many, and these figures must come out exactly:
# - matrix_size.csv: SIZE(0,1) = SIZE(1,0) = 800000, the diagonal 0;
#   matrix_request.csv: REQUEST(0,1) = REQUEST(1,0) = 100, the diagonal 0;
#   matrix_time.csv: TIME(i,i) = 0;
# - rank.R.calls, mpi_bytes_sent.csv, mpi_bytes_recv.csv,
#   mpi_requests_sent.csv, mpi_requests_recv.csv and report.json's
#   ranks[].functions: MPI_Sendrecv_replace sent 800000 bytes in 100
#   requests and received as many, on each rank; report.json's functions:
#   1 600 000 bytes each way over both ranks.
# Then the same traffic in blocking MPI_Send and MPI_Recv pairs (replace
# ... pairs, all on one tag), the matrices off, as by default: most of these calls are
# counted by the wrappers' inline count and without a clock read
# (wrap/traffic.h, wp_traffic_send_in), the wildcard receives by the
# function.  mpi_bytes_sent.csv and mpi_requests_sent.csv: MPI_Send sent
# 800000 bytes in 100 requests on each rank; mpi_bytes_recv.csv and
# mpi_requests_recv.csv: MPI_Recv received as many; rank.R.calls: 100
# calls of each on each rank (most sends by the wrappers' fast form, which
# counts after the call: wrap/wrap.h, wp_send_fast).
# Last, the same pairs with rank 0's 50th receive failing (replace ...
# trunc: MPI_ERRORS_RETURN, one element short), with one instance in
# 65536 chosen so that the failing receive is untimed and counted before
# its call (wrap/wrap.h, wp_count_before): a failed call is not counted, so
# rank 0's MPI_Recv received 792000 bytes in 99 requests, rank 1's 800000
# in 100, and rank 0's rank.0.calls counts 99 calls of MPI_Recv.
. "$(dirname "$0")/../lib.sh"
# run NAME FAILED0 [MODE]: tests/mpi/replace 100 1000 MODE on 2 ranks into
# $WP_TMP/NAME (the environment as the caller sets it); each rank must
# print its truth line, rank 0 with failed=FAILED0, rank 1 with failed=0.
run() {
    out=$WP_TMP/$1
    wp_profile 2 "$out" "$WP_BUILDDIR/tests/mpi/replace" 100 1000 ${3:-} >"$WP_TMP/truth" 2>"$WP_TMP/err" ||
        { cat "$WP_TMP/err" >&2; wp_fail "$1: the profiled run failed"; }
    for r in 0 1; do
        f=0
        [ $r = 0 ] && f=$2
        grep -q "^truth rank=$r sent=800000 calls=100 failed=$f$" "$WP_TMP/truth" ||
            { cat "$WP_TMP/truth" >&2; wp_fail "$1: rank $r's truth line is missing or wrong (its data or status was wrong)"; }
    done
}
export WAITPROF_QUIET=1
WAITPROF_MATRIX=1 run replace 0
# (an assignment before a function call may outlive it in sh)
unset WAITPROF_MATRIX
"$PYTHON" - "$out" <<'PY' || wp_fail "MPI_Sendrecv_replace traffic is not 800000 bytes in 100 messages each way"
import csv, json, sys
d = sys.argv[1]
B, N, F = 800000, 100, "MPI_Sendrecv_replace"
bad = []
def want(what, got, exp):
    print("[t_traffic_replace] %s = %s (expected %s)" % (what, got, exp))
    if got != exp:
        bad.append(what)
def table(name):
    with open("%s/%s" % (d, name), newline="") as f:
        return {int(r["rank"]): r for r in csv.DictReader(f)}
size, req, tm = table("matrix_size.csv"), table("matrix_request.csv"), table("matrix_time.csv")
for i in (0, 1):
    for j in (0, 1):
        want("SIZE(%d,%d)" % (i, j), int(size[i][str(j)]), B if i != j else 0)
        want("REQUEST(%d,%d)" % (i, j), int(req[i][str(j)]), N if i != j else 0)
    want("TIME(%d,%d)" % (i, i), float(tm[i][str(i)]), 0.0)
want("sum of SIZE", sum(int(v) for r in size.values() for k, v in r.items() if k != "rank"), 2 * B)
for name, exp in (("mpi_bytes_sent.csv", B), ("mpi_bytes_recv.csv", B),
                  ("mpi_requests_sent.csv", N), ("mpi_requests_recv.csv", N)):
    t = table(name)
    for r in (0, 1):
        want("%s rank %d %s" % (name, r, F), int(t[r][F]), exp)
for r in (0, 1):
    with open("%s/rank.%d.calls" % (d, r)) as f:
        lines = f.read().split("\n")
    hdr = lines[1].split("\t")
    row = [dict(zip(hdr, l.split("\t"))) for l in lines[2:] if l.split("\t")[0] == F]
    want("rank.%d.calls rows for %s" % (r, F), len(row), 1)
    for k, exp in (("bytes_sent", B), ("bytes_recv", B), ("requests_sent", N), ("requests_recv", N)):
        if k in hdr and row:
            want("rank.%d.calls %s" % (r, k), int(row[0][k]), exp)
        elif row:
            bad.append("rank.%d.calls has no column %s (header %s)" % (r, k, hdr))
j = json.load(open("%s/report.json" % d))
for x in j["ranks"]:
    fn = x["functions"].get(F, {})
    for k, exp in (("bytes_sent", B), ("bytes_recv", B), ("requests_sent", N), ("requests_recv", N)):
        want("report.json rank %d %s" % (x["rank"], k), fn.get(k), exp)
fn = [x for x in j["functions"] if x["function"] == F]
want("report.json functions rows for %s" % F, len(fn), 1)
for k, exp in (("bytes_sent", 2 * B), ("bytes_recv", 2 * B), ("requests_sent", 2 * N), ("requests_recv", 2 * N)):
    want("report.json functions %s" % k, fn[0][k] if fn else None, exp)
if bad:
    print("wrong: %s" % bad, file=sys.stderr)
    sys.exit(1)
PY
wp_note "MPI_Sendrecv_replace: 800000 bytes in 100 messages each way in the matrices, the tables and report.json"

run pairs 0 pairs
"$PYTHON" - "$out" <<'PY' || wp_fail "MPI_Send/MPI_Recv traffic is not 800000 bytes in 100 messages each way"
import csv, sys
d = sys.argv[1]
B, N = 800000, 100
bad = []
for name, fn in (("mpi_bytes_sent.csv", "MPI_Send"), ("mpi_requests_sent.csv", "MPI_Send"),
                 ("mpi_bytes_recv.csv", "MPI_Recv"), ("mpi_requests_recv.csv", "MPI_Recv")):
    with open("%s/%s" % (d, name), newline="") as f:
        t = {int(r["rank"]): r for r in csv.DictReader(f)}
    exp = B if "bytes" in name else N
    for r in (0, 1):
        got = int(t[r][fn])
        print("[t_traffic_replace] pairs: %s rank %d %s = %d (expected %d)" % (name, r, fn, got, exp))
        if got != exp:
            bad.append("%s rank %d" % (name, r))
# Every call counted, timed or not: most sends go by the fast form
# (wrap/wrap.h, wp_send_fast), which counts after the call.
for r in (0, 1):
    with open("%s/rank.%d.calls" % (d, r)) as f:
        lines = f.read().split("\n")
    hdr = lines[1].split("\t")
    for fn in ("MPI_Send", "MPI_Recv"):
        row = [dict(zip(hdr, l.split("\t"))) for l in lines[2:] if l.split("\t")[0] == fn]
        got = int(row[0]["calls"]) if row and "calls" in hdr else None
        print("[t_traffic_replace] pairs: rank.%d.calls %s calls = %s (expected %d)" % (r, fn, got, N))
        if got != N:
            bad.append("rank.%d.calls %s calls" % (r, fn))
if bad:
    print("wrong: %s" % bad, file=sys.stderr)
    sys.exit(1)
PY
wp_note "MPI_Send/MPI_Recv pairs: 800000 bytes in 100 messages each way in the tables, 100 calls of each on each rank"

# the short receive must fail with MPI_ERR_TRUNCATE (failed=1)
WAITPROF_MATCH=65536 run trunc 1 trunc
"$PYTHON" - "$out" <<'PY' || wp_fail "a failed MPI_Recv was counted"
import csv, sys
d = sys.argv[1]
bad = []
exp = {("mpi_bytes_recv.csv", 0): 792000, ("mpi_requests_recv.csv", 0): 99,
       ("mpi_bytes_recv.csv", 1): 800000, ("mpi_requests_recv.csv", 1): 100}
for (name, r), want in sorted(exp.items()):
    with open("%s/%s" % (d, name), newline="") as f:
        got = int({int(x["rank"]): x for x in csv.DictReader(f)}[r]["MPI_Recv"])
    print("[t_traffic_replace] trunc: %s rank %d MPI_Recv = %d (expected %d)" % (name, r, got, want))
    if got != want:
        bad.append("%s rank %d" % (name, r))
with open("%s/rank.0.calls" % d) as f:
    lines = f.read().split("\n")
hdr = lines[1].split("\t")
row = [dict(zip(hdr, l.split("\t"))) for l in lines[2:] if l.split("\t")[0] == "MPI_Recv"]
calls = int(row[0]["calls"]) if row and "calls" in hdr else None
print("[t_traffic_replace] trunc: rank.0.calls MPI_Recv calls = %s (expected 99)" % calls)
if calls != 99:
    bad.append("rank.0.calls calls")
if bad:
    print("wrong: %s" % bad, file=sys.stderr)
    sys.exit(1)
PY
wp_note "a failed MPI_Recv is not counted: 99 of 100 receives on rank 0"
