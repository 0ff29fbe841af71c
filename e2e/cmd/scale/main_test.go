package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/e2e/scale/report"
)

// TestWriteReportTwice checks that a checkpoint's report is replaced by
// the later one, both files whole: a run stopped after the convergence
// keeps the convergence's figures.
func TestWriteReportTwice(t *testing.T) {
	dir := t.TempDir()
	rep := &report.Report{Config: report.Config{Kymas: 10000}, Convergence: &report.Convergence{Seconds: 2572, Ready: 10000}}
	rep.Judge()
	require.NoError(t, writeReport(rep, dir))
	rep.Incomplete = "bound: stopped"
	require.NoError(t, writeReport(rep, dir))

	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	require.NoError(t, err)
	var back report.Report
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, "bound: stopped", back.Incomplete)
	assert.InDelta(t, 2572, back.Convergence.Seconds, 0.001)
	table, err := os.ReadFile(filepath.Join(dir, "report.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(table), "10000 Kymas")
}

// TestClearOutputs: a new run leaves no profile or plot of an earlier one
// in the report folder, and nothing else there is touched.
func TestClearOutputs(t *testing.T) {
	dir := t.TempDir()
	earlier := []string{"report.json", "report.txt", "ready.png", "operator-cpu-convergence.pprof"}
	kept := []string{"notes.md", "progress.log"}
	for _, name := range append(earlier, kept...) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o644))
	}
	require.NoError(t, clearOutputs(dir))
	for _, name := range earlier {
		assert.NoFileExists(t, filepath.Join(dir, name))
	}
	for _, name := range kept {
		assert.FileExists(t, filepath.Join(dir, name))
	}
}

// TestParseFlagsOfALongRun checks the flags that make a 10,000 run fit a
// session.
func TestParseFlagsOfALongRun(t *testing.T) {
	o, err := parseFlags([]string{"--kymas=10000", "--only-full-bound", "--release-push-only", "--release-rate=2.5"})
	require.NoError(t, err)
	assert.True(t, o.OnlyFullBound)
	assert.True(t, o.ReleasePushOnly)
	assert.InDelta(t, 2.5, o.ReleaseRate, 0)
	assert.False(t, o.BoundOnly)
	o, err = parseFlags([]string{"--kymas=10000", "--bound-only", "--only-full-bound"})
	require.NoError(t, err)
	assert.True(t, o.BoundOnly)
	o, err = parseFlags(nil)
	require.NoError(t, err)
	assert.InDelta(t, 5, o.ReleaseRate, 0, "the operator's --fan-out-rate default")
	assert.True(t, o.Release)
}

// TestPairs: `scale pairs` compares the run folders it is given, one row
// per run and the median, and wants at least one.
func TestPairs(t *testing.T) {
	var dirs []string
	for i, seconds := range []float64{140, 160} {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i+1))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		served := &report.Served{CPUSeconds: map[string]float64{"operator": 100}}
		rep := &report.Report{FullBound: &report.Bound{Seconds: 100, Served: served},
			Convergence: &report.Convergence{Seconds: seconds, Ready: 1000, Served: served}}
		require.NoError(t, rep.WriteJSON(filepath.Join(dir, "report.json")))
		dirs = append(dirs, dir)
	}
	var out bytes.Buffer
	require.NoError(t, pairs(&out, dirs))
	assert.Contains(t, out.String(), "1.40×")
	assert.Contains(t, out.String(), "1.60×")
	assert.Contains(t, out.String(), "median")
	require.ErrorContains(t, pairs(&out, nil), "usage: scale pairs")
}

// TestAShardedRunLeavesOutWhatItDoesNotMeasure: --shards alone makes a
// valid run; a phase asked for by name stays, and is refused.
func TestAShardedRunLeavesOutWhatItDoesNotMeasure(t *testing.T) {
	o, err := parseFlags([]string{"--shards=3", "--run-dir=r", "--out=o"})
	require.NoError(t, err)
	o.Defaults()
	assert.NoError(t, o.Validate())
	assert.Equal(t, 3, o.Shards)
	assert.False(t, o.Release)
	assert.Zero(t, o.PushRuntimes+o.PublicPushRuntimes+o.PushEdits)
	assert.Equal(t, 32, o.BoundWorkers, "the bound is measured")

	o, err = parseFlags([]string{"--shards=3", "--release=true", "--run-dir=r", "--out=o"})
	require.NoError(t, err)
	o.Defaults()
	assert.ErrorContains(t, o.Validate(), "the release: measured with one operator only")

	o, err = parseFlags(nil)
	require.NoError(t, err)
	assert.True(t, o.Release, "one operator: every phase")
}
