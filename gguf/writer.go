package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Writer builds a GGUF file. Tensor bytes are produced by a callback at write
// time, so multi-gigabyte models stream to disk without being held in memory.
type Writer struct {
	Version   uint32 // 3 unless set
	Alignment uint64 // DefaultAlignment unless set
	kvs       []KV
	kvIndex   map[string]int
	tensors   []writerTensor
	tIndex    map[string]bool
}

type writerTensor struct {
	info  TensorInfo
	write func(io.Writer) error
}

// NewWriter returns an empty GGUF v3 writer.
func NewWriter() *Writer {
	return &Writer{Version: 3, Alignment: DefaultAlignment, kvIndex: map[string]int{}, tIndex: map[string]bool{}}
}

// Val wraps a Go value as a metadata Value, inferring its type. Slices become
// arrays of the element type.
func Val(v any) Value {
	switch x := v.(type) {
	case Value:
		return x
	case uint8:
		return Value{Type: TypeUint8, V: x}
	case int8:
		return Value{Type: TypeInt8, V: x}
	case uint16:
		return Value{Type: TypeUint16, V: x}
	case int16:
		return Value{Type: TypeInt16, V: x}
	case uint32:
		return Value{Type: TypeUint32, V: x}
	case int32:
		return Value{Type: TypeInt32, V: x}
	case float32:
		return Value{Type: TypeFloat32, V: x}
	case bool:
		return Value{Type: TypeBool, V: x}
	case string:
		return Value{Type: TypeString, V: x}
	case uint64:
		return Value{Type: TypeUint64, V: x}
	case int64:
		return Value{Type: TypeInt64, V: x}
	case float64:
		return Value{Type: TypeFloat64, V: x}
	case int:
		return Value{Type: TypeInt32, V: int32(x)}
	case []uint8:
		return Value{Type: TypeArray, Elem: TypeUint8, V: x}
	case []int8:
		return Value{Type: TypeArray, Elem: TypeInt8, V: x}
	case []uint16:
		return Value{Type: TypeArray, Elem: TypeUint16, V: x}
	case []int16:
		return Value{Type: TypeArray, Elem: TypeInt16, V: x}
	case []uint32:
		return Value{Type: TypeArray, Elem: TypeUint32, V: x}
	case []int32:
		return Value{Type: TypeArray, Elem: TypeInt32, V: x}
	case []float32:
		return Value{Type: TypeArray, Elem: TypeFloat32, V: x}
	case []bool:
		return Value{Type: TypeArray, Elem: TypeBool, V: x}
	case []string:
		return Value{Type: TypeArray, Elem: TypeString, V: x}
	case []uint64:
		return Value{Type: TypeArray, Elem: TypeUint64, V: x}
	case []int64:
		return Value{Type: TypeArray, Elem: TypeInt64, V: x}
	case []float64:
		return Value{Type: TypeArray, Elem: TypeFloat64, V: x}
	}
	panic(fmt.Sprintf("gguf.Val: unsupported Go type %T", v))
}

// Set stores a metadata pair; a repeated key replaces the earlier value in place.
func (w *Writer) Set(key string, v any) {
	val := Val(v)
	if i, ok := w.kvIndex[key]; ok {
		w.kvs[i].Value = val
		return
	}
	w.kvIndex[key] = len(w.kvs)
	w.kvs = append(w.kvs, KV{key, val})
}

// AddTensor appends a tensor whose encoded bytes write produces (exactly
// TensorInfo.Bytes of them). dims are ggml order (contiguous dim first).
func (w *Writer) AddTensor(name string, typ Type, dims []uint64, write func(io.Writer) error) error {
	if w.tIndex[name] {
		return fmt.Errorf("gguf: duplicate tensor %q", name)
	}
	if !typ.Known() {
		return fmt.Errorf("gguf: tensor %q: unknown type %d", name, uint32(typ))
	}
	if len(dims) == 0 || len(dims) > maxDims || dims[0]%uint64(typ.BlockSize()) != 0 {
		return fmt.Errorf("gguf: tensor %q: dims %v invalid for %s", name, dims, typ)
	}
	elems := uint64(1)
	for _, d := range dims {
		if d == 0 || elems > math.MaxInt64/d {
			return fmt.Errorf("gguf: tensor %q: dims %v: zero or overflowing", name, dims)
		}
		elems *= d
	}
	w.tIndex[name] = true
	w.tensors = append(w.tensors, writerTensor{TensorInfo{Name: name, Dims: append([]uint64(nil), dims...), Type: typ}, write})
	return nil
}

// AddTensorBytes appends a tensor from encoded bytes held in memory.
func (w *Writer) AddTensorBytes(name string, typ Type, dims []uint64, data []byte) error {
	ti := TensorInfo{Dims: dims, Type: typ}
	if typ.Known() && uint64(len(data)) != ti.Bytes() {
		return fmt.Errorf("gguf: tensor %q: %d bytes given, %s%v needs %d", name, len(data), typ, dims, ti.Bytes())
	}
	return w.AddTensor(name, typ, dims, func(out io.Writer) error { _, err := out.Write(data); return err })
}

// WriteFile writes the file to path, replacing a file there atomically: it
// is written under a unique name beside path, removed again on any failure.
// A directory at path is refused.
func (w *Writer) WriteFile(path string) error {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("gguf: %s is a directory", path)
	}
	fd, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := fd.Name()
	bw := bufio.NewWriterSize(fd, 4<<20)
	if _, err = w.WriteTo(bw); err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = fd.Chmod(0o644)
	}
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

