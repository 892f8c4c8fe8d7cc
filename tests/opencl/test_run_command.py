"""`mcl run` end to end on the OpenCL device (small sizes): verified against the
example's reference.py, else against perfect.mcpl beside the kernel, else marked
unverified; bad input gives a clear message and a non-zero exit status."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from tests.opencl.conftest import EXAMPLES

KERNELS = EXAMPLES.parent / "tests" / "opencl" / "kernels"


def test_run_against_reference(opencl_device, run_cli):
    code, out, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl",
                             "--set", "n=1000", "--repeat", "1")
    assert code == 0, err
    assert "matches the reference" in out
    assert "GFLOP/s" in out and "GB/s of global accesses" in out and "s (best of 1" in out
    # vector_add moves each of its three arrays once: 12 bytes per element
    found = re.search(r"time ([\d.]+) (ms|µs) .*, ([\d.]+) GB/s of compulsory traffic", out)
    assert found, out
    seconds = float(found.group(1)) * (1e-3 if found.group(2) == "ms" else 1e-6)
    assert float(found.group(3)) * 1e9 * seconds == pytest.approx(12 * 1000, rel=0.02)


def test_run_says_how_it_timed(opencl_device, run_cli, monkeypatch):
    """Warm by default, each timed run queued behind a short kernel that keeps the
    device awake; with --cold behind a flush of the caches (a write, then a read), as
    the feedback's predicted time assumes."""
    from mcl.opencl import conditions
    before = {"flush": [], "awake": []}

    def counting(name, real, **small):
        def made(context, queue, *a, **kw):
            enqueue = real(context, queue, *a, **{**kw, **small})

            def counted():
                before[name].append(1)
                enqueue()
            return counted
        return made
    monkeypatch.setattr(conditions, "cache_flush",
                        counting("flush", conditions.cache_flush, nbytes=1 << 20))
    monkeypatch.setattr(conditions, "keep_awake",
                        counting("awake", conditions.keep_awake, steps=100))
    args = ("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl", "--set", "n=1000",
            "--repeat", "2")
    code, out, err = run_cli(*args)
    assert code == 0, err
    assert "(best of 2, warm: the caches as the previous run left them)" in out
    assert not before["flush"] and len(before["awake"]) >= 2
    code, out, err = run_cli(*args, "--cold")
    assert code == 0, err
    assert "(best of 2, cold: the caches flushed before each)" in out
    assert "matches the reference" in out
    assert len(before["flush"]) >= 2    # each timed run (the warm-up ones too)


def test_float_parameters_keep_their_example_values(opencl_device, run_cli):
    """riskFree = 0.02 and volatility = 0.30 (integer plan evaluation once made them
    0, and the reference then divided by zero just like the kernel)."""
    code, out, err = run_cli("run", EXAMPLES / "black_scholes" / "hopper_v2.mcpl",
                             "--set", "n=1003", "--repeat", "1")
    assert code == 0, err
    assert "riskFree=0.02, volatility=0.3" in out
    assert out.count("matches the reference") == 2 and "max abs error 0;" not in out


def test_run_against_the_perfect_version(opencl_device, run_cli, tmp_path):
    for name in ("hopper_v1.mcpl", "perfect.mcpl"):
        shutil.copy(EXAMPLES / "vector_add" / name, tmp_path / name)
    code, out, err = run_cli("run", tmp_path / "hopper_v1.mcpl", "--set", "n=777",
                             "--repeat", "1")
    assert code == 0, err
    assert "matches vector_add_perfect (the perfect version" in out
    assert "GFLOP/s" in out


def test_run_without_reference_is_unverified(opencl_device, run_cli):
    code, out, err = run_cli("run", KERNELS / "block_scratch.mcpl", "--set", "n=300",
                             "--repeat", "1")
    assert code == 0, err
    assert "UNVERIFIED" in out


def test_run_wrong_set_name(run_cli):
    code, out, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl",
                             "--set", "q=4")
    assert code == 2
    assert "no size parameter 'q'" in err and "its sizes: n" in err


