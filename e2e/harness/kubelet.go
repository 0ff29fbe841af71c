package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
)

// kubelet plays the kubelet in one runtime until ctx ends.
func (h *Harness) kubelet(ctx context.Context, rt *Runtime) {
	dir := filepath.Join(h.RunDir, rt.Name, "agent-tls")
	for {
		if err := h.kubeletPass(ctx, rt, dir); err != nil && ctx.Err() == nil {
			h.progress("kubelet of %s: %v", rt.Name, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (h *Harness) kubeletPass(ctx context.Context, rt *Runtime, dir string) error {
	var deps appsv1.DeploymentList
	if err := rt.Client.List(ctx, &deps, client.MatchingLabels{shared.ManagedByLabel: shared.OperatorName}); err != nil {
		return err
	}
	agentSeen, sampleSeen := false, false
	for i := range deps.Items {
		d := &deps.Items[i]
		if err := MarkAvailable(ctx, rt.Client, d); err != nil {
			return err
		}
		switch d.Name {
		case "skr-agent":
			agentSeen = true
			if err := h.runAgent(ctx, rt, d, dir); err != nil {
				return err
			}
		case SampleDeployment:
			sampleSeen = true
			if err := h.runSample(ctx, rt); err != nil {
				return err
			}
		}
	}
	if p := rt.agentProcess(); !agentSeen && p != nil && p.Running() {
		h.progress("%s: the agent's Deployment is gone, stopping the agent", rt.Name)
		_ = p.Stop()
	}
	if !sampleSeen && rt.sample != nil && rt.sample.Running() {
		_ = rt.sample.Stop()
	}
	return nil
}

// MarkAvailable reports all replicas of a Deployment available.
func MarkAvailable(ctx context.Context, c client.Client, d *appsv1.Deployment) error {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	if s.ObservedGeneration == d.Generation && s.AvailableReplicas == want && s.UpdatedReplicas == want {
		return nil
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: want, UpdatedReplicas: want,
		ReadyReplicas: want, AvailableReplicas: want}
	if err := c.Status().Update(ctx, d); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
		return fmt.Errorf("marking Deployment %s/%s available: %w", d.Namespace, d.Name, err)
	}
	return nil
}

// runAgent mounts the agent's Secret as files and runs the agent with the
// environment of its Deployment, as the kubelet runs the Pod. A changed
// Secret only rewrites the files: the agent reloads them itself.
func (h *Harness) runAgent(ctx context.Context, rt *Runtime, d *appsv1.Deployment, dir string) error {
	secret := &corev1.Secret{}
	err := rt.Client.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: "skr-agent-tls"}, secret)
	if apierrors.IsNotFound(err) {
		return nil // a deleted Secret leaves the mounted files as they were
	}
	if err != nil {
		return err
	}
	if err := MountSecret(dir, secret.Data); err != nil {
		return err
	}
	if p := rt.agentProcess(); p != nil && p.Running() {
		return nil
	}
	agent := AgentProcess(h.Bin.Agent, filepath.Join(h.RunDir, "logs", rt.Name+"-skr-agent.log"), dir, d, rt.AgentPort, rt.AgentMetricsPort)
	agent.Name = "skr-agent (" + rt.Name + ")"
	kcp := agentEnv(d)["KCP_ADDR"]
	if addr := rt.agentKCPAddr.Load(); addr != nil {
		kcp = *addr
		agent.Env = append(agent.Env, "KCP_ADDR="+kcp) // the later value wins
	}
	h.progress("%s: starting skr-agent (webhook on %s, pushing to %s)", rt.Name, portAddr(rt.AgentPort), kcp)
	rt.setAgentProcess(agent)
	return agent.Start(context.WithoutCancel(ctx))
}

// AgentProcess is the agent of Deployment d run as the kubelet would run its
// Pod: the arguments and environment of d, the certificate files that
// MountSecret wrote into tlsDir, the webhook on loopback at webhookPort.
func AgentProcess(bin, logPath, tlsDir string, d *appsv1.Deployment, webhookPort, metricsPort int) *Process {
	env := agentEnv(d)
	return &Process{
		Name: "skr-agent", Bin: bin, Log: logPath,
		Args: append(append([]string{}, d.Spec.Template.Spec.Containers[0].Args...), "--bind-address=127.0.0.1", "--cert-reload-interval=500ms", "--log-level=debug"),
		Env: []string{
			"KCP_ADDR=" + env["KCP_ADDR"], "KCP_CONTRACT=" + env["KCP_CONTRACT"],
			"CA_CERT=" + filepath.Join(tlsDir, "ca.crt"), "TLS_CERT=" + filepath.Join(tlsDir, "tls.crt"), "TLS_KEY=" + filepath.Join(tlsDir, "tls.key"),
			"WEBHOOK_PORT=" + strconv.Itoa(webhookPort), "METRICS_PORT=" + strconv.Itoa(metricsPort),
		},
	}
}

func agentEnv(d *appsv1.Deployment) map[string]string {
	env := map[string]string{}
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e.Value
	}
	return env
}

// MountSecret writes the agent's certificate files from its Secret's data,
// each atomically and only when changed, as a kubelet updates a mounted
// Secret.
func MountSecret(dir string, data map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, key := range []string{"ca.crt", "tls.crt", "tls.key"} {
		path := filepath.Join(dir, key)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data[key]) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data[key], 0o600); err != nil {
			return err
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	return nil
}

// runSample runs the sample module's operator while its Deployment exists.
func (h *Harness) runSample(ctx context.Context, rt *Runtime) error {
	if rt.sample != nil && rt.sample.Running() {
		return nil
	}
	rt.sample = &Process{
		Name: "sample-operator (" + rt.Name + ")", Bin: h.Bin.SampleOperator,
		Log:  filepath.Join(h.RunDir, "logs", rt.Name+"-sample-operator.log"),
		Args: []string{"--kubeconfig=" + rt.Kubeconfig},
	}
	return rt.sample.Start(context.WithoutCancel(ctx))
}
