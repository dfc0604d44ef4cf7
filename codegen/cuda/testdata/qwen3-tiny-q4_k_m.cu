
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-06f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 128, ROT = 128; static constexpr float BASE = 1e+06f; static constexpr bool YARN = false; };
struct Attn_2 { static constexpr int HEADS = 4, KVH = 2, HD = 128, WINDOW = 0, KV8 = 0, KVROW = 512; static constexpr float SCALE = 8.8388346e-02f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q6_k_split_151936_151936_256(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q6_k_split<151936>, 151936, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_256(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<256>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q4_k_512_W_q4_k_256_W_q4_k_256_B_none_B_none_B_none_256_512_256_256_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<512>, W_q4_k<256>, W_q4_k<256>, B_none, B_none, B_none, 256, 512, 256, 256, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_1_Norm_0_W_f32_128_0_4(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_1, Norm_0, W_f32<128>, 0, 4>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_1_Norm_0_W_f32_128_0_2(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_1, Norm_0, W_f32<128>, 0, 2>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_Attn_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, state);
    grid_dep_launch();
    kv_store<Attn_2>(k, v, positions, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_B_none_false_false_32_512_396_124(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, B_none, false, false, 32, 512, 396, 124>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_512(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<512>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_512_B_none_512_256_64_64_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<512>, B_none, 512, 256, 64, 64, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_swiglu_W_q4_k_768_W_q4_k_768_256_768_0_64_64_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q4_k<768>, W_q4_k<768>, 256, 768, 0, 64, 64, 4>(wg, wu, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_768(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<768>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_768_B_none_768_256_64_128_4_3(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<768>, B_none, 768, 256, 64, 128, 4, 3>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q4_k_512_W_q4_k_256_W_q6_k_split_256_B_none_B_none_B_none_256_512_256_256_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<512>, W_q4_k<256>, W_q6_k_split<256>, B_none, B_none, B_none, 256, 512, 256, 256, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q6_k_split_768_B_none_768_256_64_128_4_3(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q6_k_split<768>, B_none, 768, 256, 64, 128, 4, 3>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_256_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 256, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_151936_B_none_256_151936_32_false_true_0_false_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<151936>, B_none, 256, 151936, 32, false, true, 0, false, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(32, 1) qkv_mma_XNorm_Norm_0_W_f32_256_false_W_q4_k_512_W_q4_k_256_W_q4_k_256_B_none_B_none_B_none_Rope_none_256_512_256_256_false_1_1_false_0_1_4672(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const uint8_t* __restrict__ nw, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<256>, false>, W_q4_k<512>, W_q4_k<256>, W_q4_k<256>, B_none, B_none, B_none, Rope_none, 256, 512, 256, 256, false, 1, 1, false, 0, 1, 4672>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_2_B_none_false_true_128_8_1_128_QKNorm_Rope_1_Norm_0_W_f32_128_W_f32_128(const float* __restrict__ q, const float* __restrict__ kn, const float* __restrict__ vn, const uint8_t* __restrict__ qw, const uint8_t* __restrict__ kw, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, B_none, false, true, 128, 8, 1, 128, QKNorm<Rope_1, Norm_0, W_f32<128>, W_f32<128>>>(q, kn, vn, qw, kw, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_512_B_none_512_256_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<512>, B_none, 512, 256, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(512) swiglu_q8_W_q4_k_dot_768_256_768_0_32_16_true_true_0_1(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, xq_t* __restrict__ yq, float2* __restrict__ ys, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_q8<W_q4_k_dot<768>, 256, 768, 0, 32, 16, true, true, 0, 1>(wg, wu, xq, xs, y, yq, ys, state);
}
extern "C" __global__ void __launch_bounds__(32, 1) qkv_mma_XNorm_Norm_0_W_f32_256_false_W_q4_k_512_W_q4_k_256_W_q6_k_split_256_B_none_B_none_B_none_Rope_none_256_512_256_256_false_1_1_false_0_1_6912(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const uint8_t* __restrict__ nw, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<256>, false>, W_q4_k<512>, W_q4_k<256>, W_q6_k_split<256>, B_none, B_none, B_none, Rope_none, 256, 512, 256, 256, false, 1, 1, false, 0, 1, 6912>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_768_B_none_768_256_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<768>, B_none, 768, 256, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q6_k_split_151936_151936_256_at_end(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    embed_rows<W_q6_k_split<151936>, 151936, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_768_B_none_768_256_32_false_false_1_true_0_1_at_end(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const float* __restrict__ r, const int* __restrict__ state) {
    linear_q8<W_q4_k_dot<768>, B_none, 768, 256, 32, false, false, 1, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, r, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 2>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_paged_Attn_2_B_none_false_2_16_4_2_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 2, 16, 4, 2, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) qkv_mmah_W_q4_k_512_W_q4_k_256_W_q4_k_256_B_none_B_none_B_none_Rope_none_256_512_256_256_false_1_8_1_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mmah<W_q4_k<512>, W_q4_k<256>, W_q4_k<256>, B_none, B_none, B_none, Rope_none, 256, 512, 256, 256, false, 1, 8, 1, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, x, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_paged_Attn_2_B_none_false_2_16_4_2_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 2, 16, 4, 2, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(2) linear_mmah_W_q4_k_512_B_none_512_256_2_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<512>, B_none, 512, 256, 2, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) swiglu_mmah_W_q4_k_768_256_768_0_1_8_1_2_0(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_mmah<W_q4_k<768>, 256, 768, 0, 1, 8, 1, 2, 0>(wg, wu, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(3) linear_mmah_W_q4_k_768_B_none_768_256_3_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<768>, B_none, 768, 256, 3, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(128) qkv_mmat_W_q4_k_512_W_q4_k_256_W_q6_k_split_256_B_none_B_none_B_none_Rope_none_256_512_256_256_false_4_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q4_k<512>, W_q4_k<256>, W_q6_k_split<256>, B_none, B_none, B_none, Rope_none, 256, 512, 256, 256, false, 4, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(3) linear_mmah_W_q6_k_split_768_B_none_768_256_3_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<768>, B_none, 768, 256, 3, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_256(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<256>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) linear_mmah_W_q6_k_split_151936_B_none_256_151936_1_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<151936>, B_none, 256, 151936, 1, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_151936(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<151936>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_151936_64_5_132_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<151936, 64, 5, 132, 198656>(logits, state, scratch);
}
