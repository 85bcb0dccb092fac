#!/usr/bin/env bash
# test_gpu_fake_deferred.sh - test_gpu_fake_nanprof.sh again, every job
# deferring its checks into list launches (NANPROF_GPU_DEFER=8,
# cupti/defer.h), with pyenv's python only (the suite's other run covers
# both Pythons at once).  Deferring is off by default until a GPU run
# measures it; this run keeps every verdict of the suite true with it on,
# so that turning it on is a default's change, not a new path.  The
# suite checks that the jobs did defer.
export NANPROF_GPU_DEFER=8 NANPROF_TEST_ONE_PYTHON=1
exec bash "$(dirname "$0")/test_gpu_fake_nanprof.sh"
