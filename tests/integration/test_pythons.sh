#!/usr/bin/env bash
# The CPython offsets on every interpreter version nanprof knows, checked
# on live interpreters without torch (tests/integration/mock_torch.py
# stands in for the parts of torch the Python probes read): module calls,
# their qualified names, and optimizer steps, with both Python probes.
# Versions not installed here are skipped, visibly.
set -u
cd "$(dirname "$0")/../.."
NP=./nanprof
T=$(mktemp -d /tmp/nanprof-py.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0 skip=0
ok()  { pass=$((pass + 1)); echo "PASS $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -n 15; }
skp() { skip=$((skip + 1)); echo "SKIP $1: $2"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP all: need root for bpf"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

want_modules=(--module "" --module inp --module layers.0 --module layers.0.fc
	      --module layers.1.norm --module head)
for minor in 10 11 12 13; do
	PY=$(ls -d /root/.pyenv/versions/3.$minor.*/bin/python3 2>/dev/null | head -n 1)
	if [ -z "$PY" ]; then
		skp "python 3.$minor" "not installed (pyenv)"
		continue
	fi
	for probe in call eval; do
		out=$T/$minor-$probe
		steps=5
		# 3.12+ inlines f(*args, **kwargs) calls, so the eval probe sees
		# no optimizer step frame: only the call probe sees steps there
		[ "$probe" = eval ] && [ "$minor" -ge 12 ] && steps=0
		if $NP run -q --python-probe $probe -o "$out" -- "$PY" tests/integration/mock_torch.py 5 \
			> "$out.job" 2> "$out.err" &&
		   grep -q "finished 5 steps" "$out.job" &&
		   grep -q "\"python\":\"3.$minor\"" "$out/events.jsonl" &&
		   python3 - "$out/events.jsonl" "$steps" "${want_modules[@]}" > "$out.chk" 2>&1 <<'PYEOF'
import json, sys
path, steps, rest = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
recs = [json.loads(l) for l in open(path)]
done = [r for r in recs if r["type"] == "step" and r["complete"]]
mods = {r["module"] for r in recs if r["type"] == "module"}
want = [rest[i + 1] for i in range(0, len(rest), 2)]
missing = [m for m in want if m not in mods]
assert len(done) == steps, "%d complete steps, expected %d" % (len(done), steps)
assert not missing, "modules missing: %s (have %s)" % (missing, sorted(mods))
calls = [r for r in recs if r["type"] == "module" and r["module"] == "layers.1.norm"]
assert calls and all(r["module_type"] == "Linear" and r["depth"] == 2 for r in calls), calls[:2]
print("ok")
PYEOF
		then
			ok "python 3.$minor, $probe probe: modules named, $steps steps"
		else
			cat "$out.err" >> "$out.chk" 2>/dev/null
			bad "python 3.$minor, $probe probe" "$out.chk"
		fi
	done
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
