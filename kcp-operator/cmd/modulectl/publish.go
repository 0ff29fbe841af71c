package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/publish"
	"github.com/lifecycle-manager/kcp-operator/internal/signature"
)

const publishHelp = `Check a module, push it to an OCI registry and write its ModuleTemplate.

The module is raw manifests (--manifest: a YAML file, or a folder whose
.yaml, .yml and .json files are packed as a tar) or a Helm chart (--chart:
a chart folder, packed like "helm package", or a .tgz) with optional Helm
values (--config). Before anything is pushed, the module is rendered as the
operator renders it, the default CR (--default-cr) is checked against the
module's CRDs, and names and version are checked against the patterns the
control plane enforces; errors name the file and the object.

The layers and the OCM component descriptor (schema v2) go to
<registry>/component-descriptors/<component>:<version>, the component being
kyma-project.io/module/<name> unless --component-name says otherwise. A
version already published with other content is refused (--overwrite
replaces it); publishing the same module again changes nothing.

The ModuleTemplate <name>-<version> goes to stdout or --output. With
--channel, a ModuleReleaseMeta assigns the version to the channels: merged
into the --release-meta file (created if missing), else written after the
template. Apply both to the control plane to roll the version out.

With --sign-key (an ECDSA or Ed25519 private key, PEM), the component
descriptor is signed: the signature covers the descriptor with every
layer's digest and the digest of the default CR, and the template gets the
label operator.kyma-project.io/signature. --sign-cert adds the key's
certificate chain (PEM, leaf first), for operators that trust a CA rather
than the key. Check a signature with "modulectl verify --trust".

Credentials come from the Docker config file (docker login), or from
--username with the password on stdin (--password-stdin).`

const publishExamples = `  # Raw manifests and a default CR, to a local registry, in the regular channel
  modulectl publish --name sample --version 1.0.0 \
    --manifest ./manifests --default-cr ./default-cr.yaml \
    --registry localhost:5001/modules --insecure --channel regular > sample.yaml

  # A Helm chart with values; keep the channel assignments in a file under git
  echo "$REGISTRY_TOKEN" | modulectl publish --name keda --version 2.17.1 \
    --chart ./charts/keda --config ./values.yaml --default-cr ./keda-cr.yaml \
    --registry europe-docker.pkg.dev/my-project/modules \
    --username oauth2accesstoken --password-stdin \
    --channel fast --channel regular \
    --output catalog/keda-2.17.1.yaml --release-meta catalog/keda.yaml

  # Signed with a key whose certificate a CA issued
  modulectl publish --name sample --version 1.0.0 --manifest ./manifests \
    --registry localhost:5001/modules --insecure \
    --sign-key release.key --sign-cert release.crt > sample.yaml

  # Check everything and print the template, pushing nothing
  modulectl publish --name sample --version 1.0.0 --manifest ./manifests \
    --registry localhost:5001/modules --dry-run

  # For scripts: result as JSON on stdout, no progress
  modulectl publish ... --output-format json --quiet`

type publishFlags struct {
	req    publish.Request
	login  login
	output string
}

func newPublishCommand(s streams, g *globals) *cobra.Command {
	f := &publishFlags{}
	cmd := &cobra.Command{
		Use:     "publish --name NAME --version SEMVER (--manifest FILE|DIR | --chart DIR|TGZ) --registry HOST/PATH [flags]",
		Short:   "Push a module to an OCI registry and write its ModuleTemplate and ModuleReleaseMeta",
		Long:    publishHelp,
		Example: publishExamples,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runPublish(cmd, s, g, f)
		},
	}
	flags := cmd.Flags()
	r := &f.req
	flags.StringVar(&r.Name, "name", "", "module name users write in a Kyma, e.g. keda (required)")
	flags.StringVar(&r.Version, "version", "", "module version, a semantic version such as 1.2.0 (required)")
	flags.StringVar(&r.Manifests, "manifest", "", "raw manifests: a YAML file or a folder of .yaml/.yml/.json files")
	flags.StringVar(&r.Chart, "chart", "", "Helm chart: a chart folder or a packed .tgz")
	flags.StringVar(&r.Config, "config", "", "YAML file of Helm values laid over the chart's defaults (with --chart)")
	flags.StringVar(&r.DefaultCR, "default-cr", "", "YAML file with the module's default custom resource; its kind must be defined by a CRD of the module")
	flags.StringVar(&r.Registry, "registry", "", "OCI registry and path to publish to, host[:port][/path] (required)")
	flags.StringSliceVar(&r.Channels, "channel", nil, "channel to assign this version to in the ModuleReleaseMeta (repeatable)")
	flags.BoolVar(&r.Mandatory, "mandatory", false, "make this version the mandatory version of the module instead of assigning channels")
	flags.StringVar(&r.ReleaseMeta, "release-meta", "", "ModuleReleaseMeta file to merge the channels into and rewrite (created if missing)")
	flags.StringVar(&f.output, "output", "-", "file to write the ModuleTemplate to; - is stdout")
	flags.StringVar(&r.Namespace, "namespace", publish.DefaultNamespace, "control-plane namespace of the ModuleTemplate and ModuleReleaseMeta")
	flags.StringVar(&r.RuntimeNamespace, "runtime-namespace", shared.DefaultRuntimeNamespace, "namespace the module is rendered for when it is checked")
	flags.StringVar(&r.ComponentName, "component-name", "", "OCM component name (default kyma-project.io/module/<name>)")
	flags.StringVar(&r.Provider, "provider", publish.DefaultProvider, "OCM provider of the component")
	flags.StringVar(&r.Manager, "manager", "", "name of the Deployment or StatefulSet that is the module's manager (default: the only Deployment)")
	flags.BoolVar(&r.EmbedDescriptor, "embed-descriptor", false, "write the component descriptor into the ModuleTemplate too; without it the template has descriptor: {} as the public modulectl writes it, and the operator reads the descriptor from the registry (--oci-registry-host)")
	flags.BoolVar(&r.DryRun, "dry-run", false, "check and write everything, push nothing")
	flags.BoolVar(&r.Overwrite, "overwrite", false, "replace a version already published with other content")
	flags.StringVar(&r.SignKey, "sign-key", "", "PEM file with the private key (ECDSA or Ed25519) that signs the component descriptor")
	flags.StringVar(&r.SignCert, "sign-cert", "", "PEM file with the certificate of --sign-key and its intermediates, leaf first")
	flags.StringVar(&r.SignName, "sign-name", "", "name of the signature, the value of the template's signature label (default "+signature.DefaultName+")")
	f.login.register(flags)
	return cmd
}

