"""The Python the agent runs, as it runs it, for the checks of its
wrappers (triton_wrapper_check.py, triton_jit_check.py): the bootstrap
from its C string literal (agent/bootstrap.h), triton_jit.py as it is
embedded, and the checks' one-line verdicts.
"""
import ast
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
failed = []


def check(what, cond, detail=""):
    """Prints "ok  what" or "FAIL what: detail"; failures are kept in failed."""
    print("%s %s%s" % ("ok  " if cond else "FAIL", what, (": " + detail) if not cond else ""))
    if not cond:
        failed.append(what)


def bootstrap():
    """The bootstrap's Python, from the C string literal the agent runs."""
    src = open(os.path.join(ROOT, "agent", "bootstrap.h")).read()
    body = src[src.index("np_bootstrap_py[] =") + len("np_bootstrap_py[] ="):src.rindex(";")]
    lines = [ln.strip() for ln in body.strip().splitlines()]
    return "".join(ast.literal_eval(ln) for ln in lines if ln.startswith('"'))


def namespace(with_jit=True):
    """The bootstrap run into a fresh namespace, then (with_jit)
    triton_jit.py into the same one, as agent/control.c does."""
    ns = {}
    exec(bootstrap(), ns)
    if with_jit:
        exec(open(os.path.join(ROOT, "agent", "triton_jit.py")).read(), ns)
    return ns
