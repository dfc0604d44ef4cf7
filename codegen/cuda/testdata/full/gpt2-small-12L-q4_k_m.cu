
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Attn_1 { static constexpr int HEADS = 12, KVH = 12, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 1536; static constexpr float SCALE = 1.25e-01f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_k_150771_50257_768(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q4_k<150771>, 50257, 768>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_f32_786432_1024_768(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_f32<786432>, 1024, 768>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(192) layernorm_rows_Norm_0_W_f32_768_W_f32_768_768_192_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, const uint8_t* __restrict__ bias, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    layernorm_rows<Norm_0, W_f32<768>, W_f32<768>, 768, 192, true, false>(a, b, w, bias, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_768(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<768>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_q5_k_split_2304_W_q5_k_split_2304_W_q5_k_split_2304_W_f32_768_W_f32_768_W_f32_768_768_768_768_768_128_128_4_3(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_k_split<2304>, W_q5_k_split<2304>, W_q5_k_split<2304>, W_f32<768>, W_f32<768>, W_f32<768>, 768, 768, 768, 768, 128, 128, 4, 3>(wq, wk, wv, bq, bk, bv, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_none_768_768_768_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_none, 768, 768, 768, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_1_B_none_false_false_2_512_396_192(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_1, B_none, false, false, 2, 512, 396, 192>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_k_2304_W_f32_768_768_768_128_128_4_3(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<2304>, W_f32<768>, 768, 768, 128, 128, 4, 3>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_k_9216_W_f32_3072_768_3072_128_128_4_2(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<9216>, W_f32<3072>, 768, 3072, 128, 128, 4, 2>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gelu_ew_0_3072(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gelu_ew<0, 3072>(x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_3072(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<3072>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q6_k_split_9216_W_f32_768_3072_768_128_128_4_6(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q6_k_split<9216>, W_f32<768>, 3072, 768, 128, 128, 4, 6>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q4_k_9216_W_f32_768_3072_768_128_128_4_6(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<9216>, W_f32<768>, 3072, 768, 128, 128, 4, 6>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_768_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 768, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_150771_B_none_768_50257_32_false_true_0_false_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<150771>, B_none, 768, 50257, 32, false, true, 0, false, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192) layernorm_rows_Norm_0_W_f32_768_W_f32_768_768_192_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, const uint8_t* __restrict__ bias, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    layernorm_rows<Norm_0, W_f32<768>, W_f32<768>, 768, 192, true, true>(a, b, w, bias, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(96, 2) qkv_mma_XCodes_W_q5_k_split_2304_W_q5_k_split_2304_W_q5_k_split_2304_W_f32_768_W_f32_768_W_f32_768_Rope_none_768_768_768_768_true_3_1_false_0_1_17088(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XCodes, W_q5_k_split<2304>, W_q5_k_split<2304>, W_q5_k_split<2304>, W_f32<768>, W_f32<768>, W_f32<768>, Rope_none, 768, 768, 768, 768, true, 3, 1, false, 0, 1, 17088>(wq, wk, wv, bq, bk, bv, xq, xs, nullptr, nullptr, nullptr, nullptr, nullptr, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_1_B_none_false_true_8_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_1, B_none, false, true, 8, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_2304_W_f32_768_768_768_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<2304>, W_f32<768>, 768, 768, 32, false, false, 0, true, 0, 1>(w, b, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_9216_W_f32_3072_768_3072_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<9216>, W_f32<3072>, 768, 3072, 32, false, false, 0, true, 0, 1>(w, b, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_9216_W_f32_768_3072_768_64_true_false_0_false_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<9216>, W_f32<768>, 3072, 768, 64, true, false, 0, false, 0, 1>(w, b, x, nullptr, nullptr, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_9216_W_f32_768_3072_768_64_true_false_0_false_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<9216>, W_f32<768>, 3072, 768, 64, true, false, 0, false, 0, 1>(w, b, x, nullptr, nullptr, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192) layernorm_rows_Norm_0_W_f32_768_W_f32_768_768_192_true_true_at_end(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, const uint8_t* __restrict__ bias, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    layernorm_rows<Norm_0, W_f32<768>, W_f32<768>, 768, 192, true, true>(a, b, w, bias, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) gelu_ew_0_3072_at_end(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    gelu_ew<0, 3072>(x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_1_12(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_1, 12>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_1_B_none_false_12_4_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_1, B_none, false, 12, 4, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(3) qkv_mmah_W_q5_k_split_2304_W_q5_k_split_2304_W_q5_k_split_2304_W_f32_768_W_f32_768_W_f32_768_Rope_none_768_768_768_768_false_3_8_1_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mmah<W_q5_k_split<2304>, W_q5_k_split<2304>, W_q5_k_split<2304>, W_f32<768>, W_f32<768>, W_f32<768>, Rope_none, 768, 768, 768, 768, false, 3, 8, 1, 2, 0>(wq, wk, wv, bq, bk, bv, x, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_1_B_none_false_12_4_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_1, B_none, false, 12, 4, 4, 3, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(3) linear_mmah_W_q4_k_2304_W_f32_768_768_768_3_8_1_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<2304>, W_f32<768>, 768, 768, 3, 8, 1, 2, 0>(w, b, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(3) linear_mmah_W_q4_k_9216_W_f32_3072_768_3072_3_8_1_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<9216>, W_f32<3072>, 768, 3072, 3, 8, 1, 2, 0>(w, b, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(6) linear_mmah_W_q6_k_split_9216_W_f32_768_3072_768_6_8_1_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<9216>, W_f32<768>, 3072, 768, 6, 8, 1, 2, 0>(w, b, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) CLUSTER_X(6) linear_mmah_W_q4_k_9216_W_f32_768_3072_768_6_8_1_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<9216>, W_f32<768>, 3072, 768, 6, 8, 1, 2, 0>(w, b, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_768(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<768>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) linear_mmah_W_q6_k_split_150771_B_none_768_50257_1_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<150771>, B_none, 768, 50257, 1, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_50257(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<50257>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_50257_25_4_1028_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<50257, 25, 4, 1028, 198656>(logits, state, scratch);
}
