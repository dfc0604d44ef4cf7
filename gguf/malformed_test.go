package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawFile assembles GGUF bytes field by field, so a test can write exactly
// the malformed header it means without going through the Writer's checks.
type rawFile struct {
	version uint32
	b       bytes.Buffer
}

func newRaw(version uint32, nTensors, nKVs uint64) *rawFile {
	r := &rawFile{version: version}
	r.b.WriteString(Magic)
	r.u32(version)
	r.count(nTensors)
	r.count(nKVs)
	return r
}

func (r *rawFile) u8(v uint8) *rawFile { r.b.WriteByte(v); return r }
func (r *rawFile) u32(v uint32) *rawFile {
	r.b.Write(binary.LittleEndian.AppendUint32(nil, v))
	return r
}
func (r *rawFile) u64(v uint64) *rawFile {
	r.b.Write(binary.LittleEndian.AppendUint64(nil, v))
	return r
}

// count writes a length the way the version does: u32 in v1, u64 later.
func (r *rawFile) count(n uint64) *rawFile {
	if r.version == 1 {
		return r.u32(uint32(n))
	}
	return r.u64(n)
}

func (r *rawFile) str(s string) *rawFile { r.count(uint64(len(s))); r.b.WriteString(s); return r }

// kvU32 writes one u32 metadata pair.
func (r *rawFile) kvU32(key string, v uint32) *rawFile {
	return r.str(key).u32(uint32(TypeUint32)).u32(v)
}

// tensor writes one tensor info.
func (r *rawFile) tensor(name string, typ Type, off uint64, dims ...uint64) *rawFile {
	r.str(name).u32(uint32(len(dims)))
	for _, d := range dims {
		r.count(d)
	}
	return r.u32(uint32(typ)).u64(off)
}

// data pads to the default alignment and appends n zero bytes of tensor data.
func (r *rawFile) data(n int) []byte {
	for r.b.Len()%DefaultAlignment != 0 {
		r.b.WriteByte(0)
	}
	r.b.Write(make([]byte, n))
	return r.b.Bytes()
}

func (r *rawFile) bytes() []byte { return r.b.Bytes() }

// malformedCase is one broken file and a piece of the error message that
// must name its problem.
type malformedCase struct {
	name string
	in   []byte
	want string
}

// validBase is the small well-formed file several malformed cases start from.
func validBase() []byte {
	return newRaw(3, 1, 1).kvU32("a", 1).tensor("t", F32, 0, 4).data(16)
}