def test_run_bad_set_value(run_cli):
    code, _, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl", "--set", "n")
    assert code == 2 and "NAME=VALUE" in err


def test_run_size_that_does_not_divide(run_cli):
    code, out, err = run_cli("run", EXAMPLES / "matmul" / "fermi.mcpl",
                             "--set", "n=6", "--set", "m=32", "--set", "p=256")
    assert code == 1
    assert "requires n to be a multiple of 4, not 6" in err


def test_run_sum_of_sizes_that_does_not_divide(run_cli):
    # convolution hopper_v4 loads whole runs of 4 of the input's rows (w + fw - 1 long)
    code, _, err = run_cli("run", EXAMPLES / "convolution" / "hopper_v4.mcpl", "--set", "h=32",
                           "--set", "w=128", "--set", "fh=3", "--set", "fw=3")
    assert code == 1
    assert "requires w + fw - 1 to be a multiple of 4, not 130" in err


def test_run_missing_file(run_cli, tmp_path):
    code, _, err = run_cli("run", tmp_path / "nothing.mcpl")
    assert code == 1
    assert "no such MCPL file" in err


def test_run_reports_a_wrong_result(opencl_device, run_cli, tmp_path):
    # a "refined" version that adds one too many: the perfect version catches it
    shutil.copy(EXAMPLES / "vector_add" / "perfect.mcpl", tmp_path / "perfect.mcpl")
    src = (EXAMPLES / "vector_add" / "hopper_v1.mcpl").read_text()
    assert "a[k] + b[k]" in src
    (tmp_path / "hopper_v1.mcpl").write_text(src.replace("a[k] + b[k]", "a[k] + b[k] + 1.0"))
    code, out, err = run_cli("run", tmp_path / "hopper_v1.mcpl", "--set", "n=5",
                             "--repeat", "1")
    assert code == 1
    assert "DIFFERS FROM" in out and "does not match" in err


def test_run_negative_or_fractional_size(run_cli):
    # a negative size is the kernel's error (1); a fraction for an int, a usage error (2)
    for value, expected, message in (
            ("-5", 1, "'n' is a size of 'vector_add': it cannot be negative"),
            ("2.5", 2, "--set n=2.5: 'n' is an int parameter of 'vector_add' and takes whole "
                       "numbers")):
        code, out, err = run_cli("run", "--target", "hopper",
                                 EXAMPLES / "vector_add" / "perfect.mcpl", "--set", f"n={value}")
        assert code == expected, err
        assert message in err and "Traceback" not in err


def test_run_at_size_zero_says_there_is_nothing_to_time(opencl_device, run_cli):
    code, out, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl",
                             "--set", "n=0", "--repeat", "1")
    assert code == 0, err
    assert "matches the reference" in out
    assert "time: nothing to launch at these sizes" in out and "inf" not in out


def test_run_without_a_value_for_a_size_says_how_to_give_one(run_cli):
    code, _, err = run_cli("run", KERNELS / "block_scratch.mcpl")
    assert code == 2
    assert "'block_scratch' needs a value for n (it has no example value): " \
           "give one with --set n=..." in err
    assert "when calling the kernel" not in err


def test_run_repeat_must_be_positive(run_cli):
    code, _, err = run_cli("run", KERNELS / "block_scratch.mcpl", "--set", "n=4",
                           "--repeat", "0")
    assert code == 2 and "--repeat: 0 timed runs" in err


def test_run_says_which_sizes_are_example_values(opencl_device, run_cli, tmp_path):
    src = (KERNELS / "block_scratch.mcpl").read_text()
    assert "const int n," in src
    (tmp_path / "k.mcpl").write_text(src.replace("const int n,", "const int n = 1000,"))
    code, out, err = run_cli("run", tmp_path / "k.mcpl", "--repeat", "1")
    assert code == 0, err
    assert "; n=1000 (example values of the kernel; others with --set NAME=VALUE)" in out


