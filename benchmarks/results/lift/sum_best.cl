float2 add_v2(float2 x, float2 y) {
    return (x + y);
}
float add(float x, float y) {
    return (x + y);
}

kernel __attribute__((reqd_work_group_size(1024, 1, 1)))
void kernel_0(const global float* restrict x, global float* tmp_1) {
    local float l_3[1024];
    local float l_7[512];
    local float l_10[256];
    local float l_13[128];
    local float l_16[64];
    local float l_19[1];
    local volatile float l_21[32];
    local volatile float l_24[16];
    local volatile float l_27[8];
    local volatile float l_30[4];
    local volatile float l_33[2];
    {
        int wg_2 = get_group_id(0);
        {
            int l_4 = get_local_id(0);
            float2 acc_5;
            acc_5 = (float2)(0.0f);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 1024]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 2048]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 3072]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 4096]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 5120]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 6144]);
            acc_5 = add_v2(acc_5, ((global float2*)x)[l_4 + 8192*wg_2 + 7168]);
            float acc_6;
            acc_6 = 0.0f;
            acc_6 = add(acc_6, acc_5.s0);
            acc_6 = add(acc_6, acc_5.s1);
            l_3[l_4] = acc_6;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 512) {
            int l_8 = get_local_id(0);
            float acc_9;
            acc_9 = 0.0f;
            acc_9 = add(acc_9, l_3[l_8]);
            acc_9 = add(acc_9, l_3[l_8 + 512]);
            l_7[l_8] = acc_9;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 256) {
            int l_11 = get_local_id(0);
            float acc_12;
            acc_12 = 0.0f;
            acc_12 = add(acc_12, l_7[l_11]);
            acc_12 = add(acc_12, l_7[l_11 + 256]);
            l_10[l_11] = acc_12;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 128) {
            int l_14 = get_local_id(0);
            float acc_15;
            acc_15 = 0.0f;
            acc_15 = add(acc_15, l_10[l_14]);
            acc_15 = add(acc_15, l_10[l_14 + 128]);
            l_13[l_14] = acc_15;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 64) {
            int l_17 = get_local_id(0);
            float acc_18;
            acc_18 = 0.0f;
            acc_18 = add(acc_18, l_13[l_17]);
            acc_18 = add(acc_18, l_13[l_17 + 64]);
            l_16[l_17] = acc_18;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((get_local_id(0) / 32) < 1) {
            int warp_20 = (get_local_id(0) / 32);
            {
                int lane_22 = (get_local_id(0) % 32);
                float acc_23;
                acc_23 = 0.0f;
                acc_23 = add(acc_23, l_16[lane_22 + 64*warp_20]);
                acc_23 = add(acc_23, l_16[lane_22 + 64*warp_20 + 32]);
                l_21[lane_22 + 32*warp_20] = acc_23;
            }
            if ((get_local_id(0) % 32) < 16) {
                int lane_25 = (get_local_id(0) % 32);
                float acc_26;
                acc_26 = 0.0f;
                acc_26 = add(acc_26, l_21[lane_25 + 32*warp_20]);
                acc_26 = add(acc_26, l_21[lane_25 + 32*warp_20 + 16]);
                l_24[lane_25 + 16*warp_20] = acc_26;
            }
            if ((get_local_id(0) % 32) < 8) {
                int lane_28 = (get_local_id(0) % 32);
                float acc_29;
                acc_29 = 0.0f;
                acc_29 = add(acc_29, l_24[lane_28 + 16*warp_20]);
                acc_29 = add(acc_29, l_24[lane_28 + 16*warp_20 + 8]);
                l_27[lane_28 + 8*warp_20] = acc_29;
            }
            if ((get_local_id(0) % 32) < 4) {
                int lane_31 = (get_local_id(0) % 32);
                float acc_32;
                acc_32 = 0.0f;
                acc_32 = add(acc_32, l_27[lane_31 + 8*warp_20]);
                acc_32 = add(acc_32, l_27[lane_31 + 8*warp_20 + 4]);
                l_30[lane_31 + 4*warp_20] = acc_32;
            }
            if ((get_local_id(0) % 32) < 2) {
                int lane_34 = (get_local_id(0) % 32);
                float acc_35;
                acc_35 = 0.0f;
                acc_35 = add(acc_35, l_30[lane_34 + 4*warp_20]);
                acc_35 = add(acc_35, l_30[lane_34 + 4*warp_20 + 2]);
                l_33[lane_34 + 2*warp_20] = acc_35;
            }
            if ((get_local_id(0) % 32) < 1) {
                int lane_36 = (get_local_id(0) % 32);
                float acc_37;
                acc_37 = 0.0f;
                acc_37 = add(acc_37, l_33[2*warp_20]);
                acc_37 = add(acc_37, l_33[2*warp_20 + 1]);
                l_19[lane_36 + warp_20] = acc_37;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 1) {
            int l_38 = get_local_id(0);
            tmp_1[l_38 + wg_2] = l_19[l_38];
        }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
}

kernel __attribute__((reqd_work_group_size(256, 1, 1)))
void kernel_1(global float* out, global float* tmp_1) {
    local float l_40[256];
    local float l_44[128];
    local float l_47[64];
    local float l_50[1];
    local volatile float l_52[32];
    local volatile float l_55[16];
    local volatile float l_58[8];
    local volatile float l_61[4];
    local volatile float l_64[2];
    {
        int wg_39 = get_group_id(0);
        {
            int l_41 = get_local_id(0);
            float acc_42;
            acc_42 = 0.0f;
            for (int i_43 = 0; i_43 < 64; i_43++) {
                acc_42 = add(acc_42, tmp_1[256*i_43 + l_41 + 16384*wg_39]);
            }
            l_40[l_41] = acc_42;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 128) {
            int l_45 = get_local_id(0);
            float acc_46;
            acc_46 = 0.0f;
            acc_46 = add(acc_46, l_40[l_45]);
            acc_46 = add(acc_46, l_40[l_45 + 128]);
            l_44[l_45] = acc_46;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 64) {
            int l_48 = get_local_id(0);
            float acc_49;
            acc_49 = 0.0f;
            acc_49 = add(acc_49, l_44[l_48]);
            acc_49 = add(acc_49, l_44[l_48 + 64]);
            l_47[l_48] = acc_49;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if ((get_local_id(0) / 32) < 1) {
            int warp_51 = (get_local_id(0) / 32);
            {
                int lane_53 = (get_local_id(0) % 32);
                float acc_54;
                acc_54 = 0.0f;
                acc_54 = add(acc_54, l_47[lane_53 + 64*warp_51]);
                acc_54 = add(acc_54, l_47[lane_53 + 64*warp_51 + 32]);
                l_52[lane_53 + 32*warp_51] = acc_54;
            }
            if ((get_local_id(0) % 32) < 16) {
                int lane_56 = (get_local_id(0) % 32);
                float acc_57;
                acc_57 = 0.0f;
                acc_57 = add(acc_57, l_52[lane_56 + 32*warp_51]);
                acc_57 = add(acc_57, l_52[lane_56 + 32*warp_51 + 16]);
                l_55[lane_56 + 16*warp_51] = acc_57;
            }
            if ((get_local_id(0) % 32) < 8) {
                int lane_59 = (get_local_id(0) % 32);
                float acc_60;
                acc_60 = 0.0f;
                acc_60 = add(acc_60, l_55[lane_59 + 16*warp_51]);
                acc_60 = add(acc_60, l_55[lane_59 + 16*warp_51 + 8]);
                l_58[lane_59 + 8*warp_51] = acc_60;
            }
            if ((get_local_id(0) % 32) < 4) {
                int lane_62 = (get_local_id(0) % 32);
                float acc_63;
                acc_63 = 0.0f;
                acc_63 = add(acc_63, l_58[lane_62 + 8*warp_51]);
                acc_63 = add(acc_63, l_58[lane_62 + 8*warp_51 + 4]);
                l_61[lane_62 + 4*warp_51] = acc_63;
            }
            if ((get_local_id(0) % 32) < 2) {
                int lane_65 = (get_local_id(0) % 32);
                float acc_66;
                acc_66 = 0.0f;
                acc_66 = add(acc_66, l_61[lane_65 + 4*warp_51]);
                acc_66 = add(acc_66, l_61[lane_65 + 4*warp_51 + 2]);
                l_64[lane_65 + 2*warp_51] = acc_66;
            }
            if ((get_local_id(0) % 32) < 1) {
                int lane_67 = (get_local_id(0) % 32);
                float acc_68;
                acc_68 = 0.0f;
                acc_68 = add(acc_68, l_64[2*warp_51]);
                acc_68 = add(acc_68, l_64[2*warp_51 + 1]);
                l_50[lane_67 + warp_51] = acc_68;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (get_local_id(0) < 1) {
            int l_69 = get_local_id(0);
            out[l_69 + wg_39] = l_50[l_69];
        }
    }
}
