
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-06f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1e+06f; static constexpr bool YARN = false; };
struct Attn_2 { static constexpr int HEADS = 14, KVH = 2, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 256; static constexpr float SCALE = 1.25e-01f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q8_0_split_4254208_151936_896(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q8_0_split<4254208>, 151936, 896>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(224) rmsnorm_rows_Norm_0_W_f32_896_896_224_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<896>, 896, 224, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_896(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<896>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_q4_0_split_25088_W_q4_0_split_3584_W_q4_0_split_3584_W_f32_896_W_f32_128_W_f32_128_896_896_128_128_128_128_4_3(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_0_split<25088>, W_q4_0_split<3584>, W_q4_0_split<3584>, W_f32<896>, W_f32<128>, W_f32<128>, 896, 896, 128, 128, 128, 128, 4, 3>(wq, wk, wv, bq, bk, bv, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_896_128_128_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 896, 128, 128, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_B_none_false_false_32_512_396_1566(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, B_none, false, false, 32, 512, 396, 1566>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_0_split_25088_B_none_896_896_128_128_4_3(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_0_split<25088>, B_none, 896, 896, 128, 128, 4, 3>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(224) rmsnorm_rows_Norm_0_W_f32_896_896_224_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<896>, 896, 224, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_swiglu_W_q4_0_split_136192_W_q4_0_split_136192_896_4864_0_128_128_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q4_0_split<136192>, W_q4_0_split<136192>, 896, 4864, 0, 128, 128, 4>(wg, wu, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_4864(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<4864>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_0_split_136192_B_none_4864_896_128_128_4_7(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_0_split<136192>, B_none, 4864, 896, 128, 128, 4, 7>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_896_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 896, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q8_0_split_dot_4254208_B_none_896_151936_32_false_true_0_true_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q8_0_split_dot<4254208>, B_none, 896, 151936, 32, false, true, 0, true, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(224) rmsnorm_rows_Norm_0_W_f32_896_896_224_false_true(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<896>, 896, 224, false, true>(a, nullptr, w, nullptr, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q4_0_split_dot_25088_W_q4_0_split_dot_3584_W_q4_0_split_dot_3584_W_f32_896_W_f32_128_W_f32_128_Rope_1_896_896_128_128_true_32_true_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q4_0_split_dot<25088>, W_q4_0_split_dot<3584>, W_q4_0_split_dot<3584>, W_f32<896>, W_f32<128>, W_f32<128>, Rope_1, 896, 896, 128, 128, true, 32, true, 0, 1>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_2_B_none_false_true_128_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, B_none, false, true, 128, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_25088_B_none_896_896_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_0_split_dot<25088>, B_none, 896, 896, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(224) rmsnorm_rows_Norm_0_W_f32_896_896_224_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<896>, 896, 224, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(512) swiglu_q8_W_q4_0_split_dot_136192_896_4864_0_32_16_true_true_0_1(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, xq_t* __restrict__ yq, float2* __restrict__ ys, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_q8<W_q4_0_split_dot<136192>, 896, 4864, 0, 32, 16, true, true, 0, 1>(wg, wu, xq, xs, y, yq, ys, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_136192_B_none_4864_896_256_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_0_split_dot<136192>, B_none, 4864, 896, 256, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_896_128_128_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 896, 128, 128, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_24(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 24>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_B_none_false_24_16_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 24, 16, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_mmat_W_q4_0_split_25088_W_q4_0_split_3584_W_q4_0_split_3584_W_f32_896_W_f32_128_W_f32_128_Rope_1_896_896_128_128_false_8_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q4_0_split<25088>, W_q4_0_split<3584>, W_q4_0_split<3584>, W_f32<896>, W_f32<128>, W_f32<128>, Rope_1, 896, 896, 128, 128, false, 8, 2, 0>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_B_none_false_24_16_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 24, 16, 4, 3, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_896(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 896>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q4_0_split_25088_B_none_896_896_8_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q4_0_split<25088>, B_none, 896, 896, 8, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) swiglu_mmat_W_q4_0_split_136192_896_4864_0_8_2_0(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    swiglu_mmat<W_q4_0_split<136192>, 896, 4864, 0, 8, 2, 0>(wg, wu, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_4864(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 4864>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q4_0_split_136192_B_none_4864_896_8_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q4_0_split<136192>, B_none, 4864, 896, 8, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_896(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<896>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q8_0_split_4254208_B_none_896_151936_8_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q8_0_split<4254208>, B_none, 896, 151936, 8, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_151936(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<151936>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_151936_64_5_1028_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<151936, 64, 5, 1028, 198656>(logits, state, scratch);
}
