
#define mul skel_fn_mul
float mul(float x, float y) { return x * y; }
#undef mul
#define add skel_fn_add
float add(float x, float y) { return x + y; }
#undef add
#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4
#define LX 32
#define PAD 4
#define GROUP 8
#define D 37
#define M 45
#define A_VEC 0
#define B_VEC 0
#define EXACT 0
#define VEC_STORE 0
#define TA float
#define TB float
#define TO float
#define TA4 float4
#define TB4 float4
#define TO4 float4
#define TA2 float2
#define TB2 float2
#define ZIP skel_fn_mul
#define REDUCE skel_fn_add
#define IDENTITY ((float)(0.0))
#define START(v) skel_fn_add(((float)(0.0)), v)
#define COUNT 70
#define HAS_ID 1
#define REQD 1

#define NT ((BM / TM) * (BN / TN))
#define RA (TM < 4 ? TM : 4)
#define RB (TN < 4 ? TN : 4)
#define A_RUNS (BM * BK / 4)
#define B_RUNS (BK * BN / 4)
#define A_PER ((A_RUNS + NT - 1) / NT)
#define B_PER ((B_RUNS + NT - 1) / NT)
#define NBN ((M + BN - 1) / BN)
#define NBM ((COUNT + BM - 1) / BM)
#define PHASES ((D + BK - 1) / BK)
#define KREM (D - (PHASES - 1) * BK)
/* run s of a thread (4 consecutive elements): row and column within the tile */
#if NT % (BK / 4) == 0
#define A_ROW(s) (tid / (BK / 4) + (s) * (NT / (BK / 4)))
#define A_COL(s) ((tid % (BK / 4)) * 4)
#else
#define A_ROW(s) ((tid + (s) * NT) / (BK / 4))
#define A_COL(s) (((tid + (s) * NT) % (BK / 4)) * 4)
#endif
#if NT % (BN / 4) == 0
#define B_ROW(s) (tid / (BN / 4) + (s) * (NT / (BN / 4)))
#define B_COL(s) ((tid % (BN / 4)) * 4)
#else
#define B_ROW(s) ((tid + (s) * NT) / (BN / 4))
#define B_COL(s) (((tid + (s) * NT) % (BN / 4)) * 4)
#endif
#define A_OK(s) (A_PER * NT == A_RUNS || tid + (s) * NT < A_RUNS)
#define B_OK(s) (B_PER * NT == B_RUNS || tid + (s) * NT < B_RUNS)

