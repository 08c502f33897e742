#!/usr/bin/env python3
"""Checks of the cross-rank report (report/report.h) for the integration tests.

  report_check.py consistency DIR       the report's numbers against the per-rank files
  report_check.py truth DIR TRUTH NP    the report against a report_imb run's truth lines
  report_check.py csvs DIR N            every CSV in DIR as Python's csv module reads it; N files
  report_check.py foldtools FILE...     the parsing rules of flamegraph.pl, inferno, speedscope
  report_check.py png FILE              a flame graph screenshot: not blank, the state colours
  report_check.py png-stall FILE        a screenshot of an MPI-Stall-only flame graph
  report_check.py timeline JSON TRUTH   report.json's timeline of a tests/mpi/timeline run
  report_check.py timeline-totals DIR   each rank.R.timeline's samples per state against rank.R.folded
  report_check.py png-timeline PNG SVG TRUTH  the same in a screenshot of its timeline.svg

Every check exits 1 with a message naming what differs.
"""
import csv
import glob
import json
import os
import re
import struct
import sys
import zlib

STATES = ("Not-in-MPI", "MPI-Work", "MPI-Stall")


def fail(msg):
    print("report_check: " + msg, file=sys.stderr)
    sys.exit(1)


def load_csv(path):
    """A waitprof CSV as any CSV reader takes it: the first line is the header
    row, naming every column (the first one "rank"); every row as wide as
    the header.  The rows as csv.DictReader reads them."""
    with open(path, newline="") as f:
        raw = list(csv.reader(f))
    if not raw:
        fail("%s: empty" % path)
    hdr = raw[0]
    if hdr[0] != "rank" or any(not h or h.startswith("#") for h in hdr) or len(set(hdr)) != len(hdr):
        fail("%s: first line %r is not a header row naming each column once" % (path, hdr))
    for i, r in enumerate(raw[1:]):
        if len(r) != len(hdr):
            fail("%s: row %d has %d fields, the header %d" % (path, i + 1, len(r), len(hdr)))
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        rows = list(rd)
        if rd.fieldnames != hdr:
            fail("%s: csv.DictReader takes the columns %r, the header row names %r" % (path, rd.fieldnames, hdr))
    return rows


def csvs(d, want):
    """Every CSV in d: read with the csv module as it is (no line skipped),
    a header row first, rows as wide as it, every cell but ranks.csv's
    status a number, one row per rank of ranks.csv; report.json's csv_files
    names exactly these files (format waitprof-csv 2); want: how many."""
    paths = sorted(glob.glob(os.path.join(d, "*.csv")))
    js = json.load(open(os.path.join(d, "report.json")))
    listed = js["csv_files"]
    names = [os.path.basename(p) for p in paths]
    if sorted(listed) != names:
        fail("report.json csv_files lists %s, the directory has %s" % (sorted(listed), names))
    if len(names) != want:
        fail("%d CSV files (%s), expected %d" % (len(names), names, want))
    ranks = [r["rank"] for r in load_csv(os.path.join(d, "ranks.csv"))]
    for p, name in zip(paths, names):
        if listed[name]["format"] != "waitprof-csv" or listed[name]["version"] != 2:
            fail("report.json csv_files %s: %r" % (name, listed[name]))
        rows = load_csv(p)
        if [r["rank"] for r in rows] != ranks:
            fail("%s: rows for ranks %s, ranks.csv has %s" % (name, [r["rank"] for r in rows], ranks))
        for r in rows:
            for k, v in r.items():
                if not (name == "ranks.csv" and k == "status") and not re.match(r"^-?[0-9]+(\.[0-9]+)?$", v):
                    fail("%s: rank %s column %s: %r is not a number" % (name, r["rank"], k, v))
        print("csvs: %s: %d columns %s, %d rows" % (name, len(rows[0]) if rows else 0,
                                                   ",".join(list(rows[0])[:4]) + ",..." if rows else "", len(rows)))


