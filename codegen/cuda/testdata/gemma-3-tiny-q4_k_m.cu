
// ---- this model's constants ----
struct Scale_0 { static constexpr float FACTOR = 1.3856406e+01f; };
struct Norm_1 { static constexpr float EPS = 1e-06f; };
struct Rope_2 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1e+04f; static constexpr bool YARN = false; };
struct Attn_3 { static constexpr int HEADS = 4, KVH = 1, HD = 64, WINDOW = 8, KV8 = 0, KVROW = 128; static constexpr float SCALE = 1.25e-01f; };
struct Rope_4 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1e+06f; static constexpr bool YARN = false; static constexpr bool SCALED = true; static __device__ __forceinline__ float scaled(int i, float t) { return t * 1.25e-01f; } };
struct Attn_5 { static constexpr int HEADS = 4, KVH = 1, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 128; static constexpr float SCALE = 1.25e-01f; };

// ---- kernels: one per distinct instantiation ----
// Each waits for the grid before it, then lets the next one launch
// (grid_dep_wait, grid_dep_launch in common): the one place a kernel's
// memory accesses are ordered after the previous kernel's, except for the
// integer GEMVs, which wait inside (kernels.go, waitsInside) after fetching
// weights: their grid_dep_launch comes first, which is safe since the next
// grid waits for this one's completion in turn. A kernel whose next grid
// should not start early (kernels.go, launchAtEnd) leaves it out: that grid
// launches when this one completes. After the wait, the pointers to what
// kernels write pass through acquire (common).
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q8_0_split_1572864_262144_192(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q8_0_split<1572864>, 262144, 192>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) scale_ew_Scale_0_0_192(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    scale_ew<Scale_0, 0, 192>(x, y, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_1_W_f32_192_192_64_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_1, W_f32<192>, 192, 64, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_192(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<192>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q5_0_split_1536_W_q5_0_split_384_W_q5_0_split_384_B_none_B_none_B_none_192_256_64_64_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_0_split<1536>, W_q5_0_split<384>, W_q5_0_split<384>, B_none, B_none, B_none, 192, 256, 64, 64, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_2_Norm_1_W_f32_64_0_4(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_2, Norm_1, W_f32<64>, 0, 4>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_2_Norm_1_W_f32_64_0_1(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_2, Norm_1, W_f32<64>, 0, 1>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_Attn_3(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, state);
    grid_dep_launch();
    kv_store<Attn_3>(k, v, positions, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_3_B_none_false_false_16_512_396_64(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_3, B_none, false, false, 16, 512, 396, 64>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_256(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<256>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_192_B_none_256_192_64_64_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<192>, B_none, 256, 192, 64, 64, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_post_rows_Norm_1_W_f32_192_W_f32_192_192_64_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ wb, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_post_rows<Norm_1, W_f32<192>, W_f32<192>, 192, 64, false>(a, b, wb, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_swiglu_W_q5_0_split_3072_W_q5_0_split_3072_192_512_0_64_64_4_1_GateGELUTanh(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q5_0_split<3072>, W_q5_0_split<3072>, 192, 512, 0, 64, 64, 4, 1, GateGELUTanh>(wg, wu, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_512(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<512>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_384_B_none_512_192_64_64_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<384>, B_none, 512, 192, 64, 64, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q5_0_split_1536_W_q5_0_split_384_W_q8_0_split_384_B_none_B_none_B_none_192_256_64_64_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_0_split<1536>, W_q5_0_split<384>, W_q8_0_split<384>, B_none, B_none, B_none, 192, 256, 64, 64, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q6_k_split_384_B_none_512_192_64_64_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q6_k_split<384>, B_none, 512, 192, 64, 64, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_4_Norm_1_W_f32_64_0_4(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_4, Norm_1, W_f32<64>, 0, 4>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_4_Norm_1_W_f32_64_0_1(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_4, Norm_1, W_f32<64>, 0, 1>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_Attn_5(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, state);
    grid_dep_launch();
    kv_store<Attn_5>(k, v, positions, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_5_B_none_false_false_16_512_396_64(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_5, B_none, false, false, 16, 512, 396, 64>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_192_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 192, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q8_0_split_dot_1572864_B_none_192_262144_32_false_true_0_true_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q8_0_split_dot<1572864>, B_none, 192, 262144, 32, false, true, 0, true, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_1_W_f32_192_192_64_false_true(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_1, W_f32<192>, 192, 64, false, true>(a, nullptr, w, nullptr, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q5_0_split_dot_1536_W_q5_0_split_dot_384_W_q5_0_split_dot_384_B_none_B_none_B_none_Rope_none_192_256_64_64_false_32_true_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q5_0_split_dot<1536>, W_q5_0_split_dot<384>, W_q5_0_split_dot<384>, B_none, B_none, B_none, Rope_none, 192, 256, 64, 64, false, 32, true, 0, 1>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) attend_decode_Attn_3_B_none_false_true_1_1_1_128_QKNorm_Rope_2_Norm_1_W_f32_64_W_f32_64(const float* __restrict__ q, const float* __restrict__ kn, const float* __restrict__ vn, const uint8_t* __restrict__ qw, const uint8_t* __restrict__ kw, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_3, B_none, false, true, 1, 1, 1, 128, QKNorm<Rope_2, Norm_1, W_f32<64>, W_f32<64>>>(q, kn, vn, qw, kw, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_192_B_none_256_192_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<192>, B_none, 256, 192, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_post_rows_Norm_1_W_f32_192_W_f32_192_192_64_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ wb, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_post_rows<Norm_1, W_f32<192>, W_f32<192>, 192, 64, true>(a, b, wb, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(512) swiglu_q8_W_q5_0_split_dot_3072_192_512_0_32_16_true_true_0_1_0_GateGELUTanh(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, xq_t* __restrict__ yq, float2* __restrict__ ys, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_q8<W_q5_0_split_dot<3072>, 192, 512, 0, 32, 16, true, true, 0, 1, 0, GateGELUTanh>(wg, wu, xq, xs, y, yq, ys, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_384_B_none_512_192_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<384>, B_none, 512, 192, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q5_0_split_dot_1536_W_q5_0_split_dot_384_W_q8_0_split_dot_384_B_none_B_none_B_none_Rope_none_192_256_64_64_false_32_true_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q5_0_split_dot<1536>, W_q5_0_split_dot<384>, W_q8_0_split_dot<384>, B_none, B_none, B_none, Rope_none, 192, 256, 64, 64, false, 32, true, 0, 1>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_384_B_none_512_192_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<384>, B_none, 512, 192, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_5_B_none_false_true_64_8_1_128_QKNorm_Rope_4_Norm_1_W_f32_64_W_f32_64(const float* __restrict__ q, const float* __restrict__ kn, const float* __restrict__ vn, const uint8_t* __restrict__ qw, const uint8_t* __restrict__ kw, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_5, B_none, false, true, 64, 8, 1, 128, QKNorm<Rope_4, Norm_1, W_f32<64>, W_f32<64>>>(q, kn, vn, qw, kw, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_3_6(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_3, 6>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_3_B_none_false_6_1_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_3, B_none, false, 6, 1, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_5_6(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_5, 6>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_5_B_none_false_6_16_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_5, B_none, false, 6, 16, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(192) qkv_mmat_W_q5_0_split_1536_W_q5_0_split_384_W_q5_0_split_384_B_none_B_none_B_none_Rope_none_192_256_64_64_false_6_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q5_0_split<1536>, W_q5_0_split<384>, W_q5_0_split<384>, B_none, B_none, B_none, Rope_none, 192, 256, 64, 64, false, 6, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_3_B_none_false_6_1_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_3, B_none, false, 6, 1, 4, 3, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) linear_mmah_W_q4_k_192_B_none_256_192_1_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<192>, B_none, 256, 192, 1, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(192) swiglu_mmat_W_q5_0_split_3072_192_512_0_6_2_0_GateGELUTanh(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    swiglu_mmat<W_q5_0_split<3072>, 192, 512, 0, 6, 2, 0, GateGELUTanh>(wg, wu, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(2) linear_mmah_W_q4_k_384_B_none_512_192_2_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<384>, B_none, 512, 192, 2, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(192) qkv_mmat_W_q5_0_split_1536_W_q5_0_split_384_W_q8_0_split_384_B_none_B_none_B_none_Rope_none_192_256_64_64_false_6_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q5_0_split<1536>, W_q5_0_split<384>, W_q8_0_split<384>, B_none, B_none, B_none, Rope_none, 192, 256, 64, 64, false, 6, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(2) linear_mmah_W_q6_k_split_384_B_none_512_192_2_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<384>, B_none, 512, 192, 2, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_5_B_none_false_6_16_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_5, B_none, false, 6, 16, 4, 3, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_192(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<192>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_192(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 192>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(192) linear_mmat_W_q8_0_split_1572864_B_none_192_262144_6_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q8_0_split<1572864>, B_none, 192, 262144, 6, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_262144(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<262144>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_262144_64_8_132_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<262144, 64, 8, 132, 198656>(logits, state, scratch);
}
