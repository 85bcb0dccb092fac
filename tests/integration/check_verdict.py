"""Checks the verdict record of an events.jsonl:
check_verdict.py EVENTS ORIGIN_RANK PHASE MODULE RECEIVER_RANK:VIA_SUBSTRING...
"""
import json
import sys


def main():
    path, rank, phase, module = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    ev = [json.loads(line) for line in open(path)]
    verdicts = [e for e in ev if e["type"] == "verdict"]
    errors = []
    if len(verdicts) != 1:
        errors.append("expected one verdict, got %d" % len(verdicts))
    else:
        v = verdicts[0]
        print("verdict:", json.dumps(v))
        for k, want in (("origin_rank", rank), ("phase", phase), ("module", module),
                        ("origin_found", True)):
            if v.get(k) != want:
                errors.append("verdict %s: got %r, want %r" % (k, v.get(k), want))
        got = {r["rank"]: r["via"] for r in v["received"]}
        for spec in sys.argv[5:]:
            r, via = spec.split(":", 1)
            if via not in got.get(int(r), ""):
                errors.append("rank %s received via %r, want %r" % (r, got.get(int(r)), via))
        if len(got) != len(sys.argv[5:]):
            errors.append("receivers: got %s" % got)
    for e in errors:
        print("ERROR:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
