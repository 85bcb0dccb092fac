#!/usr/bin/env python3
"""Overhead benchmark runner: nanprof against plain training and the usual
in-process alternatives.

For each model (mlp, cnn, transformer: see bench/workloads.py) and each
configuration in --configs, run the workload --rounds times, interleaved so
that slow drift of the machine hits every configuration alike:

    round 1: mlp baseline, mlp nanprof, ..., cnn baseline, cnn nanprof, ...
    round 2: ...

Configurations:

  baseline  PYTHON bench/workloads.py ...
  nanprof   NANPROF run -o TMPDIR -- PYTHON bench/workloads.py ...
            (its exit status must be 0, and its agent must have checked
            tensors: every module output, every gradient, every update)
  tracer    NANPROF run --no-checks ...: the BPF tracer alone
  anomaly   PYTHON bench/workloads.py ... --anomaly
  hooks     PYTHON bench/workloads.py ... --hooks

Each run reports its own median and p90 step time; for every (model, config)
the table shows the median over rounds of those medians (and of the p90s),
and the ratio of that median to the baseline's.  The command line, the
python / torch versions and the BLAS each python's torch uses are printed
above the table, so a result records what it was measured with.  With
several --python values (comma-separated) each gets its own table.

Example:

    python3 bench/bench_tracer.py --configs baseline,anomaly,hooks --steps 100 --rounds 3
"""

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(BENCH_DIR)
WORKLOAD = os.path.join(BENCH_DIR, "workloads.py")

MODELS = ("mlp", "cnn", "transformer")
CONFIGS = ("baseline", "nanprof", "tracer", "anomaly", "hooks")

PROBE = r"""
import json, platform, sys
sys.path.insert(0, sys.argv[1])
import torch
import workloads
a = torch.randn(256, 256)
(a @ a).sum().item()            # make sure the BLAS library is loaded
print(json.dumps({"python": sys.executable, "python_version": platform.python_version(),
                  "torch": torch.__version__, "threads": torch.get_num_threads(),
                  "blas": workloads.blas_info()}))
"""


class BenchError(Exception):
    pass


def csv_list(text, allowed, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError("empty %s list" % what)
    for t in items:
        if allowed is not None and t not in allowed:
            raise argparse.ArgumentTypeError("unknown %s %r (choose from %s)"
                                             % (what, t, ", ".join(allowed)))
    return items


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--configs", default="baseline,nanprof",
                   type=lambda s: csv_list(s, CONFIGS, "config"),
                   help="comma-separated, from %s (default baseline,nanprof)" % ",".join(CONFIGS))
    p.add_argument("--models", default=",".join(MODELS),
                   type=lambda s: csv_list(s, MODELS, "model"),
                   help="comma-separated (default %s)" % ",".join(MODELS))
    p.add_argument("--rounds", type=int, default=5, help="rounds per configuration (default 5)")
    p.add_argument("--steps", type=int, default=300, help="timed steps per run (default 300)")
    p.add_argument("--warmup", type=int, default=50, help="warm-up steps per run (default 50)")
    p.add_argument("--python", default=sys.executable,
                   type=lambda s: csv_list(s, None, "python"),
                   help="interpreter(s) to run the workloads with, comma-separated "
                        "(default: this one, %s)" % sys.executable)
    p.add_argument("--nanprof", default=os.path.join(REPO_ROOT, "nanprof"), metavar="PATH",
                   help="the nanprof binary (default: ./nanprof in the repo root)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads in the workload (default 1; 0: torch's choice)")
    p.add_argument("--out", metavar="PATH", help="also write the results as JSON here")
    p.add_argument("--keep", action="store_true",
                   help="keep the temporary directory (per-run JSON, nanprof output)")
    args = p.parse_args(argv)
    if isinstance(args.python, str):           # the default is not run through type=
        args.python = [args.python]
    if args.rounds < 1 or args.steps < 1 or args.warmup < 0:
        p.error("--rounds and --steps must be >= 1, --warmup >= 0")
    return args


