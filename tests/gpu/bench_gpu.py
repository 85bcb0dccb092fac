#!/usr/bin/env python3
"""What nanprof's GPU checks cost on CUDA training steps (scripts/gpu_check.sh).

  bench_gpu.py --out DIR --agent libnanprof_agent.so [--nanprof ./nanprof-static]
               [--rounds 3] [--steps 40] [--warmup 10] [--budget 170]

Configurations, each in its own process, in interleaved rounds (round r
runs every configuration once, starting at a different one each round):

  baseline      the job alone
  agent         the agent preloaded alone (NANPROF_AGENT_RECORDS): every launch checked,
                with guards (module outputs no checked launch wrote last)
  agent-ng      the same without guards (NANPROF_GPU_GUARD=0): what they cost
  agent-s16     the same, NANPROF_GPU_MODE=sample:16
  agent-mod     the same, NANPROF_GPU_MODE=modules: no CUPTI, the CUDA tensors
                the hooks see, checked at module level
  agent-calls   the same, NANPROF_GPU_MODE=sample:1000000: every launch's callback
                and decoding, nearly nothing checked: the fixed cost of CUPTI
                and the agent's launch path
  agent-empty   every launch, NANPROF_GPU_DIAG=empty-checks: every check launched
                with its grid, reading nothing: agent minus this is the checks'
                reads on the GPU, this minus agent-calls their launches
  agent-defer   every launch, NANPROF_GPU_DEFER=8: the checks of up to 8 launches
                in one list launch (cupti/defer.h); agent minus this is what
                deferring saves
  agent-hooks   NANPROF_GPU_MODE=modules and NANPROF_AGENT_SKIP=bodies: every
                Python hook installed, each returning at once, no CUPTI: what
                torch's hook machinery costs by itself on this model
  nanprof       under `nanprof run` (only with --nanprof: BPF works, as root)
  anomaly       torch.autograd.set_detect_anomaly(True)

After the table, where the every-launch agent's time goes: each part the
difference of two configurations' medians (PARTS below), in ms per step
and as a share of the baseline's step.

Each process trains two models in turn: `transformer` (4 encoder layers,
d=512, 8 heads, batch 32, sequence 128, causal mask, gradients clipped to
norm 1 as Hugging Face's Trainer does by default, AdamW: several ms a
step) and `faults` (tests/integration/faults.py's model: small and
launch-bound).  It times every step itself, with perf_counter around the
step and one torch.cuda.synchronize() at the step's end, the same in every
configuration.  The table gives the median step time per configuration
(all timed steps of all rounds), the spread of the rounds' medians and
the ratio to the baseline, and writes DIR/bench.md and DIR/bench.json.
`--models cnn` (not in the default set, to keep a round within the GPU
check's budget) trains a small CNN instead: five conv-BatchNorm-ReLU
blocks on 32x32 images, batch 64, SGD with momentum, cuDNN's
convolutions and batch norms: what deferring through cuDNN's calls
(cupti/dnn_calls.c) saves, and overhead on a workload of fewer, larger
kernels.
New rounds stop once --budget seconds would be passed (one round at least).
Exit 1 if any process failed.

  bench_gpu.py --worker CONFIG --result FILE [--models ...] [--steps N] [--warmup N]

is one process of one configuration (what the runner starts).  Python 3.8+.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIGS = ["baseline", "agent", "agent-ng", "agent-s16", "agent-mod", "agent-calls",
           "agent-empty", "agent-defer", "agent-hooks", "nanprof", "anomaly"]
AGENT_CONFIGS = ("agent", "agent-ng", "agent-s16", "agent-mod", "agent-calls", "agent-empty",
                 "agent-defer", "agent-hooks")
MODELS = ["transformer", "faults"]


# ---- the worker: one configuration, one process ----

def transformer_job(torch, dev):
    nn = torch.nn
    vocab, d, seq, batch = 1024, 512, 128, 32

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            layer = nn.TransformerEncoderLayer(d, 8, 4 * d, dropout=0.0, batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens, mask):
            return self.head(self.encoder(self.embed(tokens), mask=mask))

    torch.manual_seed(0)
    model = LM().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randint(0, vocab, (batch, seq), generator=gen).to(dev),
             torch.randint(0, vocab, (batch, seq), generator=gen).to(dev)) for _ in range(4)]
    mask = nn.Transformer.generate_square_subsequent_mask(seq).to(dev)

    def step(i):
        tokens, target = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        logits = model(tokens, mask)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), target.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return step


def faults_job(torch, dev):
    sys.path.insert(0, os.path.join(ROOT, "tests", "integration"))
    import faults
    F = torch.nn.functional
    torch.manual_seed(0)
    model = faults.Model().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randint(0, 50, (8, 12), generator=gen).to(dev),
             (0.01 * torch.randn(8, 12, 32, generator=gen)).to(dev),
             torch.randn(8, generator=gen).to(dev)) for _ in range(4)]

    def step(i):
        tokens, noise, target = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = F.mse_loss(model(tokens, noise), target)
        loss.backward()
        opt.step()
    return step


def cnn_job(torch, dev):
    nn = torch.nn

    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True)]

    torch.manual_seed(0)
    model = nn.Sequential(*block(3, 32, 1), *block(32, 64, 2), *block(64, 64, 1),
                          *block(64, 128, 2), *block(128, 128, 1), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(128, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randn(64, 3, 32, 32, generator=gen).to(dev),
             torch.randint(0, 10, (64,), generator=gen).to(dev)) for _ in range(4)]

    def step(i):
        x, y = data[i % len(data)]
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


JOBS = {"transformer": transformer_job, "faults": faults_job, "cnn": cnn_job}


def wait_gpu_status(path, limit_s=5.0):
    """Wait until the agent says whether its GPU checks are on, so that no
    timed step runs before they are: the agent turns them on from its own
    thread once the job has libcuda.  The status, or None."""
    sys.path.insert(0, HERE)
    import gpu_records
    end = time.time() + limit_s
    while time.time() < end:
        state, what = gpu_records.gpu_status(gpu_records.load(path))
        if state:
            return "%s: %s" % (state, what)
        time.sleep(0.05)
    return None


def worker(a):
    import torch
    dev = torch.device(a.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    if a.worker == "anomaly":
        torch.autograd.set_detect_anomaly(True)
    records = os.environ.get("NANPROF_AGENT_RECORDS")
    out = {"config": a.worker, "models": {}, "gpu_status": None}
    for name in a.models.split(","):
        step = JOBS[name](torch, dev)
        for i in range(a.warmup):
            step(i)
        sync()
        if records and out["gpu_status"] is None and dev.type == "cuda":
            out["gpu_status"] = wait_gpu_status(records)
            for i in range(3):
                step(i)
            sync()
        times = []
        for i in range(a.steps):
            t0 = time.perf_counter()
            step(i)
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
        out["models"][name] = times
    with open(a.result, "w") as f:
        json.dump(out, f)


# ---- the runner ----

def config_command(a, config, rnd, result):
    """(argv, env) of one configuration's process."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("NANPROF_") and k != "LD_PRELOAD"}
    env["PYTHONUNBUFFERED"] = "1"
    job = [a.python, os.path.abspath(__file__), "--worker", config, "--result", result,
           "--models", a.models, "--steps", str(a.steps), "--warmup", str(a.warmup),
           "--device", a.device]
    tag = "%s-r%d" % (config, rnd)
    if config in AGENT_CONFIGS + ("nanprof",):
        # the records file also tells the worker when the GPU checks are on
        env["NANPROF_AGENT_RECORDS"] = os.path.join(a.out, tag + ".rec")
    if config in AGENT_CONFIGS:
        env["LD_PRELOAD"] = os.path.abspath(a.agent)
    if config == "agent-ng":
        env["NANPROF_GPU_GUARD"] = "0"
    if config == "agent-s16":
        env["NANPROF_GPU_MODE"] = "sample:16"
    if config == "agent-mod":
        env["NANPROF_GPU_MODE"] = "modules"
    if config == "agent-calls":
        env["NANPROF_GPU_MODE"] = "sample:1000000"
    if config == "agent-empty":
        env["NANPROF_GPU_DIAG"] = "empty-checks"
    if config == "agent-defer":
        env["NANPROF_GPU_DEFER"] = "8"
    if config == "agent-hooks":
        env["NANPROF_GPU_MODE"] = "modules"
        env["NANPROF_AGENT_SKIP"] = "bodies"
    if config == "nanprof":
        job = [a.nanprof, "run", "-q", "-o", os.path.join(a.out, tag)] + ["--"] + job
    return job, env


