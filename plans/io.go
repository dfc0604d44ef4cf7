package plans

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// ErrStale is wrapped when a plan was written by another format version or
// for another target: the fix is always to recompile.
var ErrStale = errors.New("recompile with orcc")

// ErrCorrupt is wrapped when a plan's files do not match their checksums.
var ErrCorrupt = errors.New("plan is corrupt")

// manifest.bin is Magic | u32 FormatVersion | sha256(body) | body (msgpack).
const headerLen = len(Magic) + 4 + sha256.Size

// WriteOptions tune Write.
type WriteOptions struct {
	// Force writes the plan even where dir holds something that is not a
	// plan: a file there is replaced; a directory gets the plan's files and
	// keeps its others.
	Force bool
}

// Write writes a plan at dir with the default options (see WriteOptions.Write).
func Write(dir string, m *Manifest, weights func(i int, t *Tensor, w io.Writer) error, extra map[string][]byte) error {
	return WriteOptions{}.Write(dir, m, weights, extra)
}

// Write creates the plan directory dir: weights.bin (tensors in table order,
// each at an Alignment-aligned offset, bytes produced by weights), the extra
// files (e.g. kernels), and the manifest with every file's sha256. Offsets and
// Files are filled in m. dir may be absent, an empty directory or a plan;
// anything else is refused (CheckOutput) unless o.Force. The plan is staged in
// a directory this call creates under a unique name and published only once
// complete: an existing plan is replaced only by a complete one, and nothing
// beside or inside dir but a plan's own files is touched.
func (o WriteOptions) Write(dir string, m *Manifest, weights func(i int, t *Tensor, w io.Writer) error, extra map[string][]byte) error {
	dir = filepath.Clean(dir)
	kind, err := checkOutput(dir, o.Force)
	if err != nil {
		return err
	}
	stage, err := makeStage(dir, kind)
	if err != nil {
		return err
	}
	// Once published the stage no longer exists; before, it is ours alone.
	defer os.RemoveAll(stage)

	m.FormatVersion = FormatVersion
	if m.CreatedAt == "" {
		m.CreatedAt = time.Now().UTC().Format(time.RFC3339)
	}
	m.Files = map[string]string{}
	sum, chunks, total, err := writeWeights(filepath.Join(stage, WeightsFile), m.Tensors, weights)
	if err != nil {
		return err
	}
	m.Files[WeightsFile] = sum
	m.WeightChunks = chunks
	m.Memory.WeightBytes = total
	names := make([]string, 0, len(extra))
	for n := range extra {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if n == ManifestFile || n == WeightsFile || filepath.Base(n) != n {
			return fmt.Errorf("plans: invalid extra file name %q", n)
		}
		if err := os.WriteFile(filepath.Join(stage, n), extra[n], 0o644); err != nil {
			return err
		}
		h := sha256.Sum256(extra[n])
		m.Files[n] = hex.EncodeToString(h[:])
	}
	body, err := msgpack.Marshal(m)
	if err != nil {
		return fmt.Errorf("plans: encoding manifest: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stage, ManifestFile), encodeManifest(body), 0o644); err != nil {
		return err
	}
	return publish(stage, dir, kind, m.Files)
}

// makeStage creates the directory a plan for dir is written in: beside dir
// when dir is not a directory yet (published by renaming it), inside dir
// when it is (published file by file, so dir itself, which may be the
// current directory, stays).
func makeStage(dir string, kind outputKind) (string, error) {
	if kind == outputAbsent || kind == outputFile {
		parent := filepath.Dir(dir)
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", err
		}
		stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".partial-*")
		if err != nil {
			return "", err
		}
		return stage, os.Chmod(stage, 0o755)
	}
	return os.MkdirTemp(dir, ".partial-*")
}

