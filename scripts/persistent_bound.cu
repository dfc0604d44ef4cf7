// persistent_bound.cu: what a persistent decode step could reach on this
// GPU, measured without the model's arithmetic (its results:
// codegen/cuda/notes/launch.md). Not part of a plan; a design measurement.
//
// One block an SM streams Phi-3-mini Q4_K_M's decode weights (2.34 GB: a
// layer's qkv, o-proj, gate/up and down, 32 layers, then the head; each
// phase's chunks go round-robin over the blocks) through a ring of
// shared-memory stages that one producer thread fills with the bulk copy
// engine. Consumer warps "compute" each staged chunk, 4·WORK integer
// multiply-adds a 16-byte word (WORK 16 is about the tensor-core SwiGLU's
// instructions a weight byte: ~600 SASS a thread for a chunk's 256 weights),
// and meet at a grid barrier after every phase, as a persistent kernel's
// dependent phases would. Every block first spends NORM_NS (default 1000)
// before qkv, gate/up and the head (each normalizes the residual itself);
// 32 blocks spend ATT_NS (default 3000) on the attention, as a phase of its
// own or ("attention in qkv") after their qkv chunks.
//
// ahead: the producer runs ahead of the barriers (weights do not depend on
// activations), bounded only by the ring; waits: it waits for each phase's
// barrier as the consumers do. atom: a barrier is a fence and an atomicAdd;
// red: one red.release. Medians of 10 launches (cooperative, one block an
// SM).
//
// nvcc -arch=sm_90 -O3 -std=c++17 -o /tmp/pb scripts/persistent_bound.cu && /tmp/pb
// ATT_NS=0 NORM_NS=0 /tmp/pb   # the barriers and the arithmetic alone
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <algorithm>
#include <vector>
#include <cuda_runtime.h>

typedef unsigned long long u64;
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

struct Phase {
    long long off, bytes;  // weights
    int delay_blocks, delay_ns;  // blocks below delay_blocks spin delay_ns first (attention, norms)
    int end_blocks, end_ns;      // and blocks below end_blocks end_ns after their chunks
};

__device__ __forceinline__ uint32_t sa(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(u64* b, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(n) : "memory"); }
__device__ __forceinline__ void mbar_arrive(u64* b) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(b)) : "memory"); }
__device__ __forceinline__ void mbar_wait(u64* b, uint32_t parity) {
    asm volatile("{\n .reg .pred p;\n W:\n mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}" ::"r"(sa(b)), "r"(parity) : "memory");
}
__device__ __forceinline__ void bulk(void* dst, const void* src, int bytes, u64* b) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(b)), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(sa(dst)), "l"(src), "r"(bytes), "r"(sa(b))
                 : "memory");
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void spin_ns(int ns) {
    u64 t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < (u64)ns);
}

