package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// pairRun is a converged run of seconds against a full bound of 100 s,
// half of its Kymas Ready at half the time.
func pairRun(seconds float64) *report.Report {
	return &report.Report{
		FullBound: &report.Bound{Writes: 11000, RuntimeWrites: 35000, Seconds: 100,
			Served: &report.Served{CPUSeconds: map[string]float64{"runtime API servers": 120, "KCP API server": 80}}},
		Convergence: &report.Convergence{Seconds: seconds, Ready: 1000, HalfReadyShare: 0.5,
			Served: &report.Served{
				KCP:        map[string]float64{"APPLY manifests": 10000, "APPLY kymas/status": 1000, "POST events": 1000, "GET secrets": 1000},
				CPUSeconds: map[string]float64{"runtime API servers": 150, "operator": 100, "KCP API server": 50},
			}},
	}
}

func TestPairOf(t *testing.T) {
	for _, tc := range []struct {
		name    string
		report  *report.Report
		wantErr string
	}{
		{"converged with its full bound", pairRun(140), ""},
		{"no full bound", &report.Report{Convergence: pairRun(140).Convergence}, "no convergence and full bound"},
		{"no convergence", &report.Report{FullBound: pairRun(140).FullBound}, "no convergence and full bound"},
		{"did not converge", func() *report.Report {
			r := pairRun(140)
			r.Convergence.ProjectedSeconds, r.Convergence.Ready = 300, 400
			return r
		}(), "did not converge (400 Kymas Ready)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := report.PairOf("run-1", tc.report)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				assert.ErrorContains(t, err, "run-1")
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, 1.4, p.Ratio, 1e-9)
			assert.InDelta(t, 1.5, p.CPURatio, 1e-9, "300 CPU s of every program against the bound's 200")
			assert.InDelta(t, 12000.0/11000, p.KCPWritesRatio, 1e-9, "the GETs are no writes")
			assert.InDelta(t, 0.5, p.HalfReadyShare, 1e-9)
		})
	}
}

// TestMedianDecides: one run over 1.5× does not decide, the median does;
// a median over it misses.
func TestMedianDecides(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seconds  []float64
		want     string
		together string
	}{
		{"one run over, median within", []float64{158, 140, 132}, "2 of 3 runs within 1.5× their full bound; the median 1.40× meets its target",
			"all runs together: 430 s against 300 s of their bounds = 1.43×"},
		{"median over", []float64{158, 153, 132, 160}, "1 of 4 runs within 1.5× their full bound; the median 1.56× MISSES its target",
			"all runs together: 603 s against 400 s of their bounds = 1.51×"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dirs []string
			for i, s := range tc.seconds {
				dir := filepath.Join(t.TempDir(), string(rune('a'+i)))
				require.NoError(t, os.Mkdir(dir, 0o755))
				require.NoError(t, pairRun(s).WriteJSON(filepath.Join(dir, "report.json")))
				dirs = append(dirs, dir)
			}
			pairs, err := report.LoadPairs(dirs)
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, report.WritePairs(&out, pairs))
			assert.Contains(t, out.String(), tc.want)
			assert.Contains(t, out.String(), "half Ready meets its target, KCP writes meets its target")
			assert.Regexp(t, `(?m)^median\s`, out.String())
			assert.Contains(t, out.String(), tc.together)
		})
	}
}

func TestLoadPairsNamesTheBadRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "report.json"), []byte("{not json"), 0o644))
	_, err := report.LoadPairs([]string{dir})
	require.ErrorContains(t, err, filepath.Join(dir, "report.json"))
	_, err = report.LoadPairs([]string{filepath.Join(dir, "missing")})
	require.ErrorContains(t, err, "missing")
}
