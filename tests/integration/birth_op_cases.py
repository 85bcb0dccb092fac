"""Which op inside a module the agent names for a birth (agent/birth_op.h).

Run with the agent preloaded alone:

  LD_PRELOAD=libnanprof_agent.so NANPROF_AGENT_RECORDS=FILE python3 birth_op_cases.py FILE

Each case is a module whose inputs are finite and whose output is not,
called once in a step of its own (the agent searches 4 births a step).
No backward runs: the graph is only looked at.  At the end the script
reads the agent's records from FILE and checks, for every case, the op
of the module's CHECK record and its four flags: OP_INSIDE (an op
inside the module, not the output's own), OP_READ_FINITE (all it read
was seen finite), ZERO_DIVISOR (a division whose divisor held 0, or a
std of one value: the classes with zero_divisor = True, and only those) and DEAD_ROWS (a
softmax that made NaN of whole rows: dead_rows = True, only those).
Where torch cannot tell a saved tensor behind saved-tensor hooks from a
plain one (no SavedTensor.unpack_hook: torch 1.13), the agent does not
search: every case must then name the output's own op (past views)
with no flag.  Prints PASS/FAIL per case; exit 1 on
any failure.
"""
import os
import sys

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import read_records  # noqa: E402
from agent_hooks import wait_for_agent_hooks  # noqa: E402

F_DEAD_ROWS, F_ZERO_DIVISOR, F_OP_INSIDE, F_OP_READ_FINITE = 8, 16, 64, 128
SEARCHES = hasattr(getattr(torch._C._autograd, "SavedTensor", None), "unpack_hook")


class LogBeforeLinear(nn.Module):
    """log(0) = -inf before a Linear, then a residual add.  The log saved
    its input (x * x * 0, finite): it made the value."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return x + self.fc(torch.log(x * x * 0.0))


class ExpUnseenInput(nn.Module):
    """exp overflows; what it read (x * 1e4) is saved by no node."""
    def forward(self, x):
        return x * torch.exp(x * 1e4)


class SingleOp(nn.Module):
    """One op that matters: log(x * 0), the output's own op."""
    def forward(self, x):
        return torch.log(x * 0.0)


class ThroughTranspose(nn.Module):
    """The output is a transpose of the log's: the log is named."""
    def forward(self, x):
        return torch.log(x * 0.0).t()


class LogKeptNowhere(nn.Module):
    """log(0) = -inf, summed: the log keeps only its input, the sum and
    the add nothing, so no saved tensor shows the -inf.  The log is
    computed again from its input (finite): it is named."""
    def forward(self, x):
        return x + torch.log(x * 0.0).sum(-1, keepdim=True)


class ProductKeptNowhere(nn.Module):
    """a * b overflows, summed away: the mul keeps its two factors (both
    need gradients), the sum and the add nothing.  Computed again from
    a and b, the mul is named."""
    def forward(self, x):
        a, b = x * 1e20, x * 1e20
        return x + (a * b).sum(-1, keepdim=True)


class EmptyMaskMean(nn.Module):
    """A mean over a mask with nothing in it: (x * m).sum() / m.sum(),
    m all 0.  The div makes the output; it kept its divisor (0-dim, no
    gradient), and that held 0: ZERO_DIVISOR, with neither other flag
    (its numerator was kept nowhere)."""
    zero_divisor = True

    def forward(self, x):
        m = torch.zeros_like(x)
        return (x * m).sum(-1, keepdim=True) / m.sum(-1, keepdim=True)


class SafeDivisionThenLog(nn.Module):
    """The safe division torch.where(m > 0, s / m, 0), m all 0, is
    finite; then log(0) = -inf.  The div by 0 is read by a where, which
    keeps none of it: the log is named, no division by 0 said."""
    def forward(self, x):
        m = torch.zeros(x.shape[0], 1)
        safe = torch.where(m > 0, x.sum(-1, keepdim=True) / m, torch.zeros(()))
        return safe + torch.log(x * 0.0)


