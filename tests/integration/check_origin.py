"""Checks what nanprof found in one events.jsonl.

  check_origin.py EVENTS --origin PHASE MODULE TENSOR [--op OP] [--step N]
                  [--param P] [--module-type CLASS] [--only-index DIM K]
                  [--op-inside yes|no] [--op-read-finite yes|no] [--divided-by-zero yes|no]
                  [--infinite-derivative yes|no] [--rows-all-masked yes|no]
                  [--ctc-no-alignment yes|no] [--outside-domain yes|no]
                  [--exp-overflow yes|no]
                  [--received-by MODULE] [--numel N] [--no-shape] [--dtype D]
                  [--grad-mode enabled|no_grad|inference_mode] [--outermost-call N]
                  [--held] [--update-cause CAUSE|none [--optimizer CLASS]
                  [--optimizer-state NAME]]
  check_origin.py EVENTS --no-origin [--no-warnings]
  check_origin.py EVENTS --warning-before-origin
Always: the process's checks were on (or detached) and checked tensors;
a CPU tensor born non-finite (finite inputs, after the attach, more than
one element) says where in it the values lie: its shape (whose product
is its numel), the first one's index and a count per dimension, each
within the shape.  --only-index DIM K: along DIM only index K holds one.
TENSOR '*' accepts any tensor.  With --cuda (tests/gpu/, scripts/gpu_check.sh):
the GPU checks were on, kernels checked count as tensors checked, and the
origin is on the GPU (its op is then the kernel's name); --graph: the
origin was found inside a replayed CUDA graph.
Prints what it found, exits 1 on any mismatch.
"""
import argparse
import json
import sys


# what made the origin's value, when the agent could tell: a field of
# nan_origin present (true) or absent, each with its option --FIELD yes|no
CAUSES = {
    "divided_by_zero": "a division by a tensor that held 0 made the origin's value",
    "infinite_derivative": "a backward origin's op has an infinite derivative at a value "
                           "it read, sqrt of 0",
    "rows_all_masked": "the origin's op is a softmax that made NaN of whole rows",
    "ctc_no_alignment": "the origin is CTC's loss born +inf: a target no alignment fits",
    "outside_domain": "the origin's op read finite values outside its domain (a square "
                      "root of a negative value, a log of 0, an acos past 1)",
    "exp_overflow": "the origin's op is an exp that overflowed its dtype",
}


