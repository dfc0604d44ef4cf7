
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1e+04f; static constexpr bool YARN = false; };
struct Attn_2 { static constexpr int HEADS = 4, KVH = 4, HD = 64, WINDOW = 2047; static constexpr float SCALE = 1.25e-01f; };

// ---- kernels: one per distinct instantiation ----
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_0_256512_32064_256(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    embed_rows<W_q4_0<256512>, 32064, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) rmsnorm_rows_Norm_0_W_f32_256_256_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    rmsnorm_rows<Norm_0, W_f32<256>, 256, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(128) qkv_gemv_W_q4_0_split_2048_W_q4_0_split_2048_W_q4_0_split_2048_B_none_B_none_B_none_Rope_1_256_256_256_256_true(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    qkv_gemv<W_q4_0_split<2048>, W_q4_0_split<2048>, W_q4_0_split<2048>, B_none, B_none, B_none, Rope_1, 256, 256, 256, 256, true>(wq, wk, wv, nullptr, nullptr, nullptr, x, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) attend_prefill_Attn_2_B_none_false_true(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    attend_prefill<Attn_2, B_none, false, true>(q, kc, vc, nullptr, positions, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_2048_B_none_256_256_0_8(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    linear_q8<W_q4_0_split_dot<2048>, B_none, 256, 256, 0, 8>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) rmsnorm_rows_Norm_0_W_f32_256_256_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    rmsnorm_rows<Norm_0, W_f32<256>, 256, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) swiglu_q8_W_q4_0_split_dot_8192_256_512_512_0_8(const uint8_t* __restrict__ wg, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    swiglu_q8<W_q4_0_split_dot<8192>, 256, 512, 512, 0, 8>(wg, wg, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_512(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    quantize_x8<0, 512>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_4096_B_none_512_256_0_8(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    linear_q8<W_q4_0_split_dot<4096>, B_none, 512, 256, 0, 8>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) rmsnorm_rows_Norm_0_W_f32_256_256_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    rmsnorm_rows<Norm_0, W_f32<256>, 256, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_256(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    last_row<0, 256>(x, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_1_256(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    quantize_x8<1, 256>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_32064_B_none_256_32064_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    linear_q8<W_q6_k_split_dot<32064>, B_none, 256, 32064, 1, 1>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(128) attend_decode_Attn_2_B_none_false_true_32(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    attend_decode<Attn_2, B_none, false, true, 32>(q, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_2048_B_none_256_256_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    linear_q8<W_q4_0_split_dot<2048>, B_none, 256, 256, 0, 1>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) swiglu_q8_W_q4_0_split_dot_8192_256_512_512_0_1(const uint8_t* __restrict__ wg, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    swiglu_q8<W_q4_0_split_dot<8192>, 256, 512, 512, 0, 1>(wg, wg, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_0_split_dot_4096_B_none_512_256_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    linear_q8<W_q4_0_split_dot<4096>, B_none, 512, 256, 0, 1>(w, nullptr, xq, xs, y, state);
}
