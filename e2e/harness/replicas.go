package harness

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ListenerService is the listener's Service as the chart names it for the
// harness's release: without a selector, its EndpointSlice kept by the
// leader (--listener-service).
const ListenerService = operatorRelease + "-events"

// Replica is one of several operator processes with leader election.
type Replica struct {
	*Process
	// IP stands for the replica's pod IP in the Service's EndpointSlice;
	// the front reaches it on loopback at the slice's port.
	IP          string
	MetricsAddr string
}

// Replicas are operator processes electing a leader, behind a front that
// routes the agents' connections as a Service does: to the endpoint its
// EndpointSlice names as ready.
type Replicas struct {
	h     *Harness
	All   []*Replica
	front *Front
}

// StartReplicas stops the suite's operator and runs n operator processes
// with its flags, leader election on, each with its own ports, and extra
// flags (e.g. lease timings). The agents' address (h.ListenerAddr) is
// served by a Front that follows the listener Service's EndpointSlice.
// Local mode only; Stop brings the single operator back.
func (h *Harness) StartReplicas(ctx context.Context, n int, extra ...string) (*Replicas, error) {
	if !h.Local || h.Operator == nil {
		return nil, errors.New("replicas run in local mode, after StartOperator")
	}
	if err := h.ensureListenerService(ctx); err != nil {
		return nil, err
	}
	if err := h.StopOperator(ctx); err != nil {
		return nil, err
	}
	_, port, _ := strings.Cut(h.ListenerAddr, ":")
	front, err := StartFront(ctx, h.KCP.Client, portAddr(atoi(port)), client.ObjectKey{Namespace: Namespace, Name: ListenerService})
	if err != nil {
		return nil, err
	}
	r := &Replicas{h: h, front: front}
	for i := range n {
		rep, err := h.replica(ctx, i, extra)
		if err == nil {
			err = rep.Start(context.WithoutCancel(ctx))
		}
		if err != nil {
			_ = r.stop()
			return nil, err
		}
		r.All = append(r.All, rep)
	}
	for _, rep := range r.All {
		if !waitFor(ctx, 2*time.Minute, func() bool { return metricsUp(ctx, rep.MetricsAddr) }) {
			_ = r.stop()
			return nil, fmt.Errorf("%s did not become healthy; its log:\n%s", rep.Name, rep.Tail(8000))
		}
	}
	return r, nil
}

// replica is the i-th replica: the suite operator's flags with leader
// election, fresh ports (the first keeps the conversion webhook's, which
// the KCP calls) and its own layer cache.
func (h *Harness) replica(ctx context.Context, i int, extra []string) (*Replica, error) {
	ports, err := FreePorts(ctx, 4)
	if err != nil {
		return nil, err
	}
	name := "kcp-operator-" + string(rune('a'+i))
	rep := &Replica{IP: "10.255.0." + strconv.Itoa(i+1), MetricsAddr: portAddr(ports[0])}
	replace := map[string]string{
		"--metrics-bind-address":      rep.MetricsAddr,
		"--health-probe-bind-address": portAddr(ports[1]),
		"--listener-bind-address":     portAddr(ports[2]),
	}
	if i > 0 {
		replace["--webhook-bind-address"] = portAddr(ports[3])
	}
	// Without the suite operator's zero lease, the default lease elects.
	args := rewriteArgs(h.Operator.Args, replace, leaseFlag)
	args = append(args, "--listener-service="+Namespace+"/"+ListenerService)
	rep.Process = &Process{
		Name: name, Bin: h.Bin.Operator, Log: filepath.Join(h.RunDir, "logs", name+".log"), Args: append(args, extra...),
		Env: []string{"POD_IP=" + rep.IP, "TMPDIR=" + h.tmpDir(name)},
	}
	return rep, nil
}

// ensureListenerService creates the listener Service as the chart does:
// no selector, the port named for direct mode.
func (h *Harness) ensureListenerService(ctx context.Context) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: ListenerService},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{
			Name: "https-events", Port: 8082, TargetPort: intstr.FromString("listener"), Protocol: corev1.ProtocolTCP,
		}}},
	}
	if err := h.KCP.Client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the listener Service: %w", err)
	}
	return nil
}

// Leader is the replica the listener Service routes to, nil when none is
// ready in its EndpointSlice.
func (r *Replicas) Leader(ctx context.Context) *Replica {
	ip, _, ok := readyEndpoint(ctx, r.h.KCP.Client, client.ObjectKey{Namespace: Namespace, Name: ListenerService})
	if !ok {
		return nil
	}
	for _, rep := range r.All {
		if rep.IP == ip {
			return rep
		}
	}
	return nil
}

// Kill ends the replica with SIGKILL, as the kernel's OOM killer or a lost
// node would: no drain, no released Lease.
func (r *Replicas) Kill(rep *Replica) error {
	if pid := rep.Pid(); pid > 0 {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("killing %s: %w", rep.Name, err)
		}
	}
	return rep.Stop() // reaps it
}

// Restart starts a stopped replica again and waits until it serves.
func (r *Replicas) Restart(ctx context.Context, rep *Replica) error {
	if err := rep.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	if !waitFor(ctx, 2*time.Minute, func() bool { return metricsUp(ctx, rep.MetricsAddr) }) {
		return fmt.Errorf("%s did not become healthy; its log:\n%s", rep.Name, rep.Tail(8000))
	}
	return nil
}

// Stop stops every replica and the front, and starts the suite's single
// operator again.
func (r *Replicas) Stop(ctx context.Context) error {
	err := r.stop()
	if derr := r.h.KCP.Client.Delete(ctx, &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{
		Namespace: Namespace, Name: ListenerService + "-leader",
	}}); client.IgnoreNotFound(derr) != nil {
		err = errors.Join(err, derr)
	}
	return errors.Join(err, r.h.StartOperator(ctx))
}

func (r *Replicas) stop() error {
	var errs []error
	for _, rep := range r.All {
		errs = append(errs, rep.Stop())
	}
	errs = append(errs, r.front.Close())
	return errors.Join(errs...)
}

// leaseFlag is the leader election's lease; 0 runs without leader election.
const leaseFlag = "--leader-election-lease-duration"

// rewriteArgs copies flags (--name=value), giving those in replace their
// new value and leaving out those in drop.
func rewriteArgs(flags []string, replace map[string]string, drop ...string) []string {
	out := make([]string, 0, len(flags))
	for _, a := range flags {
		flag, _, _ := strings.Cut(a, "=")
		if slices.Contains(drop, flag) {
			continue
		}
		if v, ok := replace[flag]; ok {
			a = flag + "=" + v
		}
		out = append(out, a)
	}
	return out
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// metricsUp reports whether addr serves /metrics.
func metricsUp(ctx context.Context, addr string) bool {
	h := &Harness{MetricsAddr: addr}
	return h.operatorHealthy(ctx)
}

// readyEndpoint is the address and port of the slice's ready endpoint.
func readyEndpoint(ctx context.Context, c client.Client, service client.ObjectKey) (ip string, port int32, ok bool) {
	s := &discoveryv1.EndpointSlice{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: service.Namespace, Name: service.Name + "-leader"}, s); err != nil {
		return "", 0, false
	}
	if len(s.Ports) == 0 || s.Ports[0].Port == nil {
		return "", 0, false
	}
	for _, e := range s.Endpoints {
		if e.Conditions.Ready != nil && *e.Conditions.Ready && len(e.Addresses) > 0 {
			return e.Addresses[0], *s.Ports[0].Port, true
		}
	}
	return "", 0, false
}
