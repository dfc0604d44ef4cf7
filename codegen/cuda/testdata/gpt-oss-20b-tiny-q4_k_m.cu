
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1.5e+05f; static constexpr bool YARN = true; static constexpr float FREQ_SCALE = 3.125e-02f, CORR0 = 6.485828e-01f, CORR1 = 9.953828e+00f, MSCALE = 1.3465736e+00f; };
struct Attn_2 { static constexpr int HEADS = 4, KVH = 2, HD = 64, WINDOW = 128, KV8 = 0, KVROW = 256; static constexpr float SCALE = 1.25e-01f; };
struct Moe_3 { static constexpr int E = 4, K = 2, D = 192, F = 256, MT = 64; static constexpr float LIMIT = 7e+00f, ALPHA = 1.702e+00f; };
struct Attn_4 { static constexpr int HEADS = 4, KVH = 2, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 256; static constexpr float SCALE = 1.25e-01f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q5_0_split_1206528_201088_192(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q5_0_split<1206528>, 201088, 192>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_192_192_64_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<192>, 192, 64, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_192(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<192>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q5_0_split_1536_W_q5_0_split_768_W_q5_0_split_768_W_f32_256_W_f32_128_W_f32_128_192_256_128_128_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_0_split<1536>, W_q5_0_split<768>, W_q5_0_split<768>, W_f32<256>, W_f32<128>, W_f32<128>, 192, 256, 128, 128, 64, 64, 4>(wq, wk, wv, bq, bk, bv, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_256_128_128_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 256, 128, 128, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_W_f32_4_true_false_16_512_396_64(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, W_f32<4>, true, false, 16, 512, 396, 64>(q, kc, vc, sinks, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_256(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<256>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_192_W_f32_192_256_192_64_64_4(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<192>, W_f32<192>, 256, 192, 64, 64, 4>(w, b, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_192_192_64_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<192>, 192, 64, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(128) moe_route_Moe_3_W_f32_768_W_f32_4(const uint8_t* __restrict__ wr, const uint8_t* __restrict__ br, const float* __restrict__ x, int* __restrict__ sel, float* __restrict__ gw) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    moe_route<Moe_3, W_f32<768>, W_f32<4>>(wr, br, x, sel, gw);
}
extern "C" __global__ void __launch_bounds__(128) moe_lists_Moe_3(const int* __restrict__ sel, int* __restrict__ cnt, int* __restrict__ list, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_lists<Moe_3>(sel, cnt, list, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_gate_up_gemm_Moe_3_W_q5_0_split_6144_W_f32_1024_64_64_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const __half* __restrict__ xh, const int* __restrict__ cnt, const int* __restrict__ list, __half* __restrict__ hh) {
    grid_dep_wait();
    acquire(xh, cnt, list);
    grid_dep_launch();
    moe_gate_up_gemm<Moe_3, W_q5_0_split<6144>, W_f32<1024>, 64, 64, 4>(wg, bg, wu, bu, xh, cnt, list, hh);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_down_gemm_Moe_3_W_q4_k_768_W_f32_768_64_64_4(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const __half* __restrict__ hh, const int* __restrict__ cnt, const int* __restrict__ list, float* __restrict__ ys) {
    grid_dep_wait();
    acquire(hh, cnt, list);
    grid_dep_launch();
    moe_down_gemm<Moe_3, W_q4_k<768>, W_f32<768>, 64, 64, 4>(wd, bd, hh, cnt, list, ys);
}
extern "C" __global__ void __launch_bounds__(256) moe_sum_Moe_3(const float* __restrict__ ys, const float* __restrict__ gw, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(ys, gw, state);
    grid_dep_launch();
    moe_sum<Moe_3>(ys, gw, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q5_0_split_1536_W_q5_0_split_768_W_q8_0_split_768_W_f32_256_W_f32_128_W_f32_128_192_256_128_128_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q5_0_split<1536>, W_q5_0_split<768>, W_q8_0_split<768>, W_f32<256>, W_f32<128>, W_f32<128>, 192, 256, 128, 128, 64, 64, 4>(wq, wk, wv, bq, bk, bv, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_4_W_f32_4_true_false_16_512_396_64(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_4, W_f32<4>, true, false, 16, 512, 396, 64>(q, kc, vc, sinks, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_down_gemm_Moe_3_W_q6_k_split_768_W_f32_768_64_64_4(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const __half* __restrict__ hh, const int* __restrict__ cnt, const int* __restrict__ list, float* __restrict__ ys) {
    grid_dep_wait();
    acquire(hh, cnt, list);
    grid_dep_launch();
    moe_down_gemm<Moe_3, W_q6_k_split<768>, W_f32<768>, 64, 64, 4>(wd, bd, hh, cnt, list, ys);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_192_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 192, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q8_0_split_dot_1206528_B_none_192_201088_32_false_true_0_true_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q8_0_split_dot<1206528>, B_none, 192, 201088, 32, false, true, 0, true, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_192_192_64_false_true(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<192>, 192, 64, false, true>(a, nullptr, w, nullptr, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q5_0_split_dot_1536_W_q5_0_split_dot_768_W_q5_0_split_dot_768_W_f32_256_W_f32_128_W_f32_128_Rope_1_192_256_128_128_true_32_true_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q5_0_split_dot<1536>, W_q5_0_split_dot<768>, W_q5_0_split_dot<768>, W_f32<256>, W_f32<128>, W_f32<128>, Rope_1, 192, 256, 128, 128, true, 32, true, 0, 1>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) attend_decode_Attn_2_W_f32_4_true_true_1_1_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, W_f32<4>, true, true, 1, 1, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, sinks, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_192_W_f32_192_256_192_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<192>, W_f32<192>, 256, 192, 32, false, false, 0, true, 0, 1>(w, b, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_logits_Norm_0_W_f32_192_W_f32_768_W_f32_4_192_64_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, const uint8_t* __restrict__ wr, const uint8_t* __restrict__ br, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ logit) {
    grid_dep_launch();
    rmsnorm_logits<Norm_0, W_f32<192>, W_f32<768>, W_f32<4>, 192, 64, true>(a, b, w, s, wr, br, xq, xs, logit);
}
extern "C" __global__ void __launch_bounds__(256) moe_gate_up_q8_Moe_3_W_q5_0_split_dot_6144_W_f32_1024(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const float* __restrict__ logit, xq_t* __restrict__ hq, float2* __restrict__ hs) {
    grid_dep_wait();
    acquire(xq, xs, logit);
    grid_dep_launch();
    moe_gate_up_q8<Moe_3, W_q5_0_split_dot<6144>, W_f32<1024>>(wg, bg, wu, bu, xq, xs, logit, hq, hs);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_192_192_64_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<192>, 192, 64, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q5_0_split_dot_1536_W_q5_0_split_dot_768_W_q8_0_split_dot_768_W_f32_256_W_f32_128_W_f32_128_Rope_1_192_256_128_128_true_32_true_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q5_0_split_dot<1536>, W_q5_0_split_dot<768>, W_q8_0_split_dot<768>, W_f32<256>, W_f32<128>, W_f32<128>, Rope_1, 192, 256, 128, 128, true, 32, true, 0, 1>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_4_W_f32_4_true_true_64_8_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_4, W_f32<4>, true, true, 64, 8, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, sinks, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_sum_q8_Moe_3_W_q4_k_dot_768_W_f32_768_true_1_4(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ hq, const float2* __restrict__ hs, const float* __restrict__ logit, float* __restrict__ y) {
    grid_dep_launch();
    moe_down_sum_q8<Moe_3, W_q4_k_dot<768>, W_f32<768>, true, 1, 4>(wd, bd, hq, hs, logit, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_sum_q8_Moe_3_W_q6_k_split_dot_768_W_f32_768_true_1_4(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ hq, const float2* __restrict__ hs, const float* __restrict__ logit, float* __restrict__ y) {
    grid_dep_launch();
    moe_down_sum_q8<Moe_3, W_q6_k_split_dot<768>, W_f32<768>, true, 1, 4>(wd, bd, hq, hs, logit, y);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_256_128_128_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 256, 128, 128, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 2>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_W_f32_4_true_2_1_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, W_f32<4>, true, 2, 1, 4, 3, false>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_4_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_4, 2>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_4_W_f32_4_true_2_16_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_4, W_f32<4>, true, 2, 16, 4, 3, false>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(192) qkv_mmat_W_q5_0_split_1536_W_q5_0_split_768_W_q5_0_split_768_W_f32_256_W_f32_128_W_f32_128_Rope_1_192_256_128_128_false_6_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q5_0_split<1536>, W_q5_0_split<768>, W_q5_0_split<768>, W_f32<256>, W_f32<128>, W_f32<128>, Rope_1, 192, 256, 128, 128, false, 6, 2, 0>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_W_f32_4_true_2_1_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, W_f32<4>, true, 2, 1, 4, 3, true>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) linear_mmah_W_q4_k_192_W_f32_192_256_192_1_8_1_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<192>, W_f32<192>, 256, 192, 1, 8, 1, 2, 0>(w, b, x, y, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_order_Moe_3(const int* __restrict__ sel, int4* __restrict__ act, int* __restrict__ order, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_order<Moe_3>(sel, act, order, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q5_0_split_6144_192_true(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q5_0_split<6144>, 192, true>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(192) moe_gate_up_mmat_Moe_3_W_q5_0_split_6144_W_f32_1024_6_2(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act);
    grid_dep_launch();
    moe_gate_up_mmat<Moe_3, W_q5_0_split<6144>, W_f32<1024>, 6, 2>(wg, bg, wu, bu, xq, xs, act, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q4_k_768_256_false(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q4_k<768>, 256, false>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_down_mmat_Moe_3_W_q4_k_768_W_f32_768_4_2(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, const int* __restrict__ order, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act, order);
    grid_dep_launch();
    moe_down_mmat<Moe_3, W_q4_k<768>, W_f32<768>, 4, 2>(wd, bd, xq, xs, act, order, y);
}
extern "C" __global__ void __launch_bounds__(192) qkv_mmat_W_q5_0_split_1536_W_q5_0_split_768_W_q8_0_split_768_W_f32_256_W_f32_128_W_f32_128_Rope_1_192_256_128_128_false_6_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q5_0_split<1536>, W_q5_0_split<768>, W_q8_0_split<768>, W_f32<256>, W_f32<128>, W_f32<128>, Rope_1, 192, 256, 128, 128, false, 6, 2, 0>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_4_W_f32_4_true_2_16_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_4, W_f32<4>, true, 2, 16, 4, 3, true>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q6_k_split_768_256_false(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q6_k_split<768>, 256, false>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_down_mmat_Moe_3_W_q6_k_split_768_W_f32_768_4_2(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, const int* __restrict__ order, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act, order);
    grid_dep_launch();
    moe_down_mmat<Moe_3, W_q6_k_split<768>, W_f32<768>, 4, 2>(wd, bd, xq, xs, act, order, y);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_192(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<192>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_192(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 192>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(192) linear_mmat_W_q8_0_split_1206528_B_none_192_201088_6_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q8_0_split<1206528>, B_none, 192, 201088, 6, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_201088(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<201088>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_201088_64_7_132_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<201088, 64, 7, 132, 198656>(logits, state, scratch);
}
