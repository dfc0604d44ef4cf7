/* orc_cuda: the thin C layer of orc's CUDA runtime.
 *
 * libcuda.so.1 is loaded with dlopen on first use, so binaries build without
 * CUDA headers and start on machines without a driver. Every call returns 0
 * on success, a CUresult (> 0) from the driver, or one of the ORC_E* codes
 * below, and writes a message naming the failing call into err (ORC_ERRLEN
 * bytes). Every call makes the device's context current on the calling
 * thread first: Go may run successive calls on different OS threads.
 * Device memory comes only from cuMemAlloc; managed memory is never used. */
#ifndef ORC_CUDA_H
#define ORC_CUDA_H

#include <stddef.h>
#include <stdint.h>

#define ORC_ERRLEN 512

enum {
	ORC_ENODRIVER = -1, /* libcuda.so.1 missing, or cuInit failed with no device */
	ORC_ENOSYM = -2,    /* the driver lacks an entry point we need (too old) */
	ORC_EINVAL = -3,    /* bad argument (checked here, before the driver sees it) */
};

/* The driver's out-of-memory code, so callers can classify failures. */
#define ORC_CUDA_ERROR_OUT_OF_MEMORY 2

typedef struct orc_dev {
	int ordinal;
	int device;   /* CUdevice */
	void *ctx;    /* CUcontext: the device's primary context */
	void *stream; /* CUstream: the one non-blocking stream all work goes on */
	/* facts for Info */
	char name[256];
	int cc_major, cc_minor;
	int sm_count;
	int smem_optin; /* max shared memory per block (static and dynamic) after opt-in */
	int driver_version;
	uint64_t total_mem;
	int launch_ex; /* the driver has cuLaunchKernelEx (CUDA >= 11.8) */
	/* Launch with programmatic stream serialization (Hopper's programmatic
	 * dependent launch): a kernel may start while the one before it on the
	 * stream finishes, and must execute griddepcontrol.wait before it touches
	 * memory that kernel writes or reads. Zero after orc_open; the caller
	 * sets it when the GPU, the driver and the loaded kernels allow it. */
	int pdl;
} orc_dev;

/* One kernel launch of a batch: grid, block, dynamic shared memory and a
 * run of argc 8-byte argument slots in the batch's argv. */
typedef struct orc_launch_rec {
	uint64_t fn; /* CUfunction */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t smem;
	uint32_t argc;
} orc_launch_rec;

int orc_open(int ordinal, orc_dev *d, char *err);
int orc_close(orc_dev *d, char *err);
int orc_mem_info(orc_dev *d, uint64_t *free_bytes, uint64_t *total_bytes, char *err);

int orc_alloc(orc_dev *d, uint64_t bytes, uint64_t *ptr, char *err);
int orc_free(orc_dev *d, uint64_t ptr, char *err);
int orc_host_alloc(orc_dev *d, uint64_t bytes, void **ptr, char *err);
int orc_host_free(orc_dev *d, void *ptr, char *err);

/* Asynchronous host-to-device copy on the device's stream. */
int orc_copy_htod(orc_dev *d, uint64_t dst, const void *src, uint64_t bytes, char *err);
/* Device-to-host copy ordered after all queued work; returns when done. */
int orc_copy_dtoh(orc_dev *d, void *dst, uint64_t src, uint64_t bytes, char *err);
/* Asynchronous 2D copy on the device's stream: height rows of width bytes,
 * row i from src + i*src_pitch to dst + i*dst_pitch. An address is a device
 * pointer, or where its flag is set a pinned host pointer (cuMemAllocHost);
 * the host reads a copy to it only after orc_sync. */
int orc_copy_2d(orc_dev *d, uint64_t dst, int dst_host, uint64_t dst_pitch, uint64_t src, int src_host, uint64_t src_pitch,
                uint64_t width, uint64_t height, char *err);
int orc_memset(orc_dev *d, uint64_t dst, uint8_t value, uint64_t bytes, char *err);

/* Event pairs bracket work on the stream; used by double-buffered uploads to
 * know when a pinned buffer may be refilled, and for device-side timing. */
int orc_event_create(orc_dev *d, uint64_t *ev, char *err);
int orc_event_destroy(orc_dev *d, uint64_t ev, char *err);
int orc_event_record(orc_dev *d, uint64_t ev, char *err);
int orc_event_wait(orc_dev *d, uint64_t ev, char *err);
int orc_event_elapsed_ms(orc_dev *d, uint64_t start, uint64_t end, float *ms, char *err);

int orc_module_load(orc_dev *d, const void *image, uint64_t *module, char *err);
int orc_module_unload(orc_dev *d, uint64_t module, char *err);
/* Looks a kernel up and raises its dynamic shared memory limit to smem. */
int orc_function(orc_dev *d, uint64_t module, const char *name, uint32_t smem, uint64_t *fn, char *err);

/* Enqueues n launches; launch i reads its arguments from argv[off_i ..
 * off_i+argc_i), off_i being the sum of the earlier argc. With d->pdl each
 * goes through cuLaunchKernelEx with programmatic stream serialization;
 * under stream capture these become programmatic edges of the graph. */
int orc_launch(orc_dev *d, const orc_launch_rec *launches, uint32_t n, const uint64_t *argv, char *err);

/* Stream capture into a CUDA graph, instantiated for replay. */
int orc_capture_begin(orc_dev *d, char *err);
int orc_capture_end(orc_dev *d, uint64_t *graph_exec, char *err);
int orc_graph_launch(orc_dev *d, uint64_t graph_exec, char *err);
int orc_graph_destroy(orc_dev *d, uint64_t graph_exec, char *err);

int orc_sync(orc_dev *d, char *err);

/* Pointer facts from cuPointerGetAttribute: memory type (2 = device),
 * whether managed, and the device ordinal owning it. */
int orc_pointer_info(orc_dev *d, uint64_t ptr, int *memory_type, int *managed, int *ordinal, char *err);

#endif
