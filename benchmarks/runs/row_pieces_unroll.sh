#!/usr/bin/env bash
# The GPU machine: whether the loads a warp keeps in flight explain gesummv's slow
# several-rows-a-warp reads. row_pieces_probe.py as the compiler unrolls the loop over a
# row's steps and with that loop not unrolled (--unroll 1: the loads in flight exactly U R),
# each shape's SASS with the bytes a warp keeps in flight (mcl.opencl.sass);
# then the SASS of every recorded example and held-out kernel (sass_of.sh) and the same
# figures of each: $OUT/row_pieces_unroll.json, $OUT/kernels_in_flight.json, the SASS
# texts in $OUT/sass.tgz.
#     OUT=DIR bash benchmarks/runs/row_pieces_unroll.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
for k in 0 1; do
  mkdir -p "$OUT/u$k"
  python3 benchmarks/opencl/row_pieces_probe.py --unroll "$k" --out "$OUT/u$k" 2>&1 \
    | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/row_pieces.log"
  echo "== --unroll $k done" >> "$OUT/row_pieces.log"
done
mkdir -p "$OUT/k"
python3 - > "$OUT/k/names.txt" <<'PY'
import json
print("\n".join(json.load(open("tests/analyses/fidelity/h200_times.json"))["times"]))
for k in ("conv3x3 dot hist256 jacobi2d matmul_tiled matvec nbody rowsum saxpy4 scan_blocks "
          "softmax_rows stencil1d transpose_naive transpose_padded transpose_shared").split():
    print(f"heldout/{k}/hopper")
PY
OUT="$OUT/k" bash benchmarks/runs/sass_of.sh "$OUT/k/names.txt"
python3 - "$OUT" <<'PY'
import json, re, sys
from pathlib import Path
from mcl.opencl.sass import loads_together, rounds
out = Path(sys.argv[1])
rows = {}
for f in sorted((out / "k" / "sass").glob("*.sass.txt")):
    text = f.read_text()
    regs = re.search(r"Used (\d+) registers",
                     f.with_name(f.name.replace(".sass.txt", ".ptxas.txt")).read_text())
    hot = rounds(text)
    rows[f.name.removesuffix(".sass.txt")] = {
        "loads_together": loads_together(text)[0],
        "hot_loop_loads": hot.loads if hot else None, "rounds": hot.rounds if hot else None,
        "bytes_a_round": hot.bytes_a_round if hot else None,
        "registers": int(regs.group(1)) if regs else None}
(out / "kernels_in_flight.json").write_text(json.dumps(rows, indent=1) + "\n")
merged = {k: json.loads(next((out / k).glob("row_pieces_probe*.json")).read_text())
          for k in ("u0", "u1")}
(out / "row_pieces_unroll.json").write_text(json.dumps(merged, indent=1) + "\n")
PY
mkdir -p "$OUT/sass_all/kernels"
cp "$OUT"/k/sass/*.sass.txt "$OUT"/k/sass/*.ptxas.txt "$OUT/sass_all/kernels/" 2>/dev/null
for k in u0 u1; do cp -r "$OUT/$k/sass" "$OUT/sass_all/probe_$k"; done
tar -C "$OUT/sass_all" -czf "$OUT/sass.tgz" .
rm -rf "$OUT"/u0 "$OUT"/u1 "$OUT/k" "$OUT/sass_all"
