#!/usr/bin/env bash
# report.html in a real browser: headless Chromium loads the page of a job
# with a known origin; no console error, the page says it rendered, names
# the origin, and its screenshot shows the heatmap with the origin marked;
# a GradScaler's skipped iterations, a fake CUDA job's checks and the
# kernel they could not check at launch, the device of a fake job's
# origin on a second device, and nanprof compare's table.
# Needs root (to trace) and Chromium (Debian's `chromium`); skips visibly.
set -u
. "$(dirname "$0")/lib.sh" report

CHROME=$(command -v chromium || command -v chromium-browser || true)
PY=python3
$PY -c 'import torch' 2>/dev/null || PY=/usr/bin/python3
if [ "$(id -u)" -ne 0 ]; then
	skp "report tests" "need root for bpf"
elif ! $PY -c 'import torch' 2>/dev/null; then
	skp "report tests" "no python with torch"
elif [ -z "$CHROME" ]; then
	skp "report tests" "no chromium (apt-get install chromium)"
else
	export OMP_NUM_THREADS=1
	# a forward fault at step 10 of 20, after gradients that grow
	$NP run -q -o "$T/out" -- $PY $IT/faults.py --fault forward --at 10 --steps 20 \
		> "$T/job.out" 2> "$T/np.err"
	page="file://$(readlink -f "$T/out/report.html")"
	if [ -s "$T/out/report.html" ] && ! grep -q "http" <(grep -o 'src="[^"]*"' "$T/out/report.html"); then
		ok "report.html written, self-contained (no external script or image)"
	else
		bad "report.html written" "$T/np.err"
	fi
	run_chrome() {
		timeout 60 "$CHROME" --headless=new --no-sandbox --disable-gpu --no-first-run \
			--disable-dev-shm-usage --user-data-dir="$T/profile" --enable-logging=stderr \
			--v=0 --virtual-time-budget=5000 "$@" "$page"
	}
	run_chrome --dump-dom > "$T/dom.html" 2> "$T/console.log"
	# the op and what is known of it (lib.sh: gate_op)
	# and, with the op search, exp's overflow said
	if [ "$(gate_op $PY | cut -d" " -f2)" = exp ]
	then op="op exp (inside the module: the first op seen non-finite; not all it read was seen)"
	     exp_line='id="exp"[^>]*>Exp of a value above 88.72 is +inf in float32'
	else op="op add"; exp_line='id="why"'
	fi
	if grep -q 'data-rendered="1"' "$T/dom.html" &&
	   grep -q 'id="origin"[^>]*>First non-finite value born at step 10, forward pass, in blocks.1.gate (Gate), '"$op"', tensor output' "$T/dom.html" &&
	   grep -q 'id="spread"[^>]*>Where in the tensor (shape \[8, 12, 32\]): the first non-finite element is at \[[0-9]*, [0-9]*, [0-9]*\]; non-finite values in \(all 8\|[0-9]* of 8\) along dim 0' "$T/dom.html" &&
	   grep -q 'id="why"[^>]*>What flowed in was finite: it was born here' "$T/dom.html" &&
	   grep -q "$exp_line" "$T/dom.html" &&
	   grep -q '<div id="error"></div>' "$T/dom.html" &&
	   ! grep -E "CONSOLE|Uncaught" "$T/console.log" > "$T/errs"; then
		ok "Chromium renders the page with no console error and states the origin, why, where in its tensor (and exp's overflow)"
	else
		cat "$T/errs" "$T/console.log" > "$T/chk" 2>/dev/null; grep -o 'id="origin"[^<]*\|id="why"[^<]*\|id="spread"[^<]*\|id="exp"[^<]*' "$T/dom.html" >> "$T/chk"
		bad "Chromium renders the page" "$T/chk"
	fi
	run_chrome --screenshot="$T/shot.png" --window-size=1280,1600 > /dev/null 2> "$T/console2.log"
	[ -n "${NANPROF_KEEP_SCREENSHOT:-}" ] && cp "$T/shot.png" "$NANPROF_KEEP_SCREENSHOT"
	if [ -s "$T/shot.png" ] && $PY $IT/check_screenshot.py "$T/shot.png" > "$T/chk" 2>&1; then
		ok "screenshot shows the heatmap, the origin mark and non-finite cells ($(head -1 "$T/chk" | cut -d: -f2))"
	else
		cat "$T/console2.log" >> "$T/chk"; bad "screenshot" "$T/chk"
	fi

	# an update that divided by a second moment of 0 (eps = 0): the page
	# says what the optimizer did, under the origin sentence
	$NP run -q -o "$T/upd" -- $PY $IT/optim_job.py --fault eps0 > /dev/null 2> "$T/upd.err"
	page="file://$(readlink -f "$T/upd/report.html")"
	run_chrome --dump-dom > "$T/dom-upd.html" 2> "$T/console-upd.log"
	if grep -q 'id="origin"[^>]*>First non-finite value born at step 0, optimizer pass, in 0 (Embedding), tensor param weight' "$T/dom-upd.html" &&
	   grep -q 'id="update"[^>]*>Adam divides each update by sqrt(exp_avg_sq) plus eps, and eps = 0: 20 of the 20 non-finite values' "$T/dom-upd.html" &&
	   ! grep -E "CONSOLE|Uncaught" "$T/console-upd.log" > /dev/null; then
		ok "an update that divided by 0 (Adam, eps = 0): the page says so under the origin"
	else
		cat "$T/upd.err" "$T/console-upd.log" > "$T/chk"
		grep -o 'id="origin"[^<]*\|id="update"[^<]*' "$T/dom-upd.html" >> "$T/chk"
		bad "the update's cause on the page" "$T/chk"
	fi

	# loss scaling: the iterations a GradScaler skipped, on the page
	# the bundled example computes its loss in a module of its own: two
	# outermost modules, each labelled by its class, not both "(model)";
	# the step-time chart draws the first step's outlier off scale, and
	# says how many points it left out by the rule the page states
	$NP run -q -o "$T/ex" -- $PY examples/train_nan.py --steps 12 --nan-step -1 \
		> /dev/null 2> "$T/ex.err"
	page="file://$(readlink -f "$T/ex/report.html")"
	run_chrome --dump-dom > "$T/dom-ex.html" 2> "$T/console-ex.log"
	if $PY - "$T/ex/report.html" "$T/dom-ex.html" > "$T/chk" 2>&1 <<'PYEOF'
