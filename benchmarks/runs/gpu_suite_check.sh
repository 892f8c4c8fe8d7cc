#!/usr/bin/env bash
# After gpu_suite.sh and gpu_suite_skel.sh: the tests mended for the GPU machine again
# (skel's explain and MPI tests, the examples' verification), and the first AllPairs
# failure on that machine's PoCL in full.
OUT=${OUT:-gpu-suite-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 -c "import pyopencl as cl; print([(p.name, p.version) for p in cl.get_platforms()])" \
  > "$OUT/platforms.txt" 2>&1
( timeout 300 python3 -m pytest -p no:cacheprovider -p no:warnings -q -rfE --tb=short \
    tests/skel/test_explain.py tests/skel/test_mpi.py \
    "tests/versions/test_verify.py::test_example_versions_verify_clean" > "$OUT/mended.log" 2>&1
  echo "rc=$?" >> "$OUT/mended.log" ) &
( timeout 300 python3 -m pytest -p no:cacheprovider -p no:warnings -q -x --tb=long -rfE \
    --durations=10 tests/skel/test_allpairs.py > "$OUT/allpairs.log" 2>&1
  echo "rc=$?" >> "$OUT/allpairs.log" ) &
wait
cat "$OUT/platforms.txt"; tail -5 "$OUT/mended.log"; grep -E "^E |Error|rc=" "$OUT/allpairs.log" | head -40
