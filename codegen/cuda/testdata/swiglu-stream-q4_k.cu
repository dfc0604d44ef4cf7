
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
extern "C" __global__ void __launch_bounds__(256, 1) gemm_swiglu_W_q4_k_98304_W_q4_k_98304_3072_8192_0_128_64(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_swiglu<W_q4_k<98304>, W_q4_k<98304>, 3072, 8192, 0, 128, 64>(wg, wu, x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_8192_false(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 8192, false>(x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(192) swiglu_mma_XCodes_W_q4_k_98304_3072_8192_0_6_2_false_0_1_55360(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    swiglu_mma<XCodes, W_q4_k<98304>, 3072, 8192, 0, 6, 2, false, 0, 1, 55360>(wg, wu, xq, xs, nullptr, nullptr, nullptr, nullptr, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_3072_at_end(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    quantize_x8<0, 3072>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) sample_prep_8192_1024_64(const float* __restrict__ logits, const int* __restrict__ in, float* __restrict__ lt, u64* __restrict__ part, int* __restrict__ bad) {
    grid_dep_wait();
    acquire(logits, in);
    grid_dep_launch();
    sample_prep<8192, 1024, 64>(logits, in, lt, part, bad);
}
extern "C" __global__ void __launch_bounds__(1024) sample_argmax_8(const u64* __restrict__ part, const int* __restrict__ bad, int* __restrict__ out) {
    grid_dep_wait();
    acquire(part, bad);
    grid_dep_launch();
    sample_argmax<8>(part, bad, out);
}
extern "C" __global__ void __launch_bounds__(256) sample_weights_8192_1024(const float* __restrict__ lt, const int* __restrict__ out, double* __restrict__ psum) {
    grid_dep_wait();
    acquire(lt, out);
    grid_dep_launch();
    sample_weights<8192, 1024>(lt, out, psum);
}
extern "C" __global__ void __launch_bounds__(1024) sample_select_8192_8_1024(const float* __restrict__ lt, const double* __restrict__ psum, int* __restrict__ out) {
    grid_dep_wait();
    acquire(lt, psum);
    grid_dep_launch();
    sample_select<8192, 8, 1024>(lt, psum, out);
}
