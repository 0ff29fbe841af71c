package recorder_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/lifecycle-manager/api/shared"
	"github.com/lifecycle-manager/kcp-operator/internal/recorder"
)

func TestShorten(t *testing.T) {
	assert.Equal(t, "short", recorder.Shorten("short"))
	exact := strings.Repeat("a", recorder.MaxNote)
	assert.Equal(t, exact, recorder.Shorten(exact))

	long := recorder.Shorten(strings.Repeat("ä", recorder.MaxNote))
	assert.LessOrEqual(t, len(long), recorder.MaxNote)
	assert.True(t, utf8.ValidString(long), "no UTF-8 sequence is split")
	assert.True(t, strings.HasSuffix(long, "…(cut)"))
}

func TestProblemAndSettled(t *testing.T) {
	const (
		none       = shared.State("")
		processing = shared.StateProcessing
		ready      = shared.StateReady
		warning    = shared.StateWarning
		failed     = shared.StateError
	)
	for _, tc := range []struct {
		old, now         shared.State
		problem, settled bool
	}{
		{none, processing, false, false},
		{none, ready, false, false},
		{none, failed, true, false},
		{processing, ready, false, true},
		{ready, processing, false, false},
		{ready, ready, false, false},
		{processing, warning, true, false},
		{warning, ready, true, true},
		{failed, processing, true, false},
		{failed, failed, false, false},
		{shared.StateDeleting, ready, false, true},
	} {
		assert.Equal(t, tc.problem, recorder.Problem(tc.old, tc.now), "Problem %q -> %q", tc.old, tc.now)
		assert.Equal(t, tc.settled, recorder.Settled(tc.old, tc.now), "Settled %q -> %q", tc.old, tc.now)
	}
}