// publish moves the complete plan in stage to dir. Into an existing
// directory the old manifest goes first and the new one comes last, so an
// interruption leaves no manifest rather than a mixed plan; a replaced plan's
// files the new one lacks are removed (only those names).
func publish(stage, dir string, kind outputKind, files map[string]string) error {
	switch kind {
	case outputAbsent:
		return os.Rename(stage, dir)
	case outputFile:
		if err := os.Remove(dir); err != nil {
			return err
		}
		return os.Rename(stage, dir)
	}
	if err := removeIfPresent(filepath.Join(dir, ManifestFile)); err != nil {
		return err
	}
	for name := range files {
		if err := os.Rename(filepath.Join(stage, name), filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	if kind == outputPlan {
		for _, name := range planFiles {
			if _, ok := files[name]; !ok && name != ManifestFile {
				if err := removeIfPresent(filepath.Join(dir, name)); err != nil {
					return err
				}
			}
		}
	}
	return os.Rename(filepath.Join(stage, ManifestFile), filepath.Join(dir, ManifestFile))
}

func removeIfPresent(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

func encodeManifest(body []byte) []byte {
	out := make([]byte, 0, headerLen+len(body))
	out = append(out, Magic...)
	out = binary.LittleEndian.AppendUint32(out, FormatVersion)
	h := sha256.Sum256(body)
	out = append(out, h[:]...)
	return append(out, body...)
}

func writeWeights(path string, tensors []Tensor, weights func(int, *Tensor, io.Writer) error) (string, []string, int64, error) {
	fd, err := os.Create(path)
	if err != nil {
		return "", nil, 0, err
	}
	defer fd.Close()
	h := sha256.New()
	chunks := newChunkHasher()
	bw := bufio.NewWriterSize(io.MultiWriter(fd, h, chunks), 4<<20)
	var off int64
	pad := make([]byte, Alignment)
	for i := range tensors {
		t := &tensors[i]
		aligned := (off + Alignment - 1) / Alignment * Alignment
		if _, err := bw.Write(pad[:aligned-off]); err != nil {
			return "", nil, 0, err
		}
		t.Offset = aligned
		cw := &countWriter{w: bw}
		if err := weights(i, t, cw); err != nil {
			return "", nil, 0, fmt.Errorf("plans: tensor %s: %w", t.Name, err)
		}
		if cw.n != t.Bytes {
			return "", nil, 0, fmt.Errorf("plans: tensor %s: wrote %d bytes, table says %d", t.Name, cw.n, t.Bytes)
		}
		off = aligned + t.Bytes
	}
	if err := bw.Flush(); err != nil {
		return "", nil, 0, err
	}
	if err := fd.Sync(); err != nil {
		return "", nil, 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), chunks.Sums(), off, fd.Close()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Plan is an opened, verified plan directory.
type Plan struct {
	Dir      string
	Manifest Manifest
	Weights  []byte // weights.bin, memory-mapped read-only
	byName   map[string]int
	// unhashed is set until VerifyWeights has hashed weights.bin: in Open,
	// or later where OpenOptions.DeferWeightHash (never with SkipWeightHash).
	unhashed bool
}

// OpenOptions tune Open.
type OpenOptions struct {
	// SkipWeightHash skips hashing weights.bin (its size is still checked).
	SkipWeightHash bool
	// DeferWeightHash leaves hashing weights.bin to VerifyWeights, which
	// the device that loads the plan calls (the CUDA device while it
	// uploads, so the two overlap); the weights must not be used before it
	// returns nil.
	DeferWeightHash bool
}

// Open reads and verifies the plan in dir: magic, format version, manifest
// checksum, and the sha256 of every file it lists.
func Open(dir string, o OpenOptions) (*Plan, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("plans: %s is not a plan directory: %w", dir, err)
	}
	m, err := decodeManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("plans: %s: %w", dir, err)
	}
	p := &Plan{Dir: dir, Manifest: *m, byName: map[string]int{}}
	for i, t := range m.Tensors {
		p.byName[t.Name] = i
	}
	if err := p.mapWeights(); err != nil {
		return nil, err
	}
	p.unhashed = !o.SkipWeightHash
	if !o.DeferWeightHash {
		if err := p.VerifyWeights(); err != nil {
			p.Close()
			return nil, err
		}
	}
	for name := range m.Files {
		if name == WeightsFile {
			continue
		}
		if _, err := p.ReadFile(name); err != nil {
			p.Close()
			return nil, err
		}
	}
	return p, nil
}

func decodeManifest(raw []byte) (*Manifest, error) {
	if len(raw) < headerLen || string(raw[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w: %s has no orc plan magic", ErrCorrupt, ManifestFile)
	}
	if v := binary.LittleEndian.Uint32(raw[len(Magic):]); v != FormatVersion {
		return nil, fmt.Errorf("%w: plan format version %d, this runtime reads version %d", ErrStale, v, FormatVersion)
	}
	body := raw[headerLen:]
	if h := sha256.Sum256(body); !bytes.Equal(h[:], raw[len(Magic)+4:headerLen]) {
		return nil, fmt.Errorf("%w: %s checksum mismatch (altered or truncated)", ErrCorrupt, ManifestFile)
	}
	var m Manifest
	if err := msgpack.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("%w: decoding %s: %v", ErrCorrupt, ManifestFile, err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%w: manifest says format version %d, header %d", ErrCorrupt, m.FormatVersion, FormatVersion)
	}
	return &m, nil
}

func (p *Plan) mapWeights() error {
	path := filepath.Join(p.Dir, WeightsFile)
	fd, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return err
	}
	if st.Size() != p.Manifest.Memory.WeightBytes {
		return fmt.Errorf("%w: %s is %d bytes, manifest says %d", ErrCorrupt, path, st.Size(), p.Manifest.Memory.WeightBytes)
	}
	if st.Size() > 0 {
		p.Weights, err = syscall.Mmap(int(fd.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return fmt.Errorf("plans: mmap %s: %w", path, err)
		}
	}
	for _, t := range p.Manifest.Tensors {
		if t.Offset < 0 || t.Bytes < 0 || t.Offset+t.Bytes > st.Size() {
			p.Close()
			return fmt.Errorf("%w: tensor %s [%d, +%d) is outside %s", ErrCorrupt, t.Name, t.Offset, t.Bytes, WeightsFile)
		}
	}
	return nil
}

// VerifyWeights hashes weights.bin against the manifest if Open deferred it
// (OpenOptions.DeferWeightHash), on every core; otherwise it does nothing.
// Safe to call from another goroutine than the one using p.Weights.
func (p *Plan) VerifyWeights() error {
	if !p.unhashed {
		return nil
	}
	if err := verifyChunks(p.Weights, p.Manifest.WeightChunks); err != nil {
		return err
	}
	p.unhashed = false
	return nil
}

// ReadFile reads a file the manifest lists and checks its sha256.
func (p *Plan) ReadFile(name string) ([]byte, error) {
	want, ok := p.Manifest.Files[name]
	if !ok {
		return nil, fmt.Errorf("plans: %s lists no file %q", p.Dir, name)
	}
	b, err := os.ReadFile(filepath.Join(p.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if sha256Hex(b) != want {
		return nil, fmt.Errorf("%w: %s sha256 mismatch (altered or truncated)", ErrCorrupt, filepath.Join(p.Dir, name))
	}
	return b, nil
}

// TensorData returns a weight's bytes from the mapping and its table entry.
func (p *Plan) TensorData(name string) ([]byte, *Tensor, bool) {
	i, ok := p.byName[name]
	if !ok {
		return nil, nil, false
	}
	t := &p.Manifest.Tensors[i]
	return p.Weights[t.Offset : t.Offset+t.Bytes], t, true
}

// Close unmaps the weights.
func (p *Plan) Close() error {
	if p.Weights == nil {
		return nil
	}
	err := syscall.Munmap(p.Weights)
	p.Weights = nil
	return err
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
