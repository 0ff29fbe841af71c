package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// Proxy forwards TCP connections to a target and can cut them: the
// operator reaches runtimes through one, so that the suite can take a
// runtime off the network (connections refused, as when its API server is
// down) without touching the API server itself.
type Proxy struct {
	Addr   string
	target string
	ctx    context.Context

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
}

// NewProxy listens on a loopback port and forwards to target.
func NewProxy(ctx context.Context, target string) (*Proxy, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the proxy to %s: %w", target, err)
	}
	p := &Proxy{Addr: ln.Addr().String(), target: target, ctx: ctx, ln: ln, conns: map[net.Conn]struct{}{}}
	go p.serve(ln)
	return p, nil
}

func (p *Proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		p.mu.Lock()
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		go p.forward(p.ctx, c)
	}
}

func (p *Proxy) forward(ctx context.Context, c net.Conn) {
	defer p.drop(c)
	up, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.target)
	if err != nil {
		return
	}
	defer func() { _ = up.Close() }()
	p.mu.Lock()
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.drop(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
}

func (p *Proxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// Cut stops listening and closes every connection: new connections are
// refused until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// Restore listens on the same address again.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		return nil
	}
	ln, err := (&net.ListenConfig{}).Listen(p.ctx, "tcp", p.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s again: %w", p.Addr, err)
	}
	p.ln = ln
	go p.serve(ln)
	return nil
}

// Close stops the proxy.
func (p *Proxy) Close() {
	p.Cut()
}
