package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/go-logr/logr"
)

// Server is an http.Server bound to its listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
}

// Timeouts bound each phase of a connection, so that a client that is slow
// or sends nothing cannot hold a connection, its goroutines and buffers
// for long. Over HTTP/2, Read and Write apply to each stream.
type Timeouts struct {
	// ReadHeader bounds the TLS handshake and the request headers.
	ReadHeader time.Duration
	// Read bounds a whole request, body included.
	Read time.Duration
	// Write bounds the answer, from the end of the request headers.
	Write time.Duration
	// Idle bounds the wait for the next request on a kept-alive connection.
	Idle time.Duration
}

// WebhookTimeouts suit the API server, which waits at most 30 s for a
// webhook (timeoutSeconds, 10 s by default, 3 s in the chart): a request
// whose body is still arriving after that is not one it waits for. Write
// leaves room to answer a body that arrived at the last moment. Idle keeps
// the API server's connection between writes without holding idle ones long.
var WebhookTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Write: 35 * time.Second, Idle: 90 * time.Second}

// OpsTimeouts suit scrapes and probes, which come every few seconds.
var OpsTimeouts = Timeouts{ReadHeader: 5 * time.Second, Read: 30 * time.Second, Write: 30 * time.Second, Idle: 2 * time.Minute}

// Listen binds addr and returns a server for handler; with tlsCfg it
// serves HTTPS only.
func Listen(ctx context.Context, addr string, handler http.Handler, tlsCfg *tls.Config, to Timeouts, log logr.Logger) (*Server, error) {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	return &Server{ln: ln, srv: &http.Server{
		Handler:           handler,
		TLSConfig:         tlsCfg,
		ReadHeaderTimeout: to.ReadHeader,
		ReadTimeout:       to.Read,
		WriteTimeout:      to.Write,
		IdleTimeout:       to.Idle,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          errorLog(log),
	}}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until Shutdown or Close; it returns nil then.
func (s *Server) Serve() error {
	var err error
	if s.srv.TLSConfig != nil {
		err = s.srv.ServeTLS(s.ln, "", "") // the certificate comes from TLSConfig.GetCertificate
	} else {
		err = s.srv.Serve(s.ln)
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving on %s: %w", s.ln.Addr(), err)
	}
	return nil
}

// Shutdown stops accepting and waits for requests in progress until ctx ends.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
		return fmt.Errorf("shutting down %s: %w", s.ln.Addr(), err)
	}
	return nil
}

// Close stops at once; for a server that never served.
func (s *Server) Close() error { return s.ln.Close() }

// errorLog sends http.Server's own messages, mostly refused TLS
// handshakes, to the debug log: they are the caller's problem.
func errorLog(l logr.Logger) *log.Logger {
	return log.New(logWriter{l.V(1)}, "", 0)
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}
