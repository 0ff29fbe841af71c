package denylist_test

import (
	"crypto/x509"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lifecycle-manager/certs/denylist"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    []string // Entry.String of each
		wantErr string
	}{
		{name: "empty", text: "", want: nil},
		{name: "comments and blank lines", text: "# leaked 2026-11-25\n\n  \n", want: nil},
		{name: "openssl style", text: "serial=4A3F\n", wantErr: "line 1: serial number: not hexadecimal"},
		{name: "hex upper case", text: "4A3F0C\n", want: []string{"4a3f0c"}},
		{name: "colons and 0x", text: "4a:3f:0c\n0x01\n", want: []string{"4a3f0c", "1"}},
		{name: "odd length", text: "abc", want: []string{"abc"}},
		{name: "with issuer and trailing comment", text: "4a3f 9B:21 # rt-7\n", want: []string{"4a3f 9b21"}},
		{name: "three fields", text: "\n4a 9b 77\n", wantErr: "line 2: want a serial number and at most an issuer key ID"},
		{name: "bad issuer", text: "4a zz\n", wantErr: "line 1: issuer key ID: not hexadecimal"},
		{name: "only colons", text: ":::\n", wantErr: "line 1: serial number: empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := denylist.Parse([]byte(tc.text))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var got []string
			for _, e := range entries {
				got = append(got, e.String())
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestDenied(t *testing.T) {
	cert := func(serial int64, aki string) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), AuthorityKeyId: []byte(aki)}
	}
	var l denylist.List
	assert.False(t, l.Denied(cert(0x4a, "ca-1")), "the zero list denies nothing")
	var nilList *denylist.List
	assert.False(t, nilList.Denied(cert(0x4a, "ca-1")), "a nil list denies nothing")

	changed, err := l.SetText([]byte("4a\n4b " + hexOf("ca-2") + "\n"))
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, 2, l.Len())
	tests := []struct {
		name string
		cert *x509.Certificate
		want bool
	}{
		{"serial without issuer, any CA", cert(0x4a, "ca-1"), true},
		{"same serial, another CA", cert(0x4a, "ca-9"), true},
		{"serial limited to its CA", cert(0x4b, "ca-2"), true},
		{"that serial from another CA", cert(0x4b, "ca-1"), false},
		{"other serial", cert(0x4c, "ca-2"), false},
		{"no serial", &x509.Certificate{}, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, l.Denied(tc.cert), tc.name)
	}

	v := l.Version()
	changed, err = l.SetText([]byte("# same entries, other text\n0x4A\n4b " + hexOf("ca-2")))
	require.NoError(t, err)
	assert.False(t, changed, "the same entries are no change")
	assert.Equal(t, v, l.Version())

	_, err = l.SetText([]byte("not hex"))
	require.Error(t, err)
	assert.True(t, l.Denied(cert(0x4a, "ca-1")), "a text that does not parse leaves the list as it was")

	changed, err = l.SetText(nil)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.False(t, l.Denied(cert(0x4a, "ca-1")), "an emptied list denies nothing")
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(s))
	for _, b := range []byte(s) {
		out = append(out, digits[b>>4], digits[b&15])
	}
	return string(out)
}

// FuzzParse: any text parses or fails without panicking, and what parses
// reads the same again from its entries.
func FuzzParse(f *testing.F) {
	f.Add([]byte("4a3f\n# c\n4a:3f 9b\n"))
	f.Add([]byte("0x\n"))
	f.Add([]byte(":\n\x00"))
	f.Fuzz(func(t *testing.T, text []byte) {
		entries, err := denylist.Parse(text)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range entries {
			again = append(again, e.String()+"\n"...)
		}
		back, err := denylist.Parse(again)
		if err != nil {
			t.Fatalf("entries %q do not parse again: %v", again, err)
		}
		if len(back) != len(entries) {
			t.Fatalf("%d entries became %d", len(entries), len(back))
		}
	})
}
