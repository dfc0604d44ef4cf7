package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"syscall"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// DefaultAlignment is used when general.alignment is absent.
const DefaultAlignment = 32

// Limits that keep a hostile header from asking for absurd allocations.
const (
	maxTensors   = 1 << 20
	maxKVs       = 1 << 20
	maxDims      = 4
	maxStringLen = 1 << 30
)

// Value is one metadata value. V holds: uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64 for scalars; for arrays
// a typed slice ([]uint8 ... []float64, []bool, []string) or []Value for
// arrays of arrays. Elem is the element type of an array.
type Value struct {
	Type ValueType
	Elem ValueType
	V    any
}

// KV is one metadata pair, in file order.
type KV struct {
	Key   string
	Value Value
}

// TensorInfo describes one tensor. Dims are ggml order: Dims[0] is the
// contiguous (input) dimension.
type TensorInfo struct {
	Name   string
	Dims   []uint64
	Type   Type
	Offset uint64 // relative to the data section
}

// Elements is the product of the dims.
func (t *TensorInfo) Elements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// Bytes is the encoded size of the tensor.
func (t *TensorInfo) Bytes() uint64 {
	return uint64(t.Type.RowBytes(int64(t.Elements())))
}

// File is a parsed GGUF file. Tensor data is read zero-copy from the mapping.
type File struct {
	Path       string
	Version    uint32
	KVs        []KV
	Tensors    []TensorInfo
	Alignment  uint64
	DataOffset uint64 // absolute offset of the data section

	data    []byte
	mapped  bool
	kvIndex map[string]int
	tIndex  map[string]int
}

// Open maps path into memory and parses it.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	if size < 8 {
		return nil, fmt.Errorf("%w: %s: file is %d bytes, too short for a GGUF header", ErrMalformed, path, size)
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s: file too large to map", path)
	}
	data, err := syscall.Mmap(int(fd.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		syscall.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	f.mapped = true
	return f, nil
}

// Close unmaps the file. Tensor data slices must not be used afterwards.
func (f *File) Close() error {
	if f.mapped && f.data != nil {
		err := syscall.Munmap(f.data)
		f.data = nil
		return err
	}
	return nil
}

// ErrMalformed wraps every structural problem found while parsing.
var ErrMalformed = errors.New("gguf: malformed file")

type parser struct {
	b       []byte
	off     uint64
	version uint32
}

func (p *parser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, p.off, fmt.Sprintf(format, args...))
}

func (p *parser) need(n uint64, what string) error {
	if n > uint64(len(p.b)) || p.off > uint64(len(p.b))-n {
		return p.fail("truncated: %s needs %d bytes, %d left", what, n, uint64(len(p.b))-min(p.off, uint64(len(p.b))))
	}
	return nil
}

func (p *parser) u8(what string) (uint8, error) {
	if err := p.need(1, what); err != nil {
		return 0, err
	}
	v := p.b[p.off]
	p.off++
	return v, nil
}

