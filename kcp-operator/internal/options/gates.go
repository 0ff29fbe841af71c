package options

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Gate names a feature that is experimental (Alpha: off by default) or
// on its way to staying (Beta: on by default).
type Gate string

// The feature gates.
const (
	// SingleCluster treats the KCP itself as every Kyma's runtime (local
	// use): modules are installed with the operator's own credentials.
	SingleCluster Gate = "SingleCluster"
	// ModuleDriftWatch lets the agents report edits and deletions of module
	// resources, so that drift is repaired by push.
	ModuleDriftWatch Gate = "ModuleDriftWatch"
	// Profiling serves /debug/pprof on the metrics endpoint.
	Profiling Gate = "Profiling"
)

type gateSpec struct {
	stage   string
	enabled bool
	about   string
}

var gateSpecs = map[Gate]gateSpec{
	SingleCluster:    {"Alpha", false, "treat the KCP as every Kyma's runtime (local use)"},
	ModuleDriftWatch: {"Beta", true, "agents report edits and deletions of module resources"},
	Profiling:        {"Alpha", false, "serve /debug/pprof on the metrics endpoint"},
}

// Gates are the feature gates in effect.
type Gates map[Gate]bool

func defaultGates() Gates {
	g := Gates{}
	for name, spec := range gateSpecs {
		g[name] = spec.enabled
	}
	return g
}

// Enabled reports whether gate is on.
func (g Gates) Enabled(gate Gate) bool { return g[gate] }

func (g *Gates) bind(fs *pflag.FlagSet) {
	names := slices.Sorted(maps.Keys(gateSpecs))
	about := make([]string, 0, len(names))
	for _, n := range names {
		s := gateSpecs[n]
		about = append(about, fmt.Sprintf("%s (%s, default %t): %s", n, s.stage, s.enabled, s.about))
	}
	fs.Var((*gatesValue)(g), "feature-gates", "Features to turn on or off, as Name=true|false,…: "+strings.Join(about, "; ")+".")
}

type gatesValue Gates

func (v *gatesValue) String() string {
	if *v == nil {
		return ""
	}
	parts := make([]string, 0, len(*v))
	for _, n := range slices.Sorted(maps.Keys(*v)) {
		if (*v)[n] != gateSpecs[n].enabled {
			parts = append(parts, fmt.Sprintf("%s=%t", n, (*v)[n]))
		}
	}
	return strings.Join(parts, ",")
}

func (v *gatesValue) Set(s string) error {
	if *v == nil {
		*v = gatesValue(defaultGates())
	}
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		on, err := strconv.ParseBool(strings.TrimSpace(val))
		if !ok || err != nil {
			return fmt.Errorf("%q: want Name=true or Name=false", part)
		}
		gate := Gate(strings.TrimSpace(name))
		if _, known := gateSpecs[gate]; !known {
			return fmt.Errorf("unknown feature gate %q (known: %v)", gate, slices.Sorted(maps.Keys(gateSpecs)))
		}
		(*v)[gate] = on
	}
	return nil
}

func (v *gatesValue) Type() string { return "mapStringBool" }
