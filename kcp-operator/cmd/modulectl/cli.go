package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
)

// streams are the process's standard streams.
type streams struct {
	in            io.Reader
	out, err      io.Writer
	errIsTerminal bool
}

// Output formats of --output-format.
const (
	formatYAML = "yaml"
	formatJSON = "json"
)

// globals are the flags of every command.
type globals struct {
	quiet, verbose bool
	format         string
}

// progress is where progress lines go: stderr on a terminal or with
// --verbose, nowhere with --quiet.
func (g *globals) progress(s streams) io.Writer {
	if g.quiet || (!s.errIsTerminal && !g.verbose) {
		return nil
	}
	return s.err
}

const rootHelp = `modulectl publishes a module for the lifecycle manager and checks it.

A module is raw Kubernetes manifests or a Helm chart, optionally with Helm
values (config) and a default custom resource. "publish" checks it, pushes
it to an OCI registry as an OCM component version and writes the
ModuleTemplate (and, with --channel, the ModuleReleaseMeta) to apply to the
control plane. "verify" fetches a published module as the operator will and
prints the resources it installs.

Exit codes:
  0  success
  1  usage: unknown, missing or conflicting flags
  2  invalid input: manifests, chart, default CR, config, name, version,
     or a version already published with other content
  3  registry: unreachable, login refused, not found, upload rejected
  4  verification failed: the registry holds other content than the
     template says, a layer does not match its digest, the signature is
     missing or does not verify (--trust), or the module does not render
  5  output could not be written
  130 interrupted`

func newRootCommand(s streams, g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:           "modulectl",
		Short:         "Publish modules for the lifecycle manager and verify them",
		Long:          rootHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if g.format != formatYAML && g.format != formatJSON {
				return usagef("--output-format %q: want %s or %s", g.format, formatYAML, formatJSON)
			}
			if g.quiet && g.verbose {
				return usagef("--quiet and --verbose exclude each other")
			}
			return nil
		},
	}
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef("%w", err) })
	flags := root.PersistentFlags()
	flags.BoolVarP(&g.quiet, "quiet", "q", false, "print no progress and no warnings, only results and errors")
	flags.BoolVarP(&g.verbose, "verbose", "v", false, "print progress also when stderr is not a terminal")
	flags.StringVar(&g.format, "output-format", formatYAML, "result format on stdout: yaml or json (errors too, as {\"error\",\"kind\",\"exitCode\"})")
	root.AddCommand(newPublishCommand(s, g), newVerifyCommand(s, g))
	return root
}

// run executes modulectl with args and returns its exit code.
func run(ctx context.Context, args []string, s streams) int {
	g := &globals{format: formatYAML}
	root := newRootCommand(s, g)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return publish.ExitOK
	}
	code := publish.ExitCode(err)
	if g.format == formatJSON {
		_ = writeJSON(s.out, map[string]any{"error": err.Error(), "kind": publish.KindName(err), "exitCode": code})
	}
	msg := "modulectl: " + err.Error()
	if code == publish.ExitUsage {
		msg += "\nRun 'modulectl " + commandPath(args) + "--help' for usage."
	}
	_, _ = fmt.Fprintln(s.err, msg) // nothing to do when stderr is gone
	return code
}

// commandPath is the subcommand named in args, with a trailing space.
func commandPath(args []string) string {
	for _, a := range args {
		if a == "publish" || a == "verify" {
			return a + " "
		}
	}
	return ""
}

func usagef(format string, args ...any) error {
	return &publish.Error{Kind: publish.ErrUsage, Err: fmt.Errorf(format, args...)}
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q (flags start with --)", cmd.Name(), strings.Join(args, " "))
	}
	return nil
}

// login holds the registry login flags both commands share.
type login struct {
	username      string
	passwordStdin bool
	insecure      bool
	timeout       time.Duration
}

func (l *login) register(flags *pflag.FlagSet) {
	flags.StringVar(&l.username, "username", "", "registry user; the password is read from stdin (--password-stdin). Default: the Docker config file's login")
	flags.BoolVar(&l.passwordStdin, "password-stdin", false, "read the registry password (or token) from stdin")
	flags.BoolVar(&l.insecure, "insecure", false, "reach the registry over plain HTTP (local registries)")
	flags.DurationVar(&l.timeout, "timeout", oci.DefaultTimeout, "bound of each registry call")
}

// access builds the registry access, reading the password from stdin.
func (l *login) access(s streams, progress io.Writer) (publish.Access, error) {
	a := publish.Access{Username: l.username, Insecure: l.insecure, Timeout: l.timeout, Progress: progress}
	switch {
	case l.passwordStdin && l.username == "":
		return a, usagef("--password-stdin needs --username")
	case l.username != "" && !l.passwordStdin:
		return a, usagef("--username needs --password-stdin: passwords are not taken as flags")
	case l.passwordStdin:
		raw, err := io.ReadAll(io.LimitReader(s.in, 64<<10))
		if err != nil {
			return a, usagef("reading the password from stdin: %w", err)
		}
		a.Password = strings.TrimRight(string(raw), "\r\n")
		if a.Password == "" {
			return a, usagef("--password-stdin: stdin is empty")
		}
	}
	return a, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return &publish.Error{Kind: publish.ErrOutput, Err: fmt.Errorf("writing JSON: %w", err)}
	}
	return nil
}

func writeOut(w io.Writer, data []byte) error {
	if _, err := w.Write(data); err != nil {
		return &publish.Error{Kind: publish.ErrOutput, Err: fmt.Errorf("writing to stdout: %w", err)}
	}
	return nil
}