def folded_states(path):
    out = dict.fromkeys(STATES, 0)
    with open(path) as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            out[stack.split(";")[0]] += int(count)
    return out


def calls_rows(path):
    rows = {}
    with open(path) as f:
        lines = f.read().split("\n")
    if lines[0] != "# waitprof-calls 1":
        fail("%s: first line %r" % (path, lines[0]))
    hdr = lines[1].split("\t")
    for line in lines[2:]:
        if line:
            rows[line.split("\t")[0]] = dict(zip(hdr, line.split("\t")))
    return rows


def consistency(d):
    ranks = sorted(int(re.match(r"rank\.(\d+)\.folded$", os.path.basename(p)).group(1))
                   for p in glob.glob(os.path.join(d, "rank.*.folded")))
    # 1. Every CSV loads, and ranks.csv has each rank's state counts from its folded file.
    for p in sorted(glob.glob(os.path.join(d, "*.csv"))):
        load_csv(p)
    rc = {int(r["rank"]): r for r in load_csv(os.path.join(d, "ranks.csv"))}
    if sorted(rc) != ranks:
        fail("ranks.csv lists ranks %s, the directory has %s" % (sorted(rc), ranks))
    js = json.load(open(os.path.join(d, "report.json")))
    jr = {r["rank"]: r for r in js["ranks"]}
    tot = dict.fromkeys(STATES, 0)
    for r in ranks:
        st = folded_states(os.path.join(d, "rank.%d.folded" % r))
        for s, key, jkey in zip(STATES, ("not_in_mpi", "mpi_work", "mpi_stall"), ("not_in_mpi", "work", "stall")):
            if int(rc[r][key]) != st[s] or jr[r][jkey] != st[s]:
                fail("rank %d %s: ranks.csv %s, report.json %s, rank.%d.folded %d"
                     % (r, s, rc[r][key], jr[r][jkey], r, st[s]))
            tot[s] += st[s]
    js_states = {s["state"]: s for s in js["states"]}
    for s in STATES:
        if js_states[s]["samples"] != tot[s]:
            fail("report.json %s samples %d, the folded files %d" % (s, js_states[s]["samples"], tot[s]))
    # all.folded is the sum of the ranks' files.
    allst = folded_states(os.path.join(d, "all.folded"))
    if allst != tot:
        fail("all.folded state totals %s, the ranks' files %s" % (allst, tot))
    # 2. Per MPI function: the multi-resolution timer figures from the ranks' calls files.
    per = {r: calls_rows(os.path.join(d, "rank.%d.calls" % r)) for r in ranks
           if os.path.exists(os.path.join(d, "rank.%d.calls" % r))}
    times = {int(r["rank"]): r for r in load_csv(os.path.join(d, "mpi_time.csv"))}
    for fn in js["functions"]:
        name = fn["function"]
        rows = {r: per[r][name] for r in per if name in per[r] and int(per[r][name]["calls"]) > 0}
        if not rows:
            continue
        ev = sum(int(x["calls"]) for x in rows.values())
        total = sum(int(x["time_ns"]) for x in rows.values()) * 1e-9
        lr = max(rows, key=lambda r: (int(rows[r]["max_ns"]), -r))
        if fn["events"] != ev or abs(fn["total_s"] - total) > 1e-6 or fn["nranks"] != len(rows):
            fail("%s: report events %d total %.9f ranks %d; calls files %d %.9f %d"
                 % (name, fn["events"], fn["total_s"], fn["nranks"], ev, total, len(rows)))
        if fn["longest_rank"] != lr or fn["longest_event"] != int(rows[lr]["max_event"]):
            fail("%s: longest event at rank %d event %d; calls files: rank %d event %s"
                 % (name, fn["longest_rank"], fn["longest_event"], lr, rows[lr]["max_event"]))
        for r, x in rows.items():
            if abs(float(times[r][name]) - int(x["time_ns"]) * 1e-9) > 1e-6:
                fail("mpi_time.csv rank %d %s = %s, rank.%d.calls %s ns" % (r, name, times[r][name], r, x["time_ns"]))
    print("consistency: %d ranks, %d functions: report = per-rank files" % (len(ranks), len(js["functions"])))


