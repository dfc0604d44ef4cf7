/* orc_cuda: libcuda through dlopen. See orc_cuda.h for the contract.
 *
 * The few driver types and enum values used are declared here, so neither
 * the build machine nor CI needs CUDA headers. Versioned entry points
 * (_v2) are the ones the headers of CUDA >= 11.4 bind the plain names to. */
#include "orc_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUgraph;
typedef void *CUgraphExec;
typedef unsigned long long CUdeviceptr;

/* Enum values from cuda.h. */
enum {
	CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
	CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
	CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
	CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
	CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
	CU_STREAM_NON_BLOCKING = 1,
	/* Relaxed: the capturing goroutine may hop OS threads between calls. */
	CU_STREAM_CAPTURE_MODE_RELAXED = 2,
	CU_EVENT_DEFAULT = 0,
	CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
	CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
	CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
	CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
};

/* cuLaunchKernelEx's configuration, laid out as cuda.h (CUDA >= 11.8) has it. */
typedef struct {
	int id;
	char pad[4];
	union {
		char pad[64];
		int programmaticStreamSerializationAllowed;
	} value;
} CUlaunchAttribute;

typedef struct {
	unsigned gridDimX, gridDimY, gridDimZ;
	unsigned blockDimX, blockDimY, blockDimZ;
	unsigned sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned numAttrs;
} CUlaunchConfig;

/* cuMemcpy2DAsync's parameters, laid out as cuda.h has them. */
enum { CU_MEMORYTYPE_HOST = 1, CU_MEMORYTYPE_DEVICE = 2 };

typedef struct {
	size_t srcXInBytes, srcY;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	void *srcArray;
	size_t srcPitch;
	size_t dstXInBytes, dstY;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	void *dstArray;
	size_t dstPitch;
	size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;

/* The driver API, resolved once. */
static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemGetInfo)(size_t *, size_t *);
	CUresult (*MemAllocHost)(void **, size_t);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*Memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncGetAttribute)(int *, int, CUfunction);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                         CUstream, void **, void **);
	CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamBeginCapture)(CUstream, int);
	CUresult (*StreamEndCapture)(CUstream, CUgraph *);
	CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*GraphLaunch)(CUgraphExec, CUstream);
	CUresult (*GraphDestroy)(CUgraph);
	CUresult (*GraphExecDestroy)(CUgraphExec);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*PointerGetAttribute)(void *, int, CUdeviceptr);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
} cu;