// WriteTo writes the whole file.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	if w.Version < 1 || w.Version > 3 {
		return 0, fmt.Errorf("gguf: cannot write version %d", w.Version)
	}
	if a := w.Alignment; a == 0 || a&(a-1) != 0 || a > 1<<20 {
		return 0, fmt.Errorf("gguf: alignment %d is not a power of two up to 1 MiB", a)
	}
	if i, ok := w.kvIndex["general.alignment"]; !ok && w.Alignment != DefaultAlignment {
		w.Set("general.alignment", uint32(w.Alignment))
	} else if ok {
		// A reader aligns by the key, so a different Alignment would
		// misplace every tensor.
		if a, isUint := w.kvs[i].Value.uint(); !isUint || a != w.Alignment {
			return 0, fmt.Errorf("gguf: general.alignment %v disagrees with Writer.Alignment %d", w.kvs[i].Value.V, w.Alignment)
		}
	}
	cw := &countingWriter{w: out}
	e := encoder{w: cw, version: w.Version}
	cw.Write([]byte(Magic))
	e.u32(w.Version)
	e.count(uint64(len(w.tensors)))
	e.count(uint64(len(w.kvs)))
	for _, kv := range w.kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		if err := e.value(kv.Value); err != nil {
			return cw.n, fmt.Errorf("gguf: key %s: %w", kv.Key, err)
		}
	}
	if e.err != nil {
		return cw.n, e.err
	}
	var off uint64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = off
		off = align(off+t.Bytes(), w.Alignment)
		e.str(t.Name)
		e.u32(uint32(len(t.Dims)))
		for _, d := range t.Dims {
			e.count(d)
		}
		e.u32(uint32(t.Type))
		e.u64(t.Offset)
	}
	if e.err != nil {
		return cw.n, e.err
	}
	pad(cw, w.Alignment)
	base := cw.n
	for _, t := range w.tensors {
		start := cw.n
		if err := t.write(cw); err != nil {
			return cw.n, fmt.Errorf("gguf: writing tensor %s: %w", t.info.Name, err)
		}
		if got := uint64(cw.n - start); got != t.info.Bytes() && cw.err == nil {
			return cw.n, fmt.Errorf("gguf: tensor %s: wrote %d bytes, expected %d", t.info.Name, got, t.info.Bytes())
		}
		if uint64(cw.n-base) < t.info.Offset+t.info.Bytes() {
			return cw.n, fmt.Errorf("gguf: tensor %s: short write", t.info.Name)
		}
		pad(cw, w.Alignment)
	}
	return cw.n, cw.err
}

func align(n, a uint64) uint64 { return (n + a - 1) / a * a }

func pad(cw *countingWriter, a uint64) {
	if r := uint64(cw.n) % a; r != 0 {
		cw.Write(make([]byte, a-r))
	}
}

type encoder struct {
	w       io.Writer
	version uint32
	buf     [8]byte
	err     error // the first count too large for the version
}

func (e *encoder) u8(v uint8)   { e.buf[0] = v; e.w.Write(e.buf[:1]) }
func (e *encoder) u16(v uint16) { binary.LittleEndian.PutUint16(e.buf[:], v); e.w.Write(e.buf[:2]) }
func (e *encoder) u32(v uint32) { binary.LittleEndian.PutUint32(e.buf[:], v); e.w.Write(e.buf[:4]) }
func (e *encoder) u64(v uint64) { binary.LittleEndian.PutUint64(e.buf[:], v); e.w.Write(e.buf[:8]) }

func (e *encoder) count(n uint64) {
	if e.version == 1 {
		if n > math.MaxUint32 && e.err == nil {
			e.err = fmt.Errorf("gguf: count or length %d does not fit GGUF v1's 32 bits", n)
		}
		e.u32(uint32(n))
	} else {
		e.u64(n)
	}
}

func (e *encoder) str(s string) { e.count(uint64(len(s))); io.WriteString(e.w, s) }

func (e *encoder) value(v Value) error {
	switch x := v.V.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case []Value:
		e.u32(uint32(TypeArray))
		e.count(uint64(len(x)))
		for _, el := range x {
			if err := e.value(el); err != nil {
				return err
			}
		}
	default:
		return e.array(v)
	}
	return nil
}

func (e *encoder) array(v Value) error {
	e.u32(uint32(v.Elem))
	write := func(n int, el func(int) any) error {
		e.count(uint64(n))
		for i := 0; i < n; i++ {
			if err := e.value(Value{V: el(i)}); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := v.V.(type) {
	case []uint8:
		e.count(uint64(len(x)))
		e.w.Write(x)
		return nil
	case []int8:
		return write(len(x), func(i int) any { return x[i] })
	case []uint16:
		return write(len(x), func(i int) any { return x[i] })
	case []int16:
		return write(len(x), func(i int) any { return x[i] })
	case []uint32:
		return write(len(x), func(i int) any { return x[i] })
	case []int32:
		return write(len(x), func(i int) any { return x[i] })
	case []float32:
		return write(len(x), func(i int) any { return x[i] })
	case []bool:
		return write(len(x), func(i int) any { return x[i] })
	case []string:
		return write(len(x), func(i int) any { return x[i] })
	case []uint64:
		return write(len(x), func(i int) any { return x[i] })
	case []int64:
		return write(len(x), func(i int) any { return x[i] })
	case []float64:
		return write(len(x), func(i int) any { return x[i] })
	}
	return fmt.Errorf("unsupported value %T", v.V)
}
