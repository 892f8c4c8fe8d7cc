"""Where the vendor's compiler was asked and its machine code read (mcl.opencl.vendor,
mcl.opencl.sass: ptxas and cuobjdump beside an NVIDIA device), the time model's latency
part counts the bytes a warp keeps in flight in that code (Resources.in_flight) and the
time message says so; without it, the count from the kernel as before. gesummv
nvidia_v1's SASS keeps 768 B a warp in flight (18 loads in 3 rounds; the model counts
1152: benchmarks/results/perf/h200_2026-11-30/row_pieces_unroll/COUNTS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.analyses import Resources
from mcl.analyses.level import feedback_at_level
from mcl.mcpl import check
from mcl.opencl import vendor

ROOT = Path(__file__).resolve().parents[2]
GESUMMV = str(ROOT / "examples" / "gesummv" / "nvidia_v1.mcpl")


def _time(resources: Resources):
    lf = feedback_at_level(check(GESUMMV), "h200", values={"n": 4096},
                           resources={"gesummv": resources}, only=("time",))
    (d,) = [d for d in lf.diagnostics if d.code == "feedback-time"]
    return d


def test_the_latency_part_divides_by_what_the_compiled_code_keeps_in_flight():
    counted = _time(Resources(40, "NVIDIA compiler"))
    compiled = _time(Resources(40, "NVIDIA compiler", in_flight=768.0))
    assert counted.data["in_flight"] == pytest.approx(1152)
    assert counted.data["in_flight_source"] is None
    assert compiled.data["in_flight"] == 768 and compiled.data["in_flight_source"] == \
        "NVIDIA compiler"
    # Little's law: the same warps with two thirds of the bytes in flight wait 1.5 times
    assert compiled.data["parts"]["latency"] == pytest.approx(
        1.5 * counted.data["parts"]["latency"])
    # measured 40.9 us on the H200: the compiled code's count predicts it slower, nearer
    assert counted.data["seconds"] < compiled.data["seconds"] < 40.9e-6
    assert "the latency part counts the 768 B a warp keeps in flight in the code of the " \
           "NVIDIA compiler (its SASS)" in compiled.message
    assert "keeps in flight in the code" not in counted.message


def _sass(*lines: str) -> str:
    return "\n".join(f"        /*{0x100 + 16 * i:04x}*/                   {line} ;"
                     for i, line in enumerate(lines))


#: ptxas -v's report of a kernel
_REPORT = "ptxas info    : Used 24 registers, 1024 bytes smem, 0 bytes spill stores"


def _without_the_driver(monkeypatch, made) -> None:
    """mcl.opencl.sass.sass_of made ``made``, and the CUDA driver cannot load PTX (no
    cuda.bindings), so the vendor figures come from ptxas."""
    monkeypatch.setattr("mcl.opencl.sass.sass_of", lambda ptx, maxrreg=None: made)

    def no_driver(*_):
        raise RuntimeError("no cuda.bindings")
    monkeypatch.setattr(vendor, "load", no_driver)


def test_the_vendor_figures_read_the_bytes_in_flight_from_the_sass(monkeypatch):
    # two loads before their use, a loop: 256 B a round; ptxas's report gives registers
    sass = _sass("LDG.E.CONSTANT R4, desc[UR6][R2.64]", "LDG.E.CONSTANT R5, desc[UR6][R8.64]",
                 "FADD R20, R4, R5", "@!P0 BRA 0x100", "EXIT")
    _without_the_driver(monkeypatch, (_REPORT, sass))
    res = vendor._vendor_figures(b".target sm_90", "k", None)
    assert (res.registers, res.shared_bytes, res.in_flight) == (24, 1024, 256)
    # without ptxas and cuobjdump: no vendor figures from ptxas, so the estimate stays
    monkeypatch.setattr("mcl.opencl.sass.sass_of", lambda ptx, maxrreg=None: None)
    assert vendor._vendor_figures(b"", "k", None) is None


def test_ptxas_without_cuobjdump_still_gives_the_registers(monkeypatch):
    """ptxas's report without cuobjdump's SASS: the registers, no bytes in flight."""
    _without_the_driver(monkeypatch, (_REPORT, None))
    res = vendor._vendor_figures(b".target sm_90", "k", None)
    assert (res.registers, res.shared_bytes, res.in_flight) == (24, 1024, None)


def test_beside_the_gpu_the_vendor_figures_read_gesummv_s_sass():
    """GPU twin of the two above: on the GPU machine (NVIDIA's OpenCL driver, ptxas and
    cuobjdump), mcl.opencl.vendor reads gesummv nvidia_v1's 768 B a warp in flight."""
    import shutil
    if vendor.nvidia_device() is None:
        pytest.skip("no NVIDIA OpenCL device")
    if not (shutil.which("ptxas") and shutil.which("cuobjdump")):
        pytest.skip("no ptxas and cuobjdump (the CUDA toolkit)")
    (res,) = vendor.resources_of(GESUMMV, {"n": 4096}, "hopper").values()
    assert (res.registers, res.in_flight) == (40, 768)


def test_the_version_refined_is_timed_with_the_vendor_s_figures_too():
    """With the vendor's figures for the new version (mcl feedback beside the GPU), the
    version it refines is timed with its own vendor figures as well, not with the
    estimate: both times rest on the same kind of count. A stand-in vendor gives
    gesummv hopper_v1 16 B in flight a warp: its time grows past ten times hopper_v2's."""
    from mcl.analyses import feedback
    from mcl.analyses.previous import against_previous
    from mcl.diagnostics import info
    checked = check(str(ROOT / "examples" / "gesummv" / "hopper_v2.mcpl"))
    mine = {"gesummv": Resources(114, "NVIDIA compiler", in_flight=12288.0)}
    own = [d for d in feedback(checked, only=["time"], resources=mine)
           if d.code == "feedback-time"][0]
    slow = info("feedback-time", "predicted")
    slow.data.update(seconds=10 * own.data["seconds"],
                     parts={k: 10 * v for k, v in own.data["parts"].items()})
    calls = []

    def vendor(parent, level, values, specialize):
        calls.append((Path(parent.module.file).name, level))
        return {"gesummv": Resources(32, "NVIDIA compiler", in_flight=16.0)}
    assert against_previous(checked, resources=mine, computed=[slow])
    assert not against_previous(checked, resources=mine, computed=[slow], vendor=vendor)
    assert calls == [("hopper_v1.mcpl", None)]
    # without the new version's vendor figures the estimate is compared with the estimate
    assert against_previous(checked, resources={}, computed=[slow], vendor=vendor)
    assert len(calls) == 1
