#!/usr/bin/env bash
# run_unit.sh - run Criterion unit-test binaries and add up their results.
#
#   bash tests/run_unit.sh .output/tests/test_cli .output/tests/test_proc ...
#
# Shows each binary's own output (failure details and its "Synthesis"
# line), then ends with exactly one line, "N passed, M failed", summed over
# all binaries.  A test counts as failed when it did not pass: Criterion's
# "Failing" already includes "Crashing", so crashed tests are counted once.
# A binary that exits without a Synthesis line (it could not start, or its
# runner died) counts as one failed test.  Exit status: 1 if any test
# failed or any binary exited non-zero, else 0.

set -u

# With no binaries there is nothing to run: "0 passed, 0 failed".

tmp=$(mktemp "${TMPDIR:-/tmp}/run_unit.XXXXXX") || exit 1
trap 'rm -f "$tmp"' EXIT

passed=0
failed=0
status=0

for bin in "$@"; do
	echo "--- ${bin##*/}"
	if [ ! -x "$bin" ]; then
		echo "run_unit: $bin: not an executable file"
		failed=$((failed + 1))
		status=1
		continue
	fi
	"$bin" >"$tmp" 2>&1
	rc=$?
	cat "$tmp"

	# [====] Synthesis: Tested: 17 | Passing: 17 | Failing: 0 | Crashing: 0
	# (colour codes removed first: Criterion colours output on a terminal)
	line=$(sed 's/\x1b\[[0-9;]*m//g' "$tmp" | grep 'Synthesis:' | tail -n 1)
	if [ -z "$line" ]; then
		echo "run_unit: ${bin##*/}: no Criterion summary (exit status $rc)"
		failed=$((failed + 1))
		status=1
		continue
	fi
	count() { sed -n "s/.*$1: *\([0-9][0-9]*\).*/\1/p" <<<"$line"; }
	tested=$(count Tested)
	passing=$(count Passing)
	failing=$(count Failing)
	crashing=$(count Crashing)
	tested=${tested:-0} passing=${passing:-0} failing=${failing:-0} crashing=${crashing:-0}

	not_passed=$((tested - passing))
	bad=$failing
	[ "$crashing" -gt "$bad" ] && bad=$crashing
	[ "$not_passed" -gt "$bad" ] && bad=$not_passed

	passed=$((passed + passing))
	failed=$((failed + bad))
	if [ "$bad" -gt 0 ]; then
		status=1
	elif [ "$rc" -ne 0 ]; then
		echo "run_unit: ${bin##*/}: exit status $rc although every test passed"
		status=1
	fi
done

echo "$passed passed, $failed failed"
exit "$status"