#if REQD
__attribute__((reqd_work_group_size(LX, NT / LX, 1)))
#endif
__kernel void skel_allpairs_zr(__global const TA* restrict A, __global const TB* restrict B,
                               __global TO* restrict C, const int a_off, const int c_off,
                               const int count_arg)
{
  __local TA l_a[2][BK][BM + PAD] __attribute__((aligned(32)));
  __local TB l_b[2][BK][BN] __attribute__((aligned(32)));
#if LX == NT
  const int tid = get_local_id(0);
#else
  const int tid = get_local_id(1) * LX + get_local_id(0);
#endif
  const int bid = get_group_id(0);     /* one group along the second dimension */
  const int per_group = GROUP * NBN;
  const int first_row = (bid / per_group) * GROUP;
  const int rows = min(NBM - first_row, GROUP);
  const int bi = first_row + (bid % per_group) % rows;
  const int bj = (bid % per_group) / rows;
  const int row0 = bi * BM, col0 = bj * BN;
  const int ti = tid / (BN / TN), tj = tid % (BN / TN);
  C += c_off;
  TO acc[TM][TN];
#if D == 0 || HAS_ID
  for (int i = 0; i < TM; ++i)
    for (int j = 0; j < TN; ++j) acc[i][j] = IDENTITY;
#endif
#if D > 0
#if EXACT
  /* each thread's first run; the others at fixed offsets from it */
  A += a_off + (row0 + A_ROW(0)) * D + A_COL(0);
  B += B_ROW(0) * M + col0 + B_COL(0);
#else
  A += a_off;
#endif
  TA an[A_PER][4];
  TB bn[B_PER][4];
  {
  for (int s = 0; s < A_PER; ++s) {
    if (A_OK(s)) {
#if EXACT
      const TA4 v = *(__global const TA4*)&A[(A_ROW(s) - A_ROW(0)) * D + A_COL(s) - A_COL(0) + (0) * BK];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      const int r = min(row0 + A_ROW(s), COUNT - 1) * D + (0) * BK;
#if A_VEC
#if KREM == BK
      const int k = A_COL(s);
#else
      const int k = min(A_COL(s), D - 4 - ((0) * BK));
#endif
      const TA4 v = *(__global const TA4*)&A[r + k];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      for (int u = 0; u < 4; ++u) an[s][u] = A[r + min(A_COL(s) + u, D - 1 - ((0) * BK))];
#endif
#endif
    }
  }
  for (int s = 0; s < B_PER; ++s) {
    if (B_OK(s)) {
#if EXACT
      const TB4 v = *(__global const TB4*)&B[(B_ROW(s) - B_ROW(0)) * M + B_COL(s) - B_COL(0) + (0) * (BK * M)];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
#if KREM == BK
      const int k = (B_ROW(s) + (0) * BK) * M;
#else
      const int k = (min(B_ROW(s), D - 1 - ((0) * BK)) + (0) * BK) * M;
#endif
#if B_VEC
      const TB4 v = *(__global const TB4*)&B[k + min(col0 + B_COL(s), M - 4)];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
      for (int u = 0; u < 4; ++u) bn[s][u] = B[k + min(col0 + B_COL(s) + u, M - 1)];
#endif
#endif
    }
  }
  }
  {
  for (int s = 0; s < A_PER; ++s) {
    const int e = tid + s * NT;
    if (A_PER * NT == A_RUNS || e < A_RUNS) {
      const int r = e / (BK / 4), k = (e % (BK / 4)) * 4;
      for (int u = 0; u < 4; ++u) l_a[0][k + u][r] = an[s][u];
    }
  }
  for (int s = 0; s < B_PER; ++s) {
    const int e = tid + s * NT;
    if (B_PER * NT == B_RUNS || e < B_RUNS) {
      const int k = e / (BN / 4), c = (e % (BN / 4)) * 4;
      *(__local TB4*)&l_b[0][k][c] = (TB4)(bn[s][0], bn[s][1], bn[s][2], bn[s][3]);
    }
  }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  for (int l = 0; l < PHASES; ++l) {
    const int cur = l & 1;
    if (l + 1 < PHASES) {
  {
  for (int s = 0; s < A_PER; ++s) {
    if (A_OK(s)) {
#if EXACT
      const TA4 v = *(__global const TA4*)&A[(A_ROW(s) - A_ROW(0)) * D + A_COL(s) - A_COL(0) + (l + 1) * BK];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      const int r = min(row0 + A_ROW(s), COUNT - 1) * D + (l + 1) * BK;
#if A_VEC
#if KREM == BK
      const int k = A_COL(s);
#else
      const int k = min(A_COL(s), D - 4 - ((l + 1) * BK));
#endif
      const TA4 v = *(__global const TA4*)&A[r + k];
      an[s][0] = v.s0; an[s][1] = v.s1; an[s][2] = v.s2; an[s][3] = v.s3;
#else
      for (int u = 0; u < 4; ++u) an[s][u] = A[r + min(A_COL(s) + u, D - 1 - ((l + 1) * BK))];
#endif
#endif
    }
  }
  for (int s = 0; s < B_PER; ++s) {
    if (B_OK(s)) {
#if EXACT
      const TB4 v = *(__global const TB4*)&B[(B_ROW(s) - B_ROW(0)) * M + B_COL(s) - B_COL(0) + (l + 1) * (BK * M)];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
#if KREM == BK
      const int k = (B_ROW(s) + (l + 1) * BK) * M;
#else
      const int k = (min(B_ROW(s), D - 1 - ((l + 1) * BK)) + (l + 1) * BK) * M;
#endif
#if B_VEC
      const TB4 v = *(__global const TB4*)&B[k + min(col0 + B_COL(s), M - 4)];
      bn[s][0] = v.s0; bn[s][1] = v.s1; bn[s][2] = v.s2; bn[s][3] = v.s3;
#else
      for (int u = 0; u < 4; ++u) bn[s][u] = B[k + min(col0 + B_COL(s) + u, M - 1)];
#endif
#endif
    }
  }
  }
    }
#if KREM == BK
      for (int q = 0; q < BK; ++q)
      {
        TA af[TM];
        TB bf[TN];
        for (int i = 0; i < TM; ++i)
          af[i] = l_a[cur][q][(i / RA) * (BM * RA / TM) + RA * ti + i % RA];
        for (int j = 0; j < TN; ++j)
          bf[j] = l_b[cur][q][(j / RB) * (BN * RB / TN) + RB * tj + j % RB];
        for (int i = 0; i < TM; ++i) {
          for (int j = 0; j < TN; ++j) {
            const TO v = ZIP(af[i], bf[j]);
            acc[i][j] = REDUCE(acc[i][j], v);
          }
        }
      }
#else
    if (l + 1 < PHASES) {
      for (int q = 0; q < BK; ++q)
      {
        TA af[TM];
        TB bf[TN];
        for (int i = 0; i < TM; ++i)
          af[i] = l_a[cur][q][(i / RA) * (BM * RA / TM) + RA * ti + i % RA];
        for (int j = 0; j < TN; ++j)
          bf[j] = l_b[cur][q][(j / RB) * (BN * RB / TN) + RB * tj + j % RB];
        for (int i = 0; i < TM; ++i) {
          for (int j = 0; j < TN; ++j) {
            const TO v = ZIP(af[i], bf[j]);
            acc[i][j] = REDUCE(acc[i][j], v);
          }
        }
      }
    } else {
      for (int q = 0; q < KREM; ++q)
      {
        TA af[TM];
        TB bf[TN];
        for (int i = 0; i < TM; ++i)
          af[i] = l_a[cur][q][(i / RA) * (BM * RA / TM) + RA * ti + i % RA];
        for (int j = 0; j < TN; ++j)
          bf[j] = l_b[cur][q][(j / RB) * (BN * RB / TN) + RB * tj + j % RB];
        for (int i = 0; i < TM; ++i) {
          for (int j = 0; j < TN; ++j) {
            const TO v = ZIP(af[i], bf[j]);
            acc[i][j] = REDUCE(acc[i][j], v);
          }
        }
      }
    }
#endif
    if (l + 1 < PHASES) {
  {
  for (int s = 0; s < A_PER; ++s) {
    const int e = tid + s * NT;
    if (A_PER * NT == A_RUNS || e < A_RUNS) {
      const int r = e / (BK / 4), k = (e % (BK / 4)) * 4;
      for (int u = 0; u < 4; ++u) l_a[1 - cur][k + u][r] = an[s][u];
    }
  }
  for (int s = 0; s < B_PER; ++s) {
    const int e = tid + s * NT;
    if (B_PER * NT == B_RUNS || e < B_RUNS) {
      const int k = e / (BN / 4), c = (e % (BN / 4)) * 4;
      *(__local TB4*)&l_b[1 - cur][k][c] = (TB4)(bn[s][0], bn[s][1], bn[s][2], bn[s][3]);
    }
  }
  }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }

#endif
  for (int i = 0; i < TM; ++i) {
    const int r = row0 + (i / RA) * (BM * RA / TM) + RA * ti + i % RA;
    for (int h = 0; h < TN / RB; ++h) {
      const int c = col0 + h * (BN * RB / TN) + RB * tj;
#if VEC_STORE
      if (EXACT || (r < COUNT && c < M))
        *(__global TO4*)&C[r * M + c] = (TO4)(acc[i][h * 4], acc[i][h * 4 + 1],
                                              acc[i][h * 4 + 2], acc[i][h * 4 + 3]);
#else
      for (int u = 0; u < RB; ++u)
        if (EXACT || (r < COUNT && c + u < M)) C[r * M + c + u] = acc[i][h * RB + u];
#endif
    }
  }
}
