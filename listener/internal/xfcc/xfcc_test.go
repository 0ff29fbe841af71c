package xfcc_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/listener/internal/xfcc"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		header  string
		want    []xfcc.Element
		wantErr string
	}{
		{name: "empty", header: "  ", want: nil},
		{
			name:   "one element as Envoy writes it",
			header: `By=spiffe://cluster.local/ns/kcp/sa/lm;Hash=abc123;Cert="-----BEGIN%20CERTIFICATE-----%0AMII%3D%0A";Subject="CN=rt-1,O=Kyma";URI=;DNS=a.example;DNS=b.example`,
			want: []xfcc.Element{{
				{"By", "spiffe://cluster.local/ns/kcp/sa/lm"}, {"Hash", "abc123"},
				{"Cert", "-----BEGIN%20CERTIFICATE-----%0AMII%3D%0A"}, {"Subject", "CN=rt-1,O=Kyma"},
				{"URI", ""}, {"DNS", "a.example"}, {"DNS", "b.example"},
			}},
		},
		{
			name:   "several elements, quoted separators and escaped quotes, spaces around",
			header: `Hash=1;Subject="CN=a;b,c=\"d\"" , By=x;Hash=2`,
			want: []xfcc.Element{
				{{"Hash", "1"}, {"Subject", `CN=a;b,c="d"`}},
				{{"By", "x"}, {"Hash", "2"}},
			},
		},
		{name: "unquoted value with '='", header: `Hash=a=b`, want: []xfcc.Element{{{"Hash", "a=b"}}}},
		{name: "lower-case key", header: `cert=x`, want: []xfcc.Element{{{"cert", "x"}}}},
		{name: "unterminated quote", header: `Cert="abc;Hash=1`, wantErr: "unterminated"},
		{name: "trailing backslash", header: `Cert="abc\`, wantErr: "unterminated"},
		{name: "text after the quote", header: `Cert="a"b;Hash=1`, wantErr: "unexpected"},
		{name: "quote inside unquoted value", header: `Cert=a"b"`, wantErr: "quote inside"},
		{name: "pair without '='", header: `Cert`, wantErr: "expected key=value"},
		{name: "empty element", header: `Hash=1,,Hash=2`, wantErr: "element 2"},
		{name: "trailing comma", header: `Hash=1,`, wantErr: "nothing after"},
		{name: "empty key", header: `=x`, wantErr: "invalid key"},
		{name: "invalid key", header: `Ce rt=x`, wantErr: "invalid key"},
		{name: "second Cert in one element", header: `Cert=a;cert=b`, wantErr: "appears twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := xfcc.Parse(tc.header)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestElementGetIsCaseInsensitive(t *testing.T) {
	els, err := xfcc.Parse(`CERT=x;hash=y`)
	require.NoError(t, err)
	v, ok := els[0].Get(xfcc.KeyCert)
	assert.True(t, ok)
	assert.Equal(t, "x", v)
	_, ok = els[0].Get(xfcc.KeyChain)
	assert.False(t, ok)
}

// FuzzParse checks that no header makes the parser panic, and that what it
// accepts survives being written back in the quoted form and parsed again.
func FuzzParse(f *testing.F) {
	f.Add(`By=spiffe://a;Hash=1;Cert="x%20y";Subject="CN=a,O=b";URI=;DNS=d`)
	f.Add(`Hash=1;Subject="a\"b" , By=x`)
	f.Add(`Cert="unterminated`)
	f.Add(`a=b,c=d;e="f;g,h=i"`)
	f.Fuzz(func(t *testing.T, header string) {
		els, err := xfcc.Parse(header)
		if err != nil {
			return
		}
		again, err := xfcc.Parse(format(els))
		if err != nil {
			t.Fatalf("re-formatted %q of %q rejected: %v", format(els), header, err)
		}
		if len(again) != len(els) {
			t.Fatalf("element count changed: %d != %d", len(again), len(els))
		}
		for i := range els {
			for j := range els[i] {
				if els[i][j] != again[i][j] {
					t.Fatalf("pair changed: %+v != %+v", els[i][j], again[i][j])
				}
			}
		}
	})
}

// format writes elements with every value quoted, trimmed as Parse trims
// unquoted values.
func format(els []xfcc.Element) string {
	parts := make([]string, 0, len(els))
	for _, el := range els {
		pairs := make([]string, 0, len(el))
		for _, p := range el {
			v := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(p.Value)
			pairs = append(pairs, p.Key+`="`+v+`"`)
		}
		parts = append(parts, strings.Join(pairs, ";"))
	}
	return strings.Join(parts, ",")
}