func runPublish(cmd *cobra.Command, s streams, g *globals, f *publishFlags) error {
	if err := checkOutputs(f); err != nil {
		return err
	}
	progress := g.progress(s)
	access, err := f.login.access(s, progress)
	if err != nil {
		return err
	}
	res, err := publish.Publish(cmd.Context(), f.req, access)
	if err != nil {
		return err
	}
	files, err := writePublished(s, g, f, res)
	if err != nil && !res.DryRun {
		return fmt.Errorf("the module is published, but %w; run the same command again to write it (publishing again changes nothing)", err)
	}
	if err != nil {
		return err
	}
	if g.format == formatJSON {
		return writeJSON(s.out, publishJSON(res, files))
	}
	if progress == nil && !g.quiet {
		printWarnings(s, res.Warnings)
	}
	return nil
}

// checkOutputs refuses outputs that cannot be written before anything is
// pushed.
func checkOutputs(f *publishFlags) error {
	out := f.output
	if out == "-" {
		out = ""
	}
	if out != "" && out == f.req.ReleaseMeta {
		return usagef("--output and --release-meta name the same file %s", out)
	}
	for _, path := range []string{out, f.req.ReleaseMeta} {
		if path == "" {
			continue
		}
		if err := publish.CheckWritable(path); err != nil {
			return err
		}
	}
	return nil
}

// writePublished writes the ModuleTemplate and ModuleReleaseMeta where the
// flags say and returns the files written. In JSON mode, nothing goes to
// stdout here: the objects are part of the JSON result.
func writePublished(s streams, g *globals, f *publishFlags, res *publish.Result) ([]string, error) {
	var files []string
	docs := []any{res.Template}
	if res.ReleaseMeta != nil {
		if f.req.ReleaseMeta != "" {
			data, err := publish.EncodeYAML(res.ReleaseMeta)
			if err != nil {
				return nil, &publish.Error{Kind: publish.ErrOutput, Err: err}
			}
			if err := publish.WriteFile(f.req.ReleaseMeta, data); err != nil {
				return nil, err
			}
			files = append(files, f.req.ReleaseMeta)
		} else {
			docs = append(docs, res.ReleaseMeta)
		}
	}
	data, err := publish.EncodeYAML(docs...)
	if err != nil {
		return nil, &publish.Error{Kind: publish.ErrOutput, Err: err}
	}
	switch {
	case f.output != "" && f.output != "-":
		if err := publish.WriteFile(f.output, data); err != nil {
			return nil, err
		}
		files = append([]string{f.output}, files...)
	case g.format == formatYAML:
		if err := writeOut(s.out, data); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func publishJSON(res *publish.Result, files []string) map[string]any {
	out := map[string]any{"result": res, "files": files}
	if files == nil {
		out["files"] = []string{}
	}
	if doc, err := publish.Document(res.Template); err == nil {
		out["template"] = doc
	}
	if res.ReleaseMeta != nil {
		if doc, err := publish.Document(res.ReleaseMeta); err == nil {
			out["releaseMeta"] = doc
		}
	}
	return out
}

func printWarnings(s streams, warnings []string) {
	for _, w := range warnings {
		_, _ = s.err.Write([]byte("warning: " + w + "\n")) // best effort
	}
}