static const struct {
	const char *name;
	void **slot;
	int optional; /* left NULL when the driver lacks it */
} symbols[] = {
	{"cuInit", (void **)&cu.Init},
	{"cuDriverGetVersion", (void **)&cu.DriverGetVersion},
	{"cuDeviceGetCount", (void **)&cu.DeviceGetCount},
	{"cuDeviceGet", (void **)&cu.DeviceGet},
	{"cuDeviceGetName", (void **)&cu.DeviceGetName},
	{"cuDeviceGetAttribute", (void **)&cu.DeviceGetAttribute},
	{"cuDeviceTotalMem_v2", (void **)&cu.DeviceTotalMem},
	{"cuDevicePrimaryCtxRetain", (void **)&cu.DevicePrimaryCtxRetain},
	{"cuDevicePrimaryCtxRelease_v2", (void **)&cu.DevicePrimaryCtxRelease},
	{"cuCtxSetCurrent", (void **)&cu.CtxSetCurrent},
	{"cuMemAlloc_v2", (void **)&cu.MemAlloc},
	{"cuMemFree_v2", (void **)&cu.MemFree},
	{"cuMemGetInfo_v2", (void **)&cu.MemGetInfo},
	{"cuMemAllocHost_v2", (void **)&cu.MemAllocHost},
	{"cuMemFreeHost", (void **)&cu.MemFreeHost},
	{"cuMemcpyHtoDAsync_v2", (void **)&cu.MemcpyHtoDAsync},
	{"cuMemcpyDtoHAsync_v2", (void **)&cu.MemcpyDtoHAsync},
	{"cuMemsetD8Async", (void **)&cu.MemsetD8Async},
	{"cuMemcpy2DAsync_v2", (void **)&cu.Memcpy2DAsync},
	{"cuModuleLoadData", (void **)&cu.ModuleLoadData},
	{"cuModuleUnload", (void **)&cu.ModuleUnload},
	{"cuModuleGetFunction", (void **)&cu.ModuleGetFunction},
	{"cuFuncGetAttribute", (void **)&cu.FuncGetAttribute},
	{"cuFuncSetAttribute", (void **)&cu.FuncSetAttribute},
	{"cuLaunchKernel", (void **)&cu.LaunchKernel},
	{"cuLaunchKernelEx", (void **)&cu.LaunchKernelEx, 1},
	{"cuStreamCreate", (void **)&cu.StreamCreate},
	{"cuStreamDestroy_v2", (void **)&cu.StreamDestroy},
	{"cuStreamSynchronize", (void **)&cu.StreamSynchronize},
	{"cuStreamBeginCapture_v2", (void **)&cu.StreamBeginCapture},
	{"cuStreamEndCapture", (void **)&cu.StreamEndCapture},
	{"cuGraphInstantiateWithFlags", (void **)&cu.GraphInstantiateWithFlags},
	{"cuGraphLaunch", (void **)&cu.GraphLaunch},
	{"cuGraphDestroy", (void **)&cu.GraphDestroy},
	{"cuGraphExecDestroy", (void **)&cu.GraphExecDestroy},
	{"cuEventCreate", (void **)&cu.EventCreate},
	{"cuEventDestroy_v2", (void **)&cu.EventDestroy},
	{"cuEventRecord", (void **)&cu.EventRecord},
	{"cuEventSynchronize", (void **)&cu.EventSynchronize},
	{"cuEventElapsedTime", (void **)&cu.EventElapsedTime},
	{"cuPointerGetAttribute", (void **)&cu.PointerGetAttribute},
	{"cuGetErrorName", (void **)&cu.GetErrorName},
	{"cuGetErrorString", (void **)&cu.GetErrorString},
};

/* The outcome of loading, kept for every later caller. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_code;
static char load_msg[ORC_ERRLEN];

static int failf(char *err, int code, const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, ORC_ERRLEN, fmt, ap);
	va_end(ap);
	return code;
}

static int cufail(char *err, const char *what, CUresult r) {
	const char *name = NULL, *text = NULL;
	if (cu.GetErrorName) cu.GetErrorName(r, &name);
	if (cu.GetErrorString) cu.GetErrorString(r, &text);
	return failf(err, r, "%s: %s (%s)", what, name ? name : "CUDA error", text ? text : "no description");
}

#define CU(call, what)                                 \
	do {                                               \
		CUresult r_ = (call);                          \
		if (r_ != 0) return cufail(err, (what), r_);   \
	} while (0)

static void load(void) {
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		load_code = failf(load_msg, ORC_ENODRIVER, "cannot load libcuda.so.1 (%s)", why ? why : "not found");
		return;
	}
	for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
		*symbols[i].slot = dlsym(lib, symbols[i].name);
		if (!*symbols[i].slot && !symbols[i].optional) {
			load_code = failf(load_msg, ORC_ENOSYM, "libcuda.so.1 lacks %s: the NVIDIA driver is too old (CUDA >= 11.4 needed)", symbols[i].name);
			return;
		}
	}
	CUresult r = cu.Init(0);
	if (r != 0) {
		char why[ORC_ERRLEN];
		cufail(why, "cuInit", r);
		load_code = failf(load_msg, ORC_ENODRIVER, "libcuda.so.1 loaded, but %s", why);
	}
}

static int loaded(char *err) {
	pthread_once(&load_once, load);
	if (load_code != 0) return failf(err, load_code, "%s", load_msg);
	return 0;
}

/* enter checks the handle and makes its context current on this thread. */
static int enter(orc_dev *d, char *err) {
	if (!d || !d->ctx) return failf(err, ORC_EINVAL, "orc_cuda: device is not open");
	CU(cu.CtxSetCurrent(d->ctx), "cuCtxSetCurrent");
	return 0;
}

#define ENTER(d)                          \
	do {                                  \
		int e_ = enter((d), err);         \
		if (e_ != 0) return e_;           \
	} while (0)

