// Package options is the one place where the operator's flags, their
// defaults and their validation live. FlagSet builds the command line;
// docs/reference/flags.md is generated from it (internal/docgen), and a
// test there fails when the file is stale.
package options