func malformedCases() []malformedCase {
	valid := validBase()
	return []malformedCase{
		{"empty", nil, "bad magic"},
		{"bad magic", append([]byte("GGML"), valid[4:]...), "bad magic"},
		{"version 0", newRaw(0, 0, 0).bytes(), "unsupported GGUF version 0"},
		{"version 4", newRaw(4, 0, 0).bytes(), "unsupported GGUF version 4"},
		{"big-endian version", append([]byte(Magic), 0, 0, 0, 3, 0, 0, 0, 0), "byte-swapped"},
		{"tensor count overflows", newRaw(3, math.MaxUint64, 0).bytes(), "tensor count 18446744073709551615 exceeds limit"},
		{"v1 tensor count overflows", newRaw(1, math.MaxUint32, 0).bytes(), "tensor count 4294967295 exceeds limit"},
		{"kv count overflows", newRaw(2, 0, 1<<40).bytes(), "kv count 1099511627776 exceeds limit"},
		{"counts past EOF", newRaw(3, 1, 3).kvU32("a", 1).bytes(), "3 kvs and 1 tensors cannot fit in the 17 bytes left"},
		{"v1 counts past EOF", newRaw(1, 2, 0).u64(0).bytes(), "0 kvs and 2 tensors cannot fit in the 8 bytes left"},
		{"second key past EOF", newRaw(3, 0, 2).kvU32("a", 1).u64(30).u8('b').bytes(), "truncated: kv key needs 30 bytes, 1 left"},
		{"key length past EOF", newRaw(3, 0, 1).u64(1000).u32(0).u8(0).bytes(), "truncated: kv key needs 1000 bytes, 5 left"},
		{"key length absurd", newRaw(3, 0, 1).u64(1 << 62).u64(0).bytes(), "kv key length 4611686018427387904 exceeds limit"},
		{"string value past EOF", newRaw(3, 0, 1).str("s").u32(uint32(TypeString)).u64(50).bytes(), "truncated: value of s needs 50 bytes"},
		{"v1 string value past EOF", newRaw(1, 0, 1).str("s").u32(uint32(TypeString)).u32(50).bytes(), "truncated: value of s needs 50 bytes"},
		{"u32 array past EOF", newRaw(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeUint32)).u64(10).u32(1).bytes(), "truncated: array a needs 40 bytes"},
		{"u64 array length overflows", newRaw(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1 << 62).bytes(), "length 4611686018427387904 exceeds the file size"},
		{"string array length overflows", newRaw(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(math.MaxUint64).bytes(), "exceeds what the rest of the file can hold"},
		{"string array element past EOF", newRaw(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("x").u64(9).u64(0).bytes(), "truncated: array a element needs 9 bytes"},
		{"nested array length overflows", newRaw(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1 << 60).bytes(), "exceeds what the rest of the file can hold"},
		{"arrays nested too deeply", nested(5), "nested too deeply"},
		{"unknown value type", newRaw(3, 0, 1).str("k").u32(13).u32(0).bytes(), "unknown value type 13"},
		{"unknown array element type", newRaw(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(77).u64(0).bytes(), "unknown element type 77"},
		{"bool byte", newRaw(3, 0, 1).str("b").u32(uint32(TypeBool)).u8(2).bytes(), "bool byte 2"},
		{"bool array byte", newRaw(3, 0, 1).str("b").u32(uint32(TypeArray)).u32(uint32(TypeBool)).u64(2).u8(1).u8(7).bytes(), "element 1: bool byte 7"},
		{"duplicate key", newRaw(3, 0, 2).kvU32("dup", 1).kvU32("dup", 2).bytes(), `duplicate metadata key "dup"`},
		{"alignment not a power of two", newRaw(3, 0, 1).kvU32("general.alignment", 24).bytes(), "general.alignment 24 is not a power of two"},
		{"alignment zero", newRaw(3, 0, 1).kvU32("general.alignment", 0).bytes(), "general.alignment 0 is not a power of two"},
		{"alignment not an integer", newRaw(3, 0, 1).str("general.alignment").u32(uint32(TypeString)).str("32").bytes(), "general.alignment 32 is not a power of two"},
		{"duplicate tensor", newRaw(3, 2, 0).tensor("w", F32, 0, 4).tensor("w", F32, 32, 4).data(64), `duplicate tensor name "w"`},
		{"zero n_dims", newRaw(3, 1, 0).tensor("w", F32, 0).data(16), `tensor "w" has 0 dims`},
		{"oversized n_dims", newRaw(3, 1, 0).tensor("w", F32, 0, 1, 1, 1, 1, 1).data(16), `tensor "w" has 5 dims`},
		{"absurd n_dims", newRaw(3, 1, 0).str("w").u32(math.MaxUint32).u64(0).u64(0).u32(0).bytes(), `tensor "w" has 4294967295 dims`},
		{"zero dimension", newRaw(3, 1, 0).tensor("w", F32, 0, 4, 0).data(16), `tensor "w" has a zero dimension`},
		{"element count overflows", newRaw(3, 1, 0).tensor("w", F32, 0, 1<<32, 1<<32).data(16), `tensor "w" element count overflows`},
		{"tensor larger than file", newRaw(3, 1, 0).tensor("w", F32, 0, 1<<31, 1<<31).data(16), "need more bytes than the file has"},
		{"v1 type past EOF", newRaw(1, 1, 0).str("w").u32(4).u32(1).u32(1).u32(1).u32(4).bytes(), "truncated: type of w"},
		{"unknown tensor type", newRaw(3, 1, 0).tensor("w", Type(99), 0, 4).data(16), `tensor "w" has unknown or unsupported ggml type 99`},
		{"unsupported tensor type", newRaw(3, 1, 0).tensor("w", Type(3), 0, 32).data(32), "unknown or unsupported ggml type 3"},
		{"row not whole blocks", newRaw(3, 1, 0).tensor("w", Q4_K, 0, 100).data(144), "row length 100 is not a multiple of the Q4_K block size 256"},
		{"misaligned offset", newRaw(3, 1, 0).tensor("w", F32, 4, 4).data(32), `tensor "w" offset 4 is not aligned to 32`},
		{"offset past EOF", newRaw(3, 1, 0).tensor("w", F32, 1<<40, 4).data(16), "extends past the end of the file"},
		{"offset at the top of u64", newRaw(3, 1, 0).tensor("w", F32, math.MaxUint64&^31, 4).data(16), "extends past the end of the file"},
		{"data past EOF", newRaw(3, 1, 0).tensor("w", F32, 0, 8).data(16), `tensor "w" (32 bytes at data offset 0) extends past the end`},
		{"data section past EOF", newRaw(3, 1, 0).tensor("w", F32, 0, 4).bytes(), "data section starts at"},
		{"tensors overlap", newRaw(3, 2, 0).tensor("a", F32, 0, 16).tensor("b", F32, 32, 4).data(64), `tensors "a" (data offset 0, 64 bytes) and "b" (data offset 32) overlap`},
	}
}

func TestMalformed(t *testing.T) {
	if _, err := Parse(validBase()); err != nil {
		t.Fatalf("the unmodified base file must parse: %v", err)
	}
	for _, c := range malformedCases() {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.in)
			if err == nil {
				t.Fatalf("parsed (%d tensors, %d kvs); want an error containing %q", len(f.Tensors), len(f.KVs), c.want)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("error %q does not wrap ErrMalformed", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

// nested builds a key whose value is an array of arrays depth levels deep.
func nested(depth int) []byte {
	r := newRaw(3, 0, 1).str("deep").u32(uint32(TypeArray))
	for i := 0; i < depth; i++ {
		r.u32(uint32(TypeArray)).u64(1)
	}
	return r.u32(uint32(TypeUint8)).u64(0).bytes()
}

// richFile writes a file of the given version with every value type, nested
// arrays and tensors of several block types, so truncation and fuzzing reach
// every branch of the parser.
func richFile(t testing.TB, version uint32) []byte {
	w := NewWriter()
	w.Version = version
	w.Set("general.architecture", "llama")
	w.Set("general.alignment", uint32(64))
	w.Set("u8", uint8(200))
	w.Set("i8", int8(-3))
	w.Set("u16", uint16(60000))
	w.Set("i16", int16(-30000))
	w.Set("u32", uint32(1<<31))
	w.Set("i32", int32(-1<<31))
	w.Set("f32", float32(0.25))
	w.Set("bool", true)
	w.Set("u64", uint64(1<<63))
	w.Set("i64", int64(-1<<63))
	w.Set("f64", 1e-300)
	w.Set("strs", []string{"", "a", "ĉ"})
	w.Set("bools", []bool{true, false})
	w.Set("f32s", []float32{1, -2})
	w.Set("i8s", []int8{-1, 1})
	w.Set("u16s", []uint16{1, 2})
	w.Set("i64s", []int64{-5})
	w.Set("nested", Value{Type: TypeArray, Elem: TypeArray, V: []Value{Val([]uint32{1, 2}), Val([]string{"x"})}})
	w.Alignment = 64
	for i, typ := range []Type{F32, F16, BF16, Q4_0, Q5_0, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4} {
		dims := []uint64{uint64(typ.BlockSize()), 2}
		data := make([]byte, typ.RowBytes(int64(dims[0]*dims[1])))
		for j := range data {
			data[j] = byte(i*31 + j)
		}
		if err := w.AddTensorBytes("t."+typ.String(), typ, dims, data); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestTruncatedEverywhere cuts a rich file of each version at every byte up
// to the end of its last tensor.
func TestTruncatedEverywhere(t *testing.T) {
	for _, v := range []uint32{1, 2, 3} {
		full := richFile(t, v)
		f, err := Parse(full)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		last := f.Tensors[len(f.Tensors)-1]
		end := int(f.DataOffset + last.Offset + last.Bytes())
		for n := 0; n < end; n++ {
			_, err := Parse(full[:n])
			if err == nil {
				t.Fatalf("v%d: truncation to %d of %d bytes parsed", v, n, end)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("v%d: truncation to %d: error %v is not ErrMalformed", v, n, err)
			}
		}
	}
}

// TestRichRoundTrip checks that every value type comes back as written.
func TestRichRoundTrip(t *testing.T) {
	for _, v := range []uint32{1, 2, 3} {
		f, err := Parse(richFile(t, v))
		if err != nil {
			t.Fatal(err)
		}
		if f.Alignment != 64 || f.DataOffset%64 != 0 {
			t.Errorf("v%d: alignment %d, data offset %d", v, f.Alignment, f.DataOffset)
		}
		checks := map[string]any{"u8": uint8(200), "i8": int8(-3), "u16": uint16(60000), "i16": int16(-30000),
			"u32": uint32(1 << 31), "i32": int32(-1 << 31), "f32": float32(0.25), "bool": true,
			"u64": uint64(1 << 63), "i64": int64(-1 << 63), "f64": 1e-300}
		for k, want := range checks {
			if got, _ := f.Get(k); got.V != want {
				t.Errorf("v%d: %s = %v (%T), want %v (%T)", v, k, got.V, got.V, want, want)
			}
		}
		if s, _ := f.Strings("strs"); len(s) != 3 || s[2] != "ĉ" {
			t.Errorf("v%d: strs %q", v, s)
		}
		nv, _ := f.Get("nested")
		inner, ok := nv.V.([]Value)
		if !ok || len(inner) != 2 || inner[1].V.([]string)[0] != "x" || inner[0].V.([]uint32)[1] != 2 {
			t.Errorf("v%d: nested %#v", v, nv)
		}
		for _, ti := range f.Tensors {
			if d := f.Data(&ti); uint64(len(d)) != ti.Bytes() || ti.Offset%64 != 0 {
				t.Errorf("v%d: %s: %d bytes at %d", v, ti.Name, len(d), ti.Offset)
			}
		}
	}
}

func TestOpenShortFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "short.gguf")
	if err := os.WriteFile(p, []byte("GGUF"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "too short") {
		t.Fatalf("error %v", err)
	}
}

// TestWriterRefuses checks that the Writer reports what the reader would
// reject instead of writing it.
func TestWriterRefuses(t *testing.T) {
	write := func(w *Writer) error { _, err := w.WriteTo(io.Discard); return err }
	w := NewWriter()
	if err := w.AddTensorBytes("z", F32, []uint64{4, 0}, nil); err == nil || !strings.Contains(err.Error(), "zero or overflowing") {
		t.Errorf("zero dim: %v", err)
	}
	if err := w.AddTensor("big", F32, []uint64{1 << 32, 1 << 32}, nil); err == nil || !strings.Contains(err.Error(), "zero or overflowing") {
		t.Errorf("overflowing dims: %v", err)
	}
	w.Alignment = 48
	if err := write(w); err == nil || !strings.Contains(err.Error(), "alignment 48 is not a power of two") {
		t.Errorf("alignment 48: %v", err)
	}
	w = NewWriter()
	w.Set("general.alignment", uint32(64))
	if err := write(w); err == nil || !strings.Contains(err.Error(), "general.alignment 64 disagrees with Writer.Alignment 32") {
		t.Errorf("disagreeing alignment: %v", err)
	}
	w = NewWriter()
	w.Version = 1
	w.AddTensor("wide", F32, []uint64{1 << 33}, func(io.Writer) error { return nil })
	if err := write(w); err == nil || !strings.Contains(err.Error(), "8589934592 does not fit GGUF v1's 32 bits") {
		t.Errorf("v1 dim over 32 bits: %v", err)
	}
}