def probe_python(args, python):
    try:
        env = dict(os.environ)
        env.update(thread_env(args))
        proc = subprocess.run([python, "-c", PROBE, BENCH_DIR], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=300,
                              env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError("cannot run %s: %s" % (python, e))
    if proc.returncode != 0:
        raise BenchError("%s cannot import torch / workloads (exit %d):\n%s"
                         % (python, proc.returncode, proc.stderr[-2000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


def thread_env(args):
    """With --threads N, hold every BLAS/OpenMP pool to N threads too: Debian's
    torch calls OpenBLAS (pthread build), whose pool torch.set_num_threads
    does not size."""
    if args.threads <= 0:
        return {}
    n = str(args.threads)
    return {"OMP_NUM_THREADS": n, "OPENBLAS_NUM_THREADS": n, "MKL_NUM_THREADS": n}


def workload_cmd(args, python, model, config, out_json):
    cmd = [python, WORKLOAD, "--model", model, "--steps", str(args.steps),
           "--warmup", str(args.warmup), "--out", out_json]
    if args.threads > 0:
        cmd += ["--threads", str(args.threads)]
    if config == "anomaly":
        cmd.append("--anomaly")
    elif config == "hooks":
        cmd.append("--hooks")
    return cmd


def run_one(args, pyidx, python, model, config, rnd, tmpdir):
    tag = "py%d-%s-%s-r%d" % (pyidx, model, config, rnd)
    out_json = os.path.join(tmpdir, tag + ".json")
    cmd = workload_cmd(args, python, model, config, out_json)
    outdir = None
    if config in ("nanprof", "tracer"):
        outdir = os.path.join(tmpdir, tag + ".nanprof")
        os.makedirs(outdir)
        extra = ["--no-checks"] if config == "tracer" else []
        cmd = [args.nanprof, "run", "-o", outdir] + extra + ["--"] + cmd
    log = os.path.join(tmpdir, tag + ".log")
    env = dict(os.environ)
    env.update(thread_env(args))
    with open(log, "w") as logf:
        try:
            rc = subprocess.call(cmd, stdout=logf, stderr=subprocess.STDOUT, cwd=REPO_ROOT,
                                 env=env)
        except OSError as e:
            raise BenchError("cannot run %s: %s" % (cmd[0], e))
    if rc != 0:
        with open(log) as f:
            tail = f.read()[-3000:]
        what = "nanprof run" if outdir else "workload"
        raise BenchError("%s exited %d: %s\n--- output (tail) ---\n%s"
                         % (what, rc, " ".join(shlex.quote(c) for c in cmd), tail))
    try:
        with open(out_json) as f:
            result = json.load(f)
    except (OSError, ValueError) as e:
        raise BenchError("%s: no result from %s (%s)" % (tag, " ".join(cmd), e))
    if config == "nanprof":
        checked = checked_tensors(os.path.join(outdir, "events.jsonl"))
        if not checked:
            raise BenchError("%s: nanprof's agent checked no tensor (see %s)" % (tag, outdir))
        result["tensors_checked"] = checked
    return result


def checked_tensors(events):
    """Tensors the agent checked in one nanprof run (0 if the checks were off)."""
    n = 0
    try:
        with open(events) as f:
            for line in f:
                e = json.loads(line)
                if e.get("type") == "checks":
                    n += e.get("tensors_checked", 0)
    except (OSError, ValueError):
        return 0
    return n


def summarise(per_run, configs, models):
    """per_run[(model, config)] -> list of run results.  Returns rows."""
    rows = []
    for model in models:
        base = None
        if "baseline" in configs:
            base = statistics.median(r["median_us"] for r in per_run[(model, "baseline")])
        for config in configs:
            runs = per_run[(model, config)]
            med = statistics.median(r["median_us"] for r in runs)
            p90 = statistics.median(r["p90_us"] for r in runs)
            rows.append({
                "model": model,
                "config": config,
                "median_us": med,
                "p90_us": p90,
                "ratio": (med / base) if base else None,
                "round_medians_us": [r["median_us"] for r in runs],
                "round_p90s_us": [r["p90_us"] for r in runs],
            })
    return rows


def markdown_table(rows):
    out = ["| model | config | median step µs | p90 µs | ratio vs baseline |",
           "|---|---|---:|---:|---:|"]
    for r in rows:
        ratio = "%.3f" % r["ratio"] if r["ratio"] is not None else "-"
        out.append("| %s | %s | %.1f | %.1f | %s |"
                   % (r["model"], r["config"], r["median_us"], r["p90_us"], ratio))
    return "\n".join(out)


def main(argv=None):
    args = parse_args(argv)
    command = " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv)
    print("command: %s" % command)
    print("cwd: %s" % os.getcwd())
    print("models: %s; configs: %s; rounds: %d; warmup: %d; steps: %d; threads: %s"
          % (",".join(args.models), ",".join(args.configs), args.rounds, args.warmup,
             args.steps, args.threads if args.threads > 0 else "torch default"))
    tenv = thread_env(args)
    if tenv:
        print("workload environment: %s" % " ".join("%s=%s" % kv for kv in sorted(tenv.items())))
    sys.stdout.flush()

    if ({"nanprof", "tracer"} & set(args.configs)) and not os.access(args.nanprof, os.X_OK):
        print("error: nanprof binary %s not found or not executable (build it, or pass "
              "--nanprof PATH, or leave nanprof out of --configs)" % args.nanprof,
              file=sys.stderr)
        return 2

    report = {"command": command, "configs": args.configs, "models": args.models,
              "rounds": args.rounds, "warmup": args.warmup, "steps": args.steps,
              "threads": args.threads if args.threads > 0 else None,
              "workload_env": thread_env(args),
              "nanprof": args.nanprof if {"nanprof", "tracer"} & set(args.configs) else None,
              "pythons": []}
    tmpdir = tempfile.mkdtemp(prefix="nanprof-bench-")
    try:
        for pyidx, python in enumerate(args.python):
            info = probe_python(args, python)
            print()
            print("## python %s (Python %s, torch %s)"
                  % (info["python"], info["python_version"], info["torch"]))
            for line in info["blas"]["config"]:
                print("BLAS (torch config): %s" % line)
            mapped = info["blas"]["mapped"] or ["(none: linked statically into libtorch?)"]
            for lib in mapped:
                note = "  (numpy's own, not torch's)" if "numpy" in lib else ""
                print("BLAS (mapped library): %s%s" % (lib, note))
            sys.stdout.flush()

            per_run = {(m, c): [] for m in args.models for c in args.configs}
            for rnd in range(1, args.rounds + 1):
                for model in args.models:
                    for config in args.configs:
                        r = run_one(args, pyidx, python, model, config, rnd, tmpdir)
                        per_run[(model, config)].append(r)
                        print("  round %d/%d %-11s %-8s median %9.1f µs  p90 %9.1f µs"
                              % (rnd, args.rounds, model, config, r["median_us"], r["p90_us"]),
                              file=sys.stderr, flush=True)
            rows = summarise(per_run, args.configs, args.models)
            print()
            print(markdown_table(rows))
            sys.stdout.flush()
            report["pythons"].append({"python": info["python"],
                                      "python_version": info["python_version"],
                                      "torch": info["torch"], "blas": info["blas"],
                                      "results": rows})
    except BenchError as e:
        print("error: %s" % e, file=sys.stderr)
        print("(per-run files kept in %s)" % tmpdir, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; per-run files in %s" % tmpdir, file=sys.stderr)
        return 130

    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        print("\nwrote %s" % args.out)
    if args.keep:
        print("per-run files kept in %s" % tmpdir)
    else:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
