"""Median step time of the bundled example before and after its NaN.

Runs examples/train_nan.py in this process (its own arguments pass
through) and times the gaps between its "step N loss" lines: every step
from --nan-step (default 40) on computes with NaN, which is where a
checker's cost after the first NaN shows.  Compare, in one session:

    python3 bench/example_steps.py
    nanprof run -q -o /tmp/np-steps -- python3 bench/example_steps.py
"""
import builtins
import os
import runpy
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "train_nan.py")


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def main():
    sys.argv = [EXAMPLE] + sys.argv[1:]
    nan_step = 40
    if "--nan-step" in sys.argv:
        nan_step = int(sys.argv[sys.argv.index("--nan-step") + 1])
    stamps = {}
    plain_print = builtins.print

    def stamped(*args, **kw):
        text = " ".join(str(a) for a in args)
        if text.startswith("step "):
            stamps[int(text.split()[1])] = time.perf_counter()
        plain_print(*args, **kw)

    builtins.print = stamped
    try:
        runpy.run_path(EXAMPLE, run_name="__main__")
    except SystemExit:
        pass
    finally:
        builtins.print = plain_print
    ms = {k: (stamps[k] - stamps[k - 1]) * 1e3 for k in stamps if k - 1 in stamps}
    # steps 1-4 warm up; the NaN's own step is a mix
    before = [v for k, v in ms.items() if 5 <= k < nan_step]
    after = [v for k, v in ms.items() if k > nan_step]
    sys.stderr.write("example steps: median %.1f ms before the NaN (%d steps), %.1f ms after "
                     "(%d steps)\n" % (median(before), len(before), median(after), len(after)))


if __name__ == "__main__":
    main()
