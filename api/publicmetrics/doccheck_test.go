package publicmetrics

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const guide = `# Guide

` + Section + `

| Public | Ours |
|---|---|
| ` + "`a_exported`" + ` | x |
| ` + "`a_missing`" + ` | x |

| Not exported | Why |
|---|---|
| ` + "`a_skipped`" + ` | y |

## Next
| ` + "`a_elsewhere`" + ` | z |
`

func TestMismatchesNameEveryDisagreement(t *testing.T) {
	reg := prometheus.NewRegistry()
	for _, name := range []string{"a_exported", "a_unlisted", "a_skipped", "b_other"} {
		require.NoError(t, reg.Register(prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: name})))
	}
	problems, err := Mismatches([]byte(guide), reg, func(n string) bool { return n[0] == 'a' })
	require.NoError(t, err)
	assert.Equal(t, []string{
		"a_unlisted is registered but not in the table of exported metrics",
		"the table lists a_missing as exported, but it is not registered",
		"a_skipped is registered but listed as not exported",
	}, problems)
}

func TestMismatchesRefusesAGuideWithoutTheTables(t *testing.T) {
	_, err := Mismatches([]byte("# Guide\n"), prometheus.NewRegistry(), func(string) bool { return true })
	assert.ErrorContains(t, err, Section)
	_, err = Mismatches([]byte("\n"+Section+"\n\n| `a` |\n"), prometheus.NewRegistry(), func(string) bool { return true })
	assert.ErrorContains(t, err, "has 1 tables")
}

func TestEachSeriesReadsCountersAndGauges(t *testing.T) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "c", Help: "c"}, []string{"k"})
	c.WithLabelValues("x").Add(2)
	c.WithLabelValues("y").Add(3)
	got := map[string]float64{}
	EachSeries(c, func(labels map[string]string, v float64) { got[labels["k"]] = v })
	assert.Equal(t, map[string]float64{"x": 2, "y": 3}, got)
}
