
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-06f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1e+06f; static constexpr bool YARN = false; };
struct Attn_2 { static constexpr int HEADS = 4, KVH = 2, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 256; static constexpr float SCALE = 1.25e-01f; };
struct Moe_3 { static constexpr int E = 16, K = 4, D = 256, F = 256, MT = 64; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_k_151936_151936_256(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q4_k<151936>, 151936, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_256(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<256>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q4_k_256_W_q4_k_128_W_q4_k_128_B_none_B_none_B_none_256_256_128_128_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<256>, W_q4_k<128>, W_q4_k<128>, B_none, B_none, B_none, 256, 256, 128, 128, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_1_Norm_0_W_f32_64_0_4(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_1, Norm_0, W_f32<64>, 0, 4>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(128) norm_rope_rows_Rope_1_Norm_0_W_f32_64_0_2(const float* __restrict__ x, const uint8_t* __restrict__ w, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, positions, state);
    grid_dep_launch();
    norm_rope_rows<Rope_1, Norm_0, W_f32<64>, 0, 2>(x, w, positions, y, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_Attn_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, state);
    grid_dep_launch();
    kv_store<Attn_2>(k, v, positions, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_B_none_false_false_32_512_396_124(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, B_none, false, false, 32, 512, 396, 124>(q, kc, vc, nullptr, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_linear_W_q4_k_256_B_none_256_256_64_64_4(const uint8_t* __restrict__ w, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q4_k<256>, B_none, 256, 256, 64, 64, 4>(w, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(512) moe_route_Moe_3_W_f32_4096_B_none(const uint8_t* __restrict__ wr, const float* __restrict__ x, int* __restrict__ sel, float* __restrict__ gw) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    moe_route<Moe_3, W_f32<4096>, B_none>(wr, nullptr, x, sel, gw);
}
extern "C" __global__ void __launch_bounds__(512) moe_lists_Moe_3(const int* __restrict__ sel, int* __restrict__ cnt, int* __restrict__ list, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_lists<Moe_3>(sel, cnt, list, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_gate_up_gemm_Moe_3_W_q4_k_4096_B_none_64_64_4(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const __half* __restrict__ xh, const int* __restrict__ cnt, const int* __restrict__ list, __half* __restrict__ hh) {
    grid_dep_wait();
    acquire(xh, cnt, list);
    grid_dep_launch();
    moe_gate_up_gemm<Moe_3, W_q4_k<4096>, B_none, 64, 64, 4>(wg, nullptr, wu, nullptr, xh, cnt, list, hh);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_down_gemm_Moe_3_W_q4_k_4096_B_none_64_64_4(const uint8_t* __restrict__ wd, const __half* __restrict__ hh, const int* __restrict__ cnt, const int* __restrict__ list, float* __restrict__ ys) {
    grid_dep_wait();
    acquire(hh, cnt, list);
    grid_dep_launch();
    moe_down_gemm<Moe_3, W_q4_k<4096>, B_none, 64, 64, 4>(wd, nullptr, hh, cnt, list, ys);
}
extern "C" __global__ void __launch_bounds__(256) moe_sum_Moe_3(const float* __restrict__ ys, const float* __restrict__ gw, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(ys, gw, state);
    grid_dep_launch();
    moe_sum<Moe_3>(ys, gw, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) gemm_qkv_W_q4_k_256_W_q4_k_128_W_q6_k_split_128_B_none_B_none_B_none_256_256_128_128_64_64_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q4_k<256>, W_q4_k<128>, W_q6_k_split<128>, B_none, B_none, B_none, 256, 256, 128, 128, 64, 64, 4>(wq, wk, wv, nullptr, nullptr, nullptr, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_down_gemm_Moe_3_W_q6_k_split_4096_B_none_64_64_4(const uint8_t* __restrict__ wd, const __half* __restrict__ hh, const int* __restrict__ cnt, const int* __restrict__ list, float* __restrict__ ys) {
    grid_dep_wait();
    acquire(hh, cnt, list);
    grid_dep_launch();
    moe_down_gemm<Moe_3, W_q6_k_split<4096>, B_none, 64, 64, 4>(wd, nullptr, hh, cnt, list, ys);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_256_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 256, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q6_k_split_dot_151936_B_none_256_151936_32_false_true_0_false_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q6_k_split_dot<151936>, B_none, 256, 151936, 32, false, true, 0, false, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(32, 1) qkv_mma_XNorm_Norm_0_W_f32_256_false_W_q4_k_256_W_q4_k_128_W_q4_k_128_B_none_B_none_B_none_Rope_none_256_256_128_128_false_1_1_false_0_1_4672(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const uint8_t* __restrict__ nw, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<256>, false>, W_q4_k<256>, W_q4_k<128>, W_q4_k<128>, B_none, B_none, B_none, Rope_none, 256, 256, 128, 128, false, 1, 1, false, 0, 1, 4672>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, nullptr, nw, nullptr, nullptr, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128) CLUSTER_X(8) attend_decode_Attn_2_B_none_false_true_128_8_1_128_QKNorm_Rope_1_Norm_0_W_f32_64_W_f32_64(const float* __restrict__ q, const float* __restrict__ kn, const float* __restrict__ vn, const uint8_t* __restrict__ qw, const uint8_t* __restrict__ kw, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, B_none, false, true, 128, 8, 1, 128, QKNorm<Rope_1, Norm_0, W_f32<64>, W_f32<64>>>(q, kn, vn, qw, kw, kc, vc, nullptr, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q4_k_dot_256_B_none_256_256_32_false_false_0_true_0_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q4_k_dot<256>, B_none, 256, 256, 32, false, false, 0, true, 0, 1>(w, nullptr, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_logits_Norm_0_W_f32_256_W_f32_4096_B_none_256_64_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, const uint8_t* __restrict__ wr, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ logit) {
    grid_dep_launch();
    rmsnorm_logits<Norm_0, W_f32<256>, W_f32<4096>, B_none, 256, 64, true>(a, b, w, s, wr, nullptr, xq, xs, logit);
}
extern "C" __global__ void __launch_bounds__(256) moe_gate_up_q8_Moe_3_W_q4_k_dot_4096_B_none(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const float* __restrict__ logit, xq_t* __restrict__ hq, float2* __restrict__ hs) {
    grid_dep_wait();
    acquire(xq, xs, logit);
    grid_dep_launch();
    moe_gate_up_q8<Moe_3, W_q4_k_dot<4096>, B_none>(wg, nullptr, wu, nullptr, xq, xs, logit, hq, hs);
}
extern "C" __global__ void __launch_bounds__(32, 1) qkv_mma_XNorm_Norm_0_W_f32_256_true_W_q4_k_256_W_q4_k_128_W_q6_k_split_128_B_none_B_none_B_none_Rope_none_256_256_128_128_false_1_1_false_0_1_6912(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ nw, float* __restrict__ s, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mma<XNorm<Norm_0, W_f32<256>, true>, W_q4_k<256>, W_q4_k<128>, W_q6_k_split<128>, B_none, B_none, B_none, Rope_none, 256, 256, 128, 128, false, 1, 1, false, 0, 1, 6912>(wq, wk, wv, nullptr, nullptr, nullptr, nullptr, nullptr, a, b, nw, nullptr, s, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(64) rmsnorm_rows_Norm_0_W_f32_256_256_64_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<256>, 256, 64, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q4_k_151936_151936_256_at_end(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    embed_rows<W_q4_k<151936>, 151936, 256>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_sum_q8_Moe_3_W_q4_k_dot_4096_B_none_true_1_4_at_end(const uint8_t* __restrict__ wd, const xq_t* __restrict__ hq, const float2* __restrict__ hs, const float* __restrict__ logit, float* __restrict__ y) {
    moe_down_sum_q8<Moe_3, W_q4_k_dot<4096>, B_none, true, 1, 4>(wd, nullptr, hq, hs, logit, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_sum_q8_Moe_3_W_q6_k_split_dot_4096_B_none_true_1_4(const uint8_t* __restrict__ wd, const xq_t* __restrict__ hq, const float2* __restrict__ hs, const float* __restrict__ logit, float* __restrict__ y) {
    grid_dep_launch();
    moe_down_sum_q8<Moe_3, W_q6_k_split_dot<4096>, B_none, true, 1, 4>(wd, nullptr, hq, hs, logit, y);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_2(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 2>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_B_none_false_2_16_4_3_false(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 2, 16, 4, 3, false>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) qkv_mmah_W_q4_k_256_W_q4_k_128_W_q4_k_128_B_none_B_none_B_none_Rope_none_256_256_128_128_false_1_8_1_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const float* __restrict__ x, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_mmah<W_q4_k<256>, W_q4_k<128>, W_q4_k<128>, B_none, B_none, B_none, Rope_none, 256, 256, 128, 128, false, 1, 8, 1, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, x, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_B_none_false_2_16_4_3_true(const float* __restrict__ q, const __half* __restrict__ pool, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, B_none, false, 2, 16, 4, 3, true>(q, pool, nullptr, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) linear_mmah_W_q4_k_256_B_none_256_256_1_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q4_k<256>, B_none, 256, 256, 1, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(512) moe_order_Moe_3(const int* __restrict__ sel, int4* __restrict__ act, int* __restrict__ order, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_order<Moe_3>(sel, act, order, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q4_k_4096_256_true(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q4_k<4096>, 256, true>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_gate_up_mmat_Moe_3_W_q4_k_4096_B_none_4_2(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ wu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act);
    grid_dep_launch();
    moe_gate_up_mmat<Moe_3, W_q4_k<4096>, B_none, 4, 2>(wg, nullptr, wu, nullptr, xq, xs, act, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q4_k_4096_256_false(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q4_k<4096>, 256, false>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_down_mmat_Moe_3_W_q4_k_4096_B_none_4_2(const uint8_t* __restrict__ wd, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, const int* __restrict__ order, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act, order);
    grid_dep_launch();
    moe_down_mmat<Moe_3, W_q4_k<4096>, B_none, 4, 2>(wd, nullptr, xq, xs, act, order, y);
}
extern "C" __global__ void __launch_bounds__(128) qkv_mmat_W_q4_k_256_W_q4_k_128_W_q6_k_split_128_B_none_B_none_B_none_Rope_none_256_256_128_128_false_4_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q4_k<256>, W_q4_k<128>, W_q6_k_split<128>, B_none, B_none, B_none, Rope_none, 256, 256, 128, 128, false, 4, 2, 0>(wq, wk, wv, nullptr, nullptr, nullptr, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_q6_k_split_4096_256_false(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_q6_k_split<4096>, 256, false>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(128) moe_down_mmat_Moe_3_W_q6_k_split_4096_B_none_4_2(const uint8_t* __restrict__ wd, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, const int* __restrict__ order, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act, order);
    grid_dep_launch();
    moe_down_mmat<Moe_3, W_q6_k_split<4096>, B_none, 4, 2>(wd, nullptr, xq, xs, act, order, y);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_256(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<256>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) linear_mmah_W_q6_k_split_151936_B_none_256_151936_1_8_1_2_0(const uint8_t* __restrict__ w, const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_mmah<W_q6_k_split<151936>, B_none, 256, 151936, 1, 8, 1, 2, 0>(w, nullptr, x, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_151936(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<151936>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_151936_64_5_132_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<151936, 64, 5, 132, 198656>(logits, state, scratch);
}
