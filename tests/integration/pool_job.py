"""A text classifier that mean-pools token embeddings over a padding mask.

At step --empty-at sample 2 of the batch is all padding.  With
--mean-in model the pooling module divides by the mask's sum, 0 for
that sample: 0 / 0 = NaN in that row of MeanPool's output.  With
--mean-in loop the model pools by max, and the training loop averages a
per-token loss over the valid tokens, (loss * mask).sum() / mask.sum(),
with the whole batch padding at that step: 0 / 0 in the loop's own code.
With --mean-in where the pooling is made safe the way that still fails:
torch.where(n > 0, s / n, 0) is finite in forward, and in backward the
gradient of s / n at n = 0 is NaN for sample 2 (the where trap).
The division kept its divisor (a tensor needing no gradient), which
holds 0 (agent/birth_op.c: ZERO_DIVISOR).  With --mean-in whiten the
model max-pools, then standardises the pooled vectors over the batch
(BatchWhiten: (p - mean) / std along dim 0), and the batch at step
--empty-at holds one sample: its std divides by n - 1 = 0, NaN.
"""
import argparse

import torch
import torch.nn as nn


class MeanPool(nn.Module):
    def forward(self, x, mask):
        m = mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(1) / m.sum(1)   # no clamp(min=1): the bug


class SafeMeanPool(nn.Module):
    def forward(self, x, mask):
        m = mask.unsqueeze(-1).to(x.dtype)
        n = m.sum(1)
        return torch.where(n > 0, (x * m).sum(1) / n, torch.zeros(()))


class BatchWhiten(nn.Module):
    def forward(self, p):
        return (p - p.mean(0)) / (p.std(0) + 1e-5)   # the eps does not help: std is NaN


class Tagger(nn.Module):
    """Per-token logits, plus a pooled sentence vector (mean or max)."""
    def __init__(self, pool, whiten=False):
        super().__init__()
        self.emb = nn.Embedding(30, 8)
        self.pool = {"mean": MeanPool(), "where": SafeMeanPool()}.get(pool)
        self.whiten = BatchWhiten() if whiten else None
        self.tok = nn.Linear(8, 3)
        self.sent = nn.Linear(8, 2)

    def forward(self, t, mask):
        x = self.emb(t)
        pooled = self.pool(x, mask) if self.pool else x.max(1).values
        if self.whiten:
            pooled = self.whiten(pooled)
        return self.tok(x), self.sent(pooled)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mean-in", choices=["model", "where", "loop", "whiten"], default="model")
    ap.add_argument("--empty-at", type=int, default=4, help="-1: never")
    ap.add_argument("--steps", type=int, default=7)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = Tagger({"model": "mean", "where": "where"}.get(args.mean_in, "max"),
                   whiten=args.mean_in == "whiten")
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(args.steps):
        b = 1 if args.mean_in == "whiten" and step == args.empty_at else 4
        t = torch.randint(0, 30, (b, 5))
        mask = torch.ones(b, 5, dtype=torch.bool)
        mask[:, 3:] = False
        if step == args.empty_at:
            if args.mean_in == "loop":
                mask[:] = False
            elif args.mean_in != "whiten":
                mask[2] = False
        tok_logits, sent_logits = model(t, mask)
        y_tok, y_sent = torch.randint(0, 3, (b, 5)), torch.randint(0, 2, (b,))
        if args.mean_in != "loop":
            loss = nn.functional.cross_entropy(sent_logits, y_sent)
        else:
            per_tok = nn.functional.cross_entropy(tok_logits.reshape(-1, 3), y_tok.reshape(-1),
                                                  reduction="none").reshape(4, 5)
            m = mask.float()
            loss = (per_tok * m).sum() / m.sum() + 0.1 * nn.functional.cross_entropy(
                sent_logits, y_sent)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