def run_one(a, config, rnd):
    tag = "%s-r%d" % (config, rnd)
    result = os.path.join(a.out, tag + ".json")
    argv, env = config_command(a, config, rnd, result)
    with open(os.path.join(a.out, tag + ".log"), "w") as log:
        try:
            rc = subprocess.call(argv, env=env, stdout=log, stderr=subprocess.STDOUT,
                                 timeout=a.timeout, cwd=ROOT)
        except subprocess.TimeoutExpired:
            rc = "timeout after %d s" % a.timeout
    if rc == 0 and os.path.exists(result):
        r = json.load(open(result))
        rec = env.get("NANPROF_AGENT_RECORDS")
        if rec:
            sys.path.insert(0, HERE)
            import gpu_records
            recs = gpu_records.load(rec)
            c = gpu_records.counters(recs)
            lc = gpu_records.launch_counters(recs)
            r["gpu_checks"] = c["checked"] if c else None
            r["gpu_launches"] = gpu_records.launches(c) if c else None
            r["gpu_check_launches"] = lc["check_launches"] if lc else None
            r["gpu_guard_checks"] = lc["guard_checks"] if lc else None
            r["gpu_generic_checks"] = lc.get("generic_checks") if lc else None
            r["gpu_gemm_checks"] = lc.get("gemm_checks") if lc else None
            r["host_us_per_launch"], r["host_us_per_check"] = gpu_records.host_cost_us(recs)
            r["gpu_defer"] = gpu_records.defer_text(recs)
        return r
    return {"config": config, "error": "exit %s (see %s.log)" % (rc, tag)}


