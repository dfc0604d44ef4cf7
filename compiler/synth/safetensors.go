package synth

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/llama-orch/orc/gguf"
	"github.com/llama-orch/orc/quant"
)

// stTensor is one safetensors entry whose float32 values (row-major, in the
// entry's shape) produce emits in order, in as many pieces as it likes;
// they are stored as dtype (gguf.F32 or gguf.BF16: exportType).
type stTensor struct {
	name    string
	shape   []int
	dtype   gguf.Type
	produce func(emit func([]float32) error) error
}

func (t *stTensor) elements() int64 {
	n := int64(1)
	for _, d := range t.shape {
		n *= int64(d)
	}
	return n
}

// writeSafetensors writes tensors in the safetensors format: an 8-byte
// little-endian header length, the JSON header (names → dtype, shape, data
// offsets), then the raw data.
func writeSafetensors(path string, tensors []stTensor) error {
	names := map[gguf.Type]string{gguf.F32: "F32", gguf.BF16: "BF16"}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var off int64
	for _, t := range tensors {
		n := t.elements() * t.dtype.RowBytes(1)
		header[t.name] = map[string]any{"dtype": names[t.dtype], "shape": t.shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	js, err := json.Marshal(header)
	if err != nil {
		return err
	}
	// Pad the header with spaces so the data starts 8-byte aligned.
	for len(js)%8 != 0 {
		js = append(js, ' ')
	}
	fd, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(fd, 4<<20)
	err = writeST(bw, js, tensors)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	return err
}

func writeST(w io.Writer, header []byte, tensors []stTensor) error {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(header)))
	if _, err := w.Write(n[:]); err != nil {
		return err
	}
	if _, err := w.Write(header); err != nil {
		return err
	}
	for _, t := range tensors {
		var written int64
		err := t.produce(func(vals []float32) error {
			written += int64(len(vals))
			enc, err := quant.Quantize(t.dtype, vals)
			if err != nil {
				return err
			}
			_, err = w.Write(enc)
			return err
		})
		if err != nil {
			return fmt.Errorf("synth: safetensors %s: %w", t.name, err)
		}
		if written != t.elements() {
			return fmt.Errorf("synth: safetensors %s: produced %d values for shape %v", t.name, written, t.shape)
		}
	}
	return nil
}
