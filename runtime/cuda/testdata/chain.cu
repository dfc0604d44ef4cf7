// The kernel of TestGPUProgrammaticLaunch: each launch of a chain reads what
// the launch before it wrote, after waiting for that grid as every kernel of
// a plan does under programmatic dependent launch (codegen/cuda's
// wrappers.cu.tmpl). Without the wait the chain would read stale values.
// Regenerate chain.ptx with: nvcc -arch=compute_90 --ptx -o chain.ptx chain.cu
extern "C" __global__ void chain_step(const float *in, float *out, long long n) {
	asm volatile("griddepcontrol.wait;" ::: "memory");
	asm volatile("griddepcontrol.launch_dependents;");
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = in[i] + 1.f;
}
