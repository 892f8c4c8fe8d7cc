float mult(float x, float y) {
    return (x * y);
}
float add(float x, float y) {
    return (x + y);
}

kernel __attribute__((reqd_work_group_size(1024, 1, 1)))
void kernel_0(const global float* restrict A, const global float* restrict x, global float* tmp_1) {
    local float l_3[1024];
    local float l_6[512];
    local float l_9[256];
    local float l_12[128];
    local float l_15[64];
    local float l_18[1];
    local volatile float l_20[32];
    local volatile float l_23[16];
    local volatile float l_26[8];
    local volatile float l_29[4];
    local volatile float l_32[2];
    {
        int wg_2 = get_group_id(0);
        {
            int l_4 = get_local_id(0);
            float acc_5;
            acc_5 = 0.0f;
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2], x[l_4]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 1024], x[l_4 + 1024]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 2048], x[l_4 + 2048]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 3072], x[l_4 + 3072]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 4096], x[l_4 + 4096]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 5120], x[l_4 + 5120]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 6144], x[l_4 + 6144]));
            acc_5 = add(acc_5, mult(A[l_4 + 8192*wg_2 + 7168], x[l_4 + 7168]));
            l_3[l_4] = acc_5;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 512) {
            int l_7 = get_local_id(0);
            float acc_8;
            acc_8 = 0.0f;
            acc_8 = add(acc_8, l_3[l_7]);
            acc_8 = add(acc_8, l_3[l_7 + 512]);
            l_6[l_7] = acc_8;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 256) {
            int l_10 = get_local_id(0);
            float acc_11;
            acc_11 = 0.0f;
            acc_11 = add(acc_11, l_6[l_10]);
            acc_11 = add(acc_11, l_6[l_10 + 256]);
            l_9[l_10] = acc_11;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 128) {
            int l_13 = get_local_id(0);
            float acc_14;
            acc_14 = 0.0f;
            acc_14 = add(acc_14, l_9[l_13]);
            acc_14 = add(acc_14, l_9[l_13 + 128]);
            l_12[l_13] = acc_14;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 64) {
            int l_16 = get_local_id(0);
            float acc_17;
            acc_17 = 0.0f;
            acc_17 = add(acc_17, l_12[l_16]);
            acc_17 = add(acc_17, l_12[l_16 + 64]);
            l_15[l_16] = acc_17;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((get_local_id(0) / 32) < 1) {
            int warp_19 = (get_local_id(0) / 32);
            {
                int lane_21 = (get_local_id(0) % 32);
                float acc_22;
                acc_22 = 0.0f;
                acc_22 = add(acc_22, l_15[lane_21 + 64*warp_19]);
                acc_22 = add(acc_22, l_15[lane_21 + 64*warp_19 + 32]);
                l_20[lane_21 + 32*warp_19] = acc_22;
            }
            if ((get_local_id(0) % 32) < 16) {
                int lane_24 = (get_local_id(0) % 32);
                float acc_25;
                acc_25 = 0.0f;
                acc_25 = add(acc_25, l_20[lane_24 + 32*warp_19]);
                acc_25 = add(acc_25, l_20[lane_24 + 32*warp_19 + 16]);
                l_23[lane_24 + 16*warp_19] = acc_25;
            }
            if ((get_local_id(0) % 32) < 8) {
                int lane_27 = (get_local_id(0) % 32);
                float acc_28;
                acc_28 = 0.0f;
                acc_28 = add(acc_28, l_23[lane_27 + 16*warp_19]);
                acc_28 = add(acc_28, l_23[lane_27 + 16*warp_19 + 8]);
                l_26[lane_27 + 8*warp_19] = acc_28;
            }
            if ((get_local_id(0) % 32) < 4) {
                int lane_30 = (get_local_id(0) % 32);
                float acc_31;
                acc_31 = 0.0f;
                acc_31 = add(acc_31, l_26[lane_30 + 8*warp_19]);
                acc_31 = add(acc_31, l_26[lane_30 + 8*warp_19 + 4]);
                l_29[lane_30 + 4*warp_19] = acc_31;
            }
            if ((get_local_id(0) % 32) < 2) {
                int lane_33 = (get_local_id(0) % 32);
                float acc_34;
                acc_34 = 0.0f;
                acc_34 = add(acc_34, l_29[lane_33 + 4*warp_19]);
                acc_34 = add(acc_34, l_29[lane_33 + 4*warp_19 + 2]);
                l_32[lane_33 + 2*warp_19] = acc_34;
            }
            if ((get_local_id(0) % 32) < 1) {
                int lane_35 = (get_local_id(0) % 32);
                float acc_36;
                acc_36 = 0.0f;
                acc_36 = add(acc_36, l_32[2*warp_19]);
                acc_36 = add(acc_36, l_32[2*warp_19 + 1]);
                l_18[lane_35 + warp_19] = acc_36;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 1) {
            int l_37 = get_local_id(0);
            float p_38;
            p_38 = l_18[l_37];
            tmp_1[l_37 + wg_2] = p_38;
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void kernel_1(const global float* restrict y, float alpha, float beta, global float* out, global float* tmp_1) {
    {
        int wg_39 = get_group_id(0);
        {
            int l_40 = get_local_id(0);
            out[l_40 + 128*wg_39] = add(mult(alpha, tmp_1[l_40 + 128*wg_39]), mult(beta, y[l_40 + 128*wg_39]));
        }
    }
}