def truth(d, truth_file, np_):
    t = {}
    for line in open(truth_file):
        m = re.match(r"truth rank=(\d+) allreduce=([0-9.]+) compute=([0-9.]+) calls=(\d+)", line)
        if m:
            t[int(m.group(1))] = (float(m.group(2)), float(m.group(3)), int(m.group(4)))
    if len(t) != np_:
        fail("%s: %d truth lines, expected %d" % (truth_file, len(t), np_))
    js = json.load(open(os.path.join(d, "report.json")))
    last = np_ - 1
    mw = js["main_wait"]
    if mw is None or not mw["path"].endswith("exchange;MPI_Allreduce"):
        fail("main waiting call path %r, expected ...exchange;MPI_Allreduce" % (mw and mw["path"]))
    if mw["cause_rank"] != last:
        fail("the report says rank %s causes the wait; the program makes rank %d compute longest"
             % (mw["cause_rank"], last))
    fn = {f["function"]: f for f in js["functions"]}["MPI_Allreduce"]
    calls = t[0][2]
    if fn["events"] != calls * np_ or fn["events_max"] != calls or fn["events_min"] != calls:
        fail("MPI_Allreduce events %d (max %d, min %d), the program made %d per rank"
             % (fn["events"], fn["events_max"], fn["events_min"], calls))
    # Time in the call per rank against the program's own clock: 5% or 20 ms.
    times = {int(r["rank"]): float(r["MPI_Allreduce"]) for r in load_csv(os.path.join(d, "mpi_time.csv"))}
    for r in range(np_):
        want = t[r][0]
        if abs(times[r] - want) > max(0.05 * want, 0.02):
            fail("rank %d: mpi_time.csv MPI_Allreduce %.3f s, the program measured %.3f s" % (r, times[r], want))
    # The estimated wait at the call site: most at rank 0 (which computes
    # least), and rank 0's wait within 10% + 30 ms of its time in the call
    # minus the cost of a call that does not wait (the highest rank's average).
    ws = [w for w in js["wait_states"] if w["function"] == "MPI_Allreduce"]
    if len(ws) != 1:
        fail("%d wait-state rows for MPI_Allreduce, expected 1" % len(ws))
    w = ws[0]
    if w["wait_max_rank"] != 0:
        fail("MPI_Allreduce wait is largest at rank %d; the program makes rank 0 wait longest" % w["wait_max_rank"])
    want = t[0][0] - t[last][0]
    if abs(w["wait_max_s"] - want) > 0.1 * want + 0.03:
        fail("rank 0 MPI_Allreduce estimated wait %.3f s, truth %.3f s" % (w["wait_max_s"], want))
    # Imbalance of the call site: max over ranks minus the average.
    avg = sum(times.values()) / np_
    if abs(w["imbalance_s"] - (max(times.values()) - avg)) > 1e-3:
        fail("imbalance %.6f s, from mpi_time.csv %.6f s" % (w["imbalance_s"], max(times.values()) - avg))
    # The ring of report_imb.c: each rank sends calls x 8000 bytes to the next.
    sent = {int(r["rank"]): r for r in load_csv(os.path.join(d, "mpi_bytes_sent.csv"))}
    for r in range(np_):
        if int(sent[r]["MPI_Sendrecv"]) != calls * 8000:
            fail("rank %d: mpi_bytes_sent.csv MPI_Sendrecv %s, the program sent %d" % (r, sent[r]["MPI_Sendrecv"], calls * 8000))
    if os.path.exists(os.path.join(d, "matrix_size.csv")):
        size = {int(r["rank"]): r for r in load_csv(os.path.join(d, "matrix_size.csv"))}
        req = {int(r["rank"]): r for r in load_csv(os.path.join(d, "matrix_request.csv"))}
        tm = {int(r["rank"]): r for r in load_csv(os.path.join(d, "matrix_time.csv"))}
        # TIME(i,j): rank i's time in blocking receives from j.  The ring's
        # only receives are the MPI_Sendrecv from i-1, so TIME(i,i-1) is
        # rank i's whole MPI_Sendrecv time (mpi_time.csv) and the rest 0.
        # Both add the same recorded durations (wrap/wrap.h, wp_record), so
        # they agree to the files' precision (1 us; 2 us allows each its
        # rounding): a matrix that timed the calls again, or timed more
        # than the call, fails.
        sr = {int(r["rank"]): float(r["MPI_Sendrecv"]) for r in load_csv(os.path.join(d, "mpi_time.csv"))}
        for i in range(np_):
            for j in range(np_):
                ws, wr = (calls * 8000, calls) if j == (i + 1) % np_ else (0, 0)
                if int(size[i][str(j)]) != ws or int(req[i][str(j)]) != wr:
                    fail("SIZE(%d,%d) = %s, REQUEST = %s; the program sent %d bytes in %d calls"
                         % (i, j, size[i][str(j)], req[i][str(j)], ws, wr))
                tw = sr[i] if j == (i + np_ - 1) % np_ else 0.0
                got = float(tm[i][str(j)])
                if abs(got - tw) > 2e-6:
                    fail("TIME(%d,%d) = %.6f s; rank %d spent %.6f s in MPI_Sendrecv receiving from %d"
                         % (i, j, got, i, tw, j))
        print("truth: transfer matrices match the ring")
    print("truth: main wait %s caused by rank %d; rank 0 wait %.3f s (truth %.3f s)"
          % (mw["path"], last, w["wait_max_s"], want))