import json, re, sys
html, dom = open(sys.argv[1]).read(), open(sys.argv[2]).read()
data = json.loads(re.search(r"const DATA=(.*?);\n", html, re.S).group(1))
rows = re.findall(r'id="heat-out"[^>]*data-rows="([^"]*)"|data-rows="([^"]*)"[^>]*id="heat-out"', dom)
rows = [a or b for a, b in rows][0].split("|")
assert "(SensorClassifier)" in rows and "(CrossEntropyLoss)" in rows, rows
assert "(model)" not in rows and "" not in rows, rows
ms = [s["ms"] for s in data["process"]["steps"]]
q = sorted(ms)[int(len(ms) * 0.95) - 1]
want = sum(1 for v in ms if v > 1.5 * q) if max(ms) > 3 * q else 0
m = re.search(r'id="steptime"[^>]*data-offscale="(\d+)"|data-offscale="(\d+)"[^>]*id="steptime"', dom)
got = int((m.group(1) or m.group(2)) if m else 0)
assert got == want, ("off scale", got, "want", want, ms)
# the gradient map leaves out the modules with no parameters of their own
heat = data["heat"]
lab = lambda i: heat["modules"][i] or "(%s)" % heat["types"][i]
want_grad = [lab(i) for i in range(len(heat["modules"]))
             if any(col[i] is not None for col in heat["grad"])]