def test_run_shows_the_progress_of_slow_timing(opencl_device, run_cli, monkeypatch):
    from mcl.opencl import commands
    monkeypatch.setattr(commands, "PROGRESS_AFTER_S", 0.0)
    code, out, err = run_cli("run", KERNELS / "block_scratch.mcpl", "--set", "n=300",
                             "--repeat", "2")
    assert code == 0, err
    assert "timing: launch 4 of 4" in err and err.endswith("\n")


def test_run_of_a_kernel_above_the_target_gives_its_bandwidth(opencl_device, run_cli):
    """perfect's 'main' memory is the target's global memory once translated."""
    code, out, err = run_cli("run", "--target", "hopper", EXAMPLES / "vector_add" / "perfect.mcpl",
                             "--set", "n=1000", "--repeat", "1")
    assert code == 0, err
    assert "GFLOP/s" in out and "GB/s" in out


def test_run_of_a_kernel_above_the_target_counts_its_own_operations(opencl_device, run_cli):
    """GFLOP/s of perfect's matmul at fermi: 2nmp operations, not those of the
    translation's guarded threads (upper bounds: 16 times as many at these sizes)."""
    import re
    code, out, err = run_cli("run", "--target", "fermi", EXAMPLES / "matmul" / "perfect.mcpl",
                             "--set", "n=64", "--set", "m=64", "--set", "p=64", "--repeat", "3")
    assert code == 0, err
    found = re.search(r"time ([\d.]+) (ms|µs) .*?, ([\d.]+) GFLOP/s, ([\d.]+) GB/s", out)
    assert found, out
    seconds = float(found.group(1)) * (1e-3 if found.group(2) == "ms" else 1e-6)
    gflops = float(found.group(3))
    assert gflops * 1e9 * seconds == pytest.approx(2 * 64 ** 3, rel=0.1)


def test_run_refuses_a_kernel_wrong_at_its_sizes_before_it_runs(opencl_device, run_cli,
                                                                tmp_path):
    """gesummv hopper_v1 names its partial sums one by one for unroll = 4: with unroll =
    2 it reads ta[2] and ta[3], which do not exist. `mcl run` says so before it runs,
    whether or not a reference would then catch the result (mcl check's mcpl-index-range:
    the index and the dimension are constants)."""
    source = (EXAMPLES / "gesummv" / "hopper_v1.mcpl").read_text()
    assert "const int unroll = 4;" in source
    (tmp_path / "hopper_v1.mcpl").write_text(
        source.replace("const int unroll = 4;", "const int unroll = 2;"))
    code, out, err = run_cli("run", tmp_path / "hopper_v1.mcpl", "--set", "n=256",
                             "--repeat", "1")
    assert code == 1 and "error: index 2 of 'ta' is outside its dimension (0 .. 1)" in err
    assert "[mcpl-index-range]" in err and "time" not in out


def test_run_refuses_a_kernel_that_writes_outside_its_arrays(opencl_device, run_cli,
                                                            tmp_path):
    """reduction perfect updating result[n - 5001], -1 at n = 5000: launched on PoCL it
    corrupts the process's heap and the process aborts. `mcl run` warns of the access
    and does not launch it."""
    source = (EXAMPLES / "reduction" / "perfect.mcpl").read_text()
    assert "atomicAdd(result[0], input[i]);" in source
    (tmp_path / "perfect.mcpl").write_text(source.replace("result[0]", "result[n - 5001]"))
    shutil.copy(EXAMPLES / "reduction" / "reference.py", tmp_path / "reference.py")
    code, out, err = run_cli("run", tmp_path / "perfect.mcpl", "--target", "hopper",
                             "--set", "n=5000", "--repeat", "1")
    assert code == 1 and "warning: the index of result is -1, outside its 1 element" in err
    assert ("error: not run: at these sizes the kernel writes outside its arrays (1 access, "
            "warned of above)") in err and "[opencl-out-of-bounds]" in err
    assert "time" not in out


