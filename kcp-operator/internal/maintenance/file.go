package maintenance

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// File is a policy file that is read again when it changes: a ConfigMap
// mounted as a volume is replaced in place when the ConfigMap changes.
// It is safe for concurrent use.
type File struct {
	path string

	mu     sync.Mutex
	read   bool
	stamp  stamp
	policy *Policy
	err    error
}

// stamp identifies a version of the file without reading it.
type stamp struct {
	mod  time.Time
	size int64
	// missing is the error of a file that could not be found.
	missing string
}

// NewFile returns the policy file at path; nothing is read yet.
func NewFile(path string) *File { return &File{path: path} }

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Load returns the policy as the file holds it now. It reads and parses the
// file only when its modification time or size changed since the last
// call; otherwise it returns the same *Policy (or error) as before, so
// that callers can tell a change by comparing them.
func (f *File) Load() (*Policy, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var now stamp
	info, err := os.Stat(f.path)
	if err != nil {
		now.missing = err.Error()
	} else {
		now.mod, now.size = info.ModTime(), info.Size()
	}
	if f.read && now == f.stamp {
		return f.policy, f.err
	}
	f.read, f.stamp = true, now
	f.policy, f.err = f.parse(err)
	return f.policy, f.err
}

func (f *File) parse(statErr error) (*Policy, error) {
	if statErr != nil {
		return nil, fmt.Errorf("reading the maintenance policy: %w", statErr)
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("reading the maintenance policy: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("maintenance policy %s: %w", f.path, err)
	}
	return p, nil
}
