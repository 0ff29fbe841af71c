package tlsreload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// DefaultInterval is how often files are read for changes.
const DefaultInterval = 2 * time.Second

// Files names the PEM files to load; CertFile and KeyFile go together, and
// either the pair or CAFile may be empty.
type Files struct {
	CertFile string
	KeyFile  string
	CAFile   string
}

// Hooks observe reloads, e.g. to count them in metrics. Both may be nil.
type Hooks struct {
	// Reloaded is called after new material took effect; what is "keypair" or "ca".
	Reloaded func(what string)
	// Failed is called when changed material was rejected; the old stays in use.
	Failed func(what string, err error)
}

// Watcher keeps a KeyPair and a Bundle in step with their files.
type Watcher struct {
	// KeyPair is nil when no CertFile was given.
	KeyPair *KeyPair
	// Bundle is nil when no CAFile was given.
	Bundle *Bundle

	files    Files
	interval time.Duration
	hooks    Hooks
	log      logr.Logger
	// lastErr holds the last failure per material, so that a file that stays
	// broken is reported once, not at every poll.
	mu      sync.Mutex
	lastErr map[string]string
}

// WatchFiles loads the files once, failing on missing or invalid material,
// and returns a Watcher whose Start keeps them current. interval <= 0 means
// DefaultInterval.
func WatchFiles(files Files, interval time.Duration, hooks Hooks, log logr.Logger) (*Watcher, error) {
	if (files.CertFile == "") != (files.KeyFile == "") {
		return nil, errors.New("a certificate file needs a key file and the other way round")
	}
	if files.CertFile == "" && files.CAFile == "" {
		return nil, errors.New("no certificate, key or CA file to watch")
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	w := &Watcher{files: files, interval: interval, hooks: hooks, log: log, lastErr: map[string]string{}}
	if files.CertFile != "" {
		cert, key, err := readPair(files)
		if err != nil {
			return nil, err
		}
		if w.KeyPair, err = NewKeyPair(cert, key); err != nil {
			return nil, fmt.Errorf("%s and %s: %w", files.CertFile, files.KeyFile, err)
		}
	}
	if files.CAFile != "" {
		ca, err := os.ReadFile(files.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading CA bundle: %w", err)
		}
		if w.Bundle, err = NewBundle(ca); err != nil {
			return nil, fmt.Errorf("%s: %w", files.CAFile, err)
		}
	}
	return w, nil
}

// Start polls the files until ctx ends. It satisfies controller-runtime's
// manager.Runnable, and always returns nil: unreadable or invalid files are
// reported through the hooks and the log, and retried.
func (w *Watcher) Start(ctx context.Context) error {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			w.Reload()
		}
	}
}

// Reload reads the files once and applies what changed. It is safe to call
// while Start runs.
func (w *Watcher) Reload() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.KeyPair != nil {
		cert, key, err := readPair(w.files)
		changed := false
		if err == nil {
			changed, err = w.KeyPair.Set(cert, key)
		}
		w.report("keypair", changed, err)
	}
	if w.Bundle != nil {
		ca, err := os.ReadFile(w.files.CAFile)
		changed := false
		if err == nil {
			changed, err = w.Bundle.Set(ca)
		}
		w.report("ca", changed, err)
	}
}

func (w *Watcher) report(what string, changed bool, err error) {
	if err == nil {
		delete(w.lastErr, what)
		if changed {
			w.log.Info("reloaded TLS material", "what", what)
			if w.hooks.Reloaded != nil {
				w.hooks.Reloaded(what)
			}
		}
		return
	}
	if w.lastErr[what] == err.Error() {
		return
	}
	w.lastErr[what] = err.Error()
	// A pair is briefly inconsistent while a writer replaces the files one by
	// one; the next poll sees the finished state.
	w.log.Error(err, "keeping the current TLS material", "what", what)
	if w.hooks.Failed != nil {
		w.hooks.Failed(what, err)
	}
}

func readPair(files Files) (cert, key []byte, err error) {
	if cert, err = os.ReadFile(files.CertFile); err != nil {
		return nil, nil, fmt.Errorf("reading certificate: %w", err)
	}
	if key, err = os.ReadFile(files.KeyFile); err != nil {
		return nil, nil, fmt.Errorf("reading key: %w", err)
	}
	return cert, key, nil
}
