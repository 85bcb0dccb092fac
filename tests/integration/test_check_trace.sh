#!/usr/bin/env bash
# test_check_trace.sh - the validator must accept a good trace and reject
# each kind of bad one, or the integration tests that rely on it prove
# nothing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/check_trace.py"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
passed=0
failed=0

# expect WANT_RC NAME ARGS...: runs the validator, compares its exit code.
expect() {
	local want=$1 name=$2 rc
	shift 2
	$check "$@" >"$dir/out" 2>&1
	rc=$?
	if [ "$rc" -eq "$want" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name: exit $rc, want $want" >&2
		sed 's/^/  /' "$dir/out" >&2
	fi
}

cat >"$dir/good.json" <<'EOF'
{"traceEvents":[
{"name":"process_name","ph":"M","pid":1,"args":{"name":"python"}},
{"name":"thread_name","ph":"M","pid":1,"tid":2,"args":{"name":"main"}},
{"name":"step","cat":"train","ph":"X","ts":0,"dur":100,"pid":1,"tid":2},
{"name":"forward","cat":"module","ph":"X","ts":10,"dur":40,"pid":1,"tid":2},
{"name":"aten::mm","cat":"aten","ph":"X","ts":10,"dur":40.0005,"pid":1,"tid":2},
{"name":"backward","cat":"module","ph":"X","ts":50,"dur":50,"pid":1,"tid":2},
{"name":"nan found","ph":"i","ts":60,"pid":1,"tid":2,"s":"t"},
{"name":"memory","ph":"C","ts":5,"pid":1,"args":{"allocated":1024,"reserved":2048.5}}
]}
EOF

# Same trace, but one slice has lost its dur.
sed 's/"dur":40,//' "$dir/good.json" >"$dir/no_dur.json"

cat >"$dir/overlap.json" <<'EOF'
{"traceEvents":[
{"name":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1},
{"name":"b","ph":"X","ts":5,"dur":10,"pid":1,"tid":1}
]}
EOF

cat >"$dir/string_counter.json" <<'EOF'
{"traceEvents":[
{"name":"memory","ph":"C","ts":5,"pid":1,"args":{"allocated":"1024"}}
]}
EOF

expect 0 good "$dir/good.json"
expect 0 good_required "$dir/good.json" --require-name aten:: \
	--require-name forward --require-cat module
expect 1 missing_dur "$dir/no_dur.json"
expect 1 overlapping_slices "$dir/overlap.json"
expect 1 string_counter "$dir/string_counter.json"
expect 1 missing_required_name "$dir/good.json" --require-name optimizer
expect 1 missing_required_cat "$dir/good.json" --require-cat cuda

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
