#!/usr/bin/env bash
# The GPU machine: what mcl feedback counts beside the GPU with the CUDA toolkit at hand.
# For every recorded example, mcl.opencl.vendor's figures (the CUDA driver's registers,
# the bytes a warp keeps in flight in the SASS of ptxas and cuobjdump) and the predicted
# time at h200 with them: $OUT/compiled_in_flight.json, and in the record's form
# $OUT/h200_in_flight.json (tests/analyses/fidelity/, which a new run replaces); and
# mcl feedback's time message of gesummv nvidia_v1 at h200:
# $OUT/feedback_gesummv_nvidia_v1.txt.
#     OUT=DIR bash benchmarks/runs/compiled_in_flight.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 - "$OUT" <<'PY' > "$OUT/compiled_in_flight.log" 2>&1
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks/fidelity")
import fidelity_cases as C
import fidelity_predict as P
from mcl.opencl.vendor import resources_of
out = Path(sys.argv[1])
names = json.load(open("tests/analyses/fidelity/h200_times.json"))["times"]
rows = {}
for case in C.example_cases(None):
    if case.name not in names:
        continue
    res = resources_of(str(P.case_path(case)), case.sizes, "hopper", specialize=case.specialize)
    r = next(iter(res.values()), None)
    if r is None:
        rows[case.name] = None
        continue
    t = P.predicted_time(case, registers=r.registers, level="h200", in_flight=r.in_flight)
    rows[case.name] = {"registers": r.registers, "in_flight": r.in_flight,
                       "seconds": t.get("seconds")}
    print(case.name, rows[case.name], flush=True)
(out / "compiled_in_flight.json").write_text(json.dumps(rows, indent=1) + "\n")
# the record the CPU tests hold the analyses to (tests/analyses/fidelity/h200_in_flight.json)
about = json.load(open("tests/analyses/fidelity/h200_in_flight.json"))["about"]
(out / "h200_in_flight.json").write_text(json.dumps(
    {"about": about, "in_flight": {n: r["in_flight"] for n, r in rows.items() if r}},
    indent=1) + "\n")
PY
python3 -c "import sys; from mcl.cli import main; sys.exit(main())" feedback --level h200 --only time --no-previous --set n=4096 \
  examples/gesummv/nvidia_v1.mcpl > "$OUT/feedback_gesummv_nvidia_v1.txt" 2>&1