# --- the folded parsers of the three tools, as rules ----------------------------

def flamegraph_pl(line):
    """flamegraph.pl: 'stack count' (count may have a decimal part), split at
    the last run of whitespace; a second count makes a differential line."""
    m = re.match(r"^(.*)\s+?(\d+(?:\.\d*)?)$", line)
    if not m:
        return None
    stack, n = m.group(1), m.group(2)
    m2 = re.match(r"^(.*)\s+?(\d+(?:\.\d*)?)$", stack)
    if m2:
        return m2.group(1), (float(m2.group(2)), float(n))
    return stack, (float(n),)


def inferno(line):
    """inferno-flamegraph: trailing whitespace trimmed, the count after the
    last space must parse as an unsigned integer (a second one for diffs)."""
    line = line.rstrip()
    i = line.rfind(" ")
    if i < 0 or not line[i + 1:].isdigit():
        return None
    stack, n = line[:i], int(line[i + 1:])
    j = stack.rfind(" ")
    if j >= 0 and stack[j + 1:].isdigit():
        return stack[:j], (int(stack[j + 1:]), n)
    return stack, (n,)


def speedscope(line):
    """speedscope's importer for Brendan Gregg's format: /^(.*) (\\d+)$/ per
    line, frames split on ';'; lines that do not match are dropped."""
    m = re.match(r"^(.*) (\d+)$", line)
    return (m.group(1), (int(m.group(2)),)) if m else None


