package options

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lifecycle-manager/certs/config"
)

// GroupAnnotation is the pflag annotation that names a flag's group:
// --help and docs/reference/flags.md list the flags by it.
const GroupAnnotation = "lifecycle-manager.io/flag-group"

// Groups of the flags that other packages define.
const (
	GroupCertificates = "Certificates of the push path (--cert-*, certs/config)"
	GroupLogging      = "Logging (controller-runtime's zap options)"
)

// logLevelFlag is the one of controller-runtime's zap flags the operator keeps.
const logLevelFlag = "zap-log-level"

// FlagSet is the command line of kcp-operator: the operator's flags, the
// push path's PKI flags and controller-runtime's logging flags, bound to
// o, certs and logging with their current values as defaults. Its Usage
// prints them by group, in the order they are defined.
func FlagSet(name string, o *Options, certs *config.Options, logging *zap.Options) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SortFlags = false
	o.Bind(fs)
	bindGroup(fs, GroupCertificates, func(fs *pflag.FlagSet) { fs.AddGoFlagSet(goFlags(name, certs.BindFlags)) })
	bindGroup(fs, GroupLogging, func(fs *pflag.FlagSet) {
		// Of controller-runtime's logging flags, the level: logs are JSON.
		fs.AddGoFlag(goFlags(name, logging.BindFlags).Lookup(logLevelFlag))
	})
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "Usage of %s:\n", name) // nothing to do when stderr is gone
		PrintUsage(fs.Output(), fs)
	}
	return fs
}

func goFlags(name string, bind func(*flag.FlagSet)) *flag.FlagSet {
	gs := flag.NewFlagSet(name, flag.ContinueOnError)
	bind(gs)
	return gs
}

// bindGroup binds the flags of one group and annotates each new flag with
// the group's name.
func bindGroup(fs *pflag.FlagSet, name string, bind func(*pflag.FlagSet)) {
	before := map[string]bool{}
	fs.VisitAll(func(f *pflag.Flag) { before[f.Name] = true })
	bind(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if !before[f.Name] {
			// The flag exists: SetAnnotation cannot fail.
			_ = fs.SetAnnotation(f.Name, GroupAnnotation, []string{name})
		}
	})
}

// Group is one group of flags, in the order they are defined.
type Group struct {
	Name  string
	Flags []*pflag.Flag
}

// Groups returns fs's flags by group, groups and flags in the order they
// were defined; flags without a group come last, under "Other".
func Groups(fs *pflag.FlagSet) []Group {
	var out []Group
	index := map[string]int{}
	sorted := fs.SortFlags
	fs.SortFlags = false
	defer func() { fs.SortFlags = sorted }()
	fs.VisitAll(func(f *pflag.Flag) {
		name := "Other"
		if g := f.Annotations[GroupAnnotation]; len(g) > 0 {
			name = g[0]
		}
		i, ok := index[name]
		if !ok {
			i = len(out)
			index[name] = i
			out = append(out, Group{Name: name})
		}
		out[i].Flags = append(out[i].Flags, f)
	})
	return out
}

// PrintUsage writes fs's flags by group, as pflag prints them.
func PrintUsage(w io.Writer, fs *pflag.FlagSet) {
	var b strings.Builder
	for _, g := range Groups(fs) {
		part := pflag.NewFlagSet(g.Name, pflag.ContinueOnError)
		part.SortFlags = false
		for _, f := range g.Flags {
			part.AddFlag(f)
		}
		b.WriteString("\n" + g.Name + ":\n" + strings.TrimRight(part.FlagUsages(), "\n") + "\n")
	}
	_, _ = io.WriteString(w, b.String()) // nothing to do when stderr is gone
}
