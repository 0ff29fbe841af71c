package oci

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
)

// objectKind separates blobs from manifests in the cache: the same digest
// asked for as a blob must not be answered with a manifest.
type objectKind string

const (
	kindBlob     objectKind = "blobs"
	kindManifest objectKind = "manifests"
)

// touchInterval limits how often a hit rewrites a file's mtime, which is
// how recency survives a restart.
const touchInterval = time.Minute

var hexDigest = regexp.MustCompile(`^[a-f0-9]{64}$`)

type cacheKey struct {
	kind objectKind
	hex  string // sha256 of the content
}

type cacheEntry struct {
	key      cacheKey
	size     int64
	verified bool // hashed since this process started
	touched  time.Time
}

// diskCache keeps verified content by digest under dir:
// dir/<blobs|manifests>/sha256/<hex>, written through dir/tmp and renamed
// into place, so a file under its digest name is always complete. Entries
// found at start are trusted only after their first read re-hashed them.
// The total size is bounded; the least recently used entries go first.
// A nil *diskCache caches nothing.
type diskCache struct {
	dir      string
	maxBytes int64
	log      logr.Logger
	metrics  *Metrics

	mu      sync.Mutex
	lru     *list.List // of *cacheEntry, most recently used in front
	entries map[cacheKey]*list.Element
	bytes   int64
}

func openCache(dir string, maxBytes int64, log logr.Logger, m *Metrics) (*diskCache, error) {
	c := &diskCache{dir: dir, maxBytes: maxBytes, log: log, metrics: m, lru: list.New(), entries: map[cacheKey]*list.Element{}}
	// Files in tmp are writes a crash interrupted.
	if err := os.RemoveAll(filepath.Join(dir, "tmp")); err != nil {
		return nil, fmt.Errorf("cleaning the layer cache: %w", err)
	}
	for _, sub := range []string{"tmp", string(kindBlob) + "/sha256", string(kindManifest) + "/sha256"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o750); err != nil {
			return nil, fmt.Errorf("creating the layer cache: %w", err)
		}
	}
	found, err := c.scan()
	if err != nil {
		return nil, err
	}
	// Oldest first, so that the most recently used ends up in front.
	sort.Slice(found, func(i, j int) bool { return found[i].touched.Before(found[j].touched) })
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range found {
		c.entries[e.key] = c.lru.PushFront(e)
		c.bytes += e.size
	}
	c.evictLocked()
	return c, nil
}

func (c *diskCache) scan() ([]*cacheEntry, error) {
	var found []*cacheEntry
	for _, kind := range []objectKind{kindBlob, kindManifest} {
		dir := filepath.Join(c.dir, string(kind), "sha256")
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the layer cache: %w", err)
		}
		for _, f := range files {
			info, err := f.Info()
			if err != nil || !info.Mode().IsRegular() || !hexDigest.MatchString(f.Name()) {
				c.log.Info("removing a foreign file from the layer cache", "file", filepath.Join(dir, f.Name()))
				_ = os.RemoveAll(filepath.Join(dir, f.Name()))
				continue
			}
			found = append(found, &cacheEntry{key: cacheKey{kind, f.Name()}, size: info.Size(), touched: info.ModTime()})
		}
	}
	return found, nil
}

func (c *diskCache) path(k cacheKey) string {
	return filepath.Join(c.dir, string(k.kind), "sha256", k.hex)
}

// get returns the content of k, or false. Content that fails its first
// verification after a restart is removed and reported as a miss.
func (c *diskCache) get(k cacheKey) ([]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	el, ok := c.entries[k]
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*cacheEntry)
	verified, touch := e.verified, time.Since(e.touched) > touchInterval
	if touch {
		e.touched = time.Now()
	}
	c.mu.Unlock()

	data, err := os.ReadFile(c.path(k))
	if err != nil {
		// Evicted between the lookup and the read, or removed from outside.
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Error(err, "reading the layer cache", "digest", k.hex)
		}
		c.drop(k, false)
		return nil, false
	}
	if !verified {
		sum := sha256.Sum256(data)
		if hex.EncodeToString(sum[:]) != k.hex {
			c.log.Info("dropping a corrupt entry of the layer cache", "kind", k.kind, "digest", "sha256:"+k.hex)
			c.drop(k, true)
			return nil, false
		}
		c.markVerified(k)
	}
	if touch {
		now := time.Now()
		_ = os.Chtimes(c.path(k), now, now) // recency for the next start; best effort
	}
	return data, true
}

// put stores verified content. Failing to cache is logged, not returned:
// the caller already has the content.
func (c *diskCache) put(k cacheKey, data []byte) {
	if c == nil || int64(len(data)) > c.maxBytes {
		return
	}
	if err := c.write(k, data); err != nil {
		c.log.Error(err, "writing the layer cache", "digest", "sha256:"+k.hex)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		c.lru.MoveToFront(el)
		e := el.Value.(*cacheEntry)
		e.verified, e.touched = true, time.Now()
		return
	}
	c.entries[k] = c.lru.PushFront(&cacheEntry{key: k, size: int64(len(data)), verified: true, touched: time.Now()})
	c.bytes += int64(len(data))
	c.evictLocked()
}

func (c *diskCache) write(k cacheKey, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), k.hex+"-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	// rename is atomic: readers see the old file, no file, or all of it.
	if err := os.Rename(tmp.Name(), c.path(k)); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}

func (c *diskCache) markVerified(k cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		el.Value.(*cacheEntry).verified = true
	}
}

func (c *diskCache) drop(k cacheKey, removeFile bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		c.removeLocked(el, removeFile)
	}
}

// evictLocked removes least recently used entries until the total fits,
// never the entry in front (the one just added or used).
func (c *diskCache) evictLocked() {
	for c.bytes > c.maxBytes && c.lru.Len() > 1 {
		c.removeLocked(c.lru.Back(), true)
		c.metrics.evicted()
	}
	c.metrics.cacheSize(c.bytes)
}

func (c *diskCache) removeLocked(el *list.Element, removeFile bool) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size
	if removeFile {
		if err := os.Remove(c.path(e.key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			c.log.Error(err, "removing from the layer cache", "digest", "sha256:"+e.key.hex)
		}
	}
}

// size returns the bytes and entries the cache holds.
func (c *diskCache) size() (int64, int) {
	if c == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes, c.lru.Len()
}