def foldtools(paths):
    for p in paths:
        diff = p.endswith(".diff.folded")
        data = open(p, "rb").read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            fail("%s: not UTF-8 (%s)" % (p, e))
        if text and not text.endswith("\n"):
            fail("%s: no newline at the end" % p)
        lines = text.split("\n")[:-1]
        if not lines:
            fail("%s: empty" % p)
        prev = None
        for n, line in enumerate(lines, 1):
            a, b = flamegraph_pl(line), inferno(line)
            if a is None or b is None:
                fail("%s:%d: flamegraph.pl or inferno would ignore %r" % (p, n, line[:120]))
            if a[0] != b[0] or [float(x) for x in b[1]] != list(a[1]):
                fail("%s:%d: flamegraph.pl reads %r, inferno %r" % (p, n, a, b))
            want = 2 if diff else 1
            if len(a[1]) != want:
                fail("%s:%d: %d count column(s), expected %d" % (p, n, len(a[1]), want))
            if not diff:
                c = speedscope(line)
                if c is None or c[0] != a[0] or c[1][0] != a[1][0]:
                    fail("%s:%d: speedscope reads %r, flamegraph.pl %r" % (p, n, c, a))
                if a[1][0] <= 0:
                    fail("%s:%d: count must be positive" % (p, n))
            frames = a[0].split(";")
            if any(f == "" or f != f.strip() for f in frames):
                fail("%s:%d: empty or padded frame" % (p, n))
            # _[i] is waitprof's mark of an inlined function; the others
            # would make flamegraph.pl colour a frame as kernel, JIT or waker.
            if any(re.search(r"_\[[kwj]\]$", f) for f in frames):
                fail("%s:%d: a frame ends in a flamegraph.pl annotation" % (p, n))
            if not diff and frames[0] not in STATES:
                fail("%s:%d: first frame %r is not an MPI state" % (p, n, frames[0]))
            if prev is not None and a[0] <= prev:
                fail("%s:%d: not sorted or a stack twice (inferno merges only adjacent stacks)" % (p, n))
            prev = a[0]
        print("foldtools: %s: %d lines read alike by flamegraph.pl, inferno%s"
              % (p, len(lines), "" if diff else " and speedscope"))


# --- PNG ----------------------------------------------------------------------

