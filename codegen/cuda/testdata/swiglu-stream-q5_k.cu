
// ---- this model's constants ----

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
extern "C" __global__ void __launch_bounds__(256, 2) gemm_swiglu_W_q5_k_split_98304_W_q5_k_split_98304_3072_8192_0_64_128_4_2(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q5_k_split<98304>, W_q5_k_split<98304>, 3072, 8192, 0, 64, 128, 4, 2>(wg, wu, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_8192_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 8192, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192) swiglu_mma_XCodes_W_q5_k_split_98304_3072_8192_0_6_2_false_0_1_67776(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_mma<XCodes, W_q5_k_split<98304>, 3072, 8192, 0, 6, 2, false, 0, 1, 67776>(wg, wu, xq, xs, nullptr, nullptr, nullptr, nullptr, nullptr, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_3072_at_end(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    quantize_x8<0, 3072>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_8192_4_4_12_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<8192, 4, 4, 12, 198656>(logits, state, scratch);
}
