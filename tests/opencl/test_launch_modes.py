"""benchmarks/opencl/launch_modes.py (which times the same launch on an idle device,
queued, cold, behind a read and behind a kernel that keeps the device awake) launches
what it claims, here on the OpenCL device at hand: an example verified against its
reference.py, and a time for each way of enqueueing it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "opencl"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity"))
import launch_modes  # noqa: E402


def test_each_mode_times_the_verified_launch(opencl_device):
    from mcl.opencl.conditions import cache_flush, keep_awake
    from mcl.opencl.device import runtime
    rt = runtime()
    enqueue, moved = launch_modes.example(rt.context, rt.queue, "vector_add/hopper_v1")
    assert moved > 0
    before = {"cold": cache_flush(rt.context, rt.queue, nbytes=1 << 20),
              "read": cache_flush(rt.context, rt.queue, nbytes=1 << 20, write=False),
              "busy": keep_awake(rt.context, rt.queue, steps=100)}
    for mode in launch_modes.MODES:
        got = launch_modes.times(enqueue, mode, 2, before)
        assert len(got) == 2 and all(t > 0 for t in got), mode