def png_pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s: not a PNG" % path)
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype not in (2, 6) or interlace:
                fail("%s: unsupported PNG (depth %d, colour type %d, interlace %d)" % (path, depth, ctype, interlace))
            bpp = 3 if ctype == 2 else 4
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    out, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(tuple(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return w, h, out


def png(path):
    w, h, px = png_pixels(path)
    colours = {}
    for p in px:
        colours[p] = colours.get(p, 0) + 1
    if len(colours) < 10:
        fail("%s: %d distinct colours: blank or nearly so" % (path, len(colours)))

    def near(rgb, tol=10):
        return sum(n for c, n in colours.items() if all(abs(c[i] - rgb[i]) <= tol for i in range(3)))
    # The state frames' colours (report/svg.c): each must cover more than the
    # 14x14 legend swatch, i.e. frames of that state were drawn.  In the run
    # (t_report_svg.sh) the waiting ranks wait in every MPI_Allreduce; the
    # estimator classifies those waits MPI-Stall on an MPI without a stall
    # source too, against the global minimum.
    for name, rgb, least in (("MPI-Stall red", (230, 80, 70), 400), ("Not-in-MPI green", (90, 190, 90), 400),
                             ("MPI-Work blue", (90, 150, 230), 150)):
        n = near(rgb)
        if n < least:
            fail("%s: %d pixels of %s %s, expected at least %d" % (path, n, name, rgb, least))
        print("png: %s: %d pixels" % (name, n))
    print("png: %s: %dx%d, %d colours" % (path, w, h, len(colours)))


def png_stall(path):
    """A flame graph of MPI-Stall samples only: the state frame spans the
    width (1180 x 15 pixels), no Not-in-MPI or MPI-Work frame."""
    w, h, px = png_pixels(path)
    near = lambda rgb: sum(1 for p in px if all(abs(p[i] - rgb[i]) <= 10 for i in range(3)))
    red, green, blue = near((230, 80, 70)), near((90, 190, 90)), near((90, 150, 230))
    if red < 10000:
        fail("%s: %d pixels of MPI-Stall red, expected at least 10000" % (path, red))
    # The legend's swatches (14x14) are drawn whatever the data.
    if green > 196 or blue > 196:
        fail("%s: Not-in-MPI or MPI-Work frames drawn (%d green, %d blue pixels)" % (path, green, blue))
    print("png-stall: %s: %d red pixels" % (path, red))


# --- the timeline (tests/mpi/timeline.c, t_timeline.sh) ------------------------------

# How far inside a phase the checked stretch starts and ends (s): the ranks
# leave the barrier a little apart, and a bin is 40 ms wide.
PHASE_MARGIN = 0.12
# Each phase's expected state, for the late rank and for the others.
PHASE_STATES = {"A": ("Not-in-MPI", "MPI-Stall"), "B": ("MPI-Stall", "Not-in-MPI")}


def timeline_truth(path):
    late, phases = None, {}
    for line in open(path):
        m = re.match(r"truth late=(\d+)", line)
        if m:
            late = int(m.group(1))
        m = re.match(r"truth phase=(\w) start=([\d.]+) end=([\d.]+)", line)
        if m:
            phases[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    if late is None or set(phases) != set(PHASE_STATES):
        fail("%s: no truth lines of tests/mpi/timeline" % path)
    return late, phases


def timeline(path, truth_path):
    """In each phase's inner stretch, the late rank's bins are mostly its
    expected state and every other rank's bins mostly theirs."""
    late, phases = timeline_truth(truth_path)
    t = json.load(open(path))["timeline"]
    if not t:
        fail("%s: no timeline" % path)
    keys = dict(zip(STATES, ("not_in_mpi", "mpi_work", "mpi_stall")))
    origin, width = t["origin_ns"] * 1e-9, t["bin_s"]
    for name, (a, b) in sorted(phases.items()):
        lo, hi = a + PHASE_MARGIN - origin, b - PHASE_MARGIN - origin
        bins = [j for j in range(t["bins"]) if j * width >= lo and (j + 1) * width <= hi]
        if len(bins) < 3:
            fail("phase %s: %d whole bins of %.3f s in %.3f-%.3f s" % (name, len(bins), width, lo, hi))
        for r in t["ranks"]:
            want = PHASE_STATES[name][0 if r["rank"] == late else 1]
            tot = sum(r[k][j] for k in keys.values() for j in bins)
            got = sum(r[keys[want]][j] for j in bins)
            share = got / tot if tot else 0
            print("timeline: phase %s, rank %d: %.0f%% %s over %d bins (%.3f s sampled)"
                  % (name, r["rank"], 100 * share, want, len(bins), tot))
            if share < 0.75:
                fail("phase %s: rank %d is %.0f%% %s, expected at least 75%%" % (name, r["rank"], 100 * share, want))
            if want == "MPI-Stall":
                paths = {t["paths"][r["stall_path"][j]] for j in bins if r["stall_path"][j] >= 0}
                fn = "MPI_Recv" if name == "B" else "MPI_Allreduce"
                if not any(p.endswith(fn) for p in paths):
                    fail("phase %s: rank %d's stall paths %s do not end in %s" % (name, r["rank"], sorted(paths), fn))


def timeline_totals(d):
    """The timeline classifies like the profile: per rank and state, its
    samples are the folded file's, within 2 + 2% (held samples are split per
    class of time to the call's end, and rounded per bin)."""
    files = sorted(glob.glob(os.path.join(d, "rank.*.timeline")))
    if not files:
        fail("%s: no rank.R.timeline" % d)
    for path in files:
        tl, rows = [0, 0, 0], False
        for line in open(path):
            if line.startswith("bin\t"):
                rows = True
            elif rows:
                f = line.rstrip("\n").split("\t")
                for k in range(3):
                    tl[k] += int(f[1 + k])
        folded = [0, 0, 0]
        for line in open(path[:-len("timeline")] + "folded"):
            stack, n = line.rsplit(" ", 1)
            folded[STATES.index(stack.split(";")[0])] += int(n)
        print("timeline-totals: %s: %s, folded %s" % (os.path.basename(path), tl, folded))
        for k in range(3):
            if abs(tl[k] - folded[k]) > 2 + 0.02 * sum(folded):
                fail("%s: %d %s samples, rank.R.folded has %d" % (path, tl[k], STATES[k], folded[k]))


def png_timeline(png_path, svg_path, truth_path):
    """The screenshot of timeline.svg: in each phase's inner stretch, the
    pixels of the late rank's row are mostly its expected state's colour
    and the other rows' theirs (colours of report/svg.c)."""
    late, phases = timeline_truth(truth_path)
    svg = open(svg_path).read()
    m = re.search(r'<g id="plot" data-x0="(\d+)" data-width="(\d+)" data-seconds="([\d.]+)" '
                  r'data-origin-ns="(\d+)"', svg)
    if not m:
        fail("%s: no plot geometry" % svg_path)
    x0, pw, seconds, origin = int(m.group(1)), int(m.group(2)), float(m.group(3)), int(m.group(4)) * 1e-9
    rows = [(int(r), int(y), int(h)) for r, y, h in
            re.findall(r'<g class="row" data-rank="(\d+)" data-y="(\d+)" data-h="(\d+)"', svg)]
    w, h, px = png_pixels(png_path)
    rgb = {"Not-in-MPI": (90, 190, 90), "MPI-Work": (90, 150, 230), "MPI-Stall": (230, 80, 70)}
    for name, (a, b) in sorted(phases.items()):
        xa = int(x0 + pw * (a + PHASE_MARGIN - origin) / seconds) + 1
        xb = int(x0 + pw * (b - PHASE_MARGIN - origin) / seconds) - 1
        if xb - xa < 10:
            fail("phase %s: only %d pixel columns" % (name, xb - xa))
        for rank, y, rh in rows:
            want = PHASE_STATES[name][0 if rank == late else 1]
            c = rgb[want]
            # A bin in which the rank took no sample is left empty (the
            # page's background): on a loaded machine a rank may not run
            # for a whole bin, and its next sample weighs the periods it
            # missed.  Shares are of the drawn pixels, at least half of all.
            n = good = drawn = 0
            for yy in range(y + 2, min(y + rh - 2, h)):
                for xx in range(xa, min(xb, w)):
                    p = px[yy * w + xx]
                    n += 1
                    if all(abs(p[i] - (251, 251, 248)[i]) <= 3 for i in range(3)):
                        continue
                    drawn += 1
                    good += all(abs(p[i] - c[i]) <= 12 for i in range(3))
            share = good / drawn if drawn else 0
            print("png-timeline: phase %s, rank %d: %.0f%% of %d drawn pixels (of %d) %s"
                  % (name, rank, 100 * share, drawn, n, want))
            if drawn < n / 2:
                fail("phase %s: rank %d's row is mostly empty (%d of %d pixels drawn)" % (name, rank, drawn, n))
            if share < 0.75:
                fail("phase %s: rank %d's row is %.0f%% %s %s, expected at least 75%%"
                     % (name, rank, 100 * share, want, c))


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    cmd = sys.argv[1]
    if cmd == "consistency":
        consistency(sys.argv[2])
    elif cmd == "truth":
        truth(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif cmd == "csvs":
        csvs(sys.argv[2], int(sys.argv[3]))
    elif cmd == "foldtools":
        foldtools(sys.argv[2:])
    elif cmd == "png":
        png(sys.argv[2])
    elif cmd == "png-stall":
        png_stall(sys.argv[2])
    elif cmd == "timeline":
        timeline(sys.argv[2], sys.argv[3])
    elif cmd == "timeline-totals":
        timeline_totals(sys.argv[2])
    elif cmd == "png-timeline":
        png_timeline(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        fail("unknown command %s" % cmd)


if __name__ == "__main__":
    main()
