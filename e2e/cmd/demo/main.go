// Command demo is `make demo`: it starts a KCP and a runtime on this
// machine (real kube-apiservers), the operator and the agent as processes
// with mTLS between them, publishes the sample module with modulectl,
// installs it into the runtime, shows a live edit travel the push path, and
// leaves everything running for kubectl until Ctrl-C.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/api/v1beta2"
	"github.com/lifecycle-manager/e2e/harness"
)

func main() {
	runDir := flag.String("run-dir", filepath.Join(".run", "demo"), "folder for binaries, kubeconfigs and logs (recreated)")
	exitAfter := flag.Bool("exit-after-setup", false, "stop after the walkthrough instead of waiting for Ctrl-C")
	flag.Parse()
	if err := run(*runDir, *exitAfter); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func say(format string, args ...any) {
	fmt.Printf("%s  %s\n", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func run(runDir string, exitAfter bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	abs, err := filepath.Abs(runDir)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(abs); err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	say("Lifecycle Manager demo — everything runs on this machine; files in %s", abs)
	h, err := harness.New(ctx, harness.Options{RunDir: abs, Progress: say})
	if err != nil {
		if h != nil {
			fmt.Println(h.Logs())
		}
		return err
	}
	defer h.Close()
	rt := h.Runtimes[0]
	if err := walkthrough(ctx, h, rt); err != nil {
		fmt.Println(h.Logs())
		return err
	}
	printHelp(h, rt)
	if exitAfter {
		return nil
	}
	say("watching the Kyma; press Ctrl-C to stop everything")
	watch(ctx, h, rt)
	say("stopping")
	return nil
}

func walkthrough(ctx context.Context, h *harness.Harness, rt *harness.Runtime) error {
	if err := h.CreateKyma(ctx, rt, "regular", harness.SampleModule); err != nil {
		return err
	}
	last := ""
	if err := waitKyma(ctx, h, rt, 3*time.Minute, func(k *v1beta2.Kyma) bool {
		now := describe(k)
		if now != last {
			say("Kyma %s: %s", rt.KymaName, now)
			last = now
		}
		return k.Status.State == shared.StateReady && hasTrueCondition(k, v1beta2.ConditionSKRWebhook)
	}); err != nil {
		return err
	}
	say("the sample module runs in %s; its agent pushes changes to the KCP over mTLS", rt.Name)

	say("live edit: a runtime admin switches the runtime's Kyma to channel fast (kubectl edit kyma default -n kyma-system)")
	written, err := editRuntimeKyma(ctx, rt, func(k *v1beta2.Kyma) { k.Spec.Channel = "fast" })
	if err != nil {
		return err
	}
	if err := waitKyma(ctx, h, rt, time.Minute, func(k *v1beta2.Kyma) bool { return k.Spec.Channel == "fast" }); err != nil {
		return err
	}
	say("push: the KCP Kyma had the change %v after the runtime write (the resync is 10h away)", time.Since(written).Round(time.Millisecond))
	// 2.0.0 adds a ConfigMap: once it is in the runtime and the Kyma is
	// Ready again, the upgrade is done.
	return waitKyma(ctx, h, rt, 2*time.Minute, func(k *v1beta2.Kyma) bool {
		cm := &corev1.ConfigMap{}
		installed := rt.Client.Get(ctx, client.ObjectKey{Namespace: "kyma-system", Name: harness.SampleConfigMap}, cm) == nil
		done := installed && k.Status.State == shared.StateReady && len(k.Status.Modules) == 1 && k.Status.Modules[0].Version == "2.0.0"
		if done {
			say("the sample module was upgraded to 2.0.0 in the runtime %v after the write", time.Since(written).Round(time.Millisecond))
		}
		return done
	})
}

func describe(k *v1beta2.Kyma) string {
	s := string(k.Status.State)
	if s == "" {
		s = "(no state yet)"
	}
	for _, m := range k.Status.Modules {
		s += fmt.Sprintf(", module %s %s %s", m.Name, m.Version, m.State)
	}
	if op := k.Status.LastOperation.Operation; op != "" {
		s += " — " + op
	}
	return s
}

func hasTrueCondition(k *v1beta2.Kyma, typ string) bool {
	for _, c := range k.Status.Conditions {
		if c.Type == typ {
			return c.Status == "True"
		}
	}
	return false
}

func waitKyma(ctx context.Context, h *harness.Harness, rt *harness.Runtime, timeout time.Duration, done func(*v1beta2.Kyma) bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		k := &v1beta2.Kyma{}
		if err := h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k); err == nil && done(k) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("the Kyma %s did not get there within %s; the logs are in the run folder", rt.KymaName, timeout)
}

func editRuntimeKyma(ctx context.Context, rt *harness.Runtime, mutate func(*v1beta2.Kyma)) (time.Time, error) {
	for range 50 {
		k := &v1beta2.Kyma{}
		if err := rt.Client.Get(ctx, client.ObjectKey{Namespace: shared.DefaultRuntimeNamespace, Name: shared.DefaultRuntimeKymaName}, k); err != nil {
			return time.Time{}, err
		}
		mutate(k)
		written := time.Now()
		if err := rt.Client.Update(ctx, k); err == nil {
			return written, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Time{}, fmt.Errorf("could not edit the runtime Kyma")
}

func printHelp(h *harness.Harness, rt *harness.Runtime) {
	fmt.Printf(`
Everything is running. Try:

  kubectl --kubeconfig %[1]s get kymas,manifests,moduletemplates -n kcp-system
  kubectl --kubeconfig %[2]s get kyma default -n kyma-system -o yaml
  kubectl --kubeconfig %[2]s get deploy,samples -A
  kubectl --kubeconfig %[2]s delete deployment sample-operator -n kyma-system   # comes back by push

Logs: %[3]s
`, h.KCP.Kubeconfig, rt.Kubeconfig, filepath.Join(h.RunDir, "logs"))
}

// watch prints the Kyma's state whenever it changes, until ctx ends.
func watch(ctx context.Context, h *harness.Harness, rt *harness.Runtime) {
	last := ""
	for ctx.Err() == nil {
		k := &v1beta2.Kyma{}
		if err := h.KCP.Client.Get(ctx, client.ObjectKey{Namespace: harness.Namespace, Name: rt.KymaName}, k); err == nil {
			if now := describe(k); now != last {
				say("Kyma %s: %s", rt.KymaName, now)
				last = now
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}
