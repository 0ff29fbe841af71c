package shard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		value   string
		want    []string
		wantErr string
	}{
		{value: "", want: nil},
		{value: "a", want: []string{"a"}},
		{value: " a, b ,c,", want: []string{"a", "b", "c"}},
		{value: "a,A", wantErr: `shard "A"`},
		{value: "a,b,a", wantErr: `"a" is listed twice`},
		{value: "a/b", wantErr: `shard "a/b"`},
	}
	for _, tc := range tests {
		got, err := ParseList(tc.value)
		if tc.wantErr != "" {
			require.ErrorContains(t, err, tc.wantErr, tc.value)
			continue
		}
		require.NoError(t, err, tc.value)
		assert.Equal(t, tc.want, got, tc.value)
	}
}

func TestIsCoordinator(t *testing.T) {
	assert.True(t, IsCoordinator("a", []string{"a", "b"}))
	assert.False(t, IsCoordinator("b", []string{"a", "b"}))
	assert.False(t, IsCoordinator("a", nil))
}
