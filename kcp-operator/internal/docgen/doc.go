// Package docgen writes the operator's reference pages, docs/reference/,
// from its code: flags.md from the FlagSet kcp-operator parses, metrics.md
// from the collectors the assembled operator registers, events.md and
// conditions.md from the Events and conditions its source records
// (package reasons). `make docs` runs cmd/docgen; a test fails when a
// committed page differs from what the code says.
package docgen

//go:generate go run ./cmd/docgen -module ../.. -out ../../../docs/reference
