
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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_f16_136134656_151936_896(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_f16<136134656>, 151936, 896>(table, ids, y);
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
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_f16_802816_W_f16_114688_W_f16_114688_W_f32_896_W_f32_128_W_f32_128_896_896_128_128_128_128_4_3(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_f16<802816>, W_f16<114688>, W_f16<114688>, W_f32<896>, W_f32<128>, W_f32<128>, 896, 896, 128, 128, 128, 128, 4, 3>(wq, wk, wv, bq, bk, bv, x, y, part, counters, state);
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
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_f16_802816_B_none_896_896_128_128_4_3(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<802816>, B_none, 896, 896, 128, 128, 4, 3>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(224) rmsnorm_rows_Norm_0_W_f32_896_896_224_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<896>, 896, 224, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_swiglu_W_f16_4358144_W_f16_4358144_896_4864_0_128_128_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_f16<4358144>, W_f16<4358144>, 896, 4864, 0, 128, 128, 4>(wg, wu, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_4864(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<4864>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_f16_4358144_B_none_4864_896_128_128_4_7(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<4358144>, B_none, 4864, 896, 128, 128, 4, 7>(w, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_896_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 896, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_136134656_B_none_896_151936(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<136134656>, B_none, 896, 151936>(w, nullptr, x, y);
}
extern "C" __global__ void __launch_bounds__(128) qkv_gemv_W_f16_802816_W_f16_114688_W_f16_114688_W_f32_896_W_f32_128_W_f32_128_Rope_1_896_896_128_128_true(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    qkv_gemv<W_f16<802816>, W_f16<114688>, W_f16<114688>, W_f32<896>, W_f32<128>, W_f32<128>, Rope_1, 896, 896, 128, 128, true>(wq, wk, wv, bq, bk, bv, x, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_2_B_none_false_false_128_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, B_none, false, false, 128, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_802816_B_none_896_896(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<802816>, B_none, 896, 896>(w, nullptr, x, y);
}
extern "C" __global__ void __launch_bounds__(128) swiglu_gemv_W_f16_4358144_W_f16_4358144_896_4864_0(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    swiglu_gemv<W_f16<4358144>, W_f16<4358144>, 896, 4864, 0>(wg, wu, x, y);
}
extern "C" __global__ void __launch_bounds__(256) linear_gemv_W_f16_4358144_B_none_4864_896(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    linear_gemv<W_f16<4358144>, B_none, 4864, 896>(w, nullptr, x, y);
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
extern "C" __global__ void __launch_bounds__(256) gather_rows_896(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<896>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_f16_136134656_B_none_896_151936_128_128_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_f16<136134656>, B_none, 896, 151936, 128, 128, 4>(w, nullptr, x, y, nullptr, nullptr, state);
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
