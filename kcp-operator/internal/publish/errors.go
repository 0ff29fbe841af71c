package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lifecycle-manager/kcp-operator/internal/oci"
)

// The kinds of failure; every error of Publish and Verify is an *Error whose
// Kind is one of these (test with errors.Is), and ExitCode maps them to the
// exit codes of modulectl.
var (
	// ErrUsage: flags that are missing, conflicting or unknown.
	ErrUsage = errors.New("usage")
	// ErrInvalidInput: input that cannot be published: manifests, chart,
	// default CR, config, names, version, an existing file to merge into.
	ErrInvalidInput = errors.New("invalid input")
	// ErrRegistry: the registry is unreachable, refuses the credentials,
	// lacks what was asked for, or rejects an upload.
	ErrRegistry = errors.New("registry")
	// ErrVerification: the published module does not hold up: the registry
	// holds another descriptor than the template, a layer does not match
	// its digest, or the module does not render.
	ErrVerification = errors.New("verification failed")
	// ErrOutput: a result could not be written.
	ErrOutput = errors.New("output")
)

// Exit codes of modulectl, one per kind of failure.
const (
	ExitOK           = 0
	ExitUsage        = 1
	ExitInvalidInput = 2
	ExitRegistry     = 3
	ExitVerification = 4
	ExitOutput       = 5
	// ExitInterrupted is the shell's code for SIGINT (128 + 2).
	ExitInterrupted = 130
)

// Error is a failure of one kind. Its message is the cause's, without the
// kind, on one line (registries end their messages with newlines), so
// that it reads well on a terminal and in logs.
type Error struct {
	Kind error
	Err  error
}

func (e *Error) Error() string {
	lines := strings.Split(e.Err.Error(), "\n")
	parts := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

// Unwrap lets errors.Is see the kind, and errors.As the cause (an
// *oci.Error, a *render.DocumentError).
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// ExitCode returns the exit code for err: ExitOK for nil, ExitInterrupted
// when the context was cancelled, the code of its kind, and ExitUsage for
// errors of no kind (those come from parsing the command line).
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.Is(err, ErrUsage):
		return ExitUsage
	case errors.Is(err, ErrInvalidInput):
		return ExitInvalidInput
	case errors.Is(err, ErrRegistry):
		return ExitRegistry
	case errors.Is(err, ErrVerification):
		return ExitVerification
	case errors.Is(err, ErrOutput):
		return ExitOutput
	default:
		return ExitUsage
	}
}

// KindName names the kind of err for JSON output: "usage", "invalid-input",
// "registry", "verification", "output", "interrupted" or "" for nil.
func KindName(err error) string {
	return map[int]string{
		ExitUsage: "usage", ExitInvalidInput: "invalid-input", ExitRegistry: "registry",
		ExitVerification: "verification", ExitOutput: "output", ExitInterrupted: "interrupted",
	}[ExitCode(err)]
}

func usageError(format string, args ...any) error {
	return &Error{Kind: ErrUsage, Err: fmt.Errorf(format, args...)}
}

func invalid(format string, args ...any) error {
	return &Error{Kind: ErrInvalidInput, Err: fmt.Errorf(format, args...)}
}

func verificationFailed(format string, args ...any) error {
	return &Error{Kind: ErrVerification, Err: fmt.Errorf(format, args...)}
}

func outputError(format string, args ...any) error {
	return &Error{Kind: ErrOutput, Err: fmt.Errorf(format, args...)}
}

// registryError classifies an error of package oci: content that does not
// match its digest fails verification, everything else is the registry's.
func registryError(err error) error {
	switch {
	case errors.Is(err, oci.ErrDigestMismatch):
		return &Error{Kind: ErrVerification, Err: err}
	case errors.Is(err, oci.ErrUnauthorized):
		err = fmt.Errorf("%w (log in with docker login, or --username and --password-stdin)", err)
	}
	return &Error{Kind: ErrRegistry, Err: err}
}
