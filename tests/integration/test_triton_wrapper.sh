#!/usr/bin/env bash
# The agent's wrapper of Inductor's CachingAutotuner.run (agent/bootstrap.h,
# cupti/triton.h), as the agent runs it, on each Python's own torch class:
# the plan each Triton launch hands over (outputs only when written whole,
# reads, in-place outputs), and that the launch happens exactly once
# whatever fails in the wrapper (tests/integration/triton_wrapper_check.py).
# Needs a torch with Inductor (2.x); no root, no GPU.
set -u
. "$(dirname "$0")/lib.sh" triton-wrapper

for PY in python3 /usr/bin/python3; do
	tag=$(py_tag "$PY")
	if [ -z "$tag" ]; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	if ! "$PY" -c 'import torch._inductor.runtime.triton_heuristics' > /dev/null 2>&1; then
		skp "$tag: Inductor's run() wrapped" "this torch has no Inductor"
		continue
	fi
	if timeout 120 "$PY" $IT/triton_wrapper_check.py > "$T/chk" 2>&1; then
		ok "$tag: Inductor's run() wrapped: plans as the signature says, each launch once ($(grep -c '^ok' "$T/chk") checks)"
	else
		bad "$tag: Inductor's run() wrapped" "$T/chk"
	fi
done
finish
