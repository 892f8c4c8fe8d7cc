"""Vendor build options come from the target file, with the register budget of a
work-group computed from the description (no test for a level's name in code)."""

from pathlib import Path

from mcl.opencl import generate
from mcl.opencl.plan import LaunchPlan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_register_budget_follows_the_work_group_size():
    # perfect -> hopper gives 32 x 32 work-items: 65536 registers / 1024 = 64 each
    [k] = generate(str(EXAMPLES / "matmul" / "perfect.mcpl"), "hopper")
    assert "__attribute__((reqd_work_group_size(32, 32, 1)))" in k.source
    assert k.plan.options_for("NVIDIA CUDA") == ("-cl-nv-maxrregcount=64",)
    # other platforms get none of it
    assert k.plan.options_for("Portable Computing Language") == ()


def test_small_work_groups_keep_the_full_register_range():
    [k] = generate(str(EXAMPLES / "matmul" / "hopper_v3.mcpl"), "hopper")
    assert k.plan.options_for("NVIDIA CUDA") == ("-cl-nv-maxrregcount=255",)


def test_platform_options_survive_the_json_plan():
    [k] = generate(str(EXAMPLES / "matmul" / "perfect.mcpl"), "hopper")
    again = LaunchPlan.from_json(k.plan.to_json())
    assert again.options_for("NVIDIA CUDA") == k.plan.options_for("NVIDIA CUDA")
