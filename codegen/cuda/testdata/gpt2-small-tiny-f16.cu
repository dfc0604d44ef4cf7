
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Attn_1 { static constexpr int HEADS = 4, KVH = 4, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 512; static constexpr float SCALE = 1.25e-01f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_f16_12865792_50257_256(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_f16<12865792>, 50257, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_f32_262144_1024_256(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_f32<262144>, 1024, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(64) layernorm_rows_Norm_0_W_f32_256_W_f32_256_256_64_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, const uint8_t* __restrict__ bias, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    layernorm_rows<Norm_0, W_f32<256>, W_f32<256>, 256, 64, true, false>(a, b, w, bias, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_256(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<256>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_f16_65536_W_f16_65536_W_f16_65536_W_f32_256_W_f32_256_W_f32_256_256_256_256_256_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_f16<65536>, W_f16<65536>, W_f16<65536>, W_f32<256>, W_f32<256>, W_f32<256>, 256, 256, 256, 256, 64, 64, 4>(wq, wk, wv, bq, bk, bv, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_none_256_256_256_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_none, 256, 256, 256, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_1_B_none_false_false_2_512_396_8(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_1, B_none, false, false, 2, 512, 396, 8>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_f16_65536_W_f32_256_256_256_64_64_4(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<65536>, W_f32<256>, 256, 256, 64, 64, 4>(w, b, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_f16_262144_W_f32_1024_256_1024_64_64_4(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<262144>, W_f32<1024>, 256, 1024, 64, 64, 4>(w, b, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gelu_ew_0_1024(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gelu_ew<0, 1024>(x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_1024(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<1024>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_f16_262144_W_f32_256_1024_256_64_128_4_4(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<262144>, W_f32<256>, 1024, 256, 64, 128, 4, 4>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_256_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 256, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_12865792_B_none_256_50257(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<12865792>, B_none, 256, 50257>(w, nullptr, x, y);
}
extern "C" __global__ void __launch_bounds__(128) qkv_gemv_W_f16_65536_W_f16_65536_W_f16_65536_W_f32_256_W_f32_256_W_f32_256_Rope_none_256_256_256_256_true(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    qkv_gemv<W_f16<65536>, W_f16<65536>, W_f16<65536>, W_f32<256>, W_f32<256>, W_f32<256>, Rope_none, 256, 256, 256, 256, true>(wq, wk, wv, bq, bk, bv, x, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_1_B_none_false_false_8_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_1, B_none, false, false, 8, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_65536_W_f32_256_256_256(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<65536>, W_f32<256>, 256, 256>(w, b, x, y);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_262144_W_f32_1024_256_1024(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<262144>, W_f32<1024>, 256, 1024>(w, b, x, y);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_262144_W_f32_256_1024_256(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<262144>, W_f32<256>, 1024, 256>(w, b, x, y);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_1_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_1, 2>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_1_B_none_false_2_4_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_1, B_none, false, 2, 4, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_256(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<256>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_f16_12865792_B_none_256_50257_128_128_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<12865792>, B_none, 256, 50257, 128, 128, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_50257(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<50257>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_50257_25_4_132_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<50257, 25, 4, 132, 198656>(logits, state, scratch);
}
