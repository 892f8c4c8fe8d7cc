"""Hand-written single OpenCL kernels for the mcl.skel examples: the references
benchmarks/skel/run.py compares the skeletons with on one GPU."""

from __future__ import annotations

import numpy as np

SOURCE = r"""
__kernel void hand_saxpy(__global const float* x, __global const float* y, __global float* out,
                    const float a, const uint n)
{ size_t i = get_global_id(0); if (i < n) out[i] = a * x[i] + y[i]; }

// dot product: multiply and reduce in one kernel (per work-group sums), then one group
__kernel void hand_dot(__global const float* x, __global const float* y, __global float* partial,
                  const uint n, __local float* acc)
{
  uint lid = get_local_id(0);
  float s = 0.0f;
  for (uint i = get_global_id(0); i < n; i += get_global_size(0)) s += x[i] * y[i];
  acc[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
    if (lid < k) acc[lid] += acc[lid + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[get_group_id(0)] = acc[0];
}

__kernel void hand_sum(__global float* partial, const uint n, __local float* acc)
{
  uint lid = get_local_id(0);
  float s = 0.0f;
  for (uint i = lid; i < n; i += get_local_size(0)) s += partial[i];
  acc[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {
    if (lid < k) acc[lid] += acc[lid + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) partial[0] = acc[0];
}

__kernel void hand_blur(__global const float* in, __global float* out, __constant float* w,
                   const int rows, const int cols)
{
  int c = get_global_id(0), r = get_global_id(1);
  if (r >= rows || c >= cols) return;
  float s = 0.0f;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      s += w[(i + 2) * 5 + j + 2]
           * in[clamp(r + i, 0, rows - 1) * cols + clamp(c + j, 0, cols - 1)];
  out[r * cols + c] = s;
}

__kernel void hand_heat(__global const float* in, __global float* out, const int rows,
                        const int cols)
{
  int c = get_global_id(0), r = get_global_id(1);
  if (r >= rows || c >= cols) return;
  float v = in[r * cols + c];
  float up = in[max(r - 1, 0) * cols + c], down = in[min(r + 1, rows - 1) * cols + c];
  float left = in[r * cols + max(c - 1, 0)], right = in[r * cols + min(c + 1, cols - 1)];
  out[r * cols + c] = v + 0.2f * (up + down + left + right - 4.0f * v);
}

__kernel void hand_mandel(__global int* out, const int width, const int height, const int max_iter)
{
  int i = get_global_id(0);
  if (i >= width * height) return;
  float x0 = -2.0f + 3.0f * (i % width) / width;
  float y0 = -1.5f + 3.0f * (i / width) / height;
  float x = 0.0f, y = 0.0f;
  int k = 0;
  while (k < max_iter && x * x + y * y <= 4.0f) {
    float t = x * x - y * y + x0;
    y = 2.0f * x * y + y0;
    x = t;
    ++k;
  }
  out[i] = k;
}

// matrix multiplication: 64x64 blocks of C per work-group from 16-wide slices of A
// and B in local memory, 4x4 results per work-item (the structure of the skeleton's
// specialised AllPairs, written for float multiply-add)
#define TM 64
#define TN 64
#define TK 16
#define RM 4
#define RN 4
__kernel void hand_matmul(__global const float* A, __global const float* B, __global float* C,
                          const int n, const int d, const int m)
{
  __local float As[TK][TM];
  __local float Bs[TK][TN];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * (TN / RN) + tx;
  const int row0 = get_group_id(1) * TM, col0 = get_group_id(0) * TN;
  float acc[RM][RN];
  for (int i = 0; i < RM; ++i) for (int j = 0; j < RN; ++j) acc[i][j] = 0.0f;
  for (int t = 0; t < d; t += TK) {
    for (int e = tid; e < TM * TK; e += 256) {
      int r = e / TK, k = e % TK;
      As[k][r] = (row0 + r < n && t + k < d) ? A[(row0 + r) * d + t + k] : 0.0f;
    }
    for (int e = tid; e < TK * TN; e += 256) {
      int k = e / TN, c = e % TN;
      Bs[k][c] = (t + k < d && col0 + c < m) ? B[(t + k) * m + col0 + c] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TK; ++k) {
      float a[RM], b[RN];
      for (int i = 0; i < RM; ++i) a[i] = As[k][ty + i * (TM / RM)];
      for (int j = 0; j < RN; ++j) b[j] = Bs[k][tx + j * (TN / RN)];
      for (int i = 0; i < RM; ++i)
        for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * b[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) {
      int r = row0 + ty + i * (TM / RM), c = col0 + tx + j * (TN / RN);
      if (r < n && c < m) C[r * m + c] = acc[i][j];
    }
}
"""