template <int WORK, int CHUNK, int STAGES, bool AHEAD, int CWARPS, bool RED>
__global__ void __launch_bounds__(32 * (CWARPS + 1), 1) step(const uint8_t* __restrict__ w, const Phase* __restrict__ ph, int nph, unsigned* counter, unsigned base,
                                                   unsigned* out) {
    extern __shared__ __align__(128) uint8_t ring[];
    __shared__ u64 full[STAGES], empty[STAGES];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, G = gridDim.x;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) mbar_init(&full[s], 1), mbar_init(&empty[s], CWARPS);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) {  // the producer
        if (lane != 0) return;
        int i = 0;
        for (int p = 0; p < nph; p++) {
            if (!AHEAD && p > 0)
                while (ld_acquire(counter) < base + (unsigned)(p * G)) {
                }
            const long long n = (ph[p].bytes + CHUNK - 1) / CHUNK;
            for (long long c = blockIdx.x; c < n; c += G, i++) {
                const int s = i % STAGES;
                if (i >= STAGES) mbar_wait(&empty[s], (i / STAGES - 1) & 1);
                const int bytes = (int)min((long long)CHUNK, ph[p].bytes - c * CHUNK) & ~15;
                bulk(ring + s * CHUNK, w + ph[p].off + c * CHUNK, bytes, &full[s]);
            }
        }
        return;
    }
    const int ct = threadIdx.x - 32;  // consumer thread
    unsigned a0 = ct, a1 = 1, a2 = 2, a3 = 3;
    int i = 0;
    for (int p = 0; p < nph; p++) {
        if (p > 0) {
            if (ct == 0)
                while (ld_acquire(counter) < base + (unsigned)(p * G)) {
                }
            asm volatile("bar.sync 1, %0;" ::"r"(CWARPS * 32) : "memory");
        }
        if (blockIdx.x < ph[p].delay_blocks && ct == 0) spin_ns(ph[p].delay_ns);
        if (ph[p].delay_ns) asm volatile("bar.sync 1, %0;" ::"r"(CWARPS * 32) : "memory");
        const long long n = (ph[p].bytes + CHUNK - 1) / CHUNK;
        for (long long c = blockIdx.x; c < n; c += G, i++) {
            const int s = i % STAGES;
            mbar_wait(&full[s], (i / STAGES) & 1);
            const uint4* st = (const uint4*)(ring + s * CHUNK);
#pragma unroll 2
            for (int k = ct; k < CHUNK / 16; k += CWARPS * 32) {
                const uint4 v = st[k];
#pragma unroll
                for (int r = 0; r < WORK; r++) a0 = a0 * v.x + r, a1 = a1 * v.y + r, a2 = a2 * v.z + r, a3 = a3 * v.w + r;
                if (WORK == 0) a0 ^= v.x ^ v.y ^ v.z ^ v.w;
            }
            __syncwarp();
            if (lane == 0) mbar_arrive(&empty[s]);
        }
        asm volatile("bar.sync 1, %0;" ::"r"(CWARPS * 32) : "memory");
        if (blockIdx.x < ph[p].end_blocks) {  // the attention after the block's qkv chunks
            if (ct == 0) spin_ns(ph[p].end_ns);
            asm volatile("bar.sync 1, %0;" ::"r"(CWARPS * 32) : "memory");
        }
        if (ct == 0) {
            if (RED) {
                asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
            } else {
                __threadfence();
                atomicAdd(counter, 1u);
            }
        }
    }
    if ((a0 ^ a1 ^ a2 ^ a3) == 0x12345678u) out[ct] = a0;
}

