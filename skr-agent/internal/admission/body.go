package admission

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// errOverloaded marks a review that found no slot or body budget in time.
var errOverloaded = errors.New("the agent is busy with other admission reviews")

// initialBufferSize is the first buffer of a body of unknown length once a
// byte of it has arrived: a typical review fits, and a connection that
// trickles a byte now and then holds no more.
const initialBufferSize = 4 << 10

// body is a review's body, read as it arrives. It holds a slot from its
// first byte on, and budget for the capacity of its buffer; release gives
// both back.
type body struct {
	h    *Handler
	data []byte
	// announced is the Content-Length, -1 when unknown. It only ever makes
	// a buffer smaller: growth follows the bytes that arrived.
	announced int64
	// pooled is the pool's holder of data, reused when data goes back.
	pooled *[]byte
	held   int64
	slot   bool
	// waited is the time spent waiting for the slot and budget so far: a
	// review waits at most h.wait in all, not per step of its buffer.
	waited time.Duration
	// next takes the byte that tells whether a full buffer must grow; a
	// field, so that reading into it allocates nothing.
	next [1]byte
}

// readBody reads r into a buffer that grows only when bytes arrive that do
// not fit, never by what the client announces: a connection that has sent
// its headers but no body holds no slot, no budget and no buffer. It
// returns an error wrapping errOverloaded when a slot or budget was not
// free within the wait, and the reader's errors otherwise
// (*http.MaxBytesError above the limit). Call release on the result in
// any case.
func (h *Handler) readBody(ctx context.Context, r io.Reader, announced int64) (*body, error) {
	b := &body{h: h, announced: announced}
	for {
		if len(b.data) == cap(b.data) {
			done, err := b.more(ctx, r)
			if done || err != nil {
				return b, err
			}
			continue
		}
		n, err := r.Read(b.data[len(b.data):cap(b.data)])
		b.data = b.data[:len(b.data)+n]
		switch {
		case errors.Is(err, io.EOF):
			return b, nil
		case err != nil:
			return b, err
		}
	}
}

// more waits for a byte when the buffer is full, then makes room for it:
// the body may well end here, at the announced length.
func (b *body) more(ctx context.Context, r io.Reader) (bool, error) {
	n, readErr := readSome(r, b.next[:])
	if n == 0 {
		return true, ignoreEOF(readErr)
	}
	h := b.h
	if int64(len(b.data)) >= h.maxBytes {
		return true, &http.MaxBytesError{Limit: h.maxBytes}
	}
	if !b.slot {
		if err := b.acquire(ctx, h.slots, 1); err != nil {
			return true, fmt.Errorf("%w: no review slot free within %s (--max-concurrent-reviews=%d): %w", errOverloaded, h.wait, h.slots.size, err)
		}
		b.slot = true
	}
	if err := b.grow(ctx); err != nil {
		return true, err
	}
	b.data = append(b.data, b.next[0])
	return readErr != nil, ignoreEOF(readErr)
}

// grow takes budget for a larger buffer, then makes it: the first one from
// the pool if it has one that fits, later ones twice as large, never
// beyond the limit nor, while the body is within it, the announced length.
// What is allocated is thus at most twice what arrived.
func (b *body) grow(ctx context.Context) error {
	h := b.h
	newCap := min(max(2*int64(cap(b.data)), initialBufferSize), h.maxBytes)
	if b.announced > int64(len(b.data)) {
		newCap = min(newCap, b.announced)
	}
	var pooled *[]byte
	if b.data == nil {
		pooled = h.buffers.Get().(*[]byte) //nolint:forcetypeassert // the pool only holds *[]byte
		// A pooled buffer much larger than needed would hold budget for nothing.
		if c := int64(cap(*pooled)); c >= newCap && c <= 2*max(newCap, initialBufferSize) {
			newCap = c
		}
	}
	extra := newCap - int64(cap(b.data))
	if err := b.acquire(ctx, h.bodyBytes, extra); err != nil {
		if pooled != nil {
			h.buffers.Put(pooled)
		}
		return fmt.Errorf("%w: no budget for %d more bytes of review body within %s (--max-review-bytes-in-flight=%d): %w",
			errOverloaded, extra, h.wait, h.bodyBytes.size, err)
	}
	b.held += extra
	h.metrics.AdmissionBodyBytes.Add(float64(extra))
	if pooled != nil && int64(cap(*pooled)) == newCap {
		b.data, b.pooled = (*pooled)[:0], pooled
		return nil
	}
	if pooled != nil {
		h.buffers.Put(pooled)
	}
	b.data = append(make([]byte, 0, newCap), b.data...)
	return nil
}

// acquire takes n from bg, waiting at most what is left of the review's wait.
func (b *body) acquire(ctx context.Context, bg *budget, n int64) error {
	start := time.Now()
	err := bg.acquire(ctx, n, b.h.wait-b.waited)
	b.waited += time.Since(start)
	return err
}

// release gives back the slot, the budget and a small buffer to the pool.
func (b *body) release() {
	h := b.h
	if b.slot {
		h.slots.release(1)
	}
	if b.held > 0 {
		h.bodyBytes.release(b.held)
		h.metrics.AdmissionBodyBytes.Sub(float64(b.held))
	}
	if b.data != nil && int64(cap(b.data)) <= h.poolLimit {
		p := b.pooled
		if p == nil {
			p = new([]byte)
		}
		*p = b.data[:0]
		h.buffers.Put(p)
	}
}

// readSome reads until at least one byte or an error arrives: a reader may
// return neither.
func readSome(r io.Reader, p []byte) (int, error) {
	for {
		n, err := r.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

func ignoreEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
