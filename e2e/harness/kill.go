package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Kill ends the process with SIGKILL, as the kernel's OOM killer or a node
// failure does: it gets no chance to finish anything.
func (p *Process) Kill() error {
	return p.signal(syscall.SIGKILL)
}

// KillOperator SIGKILLs the operator process (local mode only).
func (h *Harness) KillOperator() error {
	if !h.Local || h.Operator == nil {
		return errors.New("killing the operator needs the local harness")
	}
	return h.Operator.Kill()
}

// KillAgent SIGKILLs the runtime's agent process (local mode only). The
// harness's kubelet starts it again within moments, as a kubelet restarts
// a Pod's container, with an empty queue.
func (h *Harness) KillAgent(rt *Runtime) error {
	if !h.Local {
		return errors.New("killing the agent needs the local harness")
	}
	p := rt.agentProcess()
	if p == nil {
		return fmt.Errorf("%s runs no agent", rt.Name)
	}
	return p.Kill()
}

// AgentPid is the pid of the runtime's agent process, 0 while none runs.
func (rt *Runtime) AgentPid() int {
	if p := rt.agentProcess(); p != nil {
		return p.Pid()
	}
	return 0
}

func (rt *Runtime) agentProcess() *Process {
	rt.agentMu.Lock()
	defer rt.agentMu.Unlock()
	return rt.agent
}

func (rt *Runtime) setAgentProcess(p *Process) {
	rt.agentMu.Lock()
	defer rt.agentMu.Unlock()
	rt.agent = p
}

// RouteAgentThroughProxy puts a Proxy between the runtime's agent and the
// listener, so that a scenario can take the KCP off the agent's network
// while the operator keeps running; the agent is restarted to use it (its
// KCP address is fixed at start). The returned function ends the detour:
// it restarts the agent on the direct address and closes the proxy.
func (h *Harness) RouteAgentThroughProxy(ctx context.Context, rt *Runtime) (*Proxy, func() error, error) {
	if !h.Local {
		return nil, nil, errors.New("a proxy before the listener needs the local harness")
	}
	p, err := NewProxy(context.WithoutCancel(ctx), h.listenerDialAddr())
	if err != nil {
		return nil, nil, err
	}
	_, port, err := splitPort(p.Addr)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	// The agent verifies the listener's certificate against the host of
	// its KCP address: keep the listener's host, change the port.
	host, _, err := splitPort(h.ListenerAddr)
	if err != nil {
		p.Close()
		return nil, nil, err
	}
	rt.agentKCPAddr.Store(ptrTo(host + ":" + strconv.Itoa(port)))
	if err := h.KillAgent(rt); err != nil {
		p.Close()
		return nil, nil, err
	}
	undo := func() error {
		rt.agentKCPAddr.Store(nil)
		err := h.KillAgent(rt)
		p.Close()
		return err
	}
	return p, undo, nil
}

// listenerDialAddr is the listener's loopback address.
func (h *Harness) listenerDialAddr() string {
	_, port, err := splitPort(h.ListenerAddr)
	if err != nil {
		return h.ListenerAddr
	}
	return portAddr(port)
}

func ptrTo[T any](v T) *T { return &v }

func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("address %q: %w", addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		return "", 0, fmt.Errorf("port of %q: %w", addr, err)
	}
	return host, port, nil
}

// Kill is one SIGKILL of the operator by a Killer.
type Kill struct {
	// Phase is what the scenario was doing (Killer.SetPhase).
	Phase string
	// Up is how long the killed process had been healthy.
	Up time.Duration
}

// Killer SIGKILLs the operator at random moments and starts it again each
// time, until Stop.
type Killer struct {
	h        *Harness
	rng      *rand.Rand
	min, max time.Duration
	log      func(format string, args ...any)

	phase atomic.Pointer[string]
	mu    sync.Mutex
	kills []Kill
	err   error
	once  sync.Once
	soon  chan time.Duration
	stop  chan struct{}
	done  chan struct{}
}

// StartKiller starts killing the operator: each time it has been healthy
// for a random span within [minUp, maxUp) drawn from seed, it is killed
// and started again. log receives one line per kill.
func (h *Harness) StartKiller(ctx context.Context, seed uint64, minUp, maxUp time.Duration, log func(string, ...any)) (*Killer, error) {
	if !h.Local {
		return nil, errors.New("killing the operator needs the local harness")
	}
	k := &Killer{
		h: h, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), //nolint:gosec // a reproducible schedule, not a secret
		min: minUp, max: maxUp, log: log, soon: make(chan time.Duration, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	k.SetPhase("start")
	go k.run(context.WithoutCancel(ctx))
	return k, nil
}

// SetPhase names what the scenario does from now on, for the kills' record.
func (k *Killer) SetPhase(name string) { k.phase.Store(&name) }

// Kills returns the kills so far.
func (k *Killer) Kills() []Kill {
	k.mu.Lock()
	defer k.mu.Unlock()
	return append([]Kill(nil), k.kills...)
}

// Count is the number of kills so far.
func (k *Killer) Count() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.kills)
}

// Stop ends the killing and returns once the operator runs and is
// healthy, with the first error the killer met. Calling it again is safe.
func (k *Killer) Stop(ctx context.Context) error {
	k.once.Do(func() { close(k.stop) })
	<-k.done
	k.mu.Lock()
	err := k.err
	k.mu.Unlock()
	return errors.Join(err, k.h.StartOperator(ctx))
}

// KillSoon draws the next kill from [0, within) from now (or from the
// next start, while the operator is starting): to hit a step that the
// scenario has just begun and that may end before the next usual kill.
func (k *Killer) KillSoon(within time.Duration) {
	select {
	case k.soon <- within:
	default: // one is pending already
	}
}

func (k *Killer) draw(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(k.rng.Int64N(int64(max(hi-lo, 1))))
}

func (k *Killer) run(ctx context.Context) {
	defer close(k.done)
	for {
		healthy := time.Now()
		t := time.NewTimer(k.draw(k.min, k.max))
		for waiting := true; waiting; {
			select {
			case <-k.stop:
				t.Stop()
				return
			case within := <-k.soon:
				t.Reset(k.draw(0, within))
			case <-t.C:
				waiting = false
			}
		}
		err := k.h.KillOperator()
		if err == nil {
			kill := Kill{Phase: *k.phase.Load(), Up: time.Since(healthy)}
			k.mu.Lock()
			k.kills = append(k.kills, kill)
			n := len(k.kills)
			k.mu.Unlock()
			k.log("kill %d: SIGKILL of kcp-operator during %q, healthy for %v", n, kill.Phase, kill.Up.Round(time.Millisecond))
			err = k.h.StartOperator(ctx)
		}
		if err != nil {
			k.mu.Lock()
			k.err = err
			k.mu.Unlock()
			return
		}
	}
}
