
// ---- this model's constants ----
struct Norm_0 { static constexpr float EPS = 1e-05f; };
struct Rope_1 { static constexpr int MODE = 2, HD = 64, ROT = 64; static constexpr float BASE = 1.5e+05f; static constexpr bool YARN = true; static constexpr float FREQ_SCALE = 3.125e-02f, CORR0 = 8.092779e+00f, CORR1 = 1.7398024e+01f, MSCALE = 1.3465736e+00f; };
struct Attn_2 { static constexpr int HEADS = 64, KVH = 8, HD = 64, WINDOW = 128, KV8 = 0, KVROW = 1024; static constexpr float SCALE = 1.25e-01f; };
struct Moe_3 { static constexpr int E = 32, K = 4, D = 2880, F = 2880, MT = 512; static constexpr float LIMIT = 7e+00f, ALPHA = 1.702e+00f; };
struct Attn_4 { static constexpr int HEADS = 64, KVH = 8, HD = 64, WINDOW = 0, KV8 = 0, KVROW = 1024; static constexpr float SCALE = 1.25e-01f; };

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
extern "C" __global__ void __launch_bounds__(128) embed_rows_W_q8_0_split_18097920_201088_2880(const uint8_t* __restrict__ table, const int* __restrict__ ids, float* __restrict__ y) {
    grid_dep_wait();
    acquire(ids);
    grid_dep_launch();
    embed_rows<W_q8_0_split<18097920>, 201088, 2880>(table, ids, y);
}
extern "C" __global__ void __launch_bounds__(736) rmsnorm_rows_Norm_0_W_f32_2880_2880_736_false_false(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<2880>, 2880, 736, false, false>(a, nullptr, w, nullptr, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_2880(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<2880>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_qkv_W_q8_0_split_368640_W_q8_0_split_46080_W_q8_0_split_46080_W_f32_4096_W_f32_512_W_f32_512_2880_4096_512_512_128_128_4(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const __half* __restrict__ x, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_qkv<W_q8_0_split<368640>, W_q8_0_split<46080>, W_q8_0_split<46080>, W_f32<4096>, W_f32<512>, W_f32<512>, 2880, 4096, 512, 512, 128, 128, 4>(wq, wk, wv, bq, bk, bv, x, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_4096_512_512_true(const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 4096, 512, 512, true>(positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_2_W_f32_64_true_false_6_512_324_1296(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_2, W_f32<64>, true, false, 6, 512, 324, 1296>(q, kc, vc, sinks, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gemm_x_f16_4096(const float* __restrict__ x, __half* __restrict__ xh, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_x_f16<4096>(x, xh, state);
}
extern "C" __global__ void __launch_bounds__(256, 1) gemm_linear_W_q8_0_split_368640_W_f32_2880_4096_2880_128_128_4_2(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const __half* __restrict__ x, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    gemm_linear<W_q8_0_split<368640>, W_f32<2880>, 4096, 2880, 128, 128, 4, 2>(w, b, x, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(736) rmsnorm_rows_Norm_0_W_f32_2880_2880_736_true_false(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<2880>, 2880, 736, true, false>(a, b, w, s, y, nullptr, nullptr);
}
extern "C" __global__ void __launch_bounds__(1024) moe_route_Moe_3_W_f32_92160_W_f32_32(const uint8_t* __restrict__ wr, const uint8_t* __restrict__ br, const float* __restrict__ x, int* __restrict__ sel, float* __restrict__ gw) {
    grid_dep_wait();
    acquire(x);
    grid_dep_launch();
    moe_route<Moe_3, W_f32<92160>, W_f32<32>>(wr, br, x, sel, gw);
}
extern "C" __global__ void __launch_bounds__(1024) moe_lists_Moe_3(const int* __restrict__ sel, int* __restrict__ cnt, int* __restrict__ list, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_lists<Moe_3>(sel, cnt, list, state);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_gate_up_gemm_Moe_3_W_mxfp4_split_8294400_W_f32_92160_128_128_2(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const __half* __restrict__ xh, const int* __restrict__ cnt, const int* __restrict__ list, __half* __restrict__ hh) {
    grid_dep_wait();
    acquire(xh, cnt, list);
    grid_dep_launch();
    moe_gate_up_gemm<Moe_3, W_mxfp4_split<8294400>, W_f32<92160>, 128, 128, 2>(wg, bg, wu, bu, xh, cnt, list, hh);
}
extern "C" __global__ void __launch_bounds__(256, 2) moe_down_gemm_Moe_3_W_mxfp4_split_8294400_W_f32_92160_128_128_2(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const __half* __restrict__ hh, const int* __restrict__ cnt, const int* __restrict__ list, float* __restrict__ ys) {
    grid_dep_wait();
    acquire(hh, cnt, list);
    grid_dep_launch();
    moe_down_gemm<Moe_3, W_mxfp4_split<8294400>, W_f32<92160>, 128, 128, 2>(wd, bd, hh, cnt, list, ys);
}
extern "C" __global__ void __launch_bounds__(256) moe_sum_Moe_3(const float* __restrict__ ys, const float* __restrict__ gw, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(ys, gw, state);
    grid_dep_launch();
    moe_sum<Moe_3>(ys, gw, y, state);
}
extern "C" __global__ void __launch_bounds__(128, 3) attend_prefill_Attn_4_W_f32_64_true_false_6_512_324_1296(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, positions, state);
    grid_dep_launch();
    attend_prefill<Attn_4, W_f32<64>, true, false, 6, 512, 324, 1296>(q, kc, vc, sinks, positions, y, nullptr, nullptr, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) last_row_0_2880_true(const float* __restrict__ x, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    last_row<0, 2880, true>(x, y, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q8_0_split_dot_18097920_B_none_2880_201088_32_false_true_0_false_1_1(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, u64* __restrict__ greedy, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q8_0_split_dot<18097920>, B_none, 2880, 201088, 32, false, true, 0, false, 1, 1>(w, nullptr, nullptr, xq, xs, y, greedy, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(736) rmsnorm_rows_Norm_0_W_f32_2880_2880_736_false_true(const float* __restrict__ a, const uint8_t* __restrict__ w, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<2880>, 2880, 736, false, true>(a, nullptr, w, nullptr, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(256) qkv_q8_W_q8_0_split_dot_368640_W_q8_0_split_dot_46080_W_q8_0_split_dot_46080_W_f32_4096_W_f32_512_W_f32_512_Rope_1_2880_4096_512_512_true_128_false_0_1(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, __half* __restrict__ kc, __half* __restrict__ vc, const int* __restrict__ state) {
    grid_dep_launch();
    qkv_q8<W_q8_0_split_dot<368640>, W_q8_0_split_dot<46080>, W_q8_0_split_dot<46080>, W_f32<4096>, W_f32<512>, W_f32<512>, Rope_1, 2880, 4096, 512, 512, true, 128, false, 0, 1>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, kc, vc, state);
}
extern "C" __global__ void __launch_bounds__(128) attend_decode_Attn_2_W_f32_64_true_true_1_1_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_2, W_f32<64>, true, true, 1, 1, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, sinks, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_q8_W_q8_0_split_dot_368640_W_f32_2880_4096_2880_128_false_false_0_true_0_1(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_launch();
    linear_q8<W_q8_0_split_dot<368640>, W_f32<2880>, 4096, 2880, 128, false, false, 0, true, 0, 1>(w, b, nullptr, xq, xs, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(736) rmsnorm_logits_Norm_0_W_f32_2880_W_f32_92160_W_f32_32_2880_736_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, const uint8_t* __restrict__ wr, const uint8_t* __restrict__ br, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ logit) {
    grid_dep_launch();
    rmsnorm_logits<Norm_0, W_f32<2880>, W_f32<92160>, W_f32<32>, 2880, 736, true>(a, b, w, s, wr, br, xq, xs, logit);
}
extern "C" __global__ void __launch_bounds__(256) moe_gate_up_q8_Moe_3_W_mxfp4_split_dot_8294400_W_f32_92160(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const float* __restrict__ logit, xq_t* __restrict__ hq, float2* __restrict__ hs) {
    grid_dep_wait();
    acquire(xq, xs, logit);
    grid_dep_launch();
    moe_gate_up_q8<Moe_3, W_mxfp4_split_dot<8294400>, W_f32<92160>>(wg, bg, wu, bu, xq, xs, logit, hq, hs);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_sum_q8_Moe_3_W_mxfp4_split_dot_8294400_W_f32_92160_false_4(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ hq, const float2* __restrict__ hs, const float* __restrict__ logit, float* __restrict__ y) {
    grid_dep_launch();
    moe_down_sum_q8<Moe_3, W_mxfp4_split_dot<8294400>, W_f32<92160>, false, 4>(wd, bd, hq, hs, logit, y);
}
extern "C" __global__ void __launch_bounds__(736) rmsnorm_rows_Norm_0_W_f32_2880_2880_736_true_true(const float* __restrict__ a, const float* __restrict__ b, const uint8_t* __restrict__ w, float* __restrict__ s, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs) {
    grid_dep_wait();
    acquire(a, b);
    grid_dep_launch();
    rmsnorm_rows<Norm_0, W_f32<2880>, 2880, 736, true, true>(a, b, w, s, y, xq, xs);
}
extern "C" __global__ void __launch_bounds__(128) attend_decode_Attn_4_W_f32_64_true_true_27_1_1_128(const float* __restrict__ q, __half* __restrict__ kc, __half* __restrict__ vc, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, float* __restrict__ y, xq_t* __restrict__ xq, float2* __restrict__ xs, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_launch();
    attend_decode<Attn_4, W_f32<64>, true, true, 27, 1, 1, 128>(q, nullptr, nullptr, nullptr, nullptr, kc, vc, sinks, positions, y, xq, xs, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_rope_store_Rope_1_4096_512_512_false(const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(positions, state);
    grid_dep_launch();
    qkv_rope_store<Rope_1, 4096, 512, 512, false>(positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_2_24(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_2, 24>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_W_f32_64_true_24_1_4_2_false(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, W_f32<64>, true, 24, 1, 4, 2, false>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) kv_store_paged_Attn_4_24(const float* __restrict__ k, const float* __restrict__ v, const int* __restrict__ positions, const int* __restrict__ row_of, const int* __restrict__ paging, const int* __restrict__ tables, __half* __restrict__ pool, int layer, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(k, v, positions, row_of, paging, tables, state);
    grid_dep_launch();
    kv_store_paged<Attn_4, 24>(k, v, positions, row_of, paging, tables, pool, layer, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_4_W_f32_64_true_24_16_4_2_false(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_4, W_f32<64>, true, 24, 16, 4, 2, false>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) qkv_mmat_W_q8_0_split_368640_W_q8_0_split_46080_W_q8_0_split_46080_W_f32_4096_W_f32_512_W_f32_512_Rope_1_2880_4096_512_512_false_8_2_0(const uint8_t* __restrict__ wq, const uint8_t* __restrict__ wk, const uint8_t* __restrict__ wv, const uint8_t* __restrict__ bq, const uint8_t* __restrict__ bk, const uint8_t* __restrict__ bv, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int* __restrict__ positions, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, positions, state);
    grid_dep_launch();
    qkv_mmat<W_q8_0_split<368640>, W_q8_0_split<46080>, W_q8_0_split<46080>, W_f32<4096>, W_f32<512>, W_f32<512>, Rope_1, 2880, 4096, 512, 512, false, 8, 2, 0>(wq, wk, wv, bq, bk, bv, xq, xs, positions, y, nullptr, nullptr, state);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_2_W_f32_64_true_24_1_4_2_true(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_2, W_f32<64>, true, 24, 1, 4, 2, true>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_4096(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 4096>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q8_0_split_368640_W_f32_2880_4096_2880_8_2_0(const uint8_t* __restrict__ w, const uint8_t* __restrict__ b, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q8_0_split<368640>, W_f32<2880>, 4096, 2880, 8, 2, 0>(w, b, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(1024) moe_order_Moe_3(const int* __restrict__ sel, int4* __restrict__ act, int* __restrict__ order, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(sel, state);
    grid_dep_launch();
    moe_order<Moe_3>(sel, act, order, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_mxfp4_split_8294400_2880_true(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_mxfp4_split<8294400>, 2880, true>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_gate_up_mmat_Moe_3_W_mxfp4_split_8294400_W_f32_92160_8_2(const uint8_t* __restrict__ wg, const uint8_t* __restrict__ bg, const uint8_t* __restrict__ wu, const uint8_t* __restrict__ bu, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act);
    grid_dep_launch();
    moe_gate_up_mmat<Moe_3, W_mxfp4_split<8294400>, W_f32<92160>, 8, 2>(wg, bg, wu, bu, xq, xs, act, y);
}
extern "C" __global__ void __launch_bounds__(256) moe_codes_Moe_3_W_mxfp4_split_8294400_2880_false(const float* __restrict__ x, const int* __restrict__ order, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, order, state);
    grid_dep_launch();
    moe_codes<Moe_3, W_mxfp4_split<8294400>, 2880, false>(x, order, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) moe_down_mmat_Moe_3_W_mxfp4_split_8294400_W_f32_92160_8_2(const uint8_t* __restrict__ wd, const uint8_t* __restrict__ bd, const xq_t* __restrict__ xq, const float2* __restrict__ xs, const int4* __restrict__ act, const int* __restrict__ order, float* __restrict__ y) {
    grid_dep_wait();
    acquire(xq, xs, act, order);
    grid_dep_launch();
    moe_down_mmat<Moe_3, W_mxfp4_split<8294400>, W_f32<92160>, 8, 2>(wd, bd, xq, xs, act, order, y);
}
extern "C" __global__ void __launch_bounds__(128, 4) attend_paged_Attn_4_W_f32_64_true_24_16_4_2_true(const float* __restrict__ q, const __half* __restrict__ pool, const uint8_t* __restrict__ sinks, const int* __restrict__ positions, const int* __restrict__ last, const int* __restrict__ nrows, const int* __restrict__ paging, const int* __restrict__ tables, int layer, float* __restrict__ y, float* __restrict__ part, int* __restrict__ counters, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(q, pool, positions, last, nrows, paging, tables, state);
    grid_dep_launch();
    attend_paged<Attn_4, W_f32<64>, true, 24, 16, 4, 2, true>(q, pool, sinks, positions, last, nrows, paging, tables, layer, y, part, counters, state);
}
extern "C" __global__ void __launch_bounds__(256) gather_rows_2880(const float* __restrict__ x, const int* __restrict__ last, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, last, state);
    grid_dep_launch();
    gather_rows<2880>(x, last, y, state);
}
extern "C" __global__ void __launch_bounds__(256) quantize_x8_0_2880(const float* __restrict__ x, xq_t* __restrict__ xq, float2* __restrict__ xs, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(x, state);
    grid_dep_launch();
    quantize_x8<0, 2880>(x, xq, xs, state);
}
extern "C" __global__ void __launch_bounds__(256) linear_mmat_W_q8_0_split_18097920_B_none_2880_201088_8_2_0(const uint8_t* __restrict__ w, const xq_t* __restrict__ xq, const float2* __restrict__ xs, float* __restrict__ y, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(xq, xs, state);
    grid_dep_launch();
    linear_mmat<W_q8_0_split<18097920>, B_none, 2880, 201088, 8, 2, 0>(w, nullptr, xq, xs, y, state);
}
extern "C" __global__ void __launch_bounds__(512) batch_argmax_201088(const float* __restrict__ logits, int* __restrict__ picks, const int* __restrict__ state) {
    grid_dep_wait();
    acquire(logits, state);
    grid_dep_launch();
    batch_argmax<201088>(logits, picks, state);
}
extern "C" __global__ void __launch_bounds__(512) sample_draw_201088_64_7_1028_198656_at_end(const float* __restrict__ logits, int* __restrict__ state, SampleScratch* __restrict__ scratch) {
    sample_draw<201088, 64, 7, 1028, 198656>(logits, state, scratch);
}
