package publicmetrics

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Section is the heading of the migration guide's section whose two
// tables list the public names: those exported, then those not.
const Section = "## Metrics of the public operator"

// Mismatches compares the tables of Section in doc with the metric names g
// gathers, as far as mine claims a name for the module at hand, and
// returns each disagreement: a registered name the table of exported ones
// lacks, a listed one that is not registered, or one registered although
// listed as not exported.
func Mismatches(doc []byte, g prometheus.Gatherer, mine func(name string) bool) ([]string, error) {
	exported, skipped, err := tables(string(doc))
	if err != nil {
		return nil, err
	}
	families, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gathering the registered metrics: %w", err)
	}
	registered := map[string]bool{}
	for _, f := range families {
		registered[f.GetName()] = true
	}
	var problems []string
	for _, name := range sortedKeys(registered) {
		if mine(name) && !exported[name] && !skipped[name] {
			problems = append(problems, name+" is registered but not in the table of exported metrics")
		}
	}
	for _, name := range sortedKeys(exported) {
		if mine(name) && !registered[name] {
			problems = append(problems, "the table lists "+name+" as exported, but it is not registered")
		}
	}
	for _, name := range sortedKeys(skipped) {
		if registered[name] {
			problems = append(problems, name+" is registered but listed as not exported")
		}
	}
	return problems, nil
}

// tables reads the public names (the first column) of the two tables of
// Section.
func tables(doc string) (exported, skipped map[string]bool, err error) {
	_, section, found := strings.Cut(doc, "\n"+Section+"\n")
	if !found {
		return nil, nil, errors.New("the migration guide has no section " + Section)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var tabs []map[string]bool
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable {
			tabs, inTable = append(tabs, map[string]bool{}), true
		}
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			name, _, _ = strings.Cut(name, "`")
			tabs[len(tabs)-1][name] = true
		}
	}
	if len(tabs) != 2 {
		return nil, nil, fmt.Errorf("section %s has %d tables, want 2: the exported metrics and those not exported", Section, len(tabs))
	}
	return tabs[0], tabs[1], nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
