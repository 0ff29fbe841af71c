package docgen_test

import (
	"os"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/docgen"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

// TestFlagsPageListsEveryFlagOfTheBinaryUnderItsGroup: the operator's own
// flags, the PKI's and the logging flags, each in its group's table.
func TestFlagsPageListsEveryFlagOfTheBinaryUnderItsGroup(t *testing.T) {
	page := string(docgen.FlagsPage())
	opts, certs, logging := options.Default(), config.Defaults(), zap.Options{}
	fs := options.FlagSet("kcp-operator", &opts, &certs, &logging)
	sections := map[string]string{}
	for _, part := range strings.Split(page, "\n## ")[1:] {
		title, body, _ := strings.Cut(part, "\n")
		sections[title] = body
	}
	for _, want := range []string{"kyma-concurrency", "cert-issuer", "zap-log-level", "webhook-service", "leader-election-lease-duration"} {
		assert.NotNil(t, fs.Lookup(want), "--%s is a flag of the binary", want)
	}
	fs.VisitAll(func(f *pflag.Flag) {
		group := f.Annotations[options.GroupAnnotation]
		if assert.Len(t, group, 1, "--%s has a group", f.Name) {
			assert.Contains(t, sections[group[0]], "| `--"+f.Name+"` |", "--%s is listed under %q", f.Name, group[0])
		}
	})
}

// TestReadmeNamesEveryFlagGroup keeps the README's table of flag groups
// whole; the flags themselves are in the generated page.
func TestReadmeNamesEveryFlagGroup(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if !assert.NoError(t, err) {
		return
	}
	opts, certs, logging := options.Default(), config.Defaults(), zap.Options{}
	for _, g := range options.Groups(options.FlagSet("kcp-operator", &opts, &certs, &logging)) {
		assert.Contains(t, string(readme), "| "+g.Name+" |", "kcp-operator/README.md's flag groups miss %q", g.Name)
	}
}
