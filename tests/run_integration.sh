#!/usr/bin/env bash
# Runs every tests/integration/test_*.sh, then one closing line
# "N passed, M failed, K skipped" summed over them.
set -u
cd "$(dirname "$0")/.."
P=0 F=0 S=0 rc=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in tests/integration/test_*.sh; do
	echo "== $t"
	# the output goes on as it comes; its last line is the test's count
	bash "$t" 2>&1 | tee "$log"
	[ "${PIPESTATUS[0]}" -ne 0 ] && rc=1
	read -r p _ f _ s _ <<< "$(tail -n 1 "$log" | tr -d ',')"
	P=$((P + ${p:-0})); F=$((F + ${f:-0})); S=$((S + ${s:-0}))
done
echo "integration: $P passed, $F failed, $S skipped"
exit $rc
