package cuda

/*
#cgo CFLAGS: -I${SRCDIR}/../csrc -O2 -Wall
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "orc_cuda.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/llama-orch/orc/runtime"
)

// gpu is one opened device: its primary context and stream. Methods are the
// C layer's calls with errors turned into Go errors.
type gpu struct {
	d      C.orc_dev
	faults *faults // test-only failures (faults.go); nil in production
}

// cerr is a C error buffer.
type cerr [C.ORC_ERRLEN]C.char

func (e *cerr) ptr() *C.char { return &e[0] }

// check turns a C return code and its message into an error; driver and
// memory failures wrap the runtime's sentinel errors.
func check(rc C.int, e *cerr) error {
	if rc == 0 {
		return nil
	}
	msg := C.GoString(e.ptr())
	switch {
	case rc == C.ORC_ENODRIVER:
		return fmt.Errorf("%w: %s", runtime.ErrNoDriver, msg)
	case rc == C.ORC_CUDA_ERROR_OUT_OF_MEMORY:
		return fmt.Errorf("%w: %s", runtime.ErrOutOfMemory, msg)
	default:
		return errors.New("cuda: " + msg)
	}
}

func openGPU(ordinal int) (*gpu, error) {
	f, err := faultsFromEnv()
	if err != nil {
		return nil, err
	}
	g := &gpu{faults: f}
	var e cerr
	if err := check(C.orc_open(C.int(ordinal), &g.d, e.ptr()), &e); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *gpu) close() error {
	var e cerr
	return check(C.orc_close(&g.d, e.ptr()), &e)
}

// facts the device reports about itself.
func (g *gpu) name() string       { return C.GoString(&g.d.name[0]) }
func (g *gpu) sm() string         { return fmt.Sprintf("sm_%d%d", g.d.cc_major, g.d.cc_minor) }
func (g *gpu) totalMem() int64    { return int64(g.d.total_mem) }
func (g *gpu) driverVersion() int { return int(g.d.driver_version) }

func (g *gpu) memInfo() (free, total int64, err error) {
	var e cerr
	var f, t C.uint64_t
	err = check(C.orc_mem_info(&g.d, &f, &t, e.ptr()), &e)
	return int64(f), int64(t), err
}

// devptr is a device address.
type devptr uint64

func (g *gpu) alloc(bytes int64) (devptr, error) {
	if err := g.faults.alloc(bytes); err != nil {
		return 0, err
	}
	var e cerr
	var p C.uint64_t
	err := check(C.orc_alloc(&g.d, C.uint64_t(bytes), &p, e.ptr()), &e)
	return devptr(p), err
}

func (g *gpu) free(p devptr) error {
	var e cerr
	return check(C.orc_free(&g.d, C.uint64_t(p), e.ptr()), &e)
}

// hostAlloc returns page-locked host memory, needed for truly asynchronous
// copies; the slice aliases C memory and lives until hostFree.
func (g *gpu) hostAlloc(bytes int) ([]byte, error) {
	if err := g.faults.alloc(int64(bytes)); err != nil {
		return nil, err
	}
	var e cerr
	var p unsafe.Pointer
	if err := check(C.orc_host_alloc(&g.d, C.uint64_t(bytes), &p, e.ptr()), &e); err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), bytes), nil
}

func (g *gpu) hostFree(b []byte) error {
	var e cerr
	return check(C.orc_host_free(&g.d, unsafe.Pointer(&b[0]), e.ptr()), &e)
}

// copyHtoD enqueues a copy; src must stay unchanged until the stream has
// done it (pinned buffers guarded by events, or a sync).
func (g *gpu) copyHtoD(dst devptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	var e cerr
	return check(C.orc_copy_htod(&g.d, C.uint64_t(dst), unsafe.Pointer(&src[0]), C.uint64_t(len(src)), e.ptr()), &e)
}

// copyDtoH waits for all queued work, then copies.
func (g *gpu) copyDtoH(dst []byte, src devptr) error {
	if len(dst) == 0 {
		return nil
	}
	var e cerr
	return check(C.orc_copy_dtoh(&g.d, unsafe.Pointer(&dst[0]), C.uint64_t(src), C.uint64_t(len(dst)), e.ptr()), &e)
}

// span2D is one side of a 2D copy: a device address, or a pinned host
// buffer's (host), and the bytes from one row to the next.
type span2D struct {
	addr  uint64
	host  bool
	pitch int64
}

// hostSpan is the pinned buffer b as a side of a 2D copy.
func hostSpan(b []byte, pitch int64) span2D {
	return span2D{addr: uint64(uintptr(unsafe.Pointer(&b[0]))), host: true, pitch: pitch}
}

// copy2D enqueues a copy of height rows of width bytes from src to dst; a
// host side is read or written when the stream gets there (sync first).
func (g *gpu) copy2D(dst, src span2D, width, height int64) error {
	var e cerr
	flag := func(host bool) C.int {
		if host {
			return 1
		}
		return 0
	}
	return check(C.orc_copy_2d(&g.d, C.uint64_t(dst.addr), flag(dst.host), C.uint64_t(dst.pitch), C.uint64_t(src.addr), flag(src.host), C.uint64_t(src.pitch),
		C.uint64_t(width), C.uint64_t(height), e.ptr()), &e)
}

func (g *gpu) memset(dst devptr, value byte, bytes int64) error {
	var e cerr
	return check(C.orc_memset(&g.d, C.uint64_t(dst), C.uint8_t(value), C.uint64_t(bytes), e.ptr()), &e)
}

type event uint64

func (g *gpu) eventCreate() (event, error) {
	var e cerr
	var ev C.uint64_t
	err := check(C.orc_event_create(&g.d, &ev, e.ptr()), &e)
	return event(ev), err
}

func (g *gpu) eventDestroy(ev event) error {
	var e cerr
	return check(C.orc_event_destroy(&g.d, C.uint64_t(ev), e.ptr()), &e)
}

func (g *gpu) eventRecord(ev event) error {
	var e cerr
	return check(C.orc_event_record(&g.d, C.uint64_t(ev), e.ptr()), &e)
}

func (g *gpu) eventWait(ev event) error {
	var e cerr
	return check(C.orc_event_wait(&g.d, C.uint64_t(ev), e.ptr()), &e)
}

func (g *gpu) elapsedMs(start, end event) (float32, error) {
	var e cerr
	var ms C.float
	err := check(C.orc_event_elapsed_ms(&g.d, C.uint64_t(start), C.uint64_t(end), &ms, e.ptr()), &e)
	return float32(ms), err
}

type module uint64

// moduleLoad loads a cubin, fatbin or PTX image. PTX must end in NUL, so a
// terminated copy is passed.
func (g *gpu) moduleLoad(image []byte) (module, error) {
	img := C.CBytes(append(append([]byte(nil), image...), 0))
	defer C.free(img)
	var e cerr
	var m C.uint64_t
	err := check(C.orc_module_load(&g.d, img, &m, e.ptr()), &e)
	return module(m), err
}

func (g *gpu) moduleUnload(m module) error {
	var e cerr
	return check(C.orc_module_unload(&g.d, C.uint64_t(m), e.ptr()), &e)
}

// function looks up a kernel, raising its dynamic shared memory limit to smem.
func (g *gpu) function(m module, name string, smem int) (uint64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var e cerr
	var fn C.uint64_t
	err := check(C.orc_function(&g.d, C.uint64_t(m), cname, C.uint32_t(smem), &fn, e.ptr()), &e)
	return uint64(fn), err
}

// programmaticLaunch says whether kernels are launched with programmatic
// stream serialization, each allowed to start while the one before it
// finishes: the kernels must all wait for that grid before touching memory
// (plans.Kernels.GridDepWait), the driver must have cuLaunchKernelEx and the
// GPU be sm_90 or newer (older GPUs have no programmatic dependent launch).
// ORC_CUDA_PDL=0 (env) turns it off, to measure what it buys.
func programmaticLaunch(kernelsWait, launchEx bool, ccMajor int, env string) bool {
	return kernelsWait && launchEx && ccMajor >= 9 && env != "0"
}

// setProgrammatic decides programmaticLaunch for this GPU and driver; it
// holds for every later launch and capture.
func (g *gpu) setProgrammatic(kernelsWait bool) {
	g.d.pdl = 0
	if programmaticLaunch(kernelsWait, g.d.launch_ex != 0, int(g.d.cc_major), os.Getenv("ORC_CUDA_PDL")) {
		g.d.pdl = 1
	}
}

// launch enqueues a resolved batch in one C call.
func (g *gpu) launch(b *batch) error {
	if len(b.launches) == 0 {
		return nil
	}
	if err := g.faults.launch(); err != nil {
		return err
	}
	var argv *C.uint64_t
	if len(b.argv) > 0 {
		argv = (*C.uint64_t)(unsafe.Pointer(&b.argv[0]))
	}
	var e cerr
	return check(C.orc_launch(&g.d, (*C.orc_launch_rec)(unsafe.Pointer(&b.launches[0])), C.uint32_t(len(b.launches)), argv, e.ptr()), &e)
}

func (g *gpu) captureBegin() error {
	var e cerr
	return check(C.orc_capture_begin(&g.d, e.ptr()), &e)
}

type graph uint64

func (g *gpu) captureEnd() (graph, error) {
	var e cerr
	var x C.uint64_t
	err := check(C.orc_capture_end(&g.d, &x, e.ptr()), &e)
	return graph(x), err
}

func (g *gpu) graphLaunch(x graph) error {
	if err := g.faults.launch(); err != nil {
		return err
	}
	var e cerr
	return check(C.orc_graph_launch(&g.d, C.uint64_t(x), e.ptr()), &e)
}

func (g *gpu) graphDestroy(x graph) error {
	var e cerr
	return check(C.orc_graph_destroy(&g.d, C.uint64_t(x), e.ptr()), &e)
}

func (g *gpu) sync() error {
	var e cerr
	return check(C.orc_sync(&g.d, e.ptr()), &e)
}

// pointerInfo is what the driver says about an address.
type pointerInfo struct {
	MemoryType int // 2 = device memory
	Managed    bool
	Ordinal    int
}

const memoryTypeDevice = 2

func (g *gpu) pointerInfo(p devptr) (pointerInfo, error) {
	var e cerr
	var mt, mg, ord C.int
	err := check(C.orc_pointer_info(&g.d, C.uint64_t(p), &mt, &mg, &ord, e.ptr()), &e)
	return pointerInfo{int(mt), mg != 0, int(ord)}, err
}

// launchRecordSize is the C orc_launch_rec size; launchRec must match it.
const launchRecordSize = C.sizeof_orc_launch_rec
