// Package poolapi is the internal protocol between orcd, the pool managers
// (orcpool) and their workers (orcrun serve): the worker's ready callback,
// a pool's registration with orcd, and the reload orcd asks of a pool
// manager. Every call carries the shared pool token as a Bearer token.
package poolapi

// Worker status values, as the worker specification names them.
const (
	StatusStarting = "starting" // process spawned, loading the plan
	StatusReady    = "ready"    // called back, validated, taking jobs
	StatusBusy     = "busy"     // running a job
	StatusDraining = "draining" // finishing its job, taking no new ones
	StatusFailed   = "failed"   // exited, unreachable, or failed to start
)

// Paths of the internal endpoints.
const (
	// ReadyPath is served by the pool manager: a worker posts WorkerReady
	// to it once its server listens.
	ReadyPath = "/v2/internal/workers/ready"
	// PoolsPath is served by orcd: PUT PoolsPath/{id} registers or updates
	// a pool (a Pool body), DELETE withdraws it.
	PoolsPath = "/v2/internal/pools"
	// ReloadPath is served by the pool manager: POST ReloadPath with a
	// ReloadRequest switches the pool to another plan or rolls back.
	ReloadPath = "/v2/internal/reload"
)

// WorkerReady is the body of the worker's ready callback.
type WorkerReady struct {
	WorkerID  string `json:"worker_id"`
	ModelRef  string `json:"model_ref"`
	VRAMBytes int64  `json:"vram_bytes"`
	URI       string `json:"uri"`
}

// Worker is one worker process of a pool, as its pool manager sees it.
type Worker struct {
	ID       string `json:"worker_id"`
	URI      string `json:"uri,omitempty"` // empty until it called back
	Status   string `json:"status"`
	Device   string `json:"device"` // "cpu" or "cuda:N"
	PID      int    `json:"pid,omitempty"`
	Restarts int    `json:"restarts"`
	// Slots is how many jobs the worker runs at once, from its GET /health
	// (orcrun serve --slots); 0 (not reported) is one.
	Slots int `json:"slots,omitempty"`
}

// Pool is a pool manager's registration: one plan served by one worker per
// device of its host.
type Pool struct {
	ID            string   `json:"pool_id"`
	Engine        string   `json:"engine"`
	EngineVersion string   `json:"engine_version"`
	Model         string   `json:"model"`     // the plan's model name; OpenAI's "model"
	ModelRef      string   `json:"model_ref"` // the plan the workers load
	CtxMax        int      `json:"ctx_max"`
	MaxTokensOut  int      `json:"max_tokens_out"`
	Draining      bool     `json:"draining"` // the pool manager is shutting down
	ControlURL    string   `json:"control_url"`
	Workers       []Worker `json:"workers"`
}

// ReloadRequest asks a pool manager to switch its pool to another plan.
type ReloadRequest struct {
	ModelRef string `json:"model_ref"`
}

// ReloadResult says whether the switch happened; when it did not, the old
// plan still serves.
type ReloadResult struct {
	PoolID     string `json:"pool_id"`
	ModelRef   string `json:"model_ref"` // the plan serving now
	Switched   bool   `json:"switched"`
	RolledBack bool   `json:"rolled_back"`
	Error      string `json:"error,omitempty"`
}
