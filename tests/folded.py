#!/usr/bin/env python3
"""Check folded-stack files against the rules of format/folded.h and
answer the questions the integration tests ask of them.

  folded.py check FILE...            exit 1 with a message on the first broken rule
  folded.py sum FILE [--state S] [--path REGEX] [--leaf NAME]
                                     print the total count of matching lines

The rules: one stack per line; frames root first joined by ';'; exactly one
space then a positive integer count; no empty frame; the root frame is one of
the three MPI states; no frame ends in a flamegraph.pl annotation (_[k] ...)
but _[i], waitprof's mark of an inlined function;
lines sorted and each stack once (what inferno expects).
"""
import re
import sys

STATES = ("Not-in-MPI", "MPI-Work", "MPI-Stall")
LINE = re.compile(r"^([^ ].*[^ ]) ([1-9][0-9]*)$")


def parse(path):
    out = []
    with open(path, encoding="utf-8", errors="strict") as f:
        for n, line in enumerate(f, 1):
            if not line.endswith("\n"):
                raise ValueError("%s:%d: no newline at the end" % (path, n))
            line = line[:-1]
            m = LINE.match(line)
            if not m:
                raise ValueError("%s:%d: not 'frames count': %r" % (path, n, line[:200]))
            frames = m.group(1).split(";")
            for fr in frames:
                if fr == "" or fr != fr.strip():
                    raise ValueError("%s:%d: empty or padded frame in %r" % (path, n, line[:200]))
                if re.search(r"_\[[a-hj-z]\]$", fr):
                    raise ValueError("%s:%d: frame ends in an annotation: %r" % (path, n, fr))
            if frames[0] not in STATES:
                raise ValueError("%s:%d: root frame %r is not an MPI state" % (path, n, frames[0]))
            out.append((m.group(1), frames, int(m.group(2))))
    stacks = [s for s, _, _ in out]
    if stacks != sorted(stacks):
        raise ValueError("%s: lines are not sorted" % path)
    if len(set(stacks)) != len(stacks):
        raise ValueError("%s: a stack appears twice" % path)
    return out


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == "check":
        for p in args:
            try:
                parse(p)
            except (ValueError, UnicodeDecodeError) as e:
                sys.exit("folded.py: %s" % e)
        return
    if cmd == "sum":
        path, state, regex, leaf = args[0], None, None, None
        i = 1
        while i < len(args):
            if args[i] == "--state":
                state = args[i + 1]
            elif args[i] == "--path":
                regex = re.compile(args[i + 1])
            elif args[i] == "--leaf":
                leaf = args[i + 1]
            else:
                sys.exit("folded.py: unknown option %s" % args[i])
            i += 2
        total = 0
        for stack, frames, count in parse(path):
            if state and frames[0] != state:
                continue
            if regex and not regex.search(stack):
                continue
            if leaf and frames[-1] != leaf:
                continue
            total += count
        print(total)
        return
    sys.exit("folded.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
