package report

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/lifecycle-manager/e2e/scale/stats"
)

// Pair is one run's convergence set against its own full bound, measured
// minutes apart on the same machine.
type Pair struct {
	Name string
	// Seconds until every Kyma was Ready, and the full bound's seconds.
	Seconds, BoundSeconds float64
	// Ratio is Seconds over BoundSeconds, the figure the target judges;
	// CPURatio the same for the CPU seconds of every program.
	Ratio, CPURatio float64
	HalfReadyShare  float64
	KCPWritesRatio  float64
}

// Load reads a report.json written by a run.
func Load(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return &r, nil
}

// PairOf takes the figures of a run that converged and measured the full
// bound; a run that did neither cannot be compared and is an error.
func PairOf(name string, r *Report) (Pair, error) {
	c, b := r.Convergence, r.FullBound
	if c == nil || b == nil || c.Served == nil || b.Served == nil || b.Seconds == 0 {
		return Pair{}, fmt.Errorf("run %s has no convergence and full bound to compare", name)
	}
	if c.ProjectedSeconds > 0 {
		return Pair{}, fmt.Errorf("run %s did not converge (%d Kymas Ready)", name, c.Ready)
	}
	return Pair{
		Name: name, Seconds: c.Seconds, BoundSeconds: b.Seconds,
		Ratio:          stats.Ratio(c.Seconds, b.Seconds),
		CPURatio:       stats.Ratio(sum(c.Served.CPUSeconds), sum(b.Served.CPUSeconds)),
		HalfReadyShare: c.HalfReadyShare,
		KCPWritesRatio: stats.Ratio(KCPWrites(c.Served.KCP), float64(b.Writes)),
	}, nil
}

// LoadPairs reads report.json in each run folder.
func LoadPairs(dirs []string) ([]Pair, error) {
	pairs := make([]Pair, 0, len(dirs))
	for _, dir := range dirs {
		r, err := Load(filepath.Join(dir, "report.json"))
		if err != nil {
			return nil, err
		}
		p, err := PairOf(filepath.Base(dir), r)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, p)
	}
	return pairs, nil
}

// MedianPair is the median of each figure over the runs. The machine's
// speed drifts from minute to minute, so one pair makes or misses the
// 1.5× target by chance (1.32× to 1.58× for the same code); the median of
// several decides.
func MedianPair(pairs []Pair) Pair {
	field := func(get func(Pair) float64) float64 {
		values := make([]float64, len(pairs))
		for i, p := range pairs {
			values[i] = get(p)
		}
		return stats.Median(values)
	}
	return Pair{
		Name:           "median",
		Seconds:        field(func(p Pair) float64 { return p.Seconds }),
		BoundSeconds:   field(func(p Pair) float64 { return p.BoundSeconds }),
		Ratio:          field(func(p Pair) float64 { return p.Ratio }),
		CPURatio:       field(func(p Pair) float64 { return p.CPURatio }),
		HalfReadyShare: field(func(p Pair) float64 { return p.HalfReadyShare }),
		KCPWritesRatio: field(func(p Pair) float64 { return p.KCPWritesRatio }),
	}
}

// WritePairs prints one row per run, the median, and whether the median
// meets the targets of the convergence.
func WritePairs(w io.Writer, pairs []Pair) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if _, err := fmt.Fprintln(tw, "run\tall Ready\tfull bound\tratio\tCPU ratio\thalf Ready (share)\tKCP writes"); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	m := MedianPair(pairs)
	for _, p := range append(pairs, m) {
		if _, err := fmt.Fprintf(tw, "%s\t%.0f s\t%.0f s\t%.2f×\t%.2f×\t%.2f\t%.2f×\n",
			p.Name, p.Seconds, p.BoundSeconds, p.Ratio, p.CPURatio, p.HalfReadyShare, p.KCPWritesRatio); err != nil {
			return fmt.Errorf("writing the table: %w", err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the table: %w", err)
	}
	within, seconds, bound := 0, 0.0, 0.0
	for _, p := range pairs {
		if p.Ratio <= MaxRatioToFullBound {
			within++
		}
		seconds, bound = seconds+p.Seconds, bound+p.BoundSeconds
	}
	_, err := fmt.Fprintf(w, "%d of %d runs within %.1f× their full bound; the median %.2f× %s, half Ready %s, KCP writes %s\n"+
		"all runs together: %.0f s against %.0f s of their bounds = %.2f×\n",
		within, len(pairs), MaxRatioToFullBound, m.Ratio, verdict(m.Ratio <= MaxRatioToFullBound),
		verdict(m.HalfReadyShare <= MaxHalfReadyShare), verdict(m.KCPWritesRatio <= MaxKCPWritesToBound),
		seconds, bound, stats.Ratio(seconds, bound))
	return err
}

func verdict(met bool) string {
	if met {
		return "meets its target"
	}
	return "MISSES its target"
}

func sum(m map[string]float64) float64 {
	total := 0.0
	for _, v := range m {
		total += v
	}
	return total
}
