// Command probe is the test workload of hack/realnode: it prints the files it
// is given (a mounted Secret, the service account token's namespace), calls
// the API server with the pod's service account token (through the
// "kubernetes" Service and directly), prints what happened, and then serves
// /healthz for the kubelet's probes until it is stopped.
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", ":8080", "address of /healthz")
	files := flag.String("print", "", "comma-separated files to print")
	direct := flag.String("direct", "", "API server host:port to call besides the kubernetes Service")
	flag.Parse()

	fmt.Printf("probe: uid=%d gid=%d\n", os.Getuid(), os.Getgid())
	for _, f := range strings.Split(*files, ",") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			fmt.Printf("probe: file %s: error %v\n", f, err)
			continue
		}
		fmt.Printf("probe: file %s: %q\n", f, string(b))
	}
	if err := os.WriteFile("/probe-rootfs-write", []byte("x"), 0o600); err != nil {
		fmt.Printf("probe: root filesystem write: %v\n", err)
	} else {
		fmt.Println("probe: root filesystem write: allowed")
	}
	token, _ := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/token")
	targets := []string{}
	if h, p := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"); h != "" {
		targets = append(targets, net.JoinHostPort(h, p))
	}
	if *direct != "" {
		targets = append(targets, *direct)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // test only: the CA is not checked
	}}
	for _, t := range targets {
		req, _ := http.NewRequest(http.MethodGet, "https://"+t+"/api/v1/namespaces/default/pods", nil)
		if len(token) > 0 {
			req.Header.Set("Authorization", "Bearer "+string(token))
		}
		resp, err := client.Do(req)
		if err != nil {
			fmt.Printf("probe: GET https://%s: error %v\n", t, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		resp.Body.Close()
		fmt.Printf("probe: GET https://%s: %s %q\n", t, resp.Status, string(body))
	}
	http.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	fmt.Println("probe: serving", *listen)
	if err := http.ListenAndServe(*listen, nil); err != nil {
		fmt.Println("probe:", err)
		os.Exit(1)
	}
}
