package denylist

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync/atomic"
)

// MaxEntries bounds a list: the text comes from a Secret anyone with write
// access to it may fill, and every request looks it up.
const MaxEntries = 100000

// Entry denies one certificate.
type Entry struct {
	// Serial is the certificate's serial number.
	Serial *big.Int
	// IssuerKeyID, when set, limits the entry to certificates whose
	// authority key ID it is (serial numbers are unique per CA only).
	IssuerKeyID []byte
}

// String is the entry as Parse reads it.
func (e Entry) String() string {
	s := e.Serial.Text(16)
	if len(e.IssuerKeyID) > 0 {
		s += " " + hex.EncodeToString(e.IssuerKeyID)
	}
	return s
}

// Parse reads the text format (see the package documentation). An error
// names the first bad line; nothing of a text with an error is used.
func Parse(text []byte) ([]Entry, error) {
	var entries []Entry
	for i, line := range bytes.Split(text, []byte("\n")) {
		if j := bytes.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		fields := strings.Fields(string(line))
		if len(fields) == 0 {
			continue
		}
		if len(fields) > 2 {
			return nil, fmt.Errorf("line %d: want a serial number and at most an issuer key ID, got %d fields", i+1, len(fields))
		}
		serial, err := parseHex(fields[0])
		if err != nil {
			return nil, fmt.Errorf("line %d: serial number: %w", i+1, err)
		}
		e := Entry{Serial: new(big.Int).SetBytes(serial)}
		if len(fields) == 2 {
			if e.IssuerKeyID, err = parseHex(fields[1]); err != nil {
				return nil, fmt.Errorf("line %d: issuer key ID: %w", i+1, err)
			}
		}
		if len(entries) == MaxEntries {
			return nil, fmt.Errorf("more than %d entries", MaxEntries)
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func parseHex(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	s = strings.ReplaceAll(s, ":", "")
	if len(s)%2 == 1 {
		s = "0" + s
	}
	if s == "" {
		return nil, errors.New("empty")
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, errors.New("not hexadecimal")
	}
	return b, nil
}

// List is a deny list that may change while it is used; the zero value
// and a nil *List deny nothing. It is safe for concurrent use.
type List struct {
	cur atomic.Pointer[set]
}

type set struct {
	// bySerial maps a serial's bytes to the issuer key IDs it is denied
	// for; an empty key ID denies the serial from every CA.
	bySerial map[string][]string
	version  string
	size     int
}

// Set replaces the entries and reports whether that changed the list.
func (l *List) Set(entries []Entry) bool {
	s := &set{bySerial: make(map[string][]string, len(entries)), size: len(entries)}
	h := sha256.New()
	for _, e := range entries {
		k := string(e.Serial.Bytes())
		s.bySerial[k] = append(s.bySerial[k], string(e.IssuerKeyID))
		h.Write([]byte(e.String() + "\n")) // a hash.Hash never fails to write
	}
	s.version = hex.EncodeToString(h.Sum(nil))
	old := l.cur.Load()
	l.cur.Store(s)
	// Nothing to nothing is no change, also on the first Set.
	return old == nil && s.size > 0 || old != nil && old.version != s.version
}

// SetText parses text and, when it parses, replaces the entries; on error
// the list stays as it was.
func (l *List) SetText(text []byte) (bool, error) {
	entries, err := Parse(text)
	if err != nil {
		return false, err
	}
	return l.Set(entries), nil
}

// Denied reports whether cert is on the list.
func (l *List) Denied(cert *x509.Certificate) bool {
	if l == nil || cert == nil || cert.SerialNumber == nil {
		return false
	}
	return l.DeniedKey(Key(cert))
}

// Key is what Denied looks up of a certificate: its serial number and
// authority key ID. Callers that remember many certificates keep the key
// instead of the parsed certificate.
func Key(cert *x509.Certificate) string {
	serial := cert.SerialNumber.Bytes()
	return string(append(append([]byte{byte(len(serial))}, serial...), cert.AuthorityKeyId...))
}

// DeniedKey reports whether the certificate with key (see Key) is on the list.
func (l *List) DeniedKey(key string) bool {
	if l == nil || key == "" {
		return false
	}
	s := l.cur.Load()
	if s == nil {
		return false
	}
	n := int(key[0])
	if 1+n > len(key) {
		return false
	}
	issuers, ok := s.bySerial[key[1:1+n]]
	if !ok {
		return false
	}
	for _, id := range issuers {
		if id == "" || id == key[1+n:] {
			return true
		}
	}
	return false
}

// Version identifies the entries: equal lists have equal versions. Empty
// before the first Set.
func (l *List) Version() string {
	if l == nil {
		return ""
	}
	if s := l.cur.Load(); s != nil {
		return s.version
	}
	return ""
}

// Len is the number of entries.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	if s := l.cur.Load(); s != nil {
		return s.size
	}
	return 0
}
