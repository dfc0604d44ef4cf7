package orchestrator

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/llama-orch/orc/internal/httpjson"
)

// The artifact registry (OC-CTRL-2065..2067) lives in one bbolt file:
// artifacts by content address, and each job's artifact id by job id.
var (
	bucketArtifacts = []byte("artifacts")
	bucketJobs      = []byte("jobs")
)

// Artifact is a stored document: its id is the sha256 of its kind and
// content, so storing the same thing twice gives the same id.
type Artifact struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Content   json.RawMessage `json:"content"`
	Tags      []string        `json:"tags"`
	Lineage   []string        `json:"lineage"` // ids of the artifacts it derives from
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
}

type artifactStore struct{ db *bolt.DB }

func openArtifacts(path string) (*artifactStore, error) {
	if path == "" {
		return nil, errors.New("artifact database: no path given")
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("artifact database %s: in use by another process", path)
	}
	if err != nil {
		return nil, fmt.Errorf("artifact database %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketArtifacts, bucketJobs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("artifact database %s: %w", path, err)
	}
	return &artifactStore{db: db}, nil
}

func (s *artifactStore) close() error { return s.db.Close() }

// contentID is the content address of kind and compacted content.
func contentID(kind string, content []byte) string {
	h := sha256.New()
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(content)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// put stores a; an artifact already stored keeps its creation time and
// gains the new tags. It reports whether a was new. jobID, when set, indexes
// a as that job's record.
func (s *artifactStore) put(a *Artifact, jobID string) (created bool, err error) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, a.Content); err != nil {
		return false, fmt.Errorf("content: %w", err)
	}
	a.Content = compact.Bytes()
	a.ID = contentID(a.Kind, a.Content)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	err = s.db.Batch(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketArtifacts)
		for _, parent := range a.Lineage {
			if b.Get([]byte(parent)) == nil {
				return fmt.Errorf("lineage: no artifact %s", parent)
			}
		}
		a.CreatedAt, a.UpdatedAt, created = now, now, true
		if old := b.Get([]byte(a.ID)); old != nil {
			var prev Artifact
			if err := json.Unmarshal(old, &prev); err != nil {
				return err
			}
			created = false
			a.CreatedAt = prev.CreatedAt
			for _, tag := range prev.Tags {
				if !slices.Contains(a.Tags, tag) {
					a.Tags = append(a.Tags, tag)
				}
			}
			slices.Sort(a.Tags)
		}
		v, err := json.Marshal(a)
		if err != nil {
			return err
		}
		if jobID != "" {
			if err := tx.Bucket(bucketJobs).Put([]byte(jobID), []byte(a.ID)); err != nil {
				return err
			}
		}
		return b.Put([]byte(a.ID), v)
	})
	return created, err
}

// get returns the artifact with id, or nil.
func (s *artifactStore) get(id string) (*Artifact, error) {
	var a *Artifact
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketArtifacts).Get([]byte(id))
		if v == nil {
			return nil
		}
		a = &Artifact{}
		return json.Unmarshal(v, a)
	})
	return a, err
}

// artifactRequest is the body of POST /v1/artifacts.
type artifactRequest struct {
	Kind    string          `json:"kind"`
	Content json.RawMessage `json:"content"`
	Tags    []string        `json:"tags"`
	Lineage []string        `json:"lineage"`
}

func (o *Orchestrator) handlePutArtifact(w http.ResponseWriter, r *http.Request) {
	var req artifactRequest
	if e := decodeBody(w, r, &req); e != nil {
		writeError(w, e)
		return
	}
	switch {
	case strings.TrimSpace(req.Kind) == "" || len(req.Kind) > 64:
		writeError(w, invalidParams("kind: 1 to 64 characters, e.g. plan, summary, diff, trace"))
		return
	case len(req.Content) == 0 || string(req.Content) == "null":
		writeError(w, invalidParams("content: must be a JSON value"))
		return
	}
	a := &Artifact{Kind: req.Kind, Content: req.Content, Tags: req.Tags, Lineage: req.Lineage}
	if a.Tags == nil {
		a.Tags = []string{}
	}
	if a.Lineage == nil {
		a.Lineage = []string{}
	}
	slices.Sort(a.Tags)
	created, err := o.artifacts.put(a, "")
	if err != nil {
		if strings.HasPrefix(err.Error(), "lineage:") || strings.HasPrefix(err.Error(), "content:") {
			writeError(w, invalidParams(err.Error()))
			return
		}
		writeError(w, newError(http.StatusInternalServerError, CodeInternal, err.Error()))
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpjson.Write(w, status, a)
}

func (o *Orchestrator) handleGetArtifact(w http.ResponseWriter, r *http.Request) {
	a, err := o.artifacts.get(r.PathValue("id"))
	switch {
	case err != nil:
		writeError(w, newError(http.StatusInternalServerError, CodeInternal, err.Error()))
	case a == nil:
		writeError(w, newError(http.StatusNotFound, CodeNotFound, "no artifact "+r.PathValue("id")))
	default:
		httpjson.Write(w, http.StatusOK, a)
	}
}
