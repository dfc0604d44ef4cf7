
// ---- this model's constants ----
struct Rope_0 { static constexpr int MODE = 1, HD = 128, ROT = 128; static constexpr float BASE = 1e+04f; static constexpr bool YARN = false; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_f32_12288_4_3072(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_f32<12288>, 4, 3072>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_3072(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<3072>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q4_k_49152_W_q4_k_12288_W_q6_k_split_12288_B_none_B_none_B_none_3072_4096_1024_1024_64_128_4_5(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<49152>, W_q4_k<12288>, W_q6_k_split<12288>, B_none, B_none, B_none, 3072, 4096, 1024, 1024, 64, 128, 4, 5>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_0_4096_1024_1024_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_0, 4096, 1024, 1024, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_4096_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 4096, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192, 2) qkv_mma_XCodes_W_q4_k_49152_W_q4_k_12288_W_q6_k_split_12288_B_none_B_none_B_none_Rope_0_3072_4096_1024_1024_false_6_2_false_0_1_80832(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XCodes, W_q4_k<49152>, W_q4_k<12288>, W_q6_k_split<12288>, B_none, B_none, B_none, Rope_0, 3072, 4096, 1024, 1024, false, 6, 2, false, 0, 1, 80832>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, nullptr, nullptr, nullptr, nullptr, nullptr, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_3072_at_end(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    quantize_x8<0, 3072>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_6144_3_4_12_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<6144, 3, 4, 12, 198656>(logits, state, scratch);
}
