#!/usr/bin/env python3
"""Validate a Chrome trace file the way Perfetto will read it.

usage: check_trace.py TRACE.json [--require-name SUBSTR ...] [--require-cat CAT ...]
       [--require-instant NAME ...] [--require-counter NAME ...]

Prints `trace ok: N events, N slices, N threads` and exits 0, or prints each
problem (at most 20) as `trace error: ...` on stderr and exits 1.
Standard library only, so it runs anywhere a test does.
"""
import argparse
import json
import sys
from collections import defaultdict

MAX_ERRORS = 20
# Timestamps are floats in microseconds; allow rounding in the last digits.
TOLERANCE_US = 0.001


def is_number(v):
    # bool is an int in Python but not a number in JSON.
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_id(v):
    return is_number(v) or isinstance(v, str)


def reject_constant(name):
    # Python accepts NaN/Infinity, JSON (and Perfetto) do not.
    raise ValueError("not JSON: " + name)


def load(path, errors):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f, parse_constant=reject_constant)
    except (OSError, ValueError) as e:
        errors.append("cannot read %s: %s" % (path, e))
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        errors.append('top level is not an object with a "traceEvents" list')
        return None
    if "displayTimeUnit" in doc:
        errors.append("displayTimeUnit is set (Perfetto wants microseconds)")
    return doc["traceEvents"]


def check_event(i, ev, errors):
    """Checks one event on its own; returns False if it is too broken to use."""
    where = "event %d" % i
    if not isinstance(ev, dict):
        errors.append("%s: not an object" % where)
        return False
    ph = ev.get("ph")
    if not isinstance(ph, str):
        errors.append("%s: no ph" % where)
        return False
    where += " (ph %s, name %s)" % (ph, json.dumps(ev.get("name")))
    if not is_id(ev.get("pid")):
        errors.append("%s: no pid" % where)
        return False
    if ph not in ("M", "C") and not is_id(ev.get("tid")):
        errors.append("%s: no tid" % where)
        return False
    if ph != "M" and not is_number(ev.get("ts")):
        errors.append("%s: ts is not a number" % where)
        return False
    if ph == "X":
        dur = ev.get("dur")
        if not is_number(dur):
            errors.append("%s: no numeric dur (Perfetto drops it)" % where)
            return False
        if dur < 0:
            errors.append("%s: negative dur %s" % (where, dur))
            return False
    elif ph in ("i", "I"):
        if ev.get("s") not in ("p", "t", "g"):
            errors.append("%s: s is %s, not p/t/g" % (where, json.dumps(ev.get("s"))))
    elif ph == "C":
        args = ev.get("args")
        if not isinstance(args, dict):
            errors.append("%s: counter without args object" % where)
        else:
            for k, v in args.items():
                if not is_number(v):
                    errors.append("%s: counter arg %s is %s, not a number"
                                  % (where, json.dumps(k), json.dumps(v)))
    elif ph == "M" and ev.get("name") in ("process_name", "thread_name"):
        args = ev.get("args")
        if not isinstance(args, dict) or not isinstance(args.get("name"), str):
            errors.append("%s: args.name is not a string" % where)
        if ev.get("name") == "thread_name" and not is_id(ev.get("tid")):
            errors.append("%s: no tid" % where)
    return True


def check_nesting(key, slices, errors):
    """Slices on one thread must nest: one that starts inside another must
    end inside it too."""
    slices.sort(key=lambda ev: (ev["ts"], -ev["dur"]))
    stack = []  # enclosing slices, innermost last
    for ev in slices:
        start, end = ev["ts"], ev["ts"] + ev["dur"]
        while stack and stack[-1]["ts"] + stack[-1]["dur"] <= start + TOLERANCE_US:
            stack.pop()
        if stack:
            top = stack[-1]
            top_end = top["ts"] + top["dur"]
            if end > top_end + TOLERANCE_US:
                errors.append(
                    "pid %r tid %r: slice %r [%r, %r] overlaps %r [%r, %r] "
                    "without nesting" % (key[0], key[1], ev.get("name"),
                                         start, end, top.get("name"),
                                         top["ts"], top_end))
                continue  # keep checking against the real parent
        stack.append(ev)


def check(path, require_names, require_cats, require_events=()):
    errors = []
    events = load(path, errors)
    if events is None:
        return errors, None
    by_thread = defaultdict(list)
    threads = set()
    names, cats, other = set(), set(), set()
    for i, ev in enumerate(events):
        if not check_event(i, ev, errors):
            continue
        ph = ev["ph"]
        if ph not in ("M", "C"):
            threads.add((ev["pid"], ev["tid"]))
        if ph == "X":
            by_thread[(ev["pid"], ev["tid"])].append(ev)
            if isinstance(ev.get("name"), str):
                names.add(ev["name"])
        elif ph in ("i", "I", "C") and isinstance(ev.get("name"), str):
            other.add((ph.lower(), ev["name"]))
        if isinstance(ev.get("cat"), str):
            # A cat may list several categories, comma-separated.
            cats.update(c.strip() for c in ev["cat"].split(","))
            cats.add(ev["cat"])
    for key, slices in by_thread.items():
        check_nesting(key, slices, errors)
    for want in require_names:
        if not any(want in n for n in names):
            errors.append("no slice name contains %r" % want)
    for want in require_cats:
        if want not in cats:
            errors.append("no event has cat %r" % want)
    for ph, want in require_events:
        if (ph, want) not in other:
            errors.append("no %s event named %r" % ("instant" if ph == "i" else "counter", want))
    nslices = sum(len(s) for s in by_thread.values())
    summary = "trace ok: %d events, %d slices, %d threads" % (
        len(events), nslices, len(threads))
    return errors, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--require-name", action="append", default=[],
                    metavar="SUBSTR", help="some X slice name contains SUBSTR")
    ap.add_argument("--require-cat", action="append", default=[],
                    metavar="CAT", help="some event has category CAT")
    ap.add_argument("--require-instant", action="append", default=[],
                    metavar="NAME", help="an instant event is named NAME")
    ap.add_argument("--require-counter", action="append", default=[],
                    metavar="NAME", help="a counter is named NAME")
    args = ap.parse_args()

    want = [("i", n) for n in args.require_instant] + [("c", n) for n in args.require_counter]
    errors, summary = check(args.trace, args.require_name, args.require_cat, want)
    if errors:
        shown = errors[:MAX_ERRORS]
        if len(errors) > MAX_ERRORS:
            shown[-1] = "%d more errors not shown" % (len(errors) - MAX_ERRORS + 1)
        for e in shown:
            print("trace error: " + e, file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
