package kcp

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lifecycle-manager/skr-agent/internal/event"
)

// Options configure a Client.
type Options struct {
	// BaseURL is https://host[:port] of the KCP gateway.
	BaseURL string
	// Contract is the first path segment of event URLs, e.g. v2.
	Contract string
	// TLS is the client's TLS config, with its certificate and roots.
	TLS *tls.Config
	// Timeout bounds one delivery.
	Timeout time.Duration
	// Conns is how many connections to keep open for reuse (HTTP/1.1).
	Conns int
}

// Client posts events to the KCP listener.
type Client struct {
	base     string
	contract string
	opts     Options
	// cur is swapped by Reconnect; requests in flight finish on the old one.
	cur atomic.Pointer[http.Client]
}

// NewClient returns a client; it connects at the first event.
func NewClient(o Options) *Client {
	c := &Client{base: strings.TrimSuffix(o.BaseURL, "/"), contract: o.Contract, opts: o}
	c.cur.Store(c.newHTTPClient())
	return c
}

func (c *Client) newHTTPClient() *http.Client {
	t := &http.Transport{
		TLSClientConfig:       c.opts.TLS,
		ForceAttemptHTTP2:     true, // a custom TLS config disables HTTP/2 unless asked for
		DialContext:           (&net.Dialer{Timeout: c.opts.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   c.opts.Timeout,
		ResponseHeaderTimeout: c.opts.Timeout,
		MaxIdleConns:          c.opts.Conns,
		MaxIdleConnsPerHost:   c.opts.Conns,
		IdleConnTimeout:       90 * time.Second,
		// No proxy: the agent talks to the KCP gateway directly, as the public agent does.
	}
	return &http.Client{
		Transport: t, Timeout: c.opts.Timeout,
		// A redirect of an event is a misconfiguration, not something to follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// StatusError is a non-2xx answer of the KCP.
type StatusError struct {
	Code int
	// RetryAfter is the wait the KCP asked for, if any.
	RetryAfter time.Duration
	// Body is the start of the answer, for the log.
	Body string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("KCP answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Body)
}

// Retryable says whether sending again may succeed: 5xx, 429 and 401, not
// other 4xx. A 401 is the listener refusing the agent's certificate —
// denied after a leak, or expired — and the operator is replacing it: the
// event waits for the new one instead of being lost.
func (e *StatusError) Retryable() bool {
	return e.Code >= 500 || e.Code == http.StatusTooManyRequests || e.Code == http.StatusUnauthorized
}

const (
	// errorBodyLimit bounds what is kept of an error answer for the log.
	errorBodyLimit = 512
	// drainLimit bounds what is read of an answer so that its connection can be reused.
	drainLimit = 64 << 10
)

// Send posts an event. It returns nil when the KCP accepted it (any 2xx:
// our listener answers 200, as the public one does; older ones of ours
// answered 202), a *StatusError for other answers, and a transport error
// otherwise.
func (c *Client) Send(ctx context.Context, ev event.Event) error {
	k := ev.Key
	body, err := ev.MarshalBody()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+k.Path(c.contract), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("building request for %s: %w", k, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "skr-agent")
	resp, err := c.cur.Load().Do(req)
	if err != nil {
		return fmt.Errorf("posting event %s: %w", k, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
		return nil
	}
	start, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	return &StatusError{
		Code: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Body: strings.TrimSpace(string(start)),
	}
}

// Reconnect makes the next events use new connections, with the TLS
// material current then: after a certificate or CA reload, a busy HTTP/2
// connection would otherwise go on with the old certificate indefinitely.
// Requests in flight finish on their connection, which is closed once idle.
func (c *Client) Reconnect() {
	old := c.cur.Swap(c.newHTTPClient())
	old.CloseIdleConnections()
	time.AfterFunc(c.opts.Timeout, old.CloseIdleConnections)
}

// maxRetryAfterSeconds keeps an absurd Retry-After from overflowing a Duration.
const maxRetryAfterSeconds = 24 * 60 * 60

// parseRetryAfter reads Retry-After as seconds or as an HTTP date; zero when
// absent, invalid or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, maxRetryAfterSeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// AsStatusError returns the KCP's answer inside err, if any.
func AsStatusError(err error) (*StatusError, bool) {
	var se *StatusError
	ok := errors.As(err, &se)
	return se, ok
}
