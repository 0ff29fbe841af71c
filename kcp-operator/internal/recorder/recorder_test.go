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

func TestTransition(t *testing.T) {
	for _, tc := range []struct {
		old, now shared.State
		want     bool
	}{
		{"", shared.StateProcessing, false},
		{"", shared.StateReady, true},
		{"", shared.StateError, true},
		{shared.StateReady, shared.StateProcessing, true},
		{shared.StateProcessing, shared.StateReady, true},
		{shared.StateReady, shared.StateReady, false},
	} {
		assert.Equal(t, tc.want, recorder.Transition(tc.old, tc.now), "%q -> %q", tc.old, tc.now)
	}
}
