package logging_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/skr-agent/internal/logging"
)

func TestLevels(t *testing.T) {
	tests := []struct {
		level       string
		debug, info bool
	}{
		{"debug", true, true},
		{"info", false, true},
		{"error", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.level, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := logging.New(tt.level, &buf)
			require.NoError(t, err)
			log.V(1).Info("debug line")
			log.Info("info line", "key", "value")
			log.Error(errors.New("boom"), "error line")
			out := buf.String()
			assert.Equal(t, tt.debug, strings.Contains(out, "debug line"))
			assert.Equal(t, tt.info, strings.Contains(out, "info line"))
			assert.Contains(t, out, "error line")
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				var v map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &v), "JSON lines: %s", line)
			}
		})
	}
}

func TestUnknownLevel(t *testing.T) {
	_, err := logging.New("trace", &bytes.Buffer{})
	require.Error(t, err)
}
