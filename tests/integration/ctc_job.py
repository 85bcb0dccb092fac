"""A speech-style model trained with CTC: a GRU over frames, per-frame
log-probabilities, nn.CTCLoss (zero_infinity=False, the default).

At step --at sample 1's target (10 labels) is longer than its input (4
frames): no alignment fits it, its loss is +inf, and the batch's mean is
+inf.  Every input is finite: the CTCLoss module is where it is born.
"""
import argparse

import torch
import torch.nn as nn


class SpeechModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 16)
        self.out = nn.Linear(16, 6)   # 5 labels and the blank (0)
        self.ctc = nn.CTCLoss()

    def forward(self, frames, targets, input_lengths, target_lengths):
        h, _ = self.rnn(frames)
        log_probs = self.out(h).log_softmax(-1)
        return self.ctc(log_probs, targets, input_lengths, target_lengths)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--at", type=int, default=3, help="-1: never")
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    torch.manual_seed(0)
    model = SpeechModel()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    frames_n, batch = 12, 3
    for step in range(args.steps):
        frames = torch.randn(frames_n, batch, 8)
        targets = torch.randint(1, 6, (batch, 10))
        input_lengths = torch.full((batch,), frames_n)
        target_lengths = torch.full((batch,), 5)
        if step == args.at:
            input_lengths[1], target_lengths[1] = 4, 10   # cannot fit
        loss = model(frames, targets, input_lengths, target_lengths)
        opt.zero_grad()
        loss.backward()
        opt.step()
        print("step %d loss %.4f" % (step, loss.item()), flush=True)


if __name__ == "__main__":
    main()
