// Seven hand-written parallel reductions, one per optimisation step of the
// case study in seed 000 (reduce0 ... reduce6). The techniques are the seed's;
// the code is ours. Each kernel writes one partial sum per work-group; the
// benchmark applies the same kernel again to the partial sums until one value
// remains. WG_SIZE (a power of two, >= 64) is given at build time.

// reduce0: interleaved addressing, the active work-items chosen with a modulo
// (divergent branches inside warps).
kernel void reduce0(global const float* in, global float* out, unsigned int n,
                    local float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_global_id(0);
    l[tid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int s = 1; s < get_local_size(0); s *= 2) {
        if ((tid % (2 * s)) == 0)
            l[tid] += l[tid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// reduce1: the same tree, but contiguous work-items stay active (no divergence,
// interleaved local memory accesses with bank conflicts).
kernel void reduce1(global const float* in, global float* out, unsigned int n,
                    local float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_global_id(0);
    l[tid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int s = 1; s < get_local_size(0); s *= 2) {
        unsigned int k = 2 * s * tid;
        if (k < get_local_size(0))
            l[k] += l[k + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// reduce2: sequential addressing (stride halves each step; needs commutativity).
kernel void reduce2(global const float* in, global float* out, unsigned int n,
                    local float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_global_id(0);
    l[tid] = (i < n) ? in[i] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (tid < s)
            l[tid] += l[tid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// reduce3: each work-item adds two elements while loading (half the work-groups).
kernel void reduce3(global const float* in, global float* out, unsigned int n,
                    local float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_group_id(0) * (get_local_size(0) * 2) + tid;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + get_local_size(0) < n) v += in[i + get_local_size(0)];
    l[tid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (tid < s)
            l[tid] += l[tid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// The last six steps inside one warp, without barriers (warp-synchronous; the
// seed notes this is not portable OpenCL).
#define WARP_TAIL(l, tid)                                   \
    if (WG_SIZE >= 64) l[tid] += l[tid + 32];               \
    if (WG_SIZE >= 32) l[tid] += l[tid + 16];               \
    if (WG_SIZE >= 16) l[tid] += l[tid + 8];                \
    if (WG_SIZE >= 8)  l[tid] += l[tid + 4];                \
    if (WG_SIZE >= 4)  l[tid] += l[tid + 2];                \
    if (WG_SIZE >= 2)  l[tid] += l[tid + 1];

// reduce4: reduce3 plus the unrolled last warp.
kernel void reduce4(global const float* in, global float* out, unsigned int n,
                    local volatile float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_group_id(0) * (get_local_size(0) * 2) + tid;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + get_local_size(0) < n) v += in[i + get_local_size(0)];
    l[tid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (unsigned int s = get_local_size(0) / 2; s > 32; s >>= 1) {
        if (tid < s)
            l[tid] += l[tid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (tid < 32) { WARP_TAIL(l, tid) }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// reduce5: the loop completely unrolled for the compile-time WG_SIZE.
kernel void reduce5(global const float* in, global float* out, unsigned int n,
                    local volatile float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_group_id(0) * (WG_SIZE * 2) + tid;
    float v = (i < n) ? in[i] : 0.0f;
    if (i + WG_SIZE < n) v += in[i + WG_SIZE];
    l[tid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (WG_SIZE >= 1024) { if (tid < 512) l[tid] += l[tid + 512]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 512) { if (tid < 256) l[tid] += l[tid + 256]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 256) { if (tid < 128) l[tid] += l[tid + 128]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 128) { if (tid < 64) l[tid] += l[tid + 64]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (tid < 32) { WARP_TAIL(l, tid) }
    if (tid == 0) out[get_group_id(0)] = l[0];
}

// reduce6: many elements per work-item (a loop over the whole input with the
// grid's stride), then reduce5's unrolled tree. The number of work-groups is
// chosen by the host (a few per compute unit).
kernel void reduce6(global const float* in, global float* out, unsigned int n,
                    local volatile float* l) {
    unsigned int tid = get_local_id(0);
    unsigned int i = get_group_id(0) * (WG_SIZE * 2) + tid;
    unsigned int grid = WG_SIZE * 2 * get_num_groups(0);
    float v = 0.0f;
    while (i < n) {
        v += in[i];
        if (i + WG_SIZE < n) v += in[i + WG_SIZE];
        i += grid;
    }
    l[tid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (WG_SIZE >= 1024) { if (tid < 512) l[tid] += l[tid + 512]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 512) { if (tid < 256) l[tid] += l[tid + 256]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 256) { if (tid < 128) l[tid] += l[tid + 128]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (WG_SIZE >= 128) { if (tid < 64) l[tid] += l[tid + 64]; barrier(CLK_LOCAL_MEM_FENCE); }
    if (tid < 32) { WARP_TAIL(l, tid) }
    if (tid == 0) out[get_group_id(0)] = l[0];
}