def test_run_refuses_a_store_one_past_the_end(opencl_device, run_cli, tmp_path):
    """vector_add perfect storing c[i + 1]: its last thread writes past c."""
    source = (EXAMPLES / "vector_add" / "perfect.mcpl").read_text()
    assert "c[i] = a[i] + b[i];" in source
    (tmp_path / "perfect.mcpl").write_text(source.replace("c[i] = ", "c[i + 1] = "))
    code, _, err = run_cli("run", tmp_path / "perfect.mcpl", "--target", "hopper",
                           "--set", "n=1000", "--repeat", "1")
    assert code == 1 and "the index of c (i + 1) reaches 1000 (at i = 999)" in err
    assert "not run: at these sizes the kernel writes outside its arrays" in err
    assert "--unchecked launches it" in err


_DIVERGENT = """module div;
import hopper;
hopper void div(const int n = 4096, global float[n] out, global float[n] inp) {
  foreach (int b in n / 256 blocks) {
    shared float[256] tile;
    foreach (int w in 8 warps) {
      foreach (int t in 32 threads) {
        int tid = w * 32 + t;
        tile[tid] = inp[b * 256 + tid];
        if (tid < 128) {
          barrier(shared);
        }
        out[b * 256 + tid] = tile[255 - tid];
      }
    }
  }
}
"""


def test_run_refuses_a_barrier_not_every_thread_reaches(opencl_device, run_cli, tmp_path):
    """Launched, it killed the process on PoCL (a segmentation fault); a GPU may hang."""
    (tmp_path / "div.mcpl").write_text(_DIVERGENT)
    code, out, err = run_cli("run", tmp_path / "div.mcpl", "--repeat", "1")
    assert code == 1 and "[feedback-divergent-barrier]" in err
    assert "error: not run: 1 barrier that not every unit of a work-group reaches" in err
    assert "--unchecked launches it" in err and "time" not in out
    import mcl
    from mcl.diagnostics import McplError
    k = mcl.compile(tmp_path / "div.mcpl")
    with pytest.raises(McplError) as e:
        k(n=256, inp=np.ones(256, np.float32), out=np.zeros(256, np.float32))
    assert e.value.diagnostics[0].code == "opencl-divergent-barrier"


def test_run_prints_no_warning_for_a_kernel_written_for_its_sizes(opencl_device, run_cli):
    code, out, err = run_cli("run", EXAMPLES / "gesummv" / "hopper_v1.mcpl", "--set", "n=256",
                             "--repeat", "1")
    assert code == 0, err
    assert "feedback-out-of-bounds" not in err and "feedback-empty-loop" not in err


def test_run_of_a_kernel_that_fails_on_the_device_says_so(opencl_device, run_cli,
                                                          monkeypatch):
    """NVIDIA's driver stops a kernel that writes outside its local memory and reports
    it when the results are read (clEnqueueReadBuffer failed: OUT_OF_RESOURCES, matmul
    hopper_v4's variants with 512 threads, benchmarks/fidelity/wrong_variants.py): a
    message with the kernel and the device, not an internal error."""
    import pyopencl as cl

    def fail(*args, **kwargs):
        raise cl.RuntimeError("clEnqueueReadBuffer failed: OUT_OF_RESOURCES")

    monkeypatch.setattr(cl, "enqueue_copy", fail)
    code, out, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl",
                             "--set", "n=1000", "--repeat", "1")
    assert code != 0
    assert "internal error" not in err and "Traceback" not in err
    assert "'vector_add' failed on" in err and "OUT_OF_RESOURCES" in err
    assert "[opencl-kernel-failed]" in err


def test_run_gives_the_problems_operations_where_a_reference_counts_them(
        opencl_device, run_cli, tmp_path):
    """gesummv hopper_v3's tree steps (`if (t < s)`) are counted for every lane: without
    a reference.py the GFLOP/s are an upper bound and say so; beside one, they are the
    problem's operations (4n^2 + 3n), the same for every version."""
    source = (EXAMPLES / "gesummv" / "hopper_v3.mcpl").read_text()
    (tmp_path / "hopper_v3.mcpl").write_text(source)
    args = ("run", tmp_path / "hopper_v3.mcpl", "--set", "n=256", "--repeat", "1")
    code, out, err = run_cli(*args)
    assert code == 0 and "UNVERIFIED" in out, err
    assert ", at most " in out and " GFLOP/s" in out
    shutil.copy(EXAMPLES / "gesummv" / "reference.py", tmp_path / "reference.py")
    code, out, err = run_cli(*args)
    assert code == 0 and "matches the reference" in out, err
    found = re.search(r"time ([\d.]+) (ms|µs) .*?, ([\d.]+) GFLOP/s", out)
    assert found and ", at most " not in out, out
    seconds = float(found.group(1)) * (1e-3 if found.group(2) == "ms" else 1e-6)
    assert float(found.group(3)) * 1e9 * seconds == pytest.approx(4 * 256 ** 2 + 3 * 256,
                                                                  rel=0.02)