def summarize(a, configs, results):
    rows, failed = [], []
    for model in a.models.split(","):
        base = None
        for config in configs:
            runs = [r for r in results if r.get("config") == config]
            ok = [r for r in runs if "models" in r and model in r["models"]]
            failed += ["%s: %s" % (config, r["error"]) for r in runs if "error" in r]
            if not ok:
                rows.append({"model": model, "config": config, "median_ms": None})
                continue
            steps = [t for r in ok for t in r["models"][model]]
            med = statistics.median(steps)
            per_round = [statistics.median(r["models"][model]) for r in ok]
            if config == "baseline":
                base = med
            first = [r for r in ok if r.get("gpu_checks") is not None]
            rows.append({"model": model, "config": config, "median_ms": med,
                         "round_min_ms": min(per_round), "round_max_ms": max(per_round),
                         "rounds": len(ok), "steps": len(steps),
                         "ratio": med / base if base else None,
                         "gpu_status": ok[0].get("gpu_status"),
                         "gpu_checks": first[0]["gpu_checks"] if first else None,
                         "gpu_check_launches": first[0].get("gpu_check_launches") if first else None,
                         "gpu_guard_checks": first[0].get("gpu_guard_checks") if first else None,
                         "gpu_generic_checks":
                             first[0].get("gpu_generic_checks") if first else None,
                         "gpu_gemm_checks":
                             first[0].get("gpu_gemm_checks") if first else None,
                         "host_us_per_launch":
                             first[0].get("host_us_per_launch") if first else None,
                         "host_us_per_check":
                             first[0].get("host_us_per_check") if first else None})
    return rows, sorted(set(failed))