class Handwritten:
    """The hand-written kernels on one device (queue)."""

    def __init__(self, context, queue):
        import pyopencl as cl
        self.cl, self.ctx, self.queue = cl, context, queue
        self.prog = cl.Program(context, SOURCE).build(devices=[queue.device])
        self.k = {name: cl.Kernel(self.prog, f"hand_{name}")
                  for name in ("saxpy", "dot", "sum", "blur", "heat", "mandel", "matmul")}

    def buffer(self, array=None, nbytes=None):
        cl = self.cl
        if array is not None:
            return cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR,
                             hostbuf=np.ascontiguousarray(array))
        return cl.Buffer(self.ctx, cl.mem_flags.READ_WRITE, nbytes)

    def read(self, buf, shape, dtype=np.float32):
        out = np.empty(shape, dtype)
        self.cl.enqueue_copy(self.queue, out, buf, is_blocking=True)
        return out

    @staticmethod
    def _up(n, k):
        return (n + k - 1) // k * k

    def saxpy(self, x, y, out, a, n):
        self.k["saxpy"](self.queue, (self._up(n, 256),), (256,), x, y, out, np.float32(a),
                        np.uint32(n))

    def dot(self, x, y, partial, n, groups=1024):
        cl = self.cl
        self.k["dot"](self.queue, (groups * 256,), (256,), x, y, partial, np.uint32(n),
                      cl.LocalMemory(1024))
        self.k["sum"](self.queue, (256,), (256,), partial, np.uint32(groups),
                      cl.LocalMemory(1024))

    def blur(self, src, dst, w, rows, cols):
        self.k["blur"](self.queue, (self._up(cols, 16), self._up(rows, 16)), (16, 16), src, dst,
                       w, np.int32(rows), np.int32(cols))

    def heat(self, a, b, rows, cols, iterations):
        for _ in range(iterations):
            self.k["heat"](self.queue, (self._up(cols, 16), self._up(rows, 16)), (16, 16), a, b,
                           np.int32(rows), np.int32(cols))
            a, b = b, a
        return a

    def mandel(self, out, width, height, max_iter):
        self.k["mandel"](self.queue, (self._up(width * height, 256),), (256,), out,
                         np.int32(width), np.int32(height), np.int32(max_iter))

    def mcl_matmul(self, n: int, d: int, m: int):
        """MCL's fastest matmul (examples/matmul/hopper_v10.mcpl, generated with the sizes
        as compile-time constants; 0.9 of cuBLAS on the H100) as ``run(a, b, c)``, or
        None where the sizes do not divide its tiles (128 x 128 blocks, k by 16)."""
        if n % 128 or m % 128 or d % 16 or not n or not m or not d:
            return None
        from pathlib import Path

        from mcl.opencl import generate
        from mcl.opencl.plan import evaluate
        root = Path(__file__).resolve().parents[2]
        (kernel,) = generate(str(root / "examples" / "matmul" / "hopper_v10.mcpl"), "hopper",
                             specialize=True)
        env = {"n": n, "m": m, "p": d}
        options = [c.option(env[c.name]) for c in kernel.plan.compile_time]
        options += list(kernel.plan.options_for(self.queue.device.platform.name))
        prog = self.cl.Program(self.ctx, kernel.source).build(options=options,
                                                              devices=[self.queue.device])
        k = self.cl.Kernel(prog, kernel.plan.kernel)
        gsize = tuple(evaluate(e, env) for e in kernel.plan.global_size)
        lsize = tuple(evaluate(e, env) for e in kernel.plan.local_size)

        def run(a, b, c):
            k(self.queue, gsize, lsize, c, a, b)
        return run

    def matmul(self, a, b, c, n, d, m):
        self.k["matmul"](self.queue, (self._up(m, 64) // 4, self._up(n, 64) // 4), (16, 16), a,
                         b, c, np.int32(n), np.int32(d), np.int32(m))