func (p *parser) u16(what string) (uint16, error) {
	if err := p.need(2, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint16(p.b[p.off:])
	p.off += 2
	return v, nil
}

func (p *parser) u32(what string) (uint32, error) {
	if err := p.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(p.b[p.off:])
	p.off += 4
	return v, nil
}

func (p *parser) u64(what string) (uint64, error) {
	if err := p.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(p.b[p.off:])
	p.off += 8
	return v, nil
}

// count reads a length or count: u32 in v1, u64 later.
func (p *parser) count(what string) (uint64, error) {
	if p.version == 1 {
		v, err := p.u32(what)
		return uint64(v), err
	}
	return p.u64(what)
}

func (p *parser) str(what string) (string, error) {
	n, err := p.count(what + " length")
	if err != nil {
		return "", err
	}
	if n > maxStringLen {
		return "", p.fail("%s length %d exceeds limit", what, n)
	}
	if err := p.need(n, what); err != nil {
		return "", err
	}
	s := string(p.b[p.off : p.off+n])
	p.off += n
	return s, nil
}

// Parse parses a complete GGUF image held in memory. The returned File refers
// to data for tensor bytes.
func Parse(data []byte) (*File, error) {
	p := &parser{b: data}
	if len(data) < 4 || string(data[:4]) != Magic {
		return nil, fmt.Errorf("%w: not a GGUF file (bad magic)", ErrMalformed)
	}
	p.off = 4
	v, err := p.u32("version")
	if err != nil {
		return nil, err
	}
	if v < 1 || v > 3 {
		// A big-endian writer stores version 3 as 0x03000000; say so, since
		// the fix is a re-conversion, not a newer reader.
		if sw := v>>24 | v>>8&0xff00 | v<<8&0xff0000 | v<<24; sw >= 1 && sw <= 3 {
			return nil, fmt.Errorf("%w: GGUF version %d looks byte-swapped (a big-endian file); only little-endian files are supported", ErrMalformed, v)
		}
		return nil, fmt.Errorf("%w: unsupported GGUF version %d (supported: 1, 2, 3)", ErrMalformed, v)
	}
	p.version = v
	nT, err := p.count("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := p.count("kv count")
	if err != nil {
		return nil, err
	}
	if nT > maxTensors {
		return nil, p.fail("tensor count %d exceeds limit %d", nT, maxTensors)
	}
	if nKV > maxKVs {
		return nil, p.fail("kv count %d exceeds limit %d", nKV, maxKVs)
	}
	// Each pair and each tensor info has a smallest encoding; counts the
	// rest of the file cannot hold are rejected before anything is sized
	// by them.
	lenField := uint64(8)
	if v == 1 {
		lenField = 4
	}
	minKV := lenField + 4 + 1                    // key length, value type, a one-byte value
	minTensor := lenField + 4 + lenField + 4 + 8 // name length, n_dims, one dim, type, offset
	if rest := uint64(len(data)) - p.off; nKV > rest/minKV || nT > (rest-nKV*minKV)/minTensor {
		return nil, p.fail("%d kvs and %d tensors cannot fit in the %d bytes left", nKV, nT, rest)
	}
	f := &File{Version: v, data: data, kvIndex: map[string]int{}, tIndex: map[string]int{}, Alignment: DefaultAlignment}
	f.KVs = make([]KV, 0, nKV)
	for i := uint64(0); i < nKV; i++ {
		key, err := p.str("kv key")
		if err != nil {
			return nil, err
		}
		if _, dup := f.kvIndex[key]; dup {
			return nil, p.fail("duplicate metadata key %q", key)
		}
		vt, err := p.u32("kv type of " + key)
		if err != nil {
			return nil, err
		}
		val, err := p.value(ValueType(vt), key, 0)
		if err != nil {
			return nil, err
		}
		f.kvIndex[key] = len(f.KVs)
		f.KVs = append(f.KVs, KV{key, val})
	}
	if a, ok := f.kvIndex["general.alignment"]; ok {
		al, ok := f.KVs[a].Value.uint()
		if !ok || al == 0 || al&(al-1) != 0 || al > 1<<20 {
			return nil, fmt.Errorf("%w: general.alignment %v is not a power of two", ErrMalformed, f.KVs[a].Value.V)
		}
		f.Alignment = al
	}
	f.Tensors = make([]TensorInfo, 0, nT)
	for i := uint64(0); i < nT; i++ {
		name, err := p.str("tensor name")
		if err != nil {
			return nil, err
		}
		if _, dup := f.tIndex[name]; dup {
			return nil, p.fail("duplicate tensor name %q", name)
		}
		nd, err := p.u32("n_dims of " + name)
		if err != nil {
			return nil, err
		}
		if nd == 0 || nd > maxDims {
			return nil, p.fail("tensor %q has %d dims (1..%d allowed)", name, nd, maxDims)
		}
		dims := make([]uint64, nd)
		elems := uint64(1)
		for d := range dims {
			dims[d], err = p.count("dim of " + name)
			if err != nil {
				return nil, err
			}
			if dims[d] == 0 {
				return nil, p.fail("tensor %q has a zero dimension", name)
			}
			if elems > math.MaxInt64/dims[d] {
				return nil, p.fail("tensor %q element count overflows", name)
			}
			elems *= dims[d]
		}
		tt, err := p.u32("type of " + name)
		if err != nil {
			return nil, err
		}
		typ := Type(tt)
		if !typ.Known() {
			return nil, p.fail("tensor %q has unknown or unsupported ggml type %d", name, tt)
		}
		if dims[0]%uint64(typ.BlockSize()) != 0 {
			return nil, p.fail("tensor %q: row length %d is not a multiple of the %s block size %d", name, dims[0], typ, typ.BlockSize())
		}
		// The encoded size must be representable before it is compared with
		// the file size below; no file holds more blocks than bytes.
		if elems/uint64(typ.BlockSize()) > uint64(len(data))/uint64(typ.BlockBytes()) {
			return nil, p.fail("tensor %q: %d elements of %s need more bytes than the file has (%d)", name, elems, typ, len(data))
		}
		off, err := p.u64("offset of " + name)
		if err != nil {
			return nil, err
		}
		if off%f.Alignment != 0 {
			return nil, p.fail("tensor %q offset %d is not aligned to %d", name, off, f.Alignment)
		}
		f.tIndex[name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, TensorInfo{Name: name, Dims: dims, Type: typ, Offset: off})
	}
	f.DataOffset = (p.off + f.Alignment - 1) / f.Alignment * f.Alignment
	size := uint64(len(data))
	if len(f.Tensors) > 0 && f.DataOffset > size {
		return nil, fmt.Errorf("%w: data section starts at %d, past the end of the file (%d bytes)", ErrMalformed, f.DataOffset, size)
	}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		n := t.Bytes()
		if t.Offset > size || f.DataOffset > size-t.Offset || n > size-f.DataOffset-t.Offset {
			return nil, fmt.Errorf("%w: tensor %q (%d bytes at data offset %d) extends past the end of the file (%d bytes)", ErrMalformed, t.Name, n, t.Offset, size)
		}
	}
	if err := checkOverlap(f.Tensors); err != nil {
		return nil, err
	}
	return f, nil
}

func (p *parser) value(vt ValueType, key string, depth int) (Value, error) {
	what := "value of " + key
	switch vt {
	case TypeUint8:
		v, err := p.u8(what)
		return Value{Type: vt, V: v}, err
	case TypeInt8:
		v, err := p.u8(what)
		return Value{Type: vt, V: int8(v)}, err
	case TypeUint16:
		v, err := p.u16(what)
		return Value{Type: vt, V: v}, err
	case TypeInt16:
		v, err := p.u16(what)
		return Value{Type: vt, V: int16(v)}, err
	case TypeUint32:
		v, err := p.u32(what)
		return Value{Type: vt, V: v}, err
	case TypeInt32:
		v, err := p.u32(what)
		return Value{Type: vt, V: int32(v)}, err
	case TypeFloat32:
		v, err := p.u32(what)
		return Value{Type: vt, V: math.Float32frombits(v)}, err
	case TypeBool:
		v, err := p.u8(what)
		if err == nil && v > 1 {
			return Value{}, p.fail("%s: bool byte %d", what, v)
		}
		return Value{Type: vt, V: v == 1}, err
	case TypeString:
		v, err := p.str(what)
		return Value{Type: vt, V: v}, err
	case TypeUint64:
		v, err := p.u64(what)
		return Value{Type: vt, V: v}, err
	case TypeInt64:
		v, err := p.u64(what)
		return Value{Type: vt, V: int64(v)}, err
	case TypeFloat64:
		v, err := p.u64(what)
		return Value{Type: vt, V: math.Float64frombits(v)}, err
	case TypeArray:
		if depth > 2 {
			return Value{}, p.fail("%s: arrays nested too deeply", what)
		}
		et, err := p.u32("array type of " + key)
		if err != nil {
			return Value{}, err
		}
		n, err := p.count("array length of " + key)
		if err != nil {
			return Value{}, err
		}
		return p.array(ValueType(et), n, key, depth)
	}
	return Value{}, p.fail("%s: unknown value type %d", what, uint32(vt))
}

var fixedSize = map[ValueType]uint64{
	TypeUint8: 1, TypeInt8: 1, TypeBool: 1, TypeUint16: 2, TypeInt16: 2,
	TypeUint32: 4, TypeInt32: 4, TypeFloat32: 4, TypeUint64: 8, TypeInt64: 8, TypeFloat64: 8,
}

func (p *parser) array(et ValueType, n uint64, key string, depth int) (Value, error) {
	what := "array " + key
	out := Value{Type: TypeArray, Elem: et}
	if sz, ok := fixedSize[et]; ok {
		if n > uint64(len(p.b)) {
			return Value{}, p.fail("%s: length %d exceeds the file size %d", what, n, len(p.b))
		}
		if err := p.need(n*sz, what); err != nil {
			return Value{}, err
		}
		b := p.b[p.off : p.off+n*sz]
		p.off += n * sz
		switch et {
		case TypeUint8:
			out.V = append([]uint8(nil), b...)
		case TypeInt8:
			s := make([]int8, n)
			for i := range s {
				s[i] = int8(b[i])
			}
			out.V = s
		case TypeBool:
			s := make([]bool, n)
			for i := range s {
				if b[i] > 1 {
					return Value{}, p.fail("%s: element %d: bool byte %d", what, i, b[i])
				}
				s[i] = b[i] == 1
			}
			out.V = s
		case TypeUint16, TypeInt16:
			u := make([]uint16, n)
			for i := range u {
				u[i] = binary.LittleEndian.Uint16(b[2*i:])
			}
			if et == TypeUint16 {
				out.V = u
			} else {
				s := make([]int16, n)
				for i := range s {
					s[i] = int16(u[i])
				}
				out.V = s
			}
		case TypeUint32:
			s := make([]uint32, n)
			for i := range s {
				s[i] = binary.LittleEndian.Uint32(b[4*i:])
			}
			out.V = s
		case TypeInt32:
			s := make([]int32, n)
			for i := range s {
				s[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
			out.V = s
		case TypeFloat32:
			s := make([]float32, n)
			for i := range s {
				s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
			out.V = s
		case TypeUint64:
			s := make([]uint64, n)
			for i := range s {
				s[i] = binary.LittleEndian.Uint64(b[8*i:])
			}
			out.V = s
		case TypeInt64:
			s := make([]int64, n)
			for i := range s {
				s[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
			}
			out.V = s
		case TypeFloat64:
			s := make([]float64, n)
			for i := range s {
				s[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
			}
			out.V = s
		}
		return out, nil
	}
	// Every string takes at least its length field and every nested array its
	// type and length fields, which bounds n by the bytes left and keeps a
	// hostile count from allocating more than a few times the file size.
	minElem := uint64(8)
	if p.version == 1 {
		minElem = 4
	}
	if et == TypeArray {
		minElem += 4
	}
	if n > (uint64(len(p.b))-p.off)/minElem {
		return Value{}, p.fail("%s: length %d exceeds what the rest of the file can hold", what, n)
	}
	switch et {
	case TypeString:
		s := make([]string, n)
		for i := range s {
			var err error
			if s[i], err = p.str(what + " element"); err != nil {
				return Value{}, err
			}
		}
		out.V = s
	case TypeArray:
		s := make([]Value, n)
		for i := range s {
			var err error
			if s[i], err = p.value(TypeArray, key, depth+1); err != nil {
				return Value{}, err
			}
		}
		out.V = s
	default:
		return Value{}, p.fail("%s: unknown element type %d", what, uint32(et))
	}
	return out, nil
}

// checkOverlap rejects tensors whose bytes share any part of the data
// section: a writer never produces them, and a consumer that uploads or
// modifies tensors by offset would silently alias them.
func checkOverlap(ts []TensorInfo) error {
	order := make([]int, len(ts))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return ts[order[a]].Offset < ts[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		prev, cur := &ts[order[k-1]], &ts[order[k]]
		if prev.Offset+prev.Bytes() > cur.Offset {
			return fmt.Errorf("%w: tensors %q (data offset %d, %d bytes) and %q (data offset %d) overlap", ErrMalformed, prev.Name, prev.Offset, prev.Bytes(), cur.Name, cur.Offset)
		}
	}
	return nil
}