class ScoresOverflow(nn.Module):
    """Attention scores q @ k^T that overflow (float32 past 3.4e38 here,
    as float16's past 65504), then a softmax makes NaN of the +inf.  The
    softmax keeps its result, the bmm only its factors: computed again
    from q and k (finite), the bmm is named, not the softmax."""
    def forward(self, x):
        q = (x * 1e20).unsqueeze(0)
        scores = q @ q.transpose(-1, -2)
        return torch.softmax(scores, -1) @ x.unsqueeze(0)


class ScoresTooLarge(ScoresOverflow):
    """The same with q [1024, 64]: a bmm of 67 M multiply-adds is past
    what the agent computes again (_REDO_COST, 16 M): the softmax, the
    first op seen non-finite, is named, not all it read seen; its rows
    that held +inf are NaN whole (DEAD_ROWS)."""
    dead_rows = True

    def forward(self, x):
        return super().forward(x.repeat(256, 8))


class ConstDivisor(nn.Module):
    """x / 0 with the zeros a buffer (no gradient): div saved them, and
    they hold 0 (ZERO_DIVISOR)."""
    zero_divisor = True

    def __init__(self):
        super().__init__()
        self.register_buffer("zeros", torch.zeros(8))

    def forward(self, x):
        return x / self.zeros


