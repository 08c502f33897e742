#!/usr/bin/env python3
"""doc/report.md and doc/example/ from the example run's per-rank files.

  gen_report_doc.py WAITPROF DOCDIR           rewrite the generated parts
  gen_report_doc.py --check WAITPROF DOCDIR   exit 1 naming each stale part

WAITPROF is a build's bin/waitprof; DOCDIR the source tree's doc/.
DOCDIR/example/run holds the rank.R.* files of one run of the bundled
example (`make doc-example` makes a new run and then calls this script).
`waitprof report` turns them into the outputs the page shows, so the page
follows the report's code: when the report changes, --check (the test
tests/mpi/t_doc_report.sh) fails until the page is regenerated.

Generated are the files doc/example/stencil-screen.txt (the first screen),
stencil-report.txt (report.txt), stencil.svg (all.svg) and
stencil-timeline.svg (timeline.svg, when the report writes one); in
report.md, the text between "<!-- generated: NAME -->" and
"<!-- end NAME -->" (a file, indented as a code block), and each figure
between "<!-- v:KEY -->" and "<!-- /v -->" (VALUES below, from report.json;
those in CODE in backticks).
Everything else in report.md is written by hand and must not quote the
run's numbers.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# The report's outputs and the names the page shows them under.
FILES = (
    ("screen", "stencil-screen.txt"),
    ("report.txt", "stencil-report.txt"),
    ("all.svg", "stencil.svg"),
    ("timeline.svg", "stencil-timeline.svg"),
)


def leaf(path):
    return path.split(";")[-1]


def state(j, name):
    return next(s for s in j["states"] if s["state"] == name)


def top_path(j):
    return j["top_stall_paths"][0]


def pct(x):
    return "%.1f%%" % (100.0 * x)


# Figures the hand-written text refers to, each computed from report.json.
VALUES = {
    "mpi": lambda j: j["run"]["mpi"].split(",")[0],
    "ranks": lambda j: str(j["run"]["ranks"]),
    "duration": lambda j: "%.3f s" % j["run"]["duration_s"],
    "samples": lambda j: str(j["run"]["samples"]),
    "stall_max_rank": lambda j: str(state(j, "MPI-Stall")["max_rank"]),
    "stall_max": lambda j: pct(state(j, "MPI-Stall")["max"]),
    "stall_min_rank": lambda j: str(state(j, "MPI-Stall")["min_rank"]),
    "stall_min": lambda j: pct(state(j, "MPI-Stall")["min"]),
    "stall_s_per_rank": lambda j: "%.3f s" % state(j, "MPI-Stall")["seconds_per_rank"],
    "cause_rank": lambda j: str(j["causes"][0]["rank"]),
    "cause_fn": lambda j: leaf(j["causes"][0]["path"]),
    "cause_short": lambda j: "%.3f s" % j["causes"][0]["short_term_s"],
    "cause_long": lambda j: "%.3f s" % j["causes"][0]["long_term_s"],
    "top_path": lambda j: top_path(j)["path"],
    "top_all": lambda j: str(top_path(j)["stall"] + top_path(j)["work"] + top_path(j)["not_in_mpi"]),
    "top_stall": lambda j: str(top_path(j)["stall"]),
    "top_work": lambda j: str(top_path(j)["work"]),
    "top_stall_in": lambda j: pct(top_path(j)["stall"] /
                                  max(1, top_path(j)["stall"] + top_path(j)["work"] + top_path(j)["not_in_mpi"])),
    "ws_site": lambda j: j["wait_states"][0]["site"],
    "ws_fn": lambda j: j["wait_states"][0]["function"],
    "ws_wait": lambda j: "%.3f s" % j["wait_states"][0]["wait_s"],
    "ws_calls": lambda j: str(j["wait_states"][0]["calls"]),
    "ws_max": lambda j: "%.3f s" % j["wait_states"][0]["wait_max_s"],
    "ws_max_rank": lambda j: str(j["wait_states"][0]["wait_max_rank"]),
}


# Values shown as code: the page puts no backticks around their markers,
# which a code span would show as text.
CODE = {"cause_fn", "top_path", "ws_site"}


def report(waitprof, example, tmp):
    """Run `waitprof report` on example/run into tmp; the first screen."""
    # Run from example/ with a relative directory, so that the outputs name
    # "run" and not the checkout's path.
    p = subprocess.run([waitprof, "report", "--out", tmp, "run"], cwd=example, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        sys.exit("gen_report_doc: waitprof report failed (%d): %s" % (p.returncode, p.stderr.strip()))
    return p.stdout


def indent(text):
    return "".join(("    " + l if l.strip() else "") + "\n" for l in text.splitlines())


def page(md, outputs, j):
    """report.md with its generated parts filled from outputs and j."""
    def block(m):
        name = m.group(1)
        if name not in outputs:
            sys.exit("gen_report_doc: report.md asks for %r, which is not generated" % name)
        return "<!-- generated: %s -->\n\n%s\n<!-- end %s -->" % (name, indent(outputs[name]), name)

    def value(m):
        key = m.group(1)
        if key not in VALUES:
            sys.exit("gen_report_doc: report.md asks for the value %r, which is not defined here" % key)
        v = VALUES[key](j)
        return "<!-- v:%s -->%s<!-- /v -->" % (key, "`%s`" % v if key in CODE else v)

    md = re.sub(r"<!-- generated: ([\w.-]+) -->.*?<!-- end \1 -->", block, md, flags=re.S)
    return re.sub(r"<!-- v:(\w+) -->.*?<!-- /v -->", value, md, flags=re.S)


def main():
    args = sys.argv[1:]
    check = bool(args) and args[0] == "--check"
    if check:
        args = args[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    waitprof, doc = os.path.abspath(args[0]), args[1]
    example = os.path.join(doc, "example")
    tmp = tempfile.mkdtemp(prefix="wp-doc.")
    try:
        screen = report(waitprof, example, tmp)
        j = json.load(open(os.path.join(tmp, "report.json")))
        outputs = {"screen": screen}
        for src, _ in FILES[1:]:
            if os.path.exists(os.path.join(tmp, src)):
                outputs[src] = open(os.path.join(tmp, src)).read()
        md_path = os.path.join(doc, "report.md")
        md = open(md_path).read()
        new = {os.path.join(example, name): outputs[src] for src, name in FILES if src in outputs}
        new[md_path] = page(md, {n: outputs[s] for s, n in FILES if s in outputs}, j)
        stale = [p for p, text in sorted(new.items())
                 if not os.path.exists(p) or open(p).read() != text]
        if check:
            for p in stale:
                print("gen_report_doc: %s is stale: the report of doc/example/run differs from it; "
                      "run `make doc-example` (a new run) or `%s %s %s` (the same run)"
                      % (p, sys.argv[0], waitprof, doc), file=sys.stderr)
            sys.exit(1 if stale else 0)
        for p in stale:
            with open(p, "w") as f:
                f.write(new[p])
            print("gen_report_doc: wrote %s" % p)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