def test_run_seed_must_not_be_negative(run_cli):
    code, _, err = run_cli("run", KERNELS / "block_scratch.mcpl", "--set", "n=4",
                           "--seed", "-1")
    assert code == 2 and "--seed: -1; give 0 or more" in err


def test_run_takes_an_integer_size_written_with_an_exponent(opencl_device, run_cli):
    """`--set n=1e3` is the integer 1000 for an integer parameter: the reference's inputs
    get an int (numpy refused the float 1000.0 as a shape), the header prints n=1000."""
    code, out, err = run_cli("run", EXAMPLES / "vector_add" / "hopper_v1.mcpl",
                             "--set", "n=1e3", "--repeat", "1")
    assert code == 0, err
    assert "n=1000" in out and "n=1000.0" not in out and "matches the reference" in out


def test_run_of_a_folder_says_it_is_one(run_cli):
    code, _, err = run_cli("run", EXAMPLES / "matmul")
    assert code == 1 and "a folder, not an MCPL file" in err and "mcl versions" in err


def test_run_of_a_level_without_target_lists_the_levels_that_have_one(run_cli):
    code, _, err = run_cli("run", EXAMPLES / "vector_add" / "perfect.mcpl")
    assert code == 1 and "'perfect' has no code-generation target" in err
    listed = err.split("target file (")[1].split(")")[0].split(", ")
    assert "hopper" in listed and "h200" in listed and "fermi" in listed   # not only leaves
    assert "perfect" not in listed and "gpu" not in listed


def test_run_of_a_function_the_file_lacks_names_its_kernels(run_cli):
    code, _, err = run_cli("run", "-t", "hopper", EXAMPLES / "vector_add" / "perfect.mcpl",
                           "--function", "nosuch")
    assert code == 1
    assert "has no function 'nosuch'" in err and "its kernels: vector_add" in err


def test_gen_into_a_file_instead_of_a_folder(run_cli, tmp_path):
    (tmp_path / "f").write_text("")
    code, _, err = run_cli("gen", EXAMPLES / "vector_add" / "hopper_v1.mcpl", "-o", tmp_path / "f")
    assert code == 2 and f"mcl gen: error: cannot write to '{tmp_path / 'f'}': it is a " \
        "file (-o names the folder" in err


def test_progress_in_a_log_is_a_line_a_quarter(monkeypatch):
    """Redirected to a file, the timing progress is whole lines (no carriage returns that
    run the updates into one line of the log)."""
    import io

    from mcl.opencl import commands
    monkeypatch.setattr(commands, "PROGRESS_AFTER_S", 0.0)
    log = io.StringIO()
    progress = commands._Progress(log)
    for done in range(1, 13):
        progress(done, 12)
    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines() == [f"  timing: launch {d} of 12" for d in (3, 6, 9, 12)]


def test_python_dash_m_mcl_runs_the_command():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "mcl", "--help"], capture_output=True,
                         text=True, check=False)
    assert out.returncode == 0 and out.stdout.startswith("usage: mcl")


def test_a_build_with_remarks_gives_no_python_warning(opencl_device):
    """A build whose log is not empty (the vendor compiler's remarks on generated code)
    succeeds without pyopencl's CompilerWarning, which only cluttered mcl's output."""
    import warnings

    import pyopencl as cl

    from mcl.opencl.device import build_program, runtime
    source = '#warning "a remark"\n__kernel void k(__global int *a) { a[0] = %d; }'
    context = runtime(None).context
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_program(context, source % 7)
    with pytest.warns(cl.CompilerWarning):      # what pyopencl says of it on its own
        cl.Program(context, source % 8).build()


