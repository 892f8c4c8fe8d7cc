// Hand-written SGEMM for finding what the generator should emit (matmul_variants.py):
// the thread map of examples/matmul/hopper_v4 (128 x 128 tile per 256 work-items,
// 8 x 8 results each as runs of 4, bk = BK, double-buffered local tiles) with
// 128-bit loads from global and local memory and no bounds checks
// (n, m must be multiples of 128, p of BK; BK = 8 unless built with -DBK=...).
// -DWARPTILE: each warp computes a 64 x 32 part of the tile (4 x 8 lanes, runs of 4
// rows and columns): fewer distinct shared addresses per warp.
// -DSCALAR_GLOBAL: the global loads element by element and bounds-checked, as the
// generated kernels of hopper_v3/v4 do: the cost of scalar global loads alone.
#ifndef BK
#define BK 8
#endif
__attribute__((reqd_work_group_size(32, 8, 1)))
__kernel void matmul(const int n, const int m, const int p,
                     __global float* restrict c,
                     __global const float* restrict a,
                     __global const float* restrict b)
{
    __local float l_a[2 * BK * 132] __attribute__((aligned(16)));
    __local float l_b[2 * BK * 128] __attribute__((aligned(16)));
    const int bi = get_group_id(1), bj = get_group_id(0);
    const int tid = get_local_id(1) * 32 + get_local_id(0);
#ifdef WARPTILE
    const int lane = tid % 32, w = tid / 32;
    const int ra = (w / 4) * 64 + 4 * (lane / 4), cb = (w % 4) * 32 + 4 * (lane % 4);
    const int rstep = 32, cstep = 16;     // the second run of rows / columns
#else
    const int ra = 4 * (tid / 16), cb = 4 * (tid % 16);
    const int rstep = 64, cstep = 64;
#endif
    const int ar = tid / 2, aq = (tid % 2) * 4;
    const int bq = tid / 32, bc = (tid % 32) * 4;
    const int nrPhases = p / BK;
    __global const float* pa = a + (bi * 128 + ar) * p + aq;
    __global const float* pb = b + bq * m + bj * 128 + bc;
    float sums[64];
    for (int e = 0; e < 64; e++) sums[e] = 0.0f;
    float4 an[BK / 8], bn[BK / 8];
    #pragma unroll
    for (int h = 0; h < BK / 8; h++) {
#ifdef SCALAR_GLOBAL
        an[h] = (float4)(pa[8 * h], pa[8 * h + 1], pa[8 * h + 2], pa[8 * h + 3]);
        bn[h] = (float4)(pb[8 * h * m], pb[8 * h * m + 1], pb[8 * h * m + 2], pb[8 * h * m + 3]);
#else
        an[h] = *(__global const float4*)(pa + 8 * h);
        bn[h] = *(__global const float4*)(pb + 8 * h * m);
#endif
        l_a[(8 * h + aq + 0) * 132 + ar] = an[h].s0; l_a[(8 * h + aq + 1) * 132 + ar] = an[h].s1;
        l_a[(8 * h + aq + 2) * 132 + ar] = an[h].s2; l_a[(8 * h + aq + 3) * 132 + ar] = an[h].s3;
        *(__local float4*)&l_b[(8 * h + bq) * 128 + bc] = bn[h];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int l = 0; l < nrPhases; l++) {
        const int cur = l % 2;
        const bool more = l + 1 < nrPhases;
        if (more) {
            #pragma unroll
            for (int h = 0; h < BK / 8; h++) {
#ifdef SCALAR_GLOBAL
                { __global const float* qa = pa + (l + 1) * BK + 8 * h; int k = (l + 1) * BK + 8 * h + aq; int i = bi * 128 + ar;
                  an[h] = (float4)(i < n && k < p ? qa[0] : 0.0f, i < n && k + 1 < p ? qa[1] : 0.0f, i < n && k + 2 < p ? qa[2] : 0.0f, i < n && k + 3 < p ? qa[3] : 0.0f); }
                { __global const float* qb = pb + ((l + 1) * BK + 8 * h) * m; int k = (l + 1) * BK + 8 * h + bq; int j = bj * 128 + bc;
                  bn[h] = (float4)(k < p && j < m ? qb[0] : 0.0f, k < p && j + 1 < m ? qb[1] : 0.0f, k < p && j + 2 < m ? qb[2] : 0.0f, k < p && j + 3 < m ? qb[3] : 0.0f); }
#else
                an[h] = *(__global const float4*)(pa + (l + 1) * BK + 8 * h);
                bn[h] = *(__global const float4*)(pb + ((l + 1) * BK + 8 * h) * m);
#endif
            }
        }
        __local const float* la = l_a + cur * BK * 132;
        __local const float* lb = l_b + cur * BK * 128;
        #pragma unroll
        for (int q = 0; q < BK; q++) {
            float4 a0 = *(__local const float4*)&la[q * 132 + ra];
            float4 a1 = *(__local const float4*)&la[q * 132 + rstep + ra];
            float4 b0 = *(__local const float4*)&lb[q * 128 + cb];
            float4 b1 = *(__local const float4*)&lb[q * 128 + cstep + cb];
            float af[8] = {a0.s0, a0.s1, a0.s2, a0.s3, a1.s0, a1.s1, a1.s2, a1.s3};
            float bf[8] = {b0.s0, b0.s1, b0.s2, b0.s3, b1.s0, b1.s1, b1.s2, b1.s3};
            #pragma unroll
            for (int ei = 0; ei < 8; ei++)
                #pragma unroll
                for (int ej = 0; ej < 8; ej++)
                    sums[ei * 8 + ej] = fma(af[ei], bf[ej], sums[ei * 8 + ej]);
        }
        if (more) {
            __local float* na = l_a + (1 - cur) * BK * 132;
            __local float* nb = l_b + (1 - cur) * BK * 128;
            #pragma unroll
            for (int h = 0; h < BK / 8; h++) {
                na[(8 * h + aq + 0) * 132 + ar] = an[h].s0; na[(8 * h + aq + 1) * 132 + ar] = an[h].s1;
                na[(8 * h + aq + 2) * 132 + ar] = an[h].s2; na[(8 * h + aq + 3) * 132 + ar] = an[h].s3;
                *(__local float4*)&nb[(8 * h + bq) * 128 + bc] = bn[h];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int ei = 0; ei < 8; ei++) {
        const int ci = bi * 128 + ra + (ei / 4) * rstep + ei % 4;
        __global float* pc = c + ci * m + bj * 128 + cb;
        *(__global float4*)pc = (float4)(sums[ei * 8 + 0], sums[ei * 8 + 1], sums[ei * 8 + 2], sums[ei * 8 + 3]);
        *(__global float4*)(pc + cstep) = (float4)(sums[ei * 8 + 4], sums[ei * 8 + 5], sums[ei * 8 + 6], sums[ei * 8 + 7]);
    }
}
