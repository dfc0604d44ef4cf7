package gguf

import (
	"fmt"
	"math"
)

// Get returns the value stored under key.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KVs[i].Value, true
}

// String returns a string value.
func (f *File) String(key string) (string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return "", false
	}
	s, ok := v.V.(string)
	return s, ok
}

// Uint returns any unsigned or non-negative signed integer value as uint64.
func (f *File) Uint(key string) (uint64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	return v.uint()
}

// Float returns any numeric value as float64.
func (f *File) Float(key string) (float64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return 0, false
	}
	switch x := v.V.(type) {
	case float32:
		return float64(x), true
	case float64:
		return x, true
	}
	if u, ok := v.uint(); ok {
		return float64(u), true
	}
	return 0, false
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, ok := f.Get(key)
	if !ok {
		return false, false
	}
	b, ok := v.V.(bool)
	return b, ok
}

// Strings returns an array of strings.
func (f *File) Strings(key string) ([]string, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	s, ok := v.V.([]string)
	return s, ok
}

// Float32s returns an array of f32.
func (f *File) Float32s(key string) ([]float32, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	s, ok := v.V.([]float32)
	return s, ok
}

// Ints returns an integer array of any element width as int64s.
func (f *File) Ints(key string) ([]int64, bool) {
	v, ok := f.Get(key)
	if !ok {
		return nil, false
	}
	return v.Ints()
}

// Ints converts an integer array of any element width to int64s.
func (v Value) Ints() ([]int64, bool) {
	var out []int64
	switch s := v.V.(type) {
	case []uint8:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []int8:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []uint16:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []int16:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []uint32:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []int32:
		for _, x := range s {
			out = append(out, int64(x))
		}
	case []int64:
		out = append(out, s...)
	case []uint64:
		for _, x := range s {
			if x > math.MaxInt64 {
				return nil, false
			}
			out = append(out, int64(x))
		}
	default:
		return nil, false
	}
	return out, true
}

func (v Value) uint() (uint64, bool) {
	switch x := v.V.(type) {
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	}
	return 0, false
}

// Tensor looks up a tensor by name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Data returns the tensor's encoded bytes, zero-copy from the mapping.
func (f *File) Data(t *TensorInfo) []byte {
	start := f.DataOffset + t.Offset
	return f.data[start : start+t.Bytes()]
}

// Architecture returns general.architecture.
func (f *File) Architecture() (string, error) {
	a, ok := f.String("general.architecture")
	if !ok {
		return "", fmt.Errorf("gguf: general.architecture is missing")
	}
	return a, nil
}
