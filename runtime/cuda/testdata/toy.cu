// A toy "model" that exercises every part of the runtime contract without
// the compiler: weight, arena, state, kv and int arguments, T-dependent
// grids, a KV cache that persists across steps, and logits in the arena.
// Regenerate toy.ptx with: nvcc -arch=compute_80 --ptx -o toy.ptx toy.cu
//
// emb  [vocab][D] f32 weight, head [vocab][D] f32 weight.
// Step: for each token i: K[p][j] = p + j, V[p][j] = emb[tok][j] (fp16), p = pos0+i.
//       acc[j] = sum over p <= last position of V[p][j] + K[last][j]  (arena)
//       logits[v] = sum_j head[v][j] * acc[j]                            (arena)
#include <cuda_fp16.h>

extern "C" __global__ void toy_store(const int *T, const int *tokens, const int *positions, const float *emb,
                                     __half *K, __half *V, long long D) {
	int i = blockIdx.x, j = threadIdx.x;
	if (i >= *T || j >= D) return;
	int p = positions[i];
	K[p * D + j] = __float2half((float)(p + j));
	V[p * D + j] = __float2half(emb[tokens[i] * D + j]);
}

extern "C" __global__ void toy_reduce(const int *T, const int *pos0, const __half *K, const __half *V, float *acc,
                                      long long D) {
	int j = threadIdx.x;
	if (j >= D) return;
	int last = *pos0 + *T - 1;
	float s = __half2float(K[last * D + j]);
	for (int p = 0; p <= last; p++) s += __half2float(V[p * D + j]);
	acc[j] = s;
}

extern "C" __global__ void toy_head(const float *head, const float *acc, float *logits, long long D, long long vocab) {
	long long v = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (v >= vocab) return;
	float s = 0;
	for (int j = 0; j < D; j++) s += head[v * D + j] * acc[j];
	logits[v] = s;
}
