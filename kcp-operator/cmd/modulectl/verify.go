package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

const verifyHelp = `Check a published module the way the operator will install it.

verify reads the ModuleTemplate in --template (a file publish wrote; other
documents in it are ignored) and its component descriptor: from --registry
when the template has none (descriptor: {}, what publish writes unless
--embed-descriptor), else the embedded one, which the registry must hold
for the version too; fetches every layer of the module
and checks it against its digest, renders the module as the operator does
(for --runtime-namespace), and checks the default CR against the module's
CRDs. It prints the resources the operator would apply, in apply order,
then the default CR.

With --trust (PEM files of trusted public keys or CA certificates), the
template must be signed (label operator.kyma-project.io/signature) and its
signature must verify: by a trusted key, or by a certificate that chains to
a trusted CA and has not expired. The signature covers the descriptor with
the digest of every layer (each layer is then checked against its digest)
and the digest of the default CR.`

const verifyExamples = `  modulectl verify --template sample.yaml --registry registry.example.com/modules

  # The signature too, against the team's public key or the company CA
  modulectl verify --template sample.yaml --trust release.pub --trust company-ca.crt

  # Only the exit code and the resource count
  modulectl verify --template catalog/keda-2.17.1.yaml --output-format json --quiet | jq '.objects | length'`

type verifyFlags struct {
	template         string
	registry         string
	component        string
	runtimeNamespace string
	trust            []string
	login            login
}

func newVerifyCommand(s streams, g *globals) *cobra.Command {
	f := &verifyFlags{}
	cmd := &cobra.Command{
		Use:     "verify --template FILE [flags]",
		Short:   "Fetch a published module, check its digests and print what the operator would install",
		Long:    verifyHelp,
		Example: verifyExamples,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runVerify(cmd, s, g, f)
		},
	}
	flags := cmd.Flags()
	flags.StringVar(&f.template, "template", "", "file with the ModuleTemplate to verify (required)")
	flags.StringVar(&f.runtimeNamespace, "runtime-namespace", shared.DefaultRuntimeNamespace, "namespace the module is rendered for")
	flags.StringVar(&f.registry, "registry", "", "registry and path the module was published to, host[:port][/path]: where a template without a descriptor (descriptor: {}) has it")
	flags.StringVar(&f.component, "component-name", "", "OCM component name of such a template (default kyma-project.io/module/<module name>)")
	flags.StringSliceVar(&f.trust, "trust", nil, "PEM file of trusted public keys (ECDSA, Ed25519) or CA certificates; the template's signature must verify against them (repeatable)")
	f.login.register(flags)
	return cmd
}

func runVerify(cmd *cobra.Command, s streams, g *globals, f *verifyFlags) error {
	if f.template == "" {
		return usagef("the template is missing (--template FILE)")
	}
	progress := g.progress(s)
	access, err := f.login.access(s, progress)
	if err != nil {
		return err
	}
	tmpl, err := publish.ReadTemplate(f.template)
	if err != nil {
		return err
	}
	trust, err := readTrust(f.trust)
	if err != nil {
		return err
	}
	v, err := publish.Verify(cmd.Context(), publish.VerifyRequest{Template: tmpl, RuntimeNamespace: f.runtimeNamespace, Trust: trust, Registry: f.registry, Component: f.component}, access)
	if err != nil {
		return err
	}
	if g.format == formatJSON {
		return writeJSON(s.out, verifyJSON(v))
	}
	if progress == nil && !g.quiet {
		printWarnings(s, v.Warnings)
	}
	objs := make([]any, 0, len(v.Objects)+1)
	for _, o := range v.Objects {
		objs = append(objs, o)
	}
	data, err := publish.EncodeYAML(objs...)
	if err != nil {
		return &publish.Error{Kind: publish.ErrOutput, Err: err}
	}
	if v.DefaultCR != nil {
		cr, err := publish.EncodeYAML(v.DefaultCR)
		if err != nil {
			return &publish.Error{Kind: publish.ErrOutput, Err: err}
		}
		data = append(data, "---\n# The default CR, created after the resources above.\n"...)
		data = append(data, cr...)
	}
	return writeOut(s.out, data)
}

func verifyJSON(v *publish.Verified) map[string]any {
	objs := make([]map[string]any, len(v.Objects))
	for i, o := range v.Objects {
		objs[i] = o.Object
	}
	out := map[string]any{"result": v, "objects": objs}
	if v.DefaultCR != nil {
		out["defaultCR"] = v.DefaultCR.Object
	}
	return out
}

// readTrust reads the --trust files; nil without any.
func readTrust(files []string) (*signature.Trust, error) {
	if len(files) == 0 {
		return nil, nil
	}
	entries := make(map[string][]byte, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, &publish.Error{Kind: publish.ErrInvalidInput, Err: fmt.Errorf("--trust %s: %w", f, err)}
		}
		entries[f] = data
	}
	trust, err := signature.ParseTrust("--trust", entries)
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrInvalidInput, Err: err}
	}
	return trust, nil
}