class HugeWeight(nn.Module):
    """A Linear whose weights are +-3e38: addmm overflows; it read x, the
    weight (saved) and the bias (a parameter), all finite."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        with torch.no_grad():
            self.fc.weight.copy_(torch.where(self.fc.weight >= 0, 3e38, -3e38))

    def forward(self, x):
        return self.fc(x * 100.0)


class ModifiedInPlace(nn.Module):
    """The exp's result, saved twice, is then changed in place: reading
    it raises in torch; the agent must carry on."""
    def forward(self, x):
        h = torch.exp(x * 1e4)
        out = x * h
        h.mul_(1.0)
        return out


class SliceWrite(nn.Module):
    """log(0) written into a slice of a copy: the output's node is
    CopySlices, in torch's namespace (named by its class); the log kept
    its input, and computed again from it, it is named."""
    def forward(self, x):
        y = x.clone()
        y[:, 0] = torch.log(x[:, 1] * 0.0)
        return y


class Checkpointed(nn.Module):
    """LogBeforeLinear under checkpointing by saved-tensor hooks: reading
    a saved tensor there would recompute the block (counted in runs)."""
    def __init__(self):
        super().__init__()
        self.inner = LogBeforeLinear()
        self.runs = 0

    def body(self, x):
        self.runs += 1
        return self.inner(x)

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False)


class StdOfOne(nn.Module):
    """Features whitened over a batch of one sample: h.std(0) of one value
    divides by n - 1 = 0 (Bessel's correction), NaN, kept as the std's
    result; the div after it reads that NaN.  The std is named, as a
    division by 0 (ZERO_DIVISOR)."""
    zero_divisor = True

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x[:1])
        return (h - h.mean(0)) / h.std(0)


class StdThenLog(nn.Module):
    """A std over the batch's 4 samples (finite), then a log of 0: the log,
    and no division by 0 (the std had values enough)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        s = self.lin(x).std(0)
        return torch.log(s - s) + 1


class LoopedCell(nn.Module):
    """A GRUCell run over 12 time steps in the module's own loop, with
    0 / 0 between steps 7 and 8: the div is named, four cells (some 80
    nodes) before the output, not a tanh inside a later cell, which
    only received the NaN."""
    zero_divisor = True   # h - h

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(8, 16)
        self.out = nn.Linear(16, 8)

    def forward(self, x):
        h = torch.zeros(x.shape[0], 16)
        for t in range(12):
            h = self.cell(x * (t + 1) / 12, h)
            if t == 7:
                h = h / (h - h)
        return self.out(h)


# case: (module, op it is named by, OP_INSIDE, OP_READ_FINITE) where the
# agent searches; (op without the search) where it cannot
CASES = [
    ("log before a Linear", LogBeforeLinear(), ("LogBackward0", True, True), "AddBackward0"),
    ("exp of an input saved nowhere", ExpUnseenInput(), ("ExpBackward0", True, False),
     "MulBackward0"),
    ("the output's own op", SingleOp(), ("LogBackward0", False, True), "LogBackward0"),
    ("past a transpose", ThroughTranspose(), ("LogBackward0", False, True), "LogBackward0"),
    ("log's output kept nowhere: computed again", LogKeptNowhere(),
     ("LogBackward0", True, True), "AddBackward0"),
    ("a product kept nowhere: the mul computed again", ProductKeptNowhere(),
     ("MulBackward0", True, True), "AddBackward0"),
    ("attention scores overflow: the bmm computed again", ScoresOverflow(),
     ("BmmBackward0", True, True), "BmmBackward0"),
    ("attention scores overflow, too large to compute again", ScoresTooLarge(),
     ("SoftmaxBackward0", True, False), "BmmBackward0"),
    ("a mean over an empty mask: the div, its divisor 0", EmptyMaskMean(),
     ("DivBackward0", False, False), "DivBackward0"),
    ("a safe division by 0 (where), then a log: the log", SafeDivisionThenLog(),
     ("LogBackward0", True, True), "AddBackward0"),
    ("a constant divisor, saved", ConstDivisor(), ("DivBackward0", False, True), "DivBackward0"),
    ("a Linear's weights and bias", HugeWeight(), ("AddmmBackward0", False, True),
     "AddmmBackward0"),
    ("saved tensors changed in place", ModifiedInPlace(), ("MulBackward0", False, False),
     "MulBackward0"),
    ("an in-place write into a slice", SliceWrite(), ("LogBackward0", True, True), "CopySlices"),
    ("checkpointed: nothing unpacked, nothing recomputed", Checkpointed(),
     ("AddBackward0", False, False), "AddBackward0"),
    ("the std of one sample: n - 1 = 0", StdOfOne(), ("StdBackward0", True, True),
     "DivBackward0"),
    ("a std over 4 samples, then a log of 0: the log", StdThenLog(),
     ("LogBackward0", True, True), "AddBackward0"),
    ("0 / 0 in a loop of 12 GRUCell steps", LoopedCell(), ("DivBackward0", True, True),
     "AddmmBackward0"),
]


def main():
    rec_path = sys.argv[1]
    torch.manual_seed(0)
    torch.set_num_threads(1)
    if not wait_for_agent_hooks():
        print("FAIL: the agent's forward hook never appeared")
        return 1
    dummy = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([dummy], lr=0.1)
    for _, mod, _, _ in CASES:
        x = torch.randn(4, 8, requires_grad=True)
        with torch.no_grad():
            x[x == 0] = 1.0
        out = mod(x)
        assert not torch.isfinite(out).all(), "the case must make a non-finite value"
        opt.step()   # a step each: the agent's per-step bounds start again
    recs = read_records.read(rec_path)
    outputs = {}
    for r in recs:
        if r["kind"] == "check" and r["role"] == "output":
            outputs.setdefault(r["module"], []).append(r)
    failed = 0
    for name, mod, searched, plain in CASES:
        got = outputs.get(id(mod), [])
        if not got:
            print("FAIL %s: no output record for the module" % name)
            failed += 1
            continue
        r = got[0]
        seen = (r["what"], bool(r["flags"] & F_OP_INSIDE), bool(r["flags"] & F_OP_READ_FINITE),
                bool(r["flags"] & F_ZERO_DIVISOR), bool(r["flags"] & F_DEAD_ROWS))
        want = (searched + (getattr(mod, "zero_divisor", False), getattr(mod, "dead_rows", False))
                if SEARCHES else (plain, False, False, False, False))
        ok = seen == want and r["flags"] & 1 == 0   # and born here: finite inputs
        detail = "got %s, want %s (flags %d)" % (seen, want, r["flags"])
        if isinstance(mod, Checkpointed):
            # the block ran once (no recompute), and its inner module,
            # born first, was named by its output's op too
            inner = outputs.get(id(mod.inner), [])
            iseen = inner and (inner[0]["what"], inner[0]["flags"])
            ok = ok and mod.runs == 1 and iseen == ("AddBackward0", 0)
            detail += "; block ran %d time(s); inner module: %s" % (mod.runs, iseen)
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))
        failed += not ok
    print("searches %s: %d case(s) failed" % ("on" if SEARCHES else "off (torch %s)" %
                                              torch.__version__, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
