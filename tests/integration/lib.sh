# lib.sh - what every integration test script starts with: source it as
#   . "$(dirname "$0")/lib.sh" NAME
# It moves to the repository root and sets NP (the nanprof binary), IT
# (this directory), T (a scratch directory removed at exit, with any job
# left running killed), and ok / bad / skp, which count and print each
# verdict; the script ends with `finish`, the line run_integration.sh sums.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
NP=./nanprof
IT=tests/integration
T=$(mktemp -d "/tmp/nanprof-$1.XXXXXX")
trap 'rm -rf "$T"; jobs -p | xargs -r kill 2>/dev/null' EXIT
pass=0 fail=0 skip=0
# each check writes what explains a failure to $T/chk, emptied after each verdict
ok()   { pass=$((pass + 1)); echo "PASS $1"; rm -f "$T/chk"; }
bad()  { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed 's/^/    /' "$2" | tail -n 30; rm -f "$T/chk"; }
skp()  { skip=$((skip + 1)); echo "SKIP $1: $2"; }
finish() {
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail -eq 0 ]
}
# py_tag PYTHON: "python3.11-torch2.13.0+cpu", or nothing without torch
py_tag() {
	"$1" -c 'import sys, torch; print("python%d.%d-torch%s" % (sys.version_info[:2] + (torch.__version__,)))' 2>/dev/null
}
# gate_op PYTHON: check_origin.py's options for the op of faults.py's
# forward fault (exp() overflows inside blocks.1.gate, before the add that
# makes its output).  Where torch shows what autograd saved without
# unpacking it (SavedTensor.unpack_hook: torch 2.13 has it, 1.13 not) the agent finds
# the exp in the saved tensors (agent/birth_op.h); elsewhere it names the
# add.  The exp's input (x * boost) is saved nowhere: not seen finite.
gate_op() {
	if "$1" -c 'import sys, torch; sys.exit(not hasattr(torch._C._autograd.SavedTensor, "unpack_hook"))' 2>/dev/null
	then echo "--op exp --op-inside yes --op-read-finite no"
	else echo "--op add --op-inside no"
	fi
}
