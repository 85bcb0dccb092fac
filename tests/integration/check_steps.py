"""Checks the step records of one events.jsonl against the job's own
numbers (faults.py --print-grad-norm):

  check_steps.py EVENTS JOB_OUTPUT [--optimizer-calls N]

For every step the job printed: its step record is complete, has a
forward, a backward and an optimizer part that follow each other (their
sum is within the step's duration), a largest module output above 0,
and the gradient norm the job computed over all .grad (relative error
under 1e-6).  Every module call is in the forward phase.  With
--optimizer-calls N, every such step holds N optimizer.step() calls (a job
that steps two optimizers back to back has one step an iteration), and
there are no more steps than the job printed.  Prints what it compared,
exits 1 on any mismatch.
"""
import json
import re
import sys


def main():
    events, job = sys.argv[1], sys.argv[2]
    calls = int(sys.argv[4]) if sys.argv[3:4] == ["--optimizer-calls"] else None
    norms = {}
    for line in open(job):
        m = re.match(r"step (\d+) grad_norm (\S+)$", line.strip())
        if m:
            norms[int(m.group(1))] = float(m.group(2))
    ev = [json.loads(line) for line in open(events)]
    steps = {e["step"]: e for e in ev if e["type"] == "step"}
    errors = []
    if not norms:
        errors.append("the job printed no gradient norm")
    for k, want in sorted(norms.items()):
        s = steps.get(k)
        if s is None:
            errors.append("step %d: no step record" % k)
            continue
        print("step %d: forward %.3f backward %.3f optimizer %.3f of %.3f ms, "
              "max |x| %s, grad_norm %r (job %r)" % (
                  k, s["forward_ms"], s["backward_ms"], s["optimizer_ms"], s["dur_ms"],
                  s["output_max_abs"], s["grad_norm"], want))
        if not s["complete"]:
            errors.append("step %d incomplete" % k)
        if not (s["forward_ms"] > 0 and s["backward_ms"] > 0 and s["optimizer_ms"] > 0):
            errors.append("step %d: a phase is missing: %s" % (k, s))
        if s["forward_ms"] + s["backward_ms"] + s["optimizer_ms"] > s["dur_ms"] * 1.0001:
            errors.append("step %d: the phases overlap: %s" % (k, s))
        if not (s["output_max_abs"] or 0) > 0:
            errors.append("step %d: no output statistics: %s" % (k, s))
        if calls is not None and s["optimizer_calls"] != calls:
            errors.append("step %d: %s optimizer calls, want %d" % (k, s["optimizer_calls"], calls))
        got = s["grad_norm"]
        if got is None or abs(got - want) > 1e-6 * want:
            errors.append("step %d: grad_norm %r, the job's %r" % (k, got, want))
    if calls is not None and norms and max(steps) > max(norms):
        errors.append("steps up to %d, the job ran %d" % (max(steps), max(norms) + 1))
    phases = {e["phase"] for e in ev if e["type"] == "module"}
    if phases != {"forward"}:
        errors.append("module calls in phases %s, want forward only" % sorted(phases))
    for e in errors:
        print("ERROR:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
