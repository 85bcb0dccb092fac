#!/usr/bin/env bash
# test_agent_alone.sh - the agent without nanprof (no BPF, no root):
# preloaded alone with NANPROF_AGENT_RECORDS=FILE, as the GPU
# verification runs it on a host where BPF cannot be loaded.  On each
# Python with torch: the checks come on, a forward fault's records name
# what the hooks saw (an output that became non-finite from finite
# inputs), the clean job reports nothing non-finite, and its losses are
# bit for bit those of the job alone.
set -u
. "$(dirname "$0")/lib.sh" agent-alone

RR="python3 $IT/read_records.py"
export OMP_NUM_THREADS=1

alone() {   # records-file python args...
	local rec=$1 py=$2
	shift 2
	LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$rec" \
		timeout 120 "$py" "$IT/faults.py" "$@"
}

one_python() {   # python
	local py=$1 tag
	tag=$(py_tag "$py")
	if [ -z "$tag" ]; then
		skp "agent alone with $py" "no torch"
		return
	fi
	if alone "$T/$tag-fwd.rec" "$py" --fault forward --steps 8 > "$T/fwd.out" 2>&1 &&
	   $RR "$T/$tag-fwd.rec" --summary > "$T/chk" 2>&1 &&
	   grep -q '"status": "installed"' "$T/chk" &&
	   $RR "$T/$tag-fwd.rec" --expect-cpu-check output >> "$T/chk" 2>&1 &&
	   $RR "$T/$tag-fwd.rec" > "$T/recs.jsonl" &&
	   grep -m1 '"kind": "check"' "$T/recs.jsonl" |
		"$py" -c 'import json, sys; sys.exit(json.loads(sys.stdin.read())["flags"] & 1)'; then
		ok "$tag: checks on alone; the forward fault's first record is an output born from finite inputs"
	else
		cat "$T/fwd.out" >> "$T/chk"
		bad "$tag: agent alone on a forward fault" "$T/chk"
	fi
	# the paths each module reports to its descendants at its first
	# return (agent/module_paths.h), for calls nanprof can no longer
	# read: the model's blocks.1.gate is the gate blocks.1 reports
	if python3 - "$T/recs.jsonl" > "$T/chk" 2>&1 <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
paths = [r for r in recs if r["kind"] == "module_path"]
def one(module, path):
    c = [r["child"] for r in paths if r["module"] == module and r["path"] == path]
    assert len(c) == 1, "%d records of %s from %x" % (len(c), path, module)
    return c[0]
roots = {r["module"] for r in paths if r["path"] == "blocks.1.gate"}
assert len(roots) == 1, "modules reporting blocks.1.gate: %d" % len(roots)
model = roots.pop()
b0, b1 = one(model, "blocks.0"), one(model, "blocks.1")
gate = one(model, "blocks.1.gate")
assert b0 != b1 and one(b1, "gate") == gate != one(b0, "gate"), "blocks.1's gate is not the model's"
assert not [r for r in paths if r["path"].count(".") > 2], "deeper than three levels"
print("%d paths" % len(paths))
PY
	then
		ok "$tag: module paths reported at each module's first return: $(tail -1 "$T/chk")"
	else
		bad "$tag: module paths for nanprof" "$T/chk"
	fi
	# the op inside a module a birth is put on (agent/birth_op.h), case by case
	rm -f "$T/$tag-ops.rec"
	if LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/$tag-ops.rec" \
		timeout 120 "$py" "$IT/birth_op_cases.py" "$T/$tag-ops.rec" > "$T/chk" 2>&1; then
		ok "$tag: the op inside a module, from its saved tensors: $(tail -1 "$T/chk")"
	else
		bad "$tag: the op inside a module" "$T/chk"
	fi
	# an error torch raises inside backward() reaches the job as it is,
	# and its traceback names the agent's wrapper frame
	if LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/$tag-raise.rec" \
		timeout 120 "$py" "$IT/raise_in_backward.py" > "$T/chk" 2>&1; then
		ok "$tag: torch's error inside backward() reaches the job; the traceback names <nanprof agent>"
	else
		bad "$tag: an error inside backward()" "$T/chk"
	fi
	# a function scripted once the agent's wrapper of torch.autograd.grad
	# is in still compiles (the wrapper is TorchScript's aten::grad too)
	"$py" "$IT/script_grad_job.py" > "$T/plain.out" 2>&1
	if LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/$tag-script.rec" \
		timeout 120 "$py" "$IT/script_grad_job.py" --wait-agent > "$T/alone.out" 2>&1 &&
	   cmp -s "$T/plain.out" "$T/alone.out"; then
		ok "$tag: a TorchScript function calling torch.autograd.grad, scripted after the agent's hooks, runs as without"
	else
		{ diff "$T/plain.out" "$T/alone.out"; tail -5 "$T/alone.out"; } > "$T/chk" 2>&1
		bad "$tag: TorchScript's autograd.grad with the agent" "$T/chk"
	fi
	"$py" "$IT/faults.py" --fault none --steps 6 > "$T/plain.out" 2>&1
	if alone "$T/$tag-none.rec" "$py" --fault none --steps 6 > "$T/alone.out" 2>&1 &&
	   cmp -s "$T/plain.out" "$T/alone.out" &&
	   ! $RR "$T/$tag-none.rec" | grep -q '"kind": "check"'; then
		ok "$tag: clean job, nothing non-finite reported, losses bit-identical"
	else
		{ diff "$T/plain.out" "$T/alone.out"; $RR "$T/$tag-none.rec" --summary; } > "$T/chk" 2>&1
		bad "$tag: clean job alone" "$T/chk"
	fi
}

# the agent leaves the job's library loading as it is: a library's
# dlopen by bare name still searches that library's DT_RUNPATH
mkdir -p "$T/rp/sub"
if gcc -shared -fPIC -DDEP "$IT/runpath_lib.c" -o "$T/rp/sub/librunpath_dep.so" &&
   gcc -shared -fPIC "$IT/runpath_lib.c" -o "$T/rp/librunpath_loader.so" -ldl \
	-Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub'; then
	load='import ctypes, sys; print(ctypes.CDLL(sys.argv[1]).load_dep())'
	if [ "$(python3 -c "$load" "$T/rp/librunpath_loader.so" 2>&1)" = 42 ] &&
	   [ "$(LD_PRELOAD="$PWD/libnanprof_agent.so" NANPROF_AGENT_RECORDS="$T/rp.rec" \
		python3 -c "$load" "$T/rp/librunpath_loader.so" 2> "$T/chk")" = 42 ]; then
		ok "a library's dlopen by bare name finds its DT_RUNPATH with the agent preloaded"
	else
		bad "a library's dlopen with the agent preloaded" "$T/chk"
	fi
else
	skp "a library's dlopen with the agent preloaded" "no C compiler"
fi

one_python python3
if [ -x /usr/bin/python3 ]; then
	one_python /usr/bin/python3
else
	skp "agent alone with /usr/bin/python3" "not installed"
fi
finish
