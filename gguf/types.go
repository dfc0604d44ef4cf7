// Package gguf reads and writes GGUF files (versions 1, 2 and 3) and knows the
// ggml tensor types and their block geometry.
package gguf

import "fmt"

// Type is a ggml tensor type id as stored in a GGUF tensor info.
type Type uint32

const (
	F32   Type = 0
	F16   Type = 1
	Q4_0  Type = 2
	Q5_0  Type = 6
	Q8_0  Type = 8
	Q4_K  Type = 12
	Q5_K  Type = 13
	Q6_K  Type = 14
	BF16  Type = 30
	MXFP4 Type = 39
)

type typeInfo struct {
	name       string
	blockSize  int // elements per block
	blockBytes int // bytes per block
}

var typeTable = map[Type]typeInfo{
	F32:   {"F32", 1, 4},
	F16:   {"F16", 1, 2},
	Q4_0:  {"Q4_0", 32, 18},
	Q5_0:  {"Q5_0", 32, 22},
	Q8_0:  {"Q8_0", 32, 34},
	Q4_K:  {"Q4_K", 256, 144},
	Q5_K:  {"Q5_K", 256, 176},
	Q6_K:  {"Q6_K", 256, 210},
	BF16:  {"BF16", 1, 2},
	MXFP4: {"MXFP4", 32, 17},
}

// Known reports whether t is a type this project can store and decode.
func (t Type) Known() bool { _, ok := typeTable[t]; return ok }

func (t Type) String() string {
	if ti, ok := typeTable[t]; ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements one block encodes (1 for plain floats).
func (t Type) BlockSize() int { return typeTable[t].blockSize }

// BlockBytes is the encoded size of one block.
func (t Type) BlockBytes() int { return typeTable[t].blockBytes }

// RowBytes is the encoded size of n elements; n must be a multiple of BlockSize.
func (t Type) RowBytes(n int64) int64 {
	ti := typeTable[t]
	return n / int64(ti.blockSize) * int64(ti.blockBytes)
}

// TypeByName maps "Q4_K", "f16", ... to a Type.
func TypeByName(name string) (Type, bool) {
	for t, ti := range typeTable {
		if equalFold(ti.name, name) {
			return t, true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// ValueType is the type tag of a metadata value.
type ValueType uint32

const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"}

func (v ValueType) String() string {
	if int(v) < len(valueTypeNames) {
		return valueTypeNames[v]
	}
	return fmt.Sprintf("valuetype(%d)", uint32(v))
}

// File types written to general.file_type (llama_ftype).
const (
	FileTypeAllF32   = 0
	FileTypeF16      = 1
	FileTypeQ4_0     = 2
	FileTypeQ8_0     = 7
	FileTypeQ5_0     = 8
	FileTypeQ4_K_M   = 15
	FileTypeQ5_K_M   = 17
	FileTypeQ6_K     = 18
	FileTypeBF16     = 32
	FileTypeMXFP4MoE = 38
)

var fileTypeNames = map[uint32]string{
	FileTypeAllF32: "F32", FileTypeF16: "F16", FileTypeQ4_0: "Q4_0", FileTypeQ8_0: "Q8_0",
	FileTypeQ5_0: "Q5_0", FileTypeQ4_K_M: "Q4_K_M", FileTypeQ6_K: "Q6_K", FileTypeBF16: "BF16",
	FileTypeMXFP4MoE: "MXFP4_MOE",
	3:                "Q4_1", 9: "Q5_1", 10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S",
	16: "Q5_K_S", FileTypeQ5_K_M: "Q5_K_M",
}

// FileTypeName names a general.file_type value as llama.cpp does ("Q4_K_M").
func FileTypeName(ft uint32) string {
	if n, ok := fileTypeNames[ft]; ok {
		return n
	}
	return fmt.Sprintf("file_type(%d)", ft)
}
