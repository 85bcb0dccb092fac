#!/usr/bin/env bash
# Installs what nanprof needs to build and test on Debian 12, as root,
# only when missing: Debian packages, then torch 2.13 (CPU) for the
# `python3` on PATH.  Idempotent; used by the README's commands and CI.
# --tests: also what only the tests need (Chromium, for report.html).
set -eu
pkgs="libbpf-dev bpftool clang llvm libelf-dev zlib1g-dev libzstd-dev libcriterion-dev
      python3-torch libopenblas0-pthread make gcc util-linux"
[ "${1:-}" = "--tests" ] && pkgs="$pkgs chromium"
need=()
for pkg in $pkgs; do
	dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "setup: installing ${need[*]}" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >&2
fi
# torch for the python3 on PATH (pyenv's here): a CPU build already on
# the machine; plain `pip install torch` would fetch a CUDA build.
if ! python3 -c 'import torch' 2>/dev/null; then
	echo "setup: pip install torch==2.13.0" >&2
	python3 -m pip install -q torch==2.13.0 >&2
fi
# --tests: triton, for the tests of user @triton.jit kernels
# (tests/integration/test_triton_jit.sh), in a directory of its own: on
# the jobs' path a CPU torch would take it up for torch.compile.  Without
# it those tests skip and say so.
TRITON_DIR=/opt/nanprof-test/triton
if [ "${1:-}" = "--tests" ] && ! PYTHONPATH=$TRITON_DIR python3 -c 'import triton' 2>/dev/null; then
	echo "setup: pip install triton==3.8.0 into $TRITON_DIR" >&2
	python3 -m pip install -q --root-user-action=ignore --no-deps --target "$TRITON_DIR" triton==3.8.0 >&2 ||
		echo "setup: no triton: the @triton.jit tests will skip" >&2
fi
