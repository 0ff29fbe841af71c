package options_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/lifecycle-manager/certs/config"
	"github.com/lifecycle-manager/kcp-operator/internal/options"
)

func commandLine() (*pflag.FlagSet, *options.Options, *config.Options) {
	opts, certs, logging := options.Default(), config.Defaults(), zap.Options{}
	return options.FlagSet("kcp-operator", &opts, &certs, &logging), &opts, &certs
}

// TestEveryFlagHasAGroup: --help and docs/reference/flags.md list flags by
// group; one bound outside a group would land under "Other".
func TestEveryFlagHasAGroup(t *testing.T) {
	fs, _, _ := commandLine()
	var names []string
	for _, g := range options.Groups(fs) {
		names = append(names, g.Name)
		assert.NotEqual(t, "Other", g.Name, "flags without a group: %v", g.Flags)
		assert.NotEmpty(t, g.Flags, g.Name)
	}
	assert.Contains(t, names, options.GroupCertificates)
	assert.Contains(t, names, options.GroupLogging)
}

// TestHelpListsEveryFlagUnderItsGroup is what `kcp-operator --help` prints.
func TestHelpListsEveryFlagUnderItsGroup(t *testing.T) {
	fs, _, _ := commandLine()
	var out bytes.Buffer
	fs.SetOutput(&out)
	require.ErrorIs(t, fs.Parse([]string{"--help"}), pflag.ErrHelp)
	help := out.String()
	fs.VisitAll(func(f *pflag.Flag) {
		group := f.Annotations[options.GroupAnnotation][0]
		start := strings.Index(help, "\n"+group+":\n")
		require.GreaterOrEqual(t, start, 0, "--help has a section %q", group)
		section, _, _ := strings.Cut(help[start+len(group)+3:], "\n\n")
		assert.Contains(t, section, "--"+f.Name+" ", "--%s under %q", f.Name, group)
	})
}

func TestTheCommandLineBindsEveryPart(t *testing.T) {
	fs, opts, certs := commandLine()
	require.NoError(t, fs.Parse([]string{"--kyma-concurrency=3", "--cert-namespace=pki", "--zap-log-level=debug", "--webhook-service=https://h/convert"}))
	assert.Equal(t, 3, opts.KymaConcurrency)
	assert.Equal(t, "pki", certs.Namespace)
	assert.Equal(t, "https://h/convert", opts.Webhook.Service)
}

// TestAtMost45Flags: every flag is a decision a user makes; tuning knobs
// are constants with their reason in docs/design/settings.md.
func TestAtMost45Flags(t *testing.T) {
	fs, _, _ := commandLine()
	n := 0
	fs.VisitAll(func(*pflag.Flag) { n++ })
	assert.LessOrEqual(t, n, 45, "kcp-operator --help lists %d flags", n)
}
