
// ---- this model's constants ----
struct Rope_0 { static constexpr int MODE = 2, HD = 96, ROT = 96; static constexpr float BASE = 1e+04f; static constexpr bool YARN = false; };

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
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q5_k_split_36864_W_q5_k_split_36864_W_q5_k_split_36864_B_none_B_none_B_none_3072_3072_3072_3072_64_128_4_3(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_k_split<36864>, W_q5_k_split<36864>, W_q5_k_split<36864>, B_none, B_none, B_none, 3072, 3072, 3072, 3072, 64, 128, 4, 3>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_0_3072_3072_3072_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_0, 3072, 3072, 3072, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_3072_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 3072, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192, 2) qkv_mma_XCodes_W_q5_k_split_36864_W_q5_k_split_36864_W_q5_k_split_36864_B_none_B_none_B_none_Rope_0_3072_3072_3072_3072_false_6_2_false_0_1_67776(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XCodes, W_q5_k_split<36864>, W_q5_k_split<36864>, W_q5_k_split<36864>, B_none, B_none, B_none, Rope_0, 3072, 3072, 3072, 3072, false, 6, 2, false, 0, 1, 67776>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, nullptr, nullptr, nullptr, nullptr, nullptr, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_3072_at_end(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    quantize_x8<0, 3072>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_9216_5_4_12_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<9216, 5, 4, 12, 198656>(logits, state, scratch);
}
