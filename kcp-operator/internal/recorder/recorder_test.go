package recorder_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

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
