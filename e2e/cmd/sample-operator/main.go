// Command sample-operator is the operator of the e2e sample module, as
// small as an operator can be: it sets status.state of every Sample in a
// cluster to Ready (Warning while spec.fail is true), and status.health to
// green (red), a field of its own for a template's customStateCheck. The
// e2e harness runs it while the module's Deployment exists, in place of its
// Pod.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	interval := flag.Duration("interval", 300*time.Millisecond, "how often Samples are checked")
	flag.Parse()
	if err := run(*kubeconfig, *interval); err != nil {
		fmt.Fprintln(os.Stderr, "sample-operator:", err)
		os.Exit(1)
	}
}

func run(kubeconfig string, interval time.Duration) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	for {
		if err := reconcileAll(ctx, c); err != nil {
			fmt.Fprintln(os.Stderr, "sample-operator:", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func reconcileAll(ctx context.Context, c client.Client) error {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("sample.kyma-project.io/v1alpha1")
	list.SetKind("SampleList")
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("listing Samples: %w", err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		want, health := "Ready", "green"
		if fail, _, _ := unstructured.NestedBool(s.Object, "spec", "fail"); fail {
			want, health = "Warning", "red"
		}
		state, _, _ := unstructured.NestedString(s.Object, "status", "state")
		reported, _, _ := unstructured.NestedString(s.Object, "status", "health")
		if state == want && reported == health {
			continue
		}
		if err := unstructured.SetNestedField(s.Object, want, "status", "state"); err != nil {
			return err
		}
		if err := unstructured.SetNestedField(s.Object, health, "status", "health"); err != nil {
			return err
		}
		if err := c.Status().Update(ctx, s); err != nil {
			return fmt.Errorf("updating %s/%s: %w", s.GetNamespace(), s.GetName(), err)
		}
	}
	return nil
}
