#!/usr/bin/env bash
# A user's own @triton.jit kernels (agent/triton_jit.py): what the agent
# reads from each kernel's source (written, read, in place; not known),
# the plan each launch hands over through Triton's own JITFunction.run
# (tests/integration/triton_jit_check.py), and that the agent itself
# loads the embedded wrapper and wraps run() whether triton is imported
# before torch or after the install.  Needs triton, kept off the jobs'
# path in NANPROF_TEST_TRITON (scripts/setup.sh --tests puts triton 3.8
# there); no root, no GPU.
set -u
. "$(dirname "$0")/lib.sh" triton-jit
TRITON_DIR=${NANPROF_TEST_TRITON:-/opt/nanprof-test/triton}

# waits for the agent's install (its optimizer hooks), then imports
# triton: 1 when JITFunction.run is the agent's
cat > "$T/job.py" <<'PY'
import sys, time
if sys.argv[1] == "first":
    import triton.runtime.jit
import torch, torch.nn, torch.optim.optimizer as O
deadline = time.time() + 30
while not O._global_optimizer_pre_hooks and time.time() < deadline:
    time.sleep(0.05)
import triton.runtime.jit as J
print("installed" if O._global_optimizer_pre_hooks else "not installed",
      int(getattr(J.JITFunction.__dict__["run"], "_nanprof", False)))
PY

for PY in python3 /usr/bin/python3; do
	tag=$(py_tag "$PY")
	if [ -z "$tag" ]; then
		skp "$PY" "no torch for $PY"
		continue
	fi
	if ! PYTHONPATH=$TRITON_DIR "$PY" -c 'import triton.runtime.jit' > /dev/null 2>&1; then
		skp "$tag: @triton.jit kernels" "no triton in $TRITON_DIR (bash scripts/setup.sh --tests)"
		continue
	fi
	if PYTHONPATH=$TRITON_DIR timeout 120 "$PY" $IT/triton_jit_check.py > "$T/chk" 2>&1; then
		ok "$tag: @triton.jit kernels read from their source, planned through Triton's run() ($(grep -c '^ok' "$T/chk") checks)"
	else
		bad "$tag: @triton.jit kernels read and planned" "$T/chk"
	fi
	if ! "$PY" -c 'import torch.optim.optimizer as O; O._global_optimizer_pre_hooks' 2>/dev/null; then
		skp "$tag: the agent wraps JITFunction.run" "this torch has no global optimizer hooks to tell the install by"
		continue
	fi
	for when in first later; do
		PYTHONPATH=$TRITON_DIR LD_PRELOAD=$PWD/libnanprof_agent.so NANPROF_AGENT_RECORDS=$T/rec.bin \
			timeout 60 "$PY" "$T/job.py" $when > "$T/chk" 2>&1
		if grep -qx "installed 1" "$T/chk"; then
			ok "$tag: the agent wraps JITFunction.run (triton imported $when)"
		else
			bad "$tag: the agent wraps JITFunction.run (triton imported $when)" "$T/chk"
		fi
	done
done
finish
