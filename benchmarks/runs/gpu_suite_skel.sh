#!/usr/bin/env bash
# mcl.skel's tests on the GPU machine, a file at a time side by side (its logs under
# $OUT): which fail there, and with what. gpu_suite.sh ran them as one group, which did
# not end within its limit.
OUT=${OUT:-gpu-suite-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
LIMIT=${LIMIT:-420}
for f in tests/skel/test_*.py; do
  n=$(basename "$f" .py)
  ( timeout "$LIMIT" python3 -m pytest -p no:cacheprovider -p no:warnings -q -rfE --tb=short \
      --durations=5 "$f" > "$OUT/$n.log" 2>&1; echo "rc=$?" >> "$OUT/$n.log" ) &
done
wait
for f in "$OUT"/test_*.log; do
  echo "== $(basename "$f" .log): $(grep -E 'passed|failed' "$f" | tail -1) $(tail -1 "$f")"
  grep -E "^(FAILED|ERROR) " "$f" | cut -c1-400
done > "$OUT/summary.txt"
tar czf "$OUT/logs.tgz" -C "$OUT" $(cd "$OUT" && ls test_*.log)
cat "$OUT/summary.txt"