template <int WORK, int CHUNK, int STAGES, bool AHEAD, int CWARPS = 8, bool RED = false>
void run(const char* name, const uint8_t* w, const std::vector<Phase>& phs, unsigned* counter, unsigned* out, int sms) {
    long long total = 0;
    for (const Phase& p : phs) total += p.bytes;
    Phase* d;
    CK(cudaMalloc(&d, phs.size() * sizeof(Phase)));
    CK(cudaMemcpy(d, phs.data(), phs.size() * sizeof(Phase), cudaMemcpyHostToDevice));
    auto k = step<WORK, CHUNK, STAGES, AHEAD, CWARPS, RED>;
    const int THREADS = 32 * (CWARPS + 1);
    const int smem = CHUNK * STAGES;
    CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    CK(cudaMemset(counter, 0, 4));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    const int nph = (int)phs.size(), R = 12;
    std::vector<float> ms;
    for (int r = 0; r < R; r++) {
        unsigned base = (unsigned)r * nph * sms;
        void* args[] = {(void*)&w, (void*)&d, (void*)&nph, (void*)&counter, (void*)&base, (void*)&out};
        CK(cudaEventRecord(e0));
        CK(cudaLaunchCooperativeKernel((void*)k, sms, THREADS, args, smem, 0));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const float med = ms[ms.size() / 2];
    printf("%-30s %s warps %2d work %2d chunk %5d stages %2d %s: %.4f ms (min %.4f), ", name, RED ? "red " : "atom", CWARPS, WORK, CHUNK, STAGES,
           AHEAD ? "ahead" : "waits", med, ms[0]);
    if (total) printf("%.2f TB/s\n", total / (med * 1e-3) / 1e12);
    else printf("%.3f us a barrier\n", med * 1e3 / phs.size());
    CK(cudaFree(d));
}

// step_phases: Phi-3-mini Q4_K_M's decode step phase by phase (ncu's DRAM
// reads per kernel), each phase's bytes from the 4 KiB boundary past the
// last's; with fused, 32 blocks spend att after their qkv chunks instead of
// the attention being a phase of its own.
std::vector<Phase> step_phases(int sms, int att, int norm, bool fused) {
    const long long QKV = 19464192, O = 5308416, GU = 28311552, DQ4 = 14155776, DQ6 = 20643840, HEAD = 80801280;
    std::vector<Phase> v;
    long long off = 0;
    auto add = [&](long long bytes, int db, int dns) {
        v.push_back({off, bytes, db, dns, 0, 0});
        off += (bytes + 4095) / 4096 * 4096;
    };
    for (int l = 0; l < 32; l++) {
        add(QKV, sms, norm);  // every block normalizes x itself, then qkv
        if (fused)
            v.back().end_blocks = 32, v.back().end_ns = att;
        else
            add(0, 32, att);  // attention: 32 heads
        add(O, 0, 0);                  // o-proj (+ residual)
        add(GU, sms, norm);            // norm, gate/up (+ SiLU)
        add(l % 2 ? DQ6 : DQ4, 0, 0);  // down (+ residual)
    }
    add(HEAD, sms, norm);
    return v;
}

int main() {
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    cudaDeviceProp pr;
    CK(cudaGetDeviceProperties(&pr, 0));
    printf("%s, %d SMs\n", pr.name, sms);
    const int ATT = getenv("ATT_NS") ? atoi(getenv("ATT_NS")) : 3000, NORM = getenv("NORM_NS") ? atoi(getenv("NORM_NS")) : 1000;
    const std::vector<Phase> layers = step_phases(sms, ATT, NORM, false), fused = step_phases(sms, ATT, NORM, true);
    long long bytes = 0;
    for (const Phase& p : layers) bytes += p.bytes;
    const std::vector<Phase> flat{{0, bytes, 0, 0, 0, 0}};  // the same bytes, one phase
    const std::vector<Phase> empty(layers.size(), Phase{0, 0, 0, 0, 0, 0});
    const long long span = layers.back().off + layers.back().bytes;  // the last phase's end, past every layout's
    uint8_t* w;
    CK(cudaMalloc(&w, span));
    CK(cudaMemset(w, 1, span));
    unsigned *counter, *out;
    CK(cudaMalloc(&counter, 4));
    CK(cudaMalloc(&out, 4096));
    printf("%.3f GB a step, %zu phases; attention %d ns on 32 blocks, norms %d ns\n", bytes / 1e9, layers.size(), ATT, NORM);
    run<0, 24576, 8, true>("barriers only", w, empty, counter, out, sms);
    run<0, 24576, 8, true, 8, true>("barriers only", w, empty, counter, out, sms);
    run<0, 24576, 8, true>("one phase (copy bound)", w, flat, counter, out, sms);
    run<16, 24576, 8, true, 8>("one phase", w, flat, counter, out, sms);
    run<8, 24576, 8, true, 8>("one phase", w, flat, counter, out, sms);
    run<0, 24576, 8, true, 8>("phases", w, layers, counter, out, sms);
    run<16, 24576, 8, true, 8>("phases", w, layers, counter, out, sms);
    run<16, 24576, 8, true, 8, true>("phases", w, layers, counter, out, sms);
    run<16, 24576, 8, false, 8>("phases", w, layers, counter, out, sms);
    run<8, 24576, 8, true, 8>("phases", w, layers, counter, out, sms);
    run<16, 24576, 8, true, 8>("phases, attention in qkv", w, fused, counter, out, sms);
    run<16, 24576, 8, true, 8, true>("phases, attention in qkv", w, fused, counter, out, sms);
    run<8, 24576, 8, true, 8, true>("phases, attention in qkv", w, fused, counter, out, sms);
    return 0;
}
