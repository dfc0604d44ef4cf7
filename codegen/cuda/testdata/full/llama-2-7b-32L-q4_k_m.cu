
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Rope_1 { static constexpr int MODE = 1, HD = 128, ROT = 128; static constexpr float BASE = 1e+04f; static constexpr bool YARN = false; };
struct Attn_2 { static constexpr int HEADS = 32, KVH = 32, HD = 128, WINDOW = 0, KV8 = 0, KVROW = 8192; static constexpr float SCALE = 8.8388346e-02f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_k_512000_32000_4096(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q4_k<512000>, 32000, 4096>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(1024) rmsnorm_rows_Norm_0_W_f32_4096_4096_1024_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<4096>, 4096, 1024, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_4096(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<4096>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_q4_k_65536_W_q4_k_65536_W_q6_k_split_65536_B_none_B_none_B_none_4096_4096_4096_4096_128_128_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<65536>, W_q4_k<65536>, W_q6_k_split<65536>, B_none, B_none, B_none, 4096, 4096, 4096, 4096, 128, 128, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_4096_4096_4096_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 4096, 4096, 4096, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_B_none_false_false_8_512_396_1568(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, B_none, false, false, 8, 512, 396, 1568>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_k_65536_B_none_4096_4096_128_128_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<65536>, B_none, 4096, 4096, 128, 128, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(1024) rmsnorm_rows_Norm_0_W_f32_4096_4096_1024_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<4096>, 4096, 1024, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_swiglu_W_q4_k_176128_W_q4_k_176128_4096_11008_0_128_128_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q4_k<176128>, W_q4_k<176128>, 4096, 11008, 0, 128, 128, 4>(wg, wu, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_11008(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<11008>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q6_k_split_176128_B_none_11008_4096_128_128_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q6_k_split<176128>, B_none, 11008, 4096, 128, 128, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_q4_k_65536_W_q4_k_65536_W_q4_k_65536_B_none_B_none_B_none_4096_4096_4096_4096_128_128_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<65536>, W_q4_k<65536>, W_q4_k<65536>, B_none, B_none, B_none, 4096, 4096, 4096, 4096, 128, 128, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_k_176128_B_none_11008_4096_128_128_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<176128>, B_none, 11008, 4096, 128, 128, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_4096_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 4096, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_512000_B_none_4096_32000_64_false_true_0_false_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<512000>, B_none, 4096, 32000, 64, false, true, 0, false, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) qkv_mma_XNorm_Norm_0_W_f32_4096_false_W_q4_k_65536_W_q4_k_65536_W_q6_k_split_65536_B_none_B_none_B_none_Rope_1_4096_4096_4096_4096_true_8_2_false_0_1_107712(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const uint8_t* __restrict__ nw, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<4096>, false>, W_q4_k<65536>, W_q4_k<65536>, W_q6_k_split<65536>, B_none, B_none, B_none, Rope_1, 4096, 4096, 4096, 4096, true, 8, 2, false, 0, 1, 107712>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_2_B_none_false_true_8_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, B_none, false, true, 8, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) swiglu_mma_XNorm_Norm_0_W_f32_4096_false_W_q4_k_176128_4096_11008_0_8_2_false_0_1_73792(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const float* __restrict__ a, const uint8_t* __restrict__ nw, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_mma<XNorm<Norm_0, W_f32<4096>, false>, W_q4_k<176128>, 4096, 11008, 0, 8, 2, false, 0, 1, 73792>(wg, wu, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_11008(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 11008>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) qkv_mma_XNorm_Norm_0_W_f32_4096_false_W_q4_k_65536_W_q4_k_65536_W_q4_k_65536_B_none_B_none_B_none_Rope_1_4096_4096_4096_4096_true_8_2_false_0_1_73792(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const uint8_t* __restrict__ nw, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<4096>, false>, W_q4_k<65536>, W_q4_k<65536>, W_q4_k<65536>, B_none, B_none, B_none, Rope_1, 4096, 4096, 4096, 4096, true, 8, 2, false, 0, 1, 73792>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_176128_B_none_11008_4096_256_false_false_0_false_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<176128>, B_none, 11008, 4096, 256, false, false, 0, false, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(1024) rmsnorm_rows_Norm_0_W_f32_4096_4096_1024_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<4096>, 4096, 1024, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_k_512000_32000_4096_at_end(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    embed_rows<W_q4_k<512000>, 32000, 4096>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_65536_B_none_4096_4096_64_false_false_2_true_0_1_at_end(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const float* __restrict__ r, const int* __restrict__ state) {
    linear_q8<W_q4_k_dot<65536>, B_none, 4096, 4096, 64, false, false, 2, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, r, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_176128_B_none_11008_4096_256_false_false_2_false_0_1_at_end(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const float* __restrict__ r, const int* __restrict__ state) {
    linear_q8<W_q6_k_split_dot<176128>, B_none, 11008, 4096, 256, false, false, 2, false, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, r, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_176128_B_none_11008_4096_256_false_false_2_false_0_1_at_end(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const float* __restrict__ r, const int* __restrict__ state) {
    linear_q8<W_q4_k_dot<176128>, B_none, 11008, 4096, 256, false, false, 2, false, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, r, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_4096_4096_4096_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 4096, 4096, 4096, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_32(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 32>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_paged_Attn_2_B_none_false_32_4_16_2_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 32, 4, 16, 2, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(1024) rmsnorm_rows_Norm_0_W_f32_4096_4096_1024_false_true(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<4096>, 4096, 1024, false, true>(a, nullptr, w, nullptr, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_mmat_W_q4_k_65536_W_q4_k_65536_W_q6_k_split_65536_B_none_B_none_B_none_Rope_1_4096_4096_4096_4096_false_8_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q4_k<65536>, W_q4_k<65536>, W_q6_k_split<65536>, B_none, B_none, B_none, Rope_1, 4096, 4096, 4096, 4096, false, 8, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_paged_Attn_2_B_none_false_32_4_16_2_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 32, 4, 16, 2, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(8) linear_mmah_W_q4_k_65536_B_none_4096_4096_8_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<65536>, B_none, 4096, 4096, 8, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) CLUSTER_X(8) swiglu_mmah_W_q4_k_176128_4096_11008_0_8_8_1_2_0(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_mmah<W_q4_k<176128>, 4096, 11008, 0, 8, 8, 1, 2, 0>(wg, wu, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q6_k_split_176128_B_none_11008_4096_8_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q6_k_split<176128>, B_none, 11008, 4096, 8, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) CLUSTER_X(8) qkv_mmah_W_q4_k_65536_W_q4_k_65536_W_q4_k_65536_B_none_B_none_B_none_Rope_1_4096_4096_4096_4096_false_8_8_1_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mmah<W_q4_k<65536>, W_q4_k<65536>, W_q4_k<65536>, B_none, B_none, B_none, Rope_1, 4096, 4096, 4096, 4096, false, 8, 8, 1, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, x, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) linear_mmat_stream_W_q4_k_176128_B_none_11008_4096_8_2_0_11008_false_198656(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmat_stream<W_q4_k<176128>, B_none, 11008, 4096, 8, 2, 0, 11008, false, 198656>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_4096(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<4096>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) CLUSTER_X(8) linear_mmah_W_q6_k_split_512000_B_none_4096_32000_8_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<512000>, B_none, 4096, 32000, 8, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_32000(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<32000>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_32000_16_4_1028_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<32000, 16, 4, 1028, 198656>(logits, state, scratch);
}