int orc_open(int ordinal, orc_dev *d, char *err) {
	int rc = loaded(err);
	if (rc != 0) return rc;
	memset(d, 0, sizeof *d);
	int count = 0;
	CU(cu.DeviceGetCount(&count), "cuDeviceGetCount");
	if (ordinal < 0 || ordinal >= count)
		return failf(err, ORC_EINVAL, "GPU %d does not exist: the driver sees %d", ordinal, count);
	CUdevice dev;
	CU(cu.DeviceGet(&dev, ordinal), "cuDeviceGet");
	CUcontext ctx;
	CU(cu.DevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	CUresult r = cu.CtxSetCurrent(ctx);
	CUstream stream = NULL;
	if (r == 0) r = cu.StreamCreate(&stream, CU_STREAM_NON_BLOCKING);
	if (r != 0) {
		cu.DevicePrimaryCtxRelease(dev);
		return cufail(err, "creating the stream", r);
	}
	d->ordinal = ordinal;
	d->device = dev;
	d->ctx = ctx;
	d->stream = stream;
	size_t total = 0;
	cu.DeviceGetName(d->name, sizeof d->name, dev);
	cu.DeviceGetAttribute(&d->cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
	cu.DeviceGetAttribute(&d->cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
	cu.DeviceGetAttribute(&d->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	cu.DeviceGetAttribute(&d->smem_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
	cu.DriverGetVersion(&d->driver_version);
	cu.DeviceTotalMem(&total, dev);
	d->total_mem = total;
	d->launch_ex = cu.LaunchKernelEx != NULL;
	return 0;
}

int orc_close(orc_dev *d, char *err) {
	ENTER(d);
	CUresult r = cu.StreamDestroy(d->stream);
	CUresult r2 = cu.DevicePrimaryCtxRelease(d->device);
	d->ctx = NULL;
	d->stream = NULL;
	if (r != 0) return cufail(err, "cuStreamDestroy", r);
	if (r2 != 0) return cufail(err, "cuDevicePrimaryCtxRelease", r2);
	return 0;
}

int orc_mem_info(orc_dev *d, uint64_t *free_bytes, uint64_t *total_bytes, char *err) {
	ENTER(d);
	size_t f = 0, t = 0;
	CU(cu.MemGetInfo(&f, &t), "cuMemGetInfo");
	*free_bytes = f;
	*total_bytes = t;
	return 0;
}

int orc_alloc(orc_dev *d, uint64_t bytes, uint64_t *ptr, char *err) {
	ENTER(d);
	CUdeviceptr p = 0;
	CU(cu.MemAlloc(&p, bytes), "cuMemAlloc");
	*ptr = p;
	return 0;
}

int orc_free(orc_dev *d, uint64_t ptr, char *err) {
	ENTER(d);
	CU(cu.MemFree(ptr), "cuMemFree");
	return 0;
}

int orc_host_alloc(orc_dev *d, uint64_t bytes, void **ptr, char *err) {
	ENTER(d);
	CU(cu.MemAllocHost(ptr, bytes), "cuMemAllocHost");
	return 0;
}

int orc_host_free(orc_dev *d, void *ptr, char *err) {
	ENTER(d);
	CU(cu.MemFreeHost(ptr), "cuMemFreeHost");
	return 0;
}

int orc_copy_htod(orc_dev *d, uint64_t dst, const void *src, uint64_t bytes, char *err) {
	ENTER(d);
	CU(cu.MemcpyHtoDAsync(dst, src, bytes, d->stream), "cuMemcpyHtoDAsync");
	return 0;
}

int orc_copy_dtoh(orc_dev *d, void *dst, uint64_t src, uint64_t bytes, char *err) {
	ENTER(d);
	CU(cu.MemcpyDtoHAsync(dst, src, bytes, d->stream), "cuMemcpyDtoHAsync");
	CU(cu.StreamSynchronize(d->stream), "cuStreamSynchronize");
	return 0;
}

int orc_copy_2d(orc_dev *d, uint64_t dst, int dst_host, uint64_t dst_pitch, uint64_t src, int src_host, uint64_t src_pitch,
                uint64_t width, uint64_t height, char *err) {
	ENTER(d);
	if (width > dst_pitch || width > src_pitch)
		return failf(err, ORC_EINVAL, "a 2D copy of rows of %llu bytes between pitches of %llu and %llu bytes",
		             (unsigned long long)width, (unsigned long long)src_pitch, (unsigned long long)dst_pitch);
	if (width == 0 || height == 0) return 0;
	CUDA_MEMCPY2D c;
	memset(&c, 0, sizeof c);
	c.srcMemoryType = src_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	if (src_host)
		c.srcHost = (const void *)(uintptr_t)src;
	else
		c.srcDevice = src;
	c.srcPitch = src_pitch;
	c.dstMemoryType = dst_host ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
	if (dst_host)
		c.dstHost = (void *)(uintptr_t)dst;
	else
		c.dstDevice = dst;
	c.dstPitch = dst_pitch;
	c.WidthInBytes = width;
	c.Height = height;
	CU(cu.Memcpy2DAsync(&c, d->stream), "cuMemcpy2DAsync");
	return 0;
}

int orc_memset(orc_dev *d, uint64_t dst, uint8_t value, uint64_t bytes, char *err) {
	ENTER(d);
	CU(cu.MemsetD8Async(dst, value, bytes, d->stream), "cuMemsetD8Async");
	return 0;
}

int orc_event_create(orc_dev *d, uint64_t *ev, char *err) {
	ENTER(d);
	CUevent e;
	CU(cu.EventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
	*ev = (uint64_t)(uintptr_t)e;
	return 0;
}

int orc_event_destroy(orc_dev *d, uint64_t ev, char *err) {
	ENTER(d);
	CU(cu.EventDestroy((CUevent)(uintptr_t)ev), "cuEventDestroy");
	return 0;
}

int orc_event_record(orc_dev *d, uint64_t ev, char *err) {
	ENTER(d);
	CU(cu.EventRecord((CUevent)(uintptr_t)ev, d->stream), "cuEventRecord");
	return 0;
}

int orc_event_wait(orc_dev *d, uint64_t ev, char *err) {
	ENTER(d);
	CU(cu.EventSynchronize((CUevent)(uintptr_t)ev), "cuEventSynchronize");
	return 0;
}

int orc_event_elapsed_ms(orc_dev *d, uint64_t start, uint64_t end, float *ms, char *err) {
	ENTER(d);
	CU(cu.EventSynchronize((CUevent)(uintptr_t)end), "cuEventSynchronize");
	CU(cu.EventElapsedTime(ms, (CUevent)(uintptr_t)start, (CUevent)(uintptr_t)end), "cuEventElapsedTime");
	return 0;
}

int orc_module_load(orc_dev *d, const void *image, uint64_t *module, char *err) {
	ENTER(d);
	CUmodule m;
	CU(cu.ModuleLoadData(&m, image), "cuModuleLoadData");
	*module = (uint64_t)(uintptr_t)m;
	return 0;
}

int orc_module_unload(orc_dev *d, uint64_t module, char *err) {
	ENTER(d);
	CU(cu.ModuleUnload((CUmodule)(uintptr_t)module), "cuModuleUnload");
	return 0;
}

int orc_function(orc_dev *d, uint64_t module, const char *name, uint32_t smem, uint64_t *fn, char *err) {
	ENTER(d);
	CUfunction f;
	CUresult r = cu.ModuleGetFunction(&f, (CUmodule)(uintptr_t)module, name);
	if (r != 0) {
		char what[300];
		snprintf(what, sizeof what, "cuModuleGetFunction(%s)", name);
		return cufail(err, what, r);
	}
	/* Above 48 KiB of static and dynamic shared memory together a kernel
	 * needs its dynamic limit raised. */
	int static_smem = 0;
	r = cu.FuncGetAttribute(&static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
	if (r != 0) return cufail(err, "cuFuncGetAttribute", r);
	if (static_smem + smem > 48 * 1024) {
		if (static_smem + (int)smem > d->smem_optin)
			return failf(err, ORC_EINVAL, "kernel %s wants %d bytes of shared memory (%d static, %u dynamic); this GPU allows %d",
			             name, static_smem + (int)smem, static_smem, smem, d->smem_optin);
		r = cu.FuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
		if (r != 0) return cufail(err, "cuFuncSetAttribute", r);
	}
	*fn = (uint64_t)(uintptr_t)f;
	return 0;
}

/* More arguments than any kernel of ours takes; checked, not assumed. */
#define ORC_MAX_ARGS 64

static CUresult launch_one(orc_dev *d, const orc_launch_rec *l, void **params) {
	CUfunction fn = (CUfunction)(uintptr_t)l->fn;
	if (!d->pdl || !cu.LaunchKernelEx)
		return cu.LaunchKernel(fn, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem,
		                       d->stream, params, NULL);
	CUlaunchAttribute attr;
	memset(&attr, 0, sizeof attr);
	attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
	attr.value.programmaticStreamSerializationAllowed = 1;
	CUlaunchConfig cfg = {l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1], l->block[2], l->smem, d->stream, &attr, 1};
	return cu.LaunchKernelEx(&cfg, fn, params, NULL);
}

int orc_launch(orc_dev *d, const orc_launch_rec *launches, uint32_t n, const uint64_t *argv, char *err) {
	ENTER(d);
	void *params[ORC_MAX_ARGS];
	size_t off = 0;
	for (uint32_t i = 0; i < n; i++) {
		const orc_launch_rec *l = &launches[i];
		if (l->argc > ORC_MAX_ARGS)
			return failf(err, ORC_EINVAL, "launch %u has %u arguments; at most %d", i, l->argc, ORC_MAX_ARGS);
		/* The driver copies each parameter's declared size from its slot. */
		for (uint32_t j = 0; j < l->argc; j++) params[j] = (void *)(uintptr_t)&argv[off + j];
		off += l->argc;
		CUresult r = launch_one(d, l, params);
		if (r != 0) {
			char what[64];
			snprintf(what, sizeof what, "%s (launch %u)", d->pdl ? "cuLaunchKernelEx" : "cuLaunchKernel", i);
			return cufail(err, what, r);
		}
	}
	return 0;
}

int orc_capture_begin(orc_dev *d, char *err) {
	ENTER(d);
	CU(cu.StreamBeginCapture(d->stream, CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
	return 0;
}

int orc_capture_end(orc_dev *d, uint64_t *graph_exec, char *err) {
	ENTER(d);
	CUgraph g = NULL;
	CU(cu.StreamEndCapture(d->stream, &g), "cuStreamEndCapture");
	CUgraphExec x = NULL;
	CUresult r = cu.GraphInstantiateWithFlags(&x, g, 0);
	cu.GraphDestroy(g);
	if (r != 0) return cufail(err, "cuGraphInstantiateWithFlags", r);
	*graph_exec = (uint64_t)(uintptr_t)x;
	return 0;
}

int orc_graph_launch(orc_dev *d, uint64_t graph_exec, char *err) {
	ENTER(d);
	CU(cu.GraphLaunch((CUgraphExec)(uintptr_t)graph_exec, d->stream), "cuGraphLaunch");
	return 0;
}

int orc_graph_destroy(orc_dev *d, uint64_t graph_exec, char *err) {
	ENTER(d);
	CU(cu.GraphExecDestroy((CUgraphExec)(uintptr_t)graph_exec), "cuGraphExecDestroy");
	return 0;
}

int orc_sync(orc_dev *d, char *err) {
	ENTER(d);
	CU(cu.StreamSynchronize(d->stream), "cuStreamSynchronize");
	return 0;
}

int orc_pointer_info(orc_dev *d, uint64_t ptr, int *memory_type, int *managed, int *ordinal, char *err) {
	ENTER(d);
	/* 8-byte zeroed slots: the attributes are 4-byte values. */
	unsigned long long mt = 0, mg = 0, ord = 0;
	CU(cu.PointerGetAttribute(&mt, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, ptr), "cuPointerGetAttribute(MEMORY_TYPE)");
	CU(cu.PointerGetAttribute(&mg, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr), "cuPointerGetAttribute(IS_MANAGED)");
	CU(cu.PointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, ptr), "cuPointerGetAttribute(DEVICE_ORDINAL)");
	*memory_type = (int)(unsigned)mt;
	*managed = (int)(unsigned)mg;
	*ordinal = (int)(unsigned)ord;
	return 0;
}