g = re.findall(r'id="heat-grad"[^>]*data-rows="([^"]*)"|data-rows="([^"]*)"[^>]*id="heat-grad"', dom)
g = [a or b for a, b in g][0].split("|")
assert g == want_grad and 0 < len(g) < len(rows), (g, want_grad, rows)
assert "modules without parameters of their own are left out" in dom
print("rows", rows[-2:], "off scale", got, "of", len(ms), "grad rows", len(g), "of", len(rows))
PYEOF
	then
		ok "outermost modules labelled by class; step-time outliers drawn off scale; param-less rows left out of the gradient map ($(tail -1 "$T/chk" | cut -c1-80))"
	else
		cat "$T/ex.err" >> "$T/chk"; bad "outermost module labels, step-time scale" "$T/chk"
	fi

	if $PY -c 'import sys, torch; sys.exit(not hasattr(torch.amp, "GradScaler"))' 2>/dev/null; then
		$NP run -q -o "$T/sc" -- $PY $IT/faults.py --steps 12 --scaler 3e38 > /dev/null 2>&1
		page="file://$(readlink -f "$T/sc/report.html")"
		run_chrome --dump-dom > "$T/dom-sc.html" 2> "$T/console-sc.log"
		if grep -q 'id="scaler">Loss scaling: the GradScaler skipped [1-9][0-9]* of 12 iterations' \
			"$T/dom-sc.html" && grep -q 'class="ok"[^>]*>No non-finite value' "$T/dom-sc.html"; then
			ok "a GradScaler's skipped iterations on the page, and no origin"
		else
			grep -o 'id="scaler"[^<]*\|id="origin"[^<]*' "$T/dom-sc.html" > "$T/chk"
			bad "GradScaler on the page" "$T/chk"
		fi
	else
		skp "GradScaler on the page" "this torch's GradScaler needs CUDA"
	fi

	# the CUDA checks on the page, with the kernels nanprof could not check
	# at launch: the fake CUDA job (tests/fakecuda/), an undecoded kernel
	if grep -qa np_check_f32 libnanprof_agent.so 2>/dev/null && make -s fakecuda > /dev/null 2>&1
	then
		F=$PWD/.output/fakecuda
		$NP run -q -o "$T/gpu" -- env NANPROF_CUPTI="$F/libcupti.so.13" NANPROF_GPU_GUARD=0 \
			$PY $IT/fake_gpu_job.py "$F/libfakeops.so" --modules --opaque --at 3 \
			> /dev/null 2> "$T/gpu.err"
		page="file://$(readlink -f "$T/gpu/report.html")"
		run_chrome --dump-dom > "$T/dom-gpu.html" 2> "$T/console-gpu.log"
		if grep -q 'id="gpu">CUDA checks (every): [1-9][0-9]* outputs checked; 6 launches of kernels nanprof could not check at launch' \
			"$T/dom-gpu.html" &&
		   grep -q '<td>nvjet_fake_exp_64x64_1x1_opaque</td><td>6</td>' "$T/dom-gpu.html" &&
		   grep -q "Host time in nanprof’s CUDA callbacks: ~[0-9.]* µs per kernel launch" \
			"$T/dom-gpu.html" &&
		   grep -q 'id="origin"[^>]*>First non-finite value born at step 3, forward pass, in blocks.0.gate' \
			"$T/dom-gpu.html"; then
			ok "the CUDA checks on the page, with the kernel they could not check at launch"
		else
			grep -o 'id="gpu"[^<]*\|id="origin"[^<]*' "$T/dom-gpu.html" > "$T/chk"
			cat "$T/gpu.err" >> "$T/chk"
			bad "CUDA checks on the page" "$T/chk"
		fi
		# a model split over two devices: the origin's device on the page
		$NP run -q -o "$T/gpu2" -- env NANPROF_CUPTI="$F/libcupti.so.13" FAKE_CUDA_DEVICES=2 \
			$PY $IT/fake_gpu_job.py "$F/libfakeops.so" --devices 2 --at 3 \
			> /dev/null 2> "$T/gpu2.err"
		page="file://$(readlink -f "$T/gpu2/report.html")"
		run_chrome --dump-dom > "$T/dom-gpu2.html" 2> "$T/console-gpu2.log"
		if grep -q 'id="origin"[^>]*>First non-finite value born at step 3, forward pass, in blocks.0.gate (Gate), op [^<]*exp_kernel_cuda[^<]* on cuda:1, tensor output' \
			"$T/dom-gpu2.html"; then
			ok "a model split over two devices: the origin's device on the page"
		else
			grep -o 'id="origin"[^<]*' "$T/dom-gpu2.html" > "$T/chk"
			cat "$T/gpu2.err" >> "$T/chk"
			bad "the origin's device on the page" "$T/chk"
		fi
	else
		skp "CUDA checks on the page" "agent built without its GPU side (no CUDA toolkit)"
	fi

	# nanprof compare: plain, anomaly mode and nanprof on one job with a
	# backward-only fault; the report carries the comparison
	if $NP compare --steps 10 --rounds 1 -o "$T/cmp" -- $PY $IT/faults.py --fault backward \
		--at 5 --steps 40 > /dev/null 2> "$T/cmp.err" &&
	   $PY - "$T/cmp/compare.json" > "$T/chk" 2>&1 <<'PYEOF'
import json, sys
c = json.load(open(sys.argv[1]))
cfg = {x["name"]: x for x in c["configs"]}
assert set(cfg) == {"plain", "anomaly", "nanprof"}, cfg.keys()
assert abs(cfg["plain"]["ratio"] - 1.0) < 1e-9
assert all(x["median_ms"] > 0 and len(x["steps"]) > 0 for x in cfg.values()), cfg
# anomaly mode names the node where the NaN surfaced (0*inf in pow's
# backward), nanprof the one that made the first Inf (sqrt at 0)
assert "PowBackward0" in cfg["anomaly"]["location"], cfg["anomaly"]["location"]
assert "blocks.0.root" in cfg["nanprof"]["location"], cfg["nanprof"]["location"]
assert "SqrtBackward0" in cfg["nanprof"]["location"], cfg["nanprof"]["location"]
print("compare:", [(x["name"], round(x["ratio"], 2)) for x in c["configs"]])
PYEOF
	then
		page="file://$(readlink -f "$T/cmp/report.html")"
		run_chrome --dump-dom > "$T/dom2.html" 2> "$T/console3.log"
		if grep -q 'data-rendered="1"' "$T/dom2.html" && grep -q '<table id="compare">' "$T/dom2.html" &&
		   [ "$(grep -o '<td>anomaly</td>\|<td>nanprof</td>\|<td>plain</td>' "$T/dom2.html" | wc -l)" -eq 3 ] &&
		   ! grep -E "CONSOLE|Uncaught" "$T/console3.log" > /dev/null; then
			ok "compare: three runs, anomaly names PowBackward0, nanprof blocks.0.root; in the report"
		else
			grep -o '<table id="compare">.*</table>' "$T/dom2.html" > "$T/chk"; bad "compare in the report" "$T/chk"
		fi
	else
		cat "$T/cmp.err" >> "$T/chk"; bad "nanprof compare" "$T/chk"
	fi
fi
finish
