// Command scale-pairs compares runs of `make scale` (`make scale-runs`):
// one row per run folder (its report.json) with the convergence against
// its own full bound, and the median that decides the targets on a
// machine whose speed drifts between runs.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/lifecycle-manager/e2e/scale/report"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "scale-pairs:", err)
		os.Exit(1)
	}
}

func run(dirs []string) error {
	if len(dirs) == 0 {
		return errors.New("usage: scale-pairs RUN-FOLDER... (each holding a report.json of make scale)")
	}
	pairs, err := report.LoadPairs(dirs)
	if err != nil {
		return err
	}
	return report.WritePairs(os.Stdout, pairs)
}
