#!/usr/bin/env python3
"""Asserts what an events.jsonl must contain; one line per failure.

usage: check_events.py EVENTS.jsonl [--steps N] [--min-steps N]
         [--module NAME ...] [--backward-module NAME ...] [--batches N]
         [--ranks R,R] [--python X.Y] [--mode run|attach] [--every-phase]
Exit 0 when every check holds, 1 otherwise.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("events")
    ap.add_argument("--steps", type=int, help="exactly this many complete steps per process")
    ap.add_argument("--min-steps", type=int, default=1)
    ap.add_argument("--module", action="append", default=[])
    ap.add_argument("--backward-module", action="append", default=[])
    ap.add_argument("--batches", type=int)
    ap.add_argument("--ranks")
    ap.add_argument("--mode")
    ap.add_argument("--every-phase", action="store_true",
                    help="every complete step but an attach's first, partial one has a "
                         "forward, a backward and an optimizer part")
    ap.add_argument("--sessions", type=int, default=1,
                    help="session (and end) records expected: several in a merged file")
    args = ap.parse_args()

    errors = []
    recs = []
    with open(args.events) as f:
        for n, line in enumerate(f, 1):
            try:
                rec = json.loads(line)
            except ValueError as e:
                errors.append("line %d is not JSON: %s" % (n, e))
                continue
            if list(rec)[:1] != ["type"]:
                errors.append("line %d: 'type' is not the first field" % n)
            recs.append(rec)
    by = {}
    for r in recs:
        by.setdefault(r.get("type"), []).append(r)
    sess = by.get("session", [])
    if len(sess) != args.sessions:
        errors.append("expected %d session records, got %d" % (args.sessions, len(sess)))
    elif args.mode and any(x["mode"] != args.mode for x in sess):
        errors.append("mode %s, expected %s" % ([x["mode"] for x in sess], args.mode))
    if len(by.get("end", [])) != args.sessions:
        errors.append("expected %d end records" % args.sessions)
    procs = by.get("process", [])
    traced = [p for p in procs if any(s["pid"] == p["pid"] for s in by.get("step", []))]
    if not traced:
        errors.append("no process has step records")
    for p in traced:
        steps = [s for s in by["step"] if s["pid"] == p["pid"] and s["complete"]]
        nums = [s["step"] for s in steps]
        if args.steps is not None and len(steps) != args.steps:
            errors.append("pid %d: %d complete steps, expected %d" % (p["pid"], len(steps), args.steps))
        if len(steps) < args.min_steps:
            errors.append("pid %d: %d complete steps, expected >= %d" % (p["pid"], len(steps), args.min_steps))
        if nums and nums != list(range(nums[0], nums[0] + len(nums))):
            errors.append("pid %d: step numbers not consecutive: %s" % (p["pid"], nums[:20]))
        if args.mode == "run" and nums and nums[0] != 0:
            errors.append("pid %d: first step is %d, expected 0" % (p["pid"], nums[0]))
        if args.every_phase:
            bad = [s["step"] for s in steps if not s["partial"] and
                   not (s["forward_ms"] > 0 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0)]
            if bad:
                errors.append("pid %d: steps %s lack a phase" % (p["pid"], bad[:5]))
        if args.batches is not None:
            bad = [s["step"] for s in steps if s["batches"] != args.batches and not s["partial"]]
            if bad:
                errors.append("pid %d: steps %s do not have %d batches" % (p["pid"], bad[:5], args.batches))
        mods = {m["module"] for m in by.get("module", []) if m["pid"] == p["pid"]}
        for want in args.module:
            if want not in mods:
                errors.append("pid %d: module %r not found (have %s)" % (p["pid"], want, sorted(mods)[:12]))
        bmods = {m["module"] for m in by.get("module_backward", []) if m["pid"] == p["pid"]}
        for want in args.backward_module:
            if want not in bmods:
                errors.append("pid %d: backward of %r not found (have %s)" % (p["pid"], want, sorted(bmods)[:12]))
        phases = {r["phase"] for r in by.get("phase", []) if r["pid"] == p["pid"]}
        for want in ("forward", "backward", "optimizer"):
            if want not in phases:
                errors.append("pid %d: no %s phase" % (p["pid"], want))
        for m in by.get("module", []):
            if m["pid"] == p["pid"] and m["phase"] != "forward":
                errors.append("pid %d: module %r in phase %s" % (p["pid"], m["module"], m["phase"]))
                break
    if args.ranks:
        want = sorted(int(r) for r in args.ranks.split(","))
        have = sorted(p["rank"] for p in traced)
        if have != want:
            errors.append("ranks %s, expected %s" % (have, want))
    for e in errors[:20]:
        print("events error: " + e, file=sys.stderr)
    if not errors:
        print("events ok: %d records, %d processes, %d steps" % (
            len(recs), len(traced), len(by.get("step", []))))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
