package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// frontPoll is how often the front rereads the EndpointSlice, as kube-proxy
// or a gateway follows endpoint changes (they watch; a few milliseconds
// behind is the same for the scenarios).
const frontPoll = 20 * time.Millisecond

// Front stands in for a Service in local mode: a loopback TCP proxy that
// sends each new connection to the endpoint the Service's EndpointSlice
// names as ready (its address stands for a pod IP; the replica listens on
// loopback at the slice's port) and refuses connections while none is.
// TLS passes through untouched, so the agents' mTLS ends at the listener.
type Front struct {
	ctx     context.Context
	ln      net.Listener
	target  atomic.Pointer[string]
	stop    context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	refused atomic.Int64
}

// StartFront serves addr and follows the EndpointSlice of service.
func StartFront(ctx context.Context, c client.Client, addr string, service client.ObjectKey) (*Front, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the front of %s: %w", service.Name, err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &Front{ctx: ctx, ln: ln, stop: cancel, conns: map[net.Conn]struct{}{}}
	f.wg.Add(2)
	go f.follow(ctx, c, service)
	go f.accept()
	return f, nil
}

// Refused counts the connections the front closed: no ready endpoint, or
// the endpoint refused.
func (f *Front) Refused() int64 { return f.refused.Load() }

func (f *Front) follow(ctx context.Context, c client.Client, service client.ObjectKey) {
	defer f.wg.Done()
	for {
		if _, port, ok := readyEndpoint(ctx, c, service); ok {
			addr := portAddr(int(port))
			f.target.Store(&addr)
		} else if ctx.Err() == nil {
			f.target.Store(nil)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(frontPoll):
		}
	}
}

func (f *Front) accept() {
	defer f.wg.Done()
	for {
		conn, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go f.serve(conn)
	}
}

func (f *Front) serve(in net.Conn) {
	defer f.wg.Done()
	target := f.target.Load()
	if target == nil {
		f.refused.Add(1)
		_ = in.Close()
		return
	}
	out, err := (&net.Dialer{Timeout: time.Second}).DialContext(f.ctx, "tcp", *target)
	if err != nil {
		f.refused.Add(1)
		_ = in.Close()
		return
	}
	if !f.track(in, out) {
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done // either side ended: end both, as a broken backend does
	_ = in.Close()
	_ = out.Close()
	<-done
	f.untrack(in, out)
}

// track registers a connection pair; false when the front is closed.
func (f *Front) track(conns ...net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns == nil {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		f.conns[c] = struct{}{}
	}
	return true
}

func (f *Front) untrack(conns ...net.Conn) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range conns {
		delete(f.conns, c)
	}
}

// Close stops serving and ends every proxied connection.
func (f *Front) Close() error {
	f.stop()
	err := f.ln.Close()
	f.mu.Lock()
	for c := range f.conns {
		_ = c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
	f.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// Port is the front's port.
func (f *Front) Port() int {
	_, p, _ := net.SplitHostPort(f.ln.Addr().String())
	n, _ := strconv.Atoi(p)
	return n
}
