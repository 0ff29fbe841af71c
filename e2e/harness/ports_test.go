package harness

import (
	"context"
	"net"
	"testing"
)

func TestFreePortsAreDistinctBindableAndOutsideTheEphemeralRange(t *testing.T) {
	ports, err := FreePorts(context.Background(), 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		if p < lowestPort || p >= ephemeralStart() {
			t.Fatalf("port %d outside [%d, %d)", p, lowestPort, ephemeralStart())
		}
		ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", portAddr(p))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = ln.Close()
	}
}
