"""128-bit copies from global into local memory issued as asynchronous copies where the
target has them and no one can tell (mcl.opencl.async_copy): which copies qualify, the
code and build options around them, and the results on the OpenCL device (PoCL in CI
builds them as plain copies; the NVIDIA build is timed in benchmarks/)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mcl
from mcl.mcpl import parse
from mcl.opencl import generate

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _kernel(phase: str, after: str = "") -> str:
    """A double-buffered sum over phases of 64 values per block: each phase's copy of
    the next tile, ``phase``, then the current tile's use, then ``after`` and the
    barrier."""
    return f"""module t;
import hopper;
hopper void t(const int n, const int phases, global float[phases, n] a,
              global float[n / 4] b) {{
  foreach (int i in n / 64 blocks) {{
    shared float[2, 64] s;
    foreach (int w in 1 warps) {{
      foreach (int t in 16 threads) {{
        float acc = 0.0;
        for (int u = 0; u < 4; u++) {{
          s[0, 4 * t + u] = a[0, i * 64 + 4 * t + u];
        }}
        barrier(shared);
        for (int l = 0; l < phases; l++) {{
          int cur = l % 2;
          if (l + 1 < phases) {{
            {phase}
          }}
          for (int q = 0; q < 4; q++) {{
            acc = acc + s[cur, 4 * ((t + 1) % 16) + q];
          }}
          {after}
          barrier(shared);
        }}
        b[i * 16 + t] = acc;
      }}
    }}
  }}
}}
"""


NEXT = """for (int u = 0; u < 4; u++) {
              s[1 - cur, 4 * t + u] = a[l + 1, i * 64 + 4 * t + u];
            }"""


def _source(text: str) -> str:
    (k,) = generate(parse(text, "t.mcpl"), "hopper")
    return k.source


def _sums(a: np.ndarray) -> np.ndarray:
    """b of the kernel: each thread's sum of its right neighbour's 4 values, all phases."""
    phases, n = a.shape
    x = a.reshape(phases, n // 64, 16, 4).sum(axis=(0, 3))
    return np.roll(x, -1, axis=1).reshape(n // 4)


def test_the_next_tile_is_copied_asynchronously():
    src = _source(_kernel(NEXT))
    assert "MCL_COPY128(float4, &s[(1 - cur) * 64 + 4 * t + u], " \
        "&a[(MCL_OFFSET)(l + 1) * n + i * 64 + 4 * t + u]);" in src
    # every barrier waits for the work-item's copies first
    assert src.count("MCL_COPY_WAIT();\n") == src.count("barrier(") == 2
    # the first tile, followed by nothing but the barrier, stays a plain copy
    assert "*(__local float4*)&s[0 * 64 + 4 * t + u] = *(__global const float4*)&a[" in src
    assert '#if defined(MCL_ASYNC_COPY) && defined(__NVPTX__)\n' \
        '#define MCL_COPY128(type, dst, src) __asm__ volatile(' \
        '"cp.async.cg.shared.global [%0], [%1], 16;"' in src
    assert "#define MCL_COPY128(type, dst, src) (*(__local type*)(dst) = " \
        "*(__global const type*)(src))" in src


def test_the_build_defines_the_asynchronous_copy_only_on_its_platform():
    (k,) = generate(parse(_kernel(NEXT), "t.mcpl"), "hopper")
    assert "-D MCL_ASYNC_COPY" in k.plan.options_for("NVIDIA CUDA")
    assert "-D MCL_ASYNC_COPY" not in k.plan.options_for("Portable Computing Language")


@pytest.mark.parametrize("phase, after, why", [
    # the thread reads the element it copies before the barrier
    (NEXT + "\n acc = acc + s[1 - cur, 4 * t];", "",
     "read before the barrier"),
    # ... or another thread's in the buffer being filled
    (NEXT, "acc = acc + s[1 - cur, 0];", "read of the buffer being filled"),
    # the buffer index is not provably different: cur may equal l % 3
    (NEXT.replace("s[1 - cur,", "s[l % 3,"), "", "index not apart"),
    # the copied array is written by the kernel: the copy may read it late
    (NEXT, "a[0, 0] = acc;", "source written"),
    # a break may skip the barrier
    (NEXT + "\n if (acc > 1000.0) { break; }", "", "break before the barrier"),
    # two elements of the copy's loop land on the same element
    ("""for (int h = 0; h < 2; h++) {
              for (int u = 0; u < 4; u++) {
                s[1 - cur, 4 * t + u] = a[l + 1, i * 64 + 4 * t + 4 * h + u];
              }
            }""", "", "one element written twice"),
])
def test_copies_that_could_be_seen_stay_plain(phase, after, why):
    src = _source(_kernel(phase, after))
    assert "    MCL_COPY128(" not in src, why
    assert "MCL_COPY_WAIT" not in src, why


def test_a_call_given_the_whole_array_keeps_the_copies_plain():
    # the function may read any element of s before the barrier
    text = _kernel(NEXT, "acc = acc + peek(s);").replace(
        "hopper void t(", "hopper float peek(float[2, 64] x) {\n  return x[1, 0];\n}\n\n"
        "hopper void t(")
    src = _source(text)
    assert "    MCL_COPY128(" not in src and "float peek(" in src


def test_no_asynchronous_copy_without_the_target_entry():
    # fermi's target has no [async_copy]: the same kernel translated there copies plainly
    text = _kernel(NEXT).replace("import hopper;", "import fermi;").replace(
        "hopper void", "fermi void")
    (k,) = generate(parse(text, "t.mcpl"), "fermi")
    assert "MCL_COPY" not in k.source


@pytest.mark.parametrize("phases, n", [(1, 64), (2, 128), (5, 192)])
def test_results_with_copies_made_asynchronous(opencl_device, tmp_path, phases, n):
    f = tmp_path / "t.mcpl"
    f.write_text(_kernel(NEXT))
    k = mcl.compile(f)
    a = np.random.default_rng(phases).uniform(-1, 1, (phases, n)).astype(np.float32)
    got = k(n=n, phases=phases, a=a, b=np.zeros(n // 4, np.float32))
    np.testing.assert_allclose(got["b"], _sums(a), rtol=1e-5, atol=1e-5)


def test_matmul_v12_copies_b_asynchronously_and_v11_not():
    (v12,) = generate(str(EXAMPLES / "matmul" / "hopper_v12.mcpl"), "hopper", specialize=True)
    assert v12.source.count("    MCL_COPY128(float4, &l_b[((1 - cur) * bk") == 1
    (v11,) = generate(str(EXAMPLES / "matmul" / "hopper_v11.mcpl"), "hopper", specialize=True)
    assert "MCL_COPY" not in v11.source


def test_asked_for_where_the_compiler_cannot_build_them_the_copies_stay_plain(opencl_device):
    """Built with -D MCL_ASYNC_COPY by a compiler that does not target PTX (PoCL on a
    CPU accepts the assembly and ignores it), the copies are plain and the result right."""
    import pyopencl as cl

    from mcl.opencl.device import runtime
    from mcl.opencl.plan import evaluate
    (k,) = generate(parse(_kernel(NEXT), "t.mcpl"), "hopper")
    rt = runtime()
    if "NVIDIA" in rt.device.platform.name:
        pytest.skip("the device builds asynchronous copies")
    prog = cl.Program(rt.context, k.source).build(options=["-D", "MCL_ASYNC_COPY"])
    n, phases = 128, 3
    a = np.random.default_rng(0).uniform(-1, 1, (phases, n)).astype(np.float32)
    b = np.zeros(n // 4, np.float32)
    mf = cl.mem_flags
    da = cl.Buffer(rt.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(rt.context, mf.WRITE_ONLY, b.nbytes)
    env = {"n": n, "phases": phases}
    args = {"n": np.int32(n), "phases": np.int32(phases), "a": da, "b": db}
    getattr(prog, k.plan.kernel)(rt.queue, [evaluate(e, env) for e in k.plan.global_size],
                                 [evaluate(e, env) for e in k.plan.local_size],
                                 *(args[x.name] for x in k.plan.arguments))
    cl.enqueue_copy(rt.queue, b, db)
    np.testing.assert_allclose(b, _sums(a), rtol=1e-5, atol=1e-5)


def test_a_target_file_with_an_incomplete_async_copy_entry_is_refused(tmp_path):
    from mcl.diagnostics import McplError
    from mcl.opencl.target import load_target
    hw = Path(mcl.__file__).parent / "hwdescs"
    (tmp_path / "hopper.hdl").write_text((hw / "hopper.hdl").read_text())
    text = (hw / "hopper.target").read_text()
    (tmp_path / "hopper.target").write_text(text.replace('wait = "cp.async.wait_all;"', ""))
    with pytest.raises(McplError) as e:
        load_target("hopper", [tmp_path])
    assert "[async_copy] needs the strings platform, copy, wait, compiler_macro" in str(e.value)