def spread_errors(o):
    """Where in its tensor an origin's values lie: present for a CPU
    birth of more than one element, and consistent."""
    birth = o["device"] == "cpu" and o["inputs_finite"] and not o["before_attach"] \
        and o["numel"] > 1
    if "shape" not in o:
        return ["origin born on the CPU says nothing of where: %s" % o] if birth else []
    shape, first, along = o["shape"], o["first_at"], o["nonfinite_along"]
    numel = 1
    for n in shape:
        numel *= n
    if not (len(shape) == len(first) == len(along) and numel == o["numel"] and
            all(0 <= i < n for i, n in zip(first, shape)) and
            all(1 <= c <= n for c, n in zip(along, shape))):
        return ["origin's spread inconsistent: shape %s first_at %s nonfinite_along %s "
                "numel %d" % (shape, first, along, o["numel"])]
    return []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("events")
    ap.add_argument("--origin", nargs=3, metavar=("PHASE", "MODULE", "TENSOR"))
    ap.add_argument("--op")
    ap.add_argument("--op-kernel", metavar="SUBSTR",
                    help="CUDA: a kernel's own check named the origin (not a module-level "
                         "check after it), and its name contains SUBSTR")
    ap.add_argument("--op-inside", choices=["yes", "no"],
                    help="the origin's op is one inside its module, found in the tensors "
                         "its autograd graph saved, not the op that made the output")
    ap.add_argument("--op-read-finite", choices=["yes", "no"],
                    help="what the origin's op read was seen finite")
    for field, what in CAUSES.items():
        ap.add_argument("--" + field.replace("_", "-"), choices=["yes", "no"],
                        help="%s (%s), or it is not said to" % (what, field))
    ap.add_argument("--received-by", metavar="MODULE",
                    help="an input from outside the model: the module that first received "
                         "it, whose view of it the origin describes")
    ap.add_argument("--numel", type=int, help="the origin's tensor has N elements")
    ap.add_argument("--dtype", help="the origin's tensor's dtype (complex64: it is described "
                                    "as its real view, viewed_as_real, shape [..., 2])")
    ap.add_argument("--no-shape", action="store_true",
                    help="the origin says nothing of where in its tensor (no shape)")
    ap.add_argument("--outermost-call", type=int, metavar="N",
                    help="a forward origin was made in the step's outermost module call N")
    ap.add_argument("--held", action="store_true",
                    help="the origin is an input that stayed inside the model in forward "
                         "(held_in_forward) and surfaced in its step's backward")
    ap.add_argument("--grad-mode", choices=["enabled", "no_grad", "inference_mode"],
                    help="a forward origin's grad mode (an evaluation pass: no_grad)")
    ap.add_argument("--update-cause", choices=["zero_denominator", "learning_rate", "none"],
                    help="why the optimizer's update made the origin (a parameter) "
                         "non-finite, with its note; none: no cause given")
    ap.add_argument("--optimizer", help="with --update-cause: the optimizer's class")
    ap.add_argument("--optimizer-state", help="with --update-cause zero_denominator: the "
                                              "state it divided by (exp_avg_sq)")
    ap.add_argument("--param")
    ap.add_argument("--module-type", help="the origin module's class (OptimizedModule)")
    ap.add_argument("--step", type=int)
    ap.add_argument("--only-index", nargs=2, type=int, metavar=("DIM", "K"),
                    help="the origin's non-finite values lie at index K of DIM only")
    ap.add_argument("--outside", action="store_true", help="origin outside any module")
    ap.add_argument("--before-attach", action="store_true",
                    help="origin: a parameter or .grad already non-finite before the attach")
    ap.add_argument("--no-origin", action="store_true")
    ap.add_argument("--no-warnings", action="store_true")
    ap.add_argument("--warning-before-origin", action="store_true")
    ap.add_argument("--cuda", action="store_true", help="a CUDA job: see above")
    ap.add_argument("--graph", action="store_true", help="origin inside a CUDA graph")
    ap.add_argument("--min-scaler-skips", type=int,
                    help="a GradScaler's skipped iterations, at least (loss scaling)")
    ap.add_argument("--iteration", type=int, metavar="N",
                    help="the origin's iteration (two optimizers stepped in turn)")
    ap.add_argument("--masked-outputs", type=int, metavar="N",
                    help="the model's outputs of -inf only that nothing non-finite "
                         "followed in their step (masks): exactly N")
    a = ap.parse_args()

    ev = [json.loads(line) for line in open(a.events)]
    origins = [e for e in ev if e["type"] == "nan_origin"]
    warnings = [e for e in ev if e["type"] == "explosion_warning"]
    # processes that never imported torch (torch.compile's compile
    # workers, a launcher) have no say
    checks = [e for e in ev if e["type"] == "checks" and e["state"] != "waiting for torch"]
    # nor do DataLoader workers, which import torch and train nothing
    worked = {e["pid"] for e in ev if e["type"] in ("step", "module", "backward_node")}
    checks = [e for e in checks if e["pid"] in worked] or checks
    errors = []
    if not checks or not all(c["state"] in ("on", "detached") for c in checks):
        errors.append("checks not on: %s" % checks)
    elif not all(c["tensors_checked"] > 0 or (a.cuda and c.get("gpu_checks", 0) > 0)
                 for c in checks):
        errors.append("no tensor checked: %s" % checks)
    if a.cuda and not all(c.get("gpu_state") == "on" for c in checks):
        errors.append("GPU checks not on: %s" % ["%s (%s)" % (c.get("gpu_state"), c.get("gpu_message"))
                                                 for c in checks])
    if a.before_attach and len(origins) == 1:
        o = origins[0]
        # a parameter, (attached between forward and backward) the loss,
        # or (attached mid-forward) what a module received from modules
        # that ran before the hooks
        if not (o["before_attach"] and (o["tensor"] in ("param", "param_grad", "input") or
                                        (o["tensor"] == "output" and o["outside_modules"]))):
            errors.append("origin not reported as born before the attach: %s" % o)
    if a.origin or a.outside or a.warning_before_origin or a.before_attach:
        if len(origins) != 1:
            errors.append("expected one nan_origin, got %d" % len(origins))
    if (a.origin or a.outside) and len(origins) == 1:
        o = origins[0]
        if a.origin:
            want = {"phase": a.origin[0], "module": a.origin[1]}
            if a.origin[2] != "*":
                want["tensor"] = a.origin[2]
        else:   # --outside alone: the other options still hold
            want = {"outside_modules": True}
        if a.op:
            want["op"] = a.op
        if a.op_inside:
            want["op_inside"] = a.op_inside == "yes"
        if a.op_read_finite:
            want["op_read_finite"] = a.op_read_finite == "yes"
        for field in CAUSES:   # present and true, or absent
            if getattr(a, field):
                want[field] = True if getattr(a, field) == "yes" else None
        if a.received_by is not None:
            want["received_by"] = a.received_by
        if a.numel is not None:
            want["numel"] = a.numel
        if a.held:
            want["held_in_forward"] = True
        if a.outermost_call is not None:
            want["outermost_call"] = a.outermost_call
        if a.grad_mode:
            want["grad_mode"] = a.grad_mode
        if a.dtype:
            want["dtype"] = a.dtype
            if a.dtype.startswith("complex"):
                want["viewed_as_real"] = True
        if a.param:
            want["param"] = a.param
        if a.update_cause:
            want["update_cause"] = None if a.update_cause == "none" else a.update_cause
            if a.update_cause != "none" and not o.get("update_note"):
                errors.append("origin has an update cause but no update_note: %s" % o)
        if a.optimizer:
            want["optimizer"] = a.optimizer
        if a.optimizer_state:
            want["optimizer_state"] = a.optimizer_state
        if a.module_type:
            want["module_type"] = a.module_type
        if a.step is not None:
            want["step"] = a.step
        for k, v in want.items():
            if o.get(k) != v:
                errors.append("origin %s: got %r, want %r" % (k, o.get(k), v))
        if not (o["nan"] + o["posinf"] + o["neginf"] > 0 and 0 <= o["first_index"] < o["numel"]):
            errors.append("origin counts: %s" % o)
    for o in origins:
        errors.extend(spread_errors(o))
    if a.no_shape and len(origins) == 1 and "shape" in origins[0]:
        errors.append("origin has a shape, want none: %s" % origins[0])
    if a.iteration is not None and len(origins) == 1 and \
            origins[0].get("iteration") != a.iteration:
        errors.append("origin iteration %r, want %d" % (origins[0].get("iteration"), a.iteration))
    if a.masked_outputs is not None and sum(c.get("masked_outputs", 0)
                                            for c in checks) != a.masked_outputs:
        errors.append("masked outputs %s, want %d"
                      % ([c.get("masked_outputs") for c in checks], a.masked_outputs))
    if a.only_index and len(origins) == 1:
        d, k = a.only_index
        o = origins[0]
        along, first = o.get("nonfinite_along") or [], o.get("first_at") or []
        if not (len(along) > d and along[d] == 1 and first[d] == k):
            errors.append("origin not only at index %d of dim %d: nonfinite_along %s, "
                          "first_at %s" % (k, d, along, first))
    if a.op_kernel and len(origins) == 1:
        op = origins[0].get("op") or ""
        if a.op_kernel not in op or op.startswith("nanprof module-level check"):
            errors.append("origin op: got %r, want a kernel named *%s*" % (op, a.op_kernel))
    if (a.cuda or a.graph) and len(origins) == 1 and origins[0].get("device") != "cuda":
        errors.append("origin not on the GPU: device %s, op %s" % (origins[0].get("device"),
                                                                   origins[0].get("op")))
    if a.graph and len(origins) == 1 and not origins[0].get("cuda_graph"):
        errors.append("origin not from a CUDA graph: cuda_graph %s" % origins[0].get("cuda_graph"))
    if a.outside and len(origins) == 1 and not origins[0]["outside_modules"]:
        errors.append("origin not outside modules: %s" % origins[0])
    if a.min_scaler_skips is not None and not all(
            c.get("grad_scaler_skipped", -1) >= a.min_scaler_skips for c in checks):
        errors.append("GradScaler skips fewer than %d: %s" % (
            a.min_scaler_skips, [c.get("grad_scaler_skipped") for c in checks]))
    if a.no_origin and origins:
        errors.append("unexpected nan_origin: %s" % origins)
    if a.no_warnings and warnings:
        errors.append("unexpected explosion warnings: %s" % warnings[:3])
    if a.warning_before_origin and origins:
        first = origins[0]["step"]
        early = [w for w in warnings if w["step"] < first]
        if not early:
            errors.append("no explosion warning before step %d: %s" % (first, warnings[:3]))
    for e in origins:
        print("origin:", json.dumps(e))
    print("warnings:", len(warnings), "checks:", json.dumps(checks))
    for e in errors:
        print("ERROR:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