def table(rows):
    out = ["| model | config | median step (ms) | rounds' medians (ms) | x baseline | "
           "GPU checks (first run): checks, check launches, guard checks, generic checks, "
           "cuBLAS calls checked | host us in callbacks per launch, per check launch |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["median_ms"] is None:
            out.append("| %s | %s | failed | | | | |" % (r["model"], r["config"]))
            continue
        hl, hc = r.get("host_us_per_launch"), r.get("host_us_per_check")
        out.append("| %s | %s | %.2f | %.2f-%.2f (%d) | %s | %s | %s |" % (
            r["model"], r["config"], r["median_ms"], r["round_min_ms"], r["round_max_ms"],
            r["rounds"], "%.2f" % r["ratio"] if r["ratio"] else "",
            "" if r["gpu_checks"] is None else "%d, %s, %s, %s, %s (%s)" % (
                r["gpu_checks"], r.get("gpu_check_launches"), r.get("gpu_guard_checks"),
                r.get("gpu_generic_checks"), r.get("gpu_gemm_checks"), r["gpu_status"]),
            "" if hl is None else "%.2f, %s" % (hl, "-" if hc is None else "%.2f" % hc)))
    return "\n".join(out)


# Where the every-launch agent's time goes, each part the difference of
# two configurations' median step times (docs/gpu-results.md): (what,
# the configuration with it, the one without)
PARTS = [("CUPTI callbacks and decoding, nearly nothing checked", "agent-calls", "baseline"),
         ("the check launches, reading nothing", "agent-empty", "agent-calls"),
         ("the checks' reads on the GPU", "agent", "agent-empty"),
         ("the guards (module-level checks)", "agent", "agent-ng"),
         ("saved by deferring checks into lists of up to 8 launches", "agent", "agent-defer"),
         ("torch's hook machinery alone", "agent-hooks", "baseline")]


def breakdown(rows):
    """The PARTS of each model whose configurations ran, as a markdown
    table: ms per step and the share of the baseline's step."""
    med = {(r["model"], r["config"]): r["median_ms"] for r in rows if r.get("median_ms")}
    out = ["| model | part | ms per step | x baseline |", "|---|---|---|---|"]
    for model in sorted({r["model"] for r in rows}):
        base = med.get((model, "baseline"))
        for what, with_, without in PARTS:
            a, b = med.get((model, with_)), med.get((model, without))
            if a is None or b is None or not base:
                continue
            out.append("| %s | %s (%s - %s) | %+.2f | %+.2f |" % (
                model, what, with_, without, a - b, (a - b) / base))
    return "\n".join(out) if len(out) > 2 else ""


def deferred(results):
    """Why the deferred lists went out (cupti/defer.h), from each deferring
    configuration's first run that says (one process runs every model)."""
    seen, out = set(), []
    for r in results:
        if r.get("gpu_defer") and r["config"] not in seen:
            seen.add(r["config"])
            out.append("Deferred checks, %s (first run, all models): %s" %
                       (r["config"], r["gpu_defer"]))
    return "\n".join(out)


def write_tables(a, configs, results):
    rows, failed = summarize(a, configs, results)
    parts = breakdown(rows)
    with open(os.path.join(a.out, "bench.md"), "w") as f:
        f.write(table(rows) + "\n")
        if parts:
            f.write("\nWhere the time goes (differences of the medians above):\n\n" + parts +
                    "\n")
        if deferred(results):
            f.write("\n" + deferred(results) + "\n")
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump({"rows": rows, "failed": failed, "steps": a.steps, "warmup": a.warmup}, f,
                  indent=1)
    return rows, failed


def runner(a):
    os.makedirs(a.out, exist_ok=True)
    configs = [c for c in a.configs.split(",") if c != "nanprof" or a.nanprof]
    results, start, last = [], time.time(), 0.0
    for rnd in range(a.rounds):
        if rnd and time.time() - start + last > a.budget:
            print("bench: stopping after %d rounds (budget %d s)" % (rnd, a.budget))
            break
        t0 = time.time()
        order = configs[rnd % len(configs):] + configs[:rnd % len(configs)]
        for config in order:
            r = run_one(a, config, rnd)
            results.append(r)
            print("bench: round %d %-9s %s" % (rnd, config, r.get("error") or " ".join(
                "%s %.2f ms" % (m, statistics.median(t)) for m, t in r["models"].items())))
            sys.stdout.flush()
        last = time.time() - t0
        # after every round, so that a runner killed at its time limit
        # leaves the table of the rounds it finished
        rows, failed = write_tables(a, configs, results)
    text = table(rows)
    print(text)
    parts = breakdown(rows)
    if parts:
        print("\nWhere the time goes (differences of the medians above):\n" + parts)
    if deferred(results):
        print("\n" + deferred(results))
    for f in failed:
        print("bench: FAILED %s" % f)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", choices=CONFIGS)
    ap.add_argument("--result")
    ap.add_argument("--out", default="bench-gpu")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--agent", default=os.path.join(ROOT, "libnanprof_agent.so"))
    ap.add_argument("--nanprof", help="nanprof binary: adds the `nanprof run` configuration")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help="comma-separated, of: " + ", ".join(CONFIGS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--budget", type=float, default=170, help="seconds; no new round after")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per process")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                    help="cpu: only to try this script where there is no GPU")
    a = ap.parse_args()
    if a.worker:
        worker(a)
        return 0
    unknown = [c for c in a.configs.split(",") if c not in CONFIGS]
    if unknown or "baseline" not in a.configs.split(","):
        ap.error("--configs: %s" % ("unknown: " + ", ".join(unknown) if unknown
                                    else "baseline is needed for the ratios"))
    a.out = os.path.abspath(a.out)
    return runner(a)


if __name__ == "__main__":
    sys.exit(main())