def test_run_refuses_a_store_outside_its_array_under_a_bool_condition(opencl_device, run_cli,
                                                                      tmp_path):
    """matmul hopper_v6 with its buffer index mistyped (``cur = l % 33``): the next
    phase's stores ``l_a[1 - cur, ...]`` under ``if (more)`` leave the buffer. `mcl run`
    launched it and PoCL died of a segmentation fault; now it is refused."""
    source = (EXAMPLES / "matmul" / "hopper_v6.mcpl").read_text()
    assert "int cur = l % 2;" in source and "if (more) {" in source
    (tmp_path / "hopper_v6.mcpl").write_text(source.replace("int cur = l % 2;",
                                                            "int cur = l % 33;"))
    code, out, err = run_cli("run", tmp_path / "hopper_v6.mcpl", "--set", "n=64",
                             "--set", "m=64", "--set", "p=64", "--repeat", "1")
    assert code == 1 and "l_a (1 - cur) reaches" in err
    assert "[opencl-out-of-bounds]" in err and "time" not in out


def test_run_refuses_a_kernel_that_reads_outside_its_arrays(opencl_device, run_cli,
                                                           tmp_path):
    """vector_add gpu_v1 reading a[i + 100000000]: launched on PoCL, the process died
    of a segmentation fault; `mcl run` now warns of the load and does not launch it
    (--unchecked would)."""
    source = (EXAMPLES / "vector_add" / "gpu_v1.mcpl").read_text()
    assert source.count("a[i]") == 1
    (tmp_path / "gpu_v1.mcpl").write_text(source.replace("a[i]", "a[i + 100000000]"))
    code, out, err = run_cli("run", tmp_path / "gpu_v1.mcpl", "--target", "hopper",
                             "--set", "n=4096", "--repeat", "1")
    assert code == 1 and "warning: the index of a (i + 100000000) reaches" in err
    assert ("error: not run: at these sizes the kernel reads outside its arrays (1 access, "
            "warned of above); launched, it would read memory it does not own") in err
    assert "[opencl-out-of-bounds]" in err and "time" not in out


def test_run_of_a_kernel_whose_data_choose_an_element_outside_reports_it(
        opencl_device, run_cli, tmp_path):
    """spmv_csr hopper_v1 reading x[colIdx[k] * 1000000]: no check before the launch can
    see that the element lies outside x (the data choose it), and PoCL's process died of
    a segmentation fault with no word of why. The kernel mcl run launches checks such an
    index as it runs: the run is an error that names the access, its index and x's
    extent, on any device. --unchecked launches the kernel as written (not tried here:
    on a CPU device it kills the process)."""
    source = (EXAMPLES / "spmv_csr" / "hopper_v1.mcpl").read_text()
    assert "x[colIdx[k]]" in source
    shutil.copy(EXAMPLES / "spmv_csr" / "reference.py", tmp_path / "reference.py")
    sizes = ("--set", "nrRows=128", "--set", "nrCols=256", "--set", "nnz=128", "--repeat", "1")
    (tmp_path / "hopper_v1.mcpl").write_text(source)
    code, out, err = run_cli("run", tmp_path / "hopper_v1.mcpl", *sizes)
    assert code == 0 and "y: matches the reference" in out
    (tmp_path / "hopper_v1.mcpl").write_text(source.replace("x[colIdx[k]]",
                                                            "x[colIdx[k] * 1000000]"))
    code, out, err = run_cli("run", tmp_path / "hopper_v1.mcpl", *sizes)
    assert code == 1 and "[opencl-data-out-of-bounds]" in err, err
    # the first access to leave x is named (the loop's or its tail's)
    assert re.search(r"hopper_v1\.mcpl:(35|40):33: error: 'spmv' stopped on .*: "
                     r"x\[colIdx\[k\] \* 1000000\] reached index [0-9,]+, ", err), err
    assert "where x has 256 elements" in err and "time" not in out
