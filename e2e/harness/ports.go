package harness

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// Ports below this one are left to well-known services.
const lowestPort = 10000

// FreePort is a loopback TCP port that is free now and that no outgoing
// connection will take: it lies below the kernel's ephemeral range. A port
// handed out by listening on :0 comes from that range, and with thousands
// of client connections open (a scale run) one of them can take it before
// the server meant for it binds — seen as agents that never started.
func FreePort(ctx context.Context) (int, error) {
	ports, err := FreePorts(ctx, 1)
	if err != nil {
		return 0, err
	}
	return ports[0], nil
}

// FreePorts are n distinct ports as FreePort picks them.
func FreePorts(ctx context.Context, n int) ([]int, error) {
	highest := ephemeralStart() - 1
	if highest <= lowestPort {
		return nil, fmt.Errorf("no ports below the ephemeral range (it starts at %d)", highest+1)
	}
	held := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range held {
			_ = ln.Close()
		}
	}()
	ports := make([]int, 0, n)
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts == 100*n {
			return nil, errors.New("no free loopback port found")
		}
		port := lowestPort + rand.IntN(highest-lowestPort+1) //nolint:gosec // not a secret
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", portAddr(port))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		held = append(held, ln)
		ports = append(ports, port)
	}
	return ports, nil
}

// ephemeralStart is the first port of Linux's ephemeral range, or its
// default where that cannot be read.
func ephemeralStart() int {
	const linuxDefault = 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return linuxDefault
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\t")
	port, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return linuxDefault
	}
	return port
}
