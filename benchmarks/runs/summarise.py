"""One line per version of a case-study results.json: median time, against the
kernel's references measured in the same run (exploration rounds of benchmarks/runs)."""
import json
import sys

r = json.load(open(sys.argv[1]))
copy = r["ceiling"]["opencl_copy"]["GBps_read_plus_write"]
print(f"copy ceiling {copy:.0f} GB/s")
for k, kr in r["kernels"].items():
    for run in kr.get("runs", []):
        refs = [(x.get("name") or x.get("reference"), x.get("timing", {}).get("median_s")
                 or x.get("median_s")) for x in run.get("references", [])]
        nbytes = run.get("roofline", {}).get("bytes")
        print(k, run["sizes"], "refs:", ", ".join(f"{n} {t * 1e3:.4f} ms" for n, t in refs if t))
        for e in run.get("results", []):
            t = e.get("timing", {}).get("median_s")
            ratio = " ".join(f"{t_ref / t:.3f}" for _, t_ref in refs if t and t_ref)
            ofcopy = f"{nbytes / t / 1e9 / copy:.3f} of copy" if t and nbytes else ""
            ms = f"{t * 1e3:9.4f} ms" if t else "     —"
            print(f"  {e['version']:20s} {e['status']:6s} {ms}  vs refs {ratio}  {ofcopy}"
                  f"  {e.get('reason', '')[:120]}")
