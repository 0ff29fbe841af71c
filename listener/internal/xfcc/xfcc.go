package xfcc

import (
	"errors"
	"fmt"
	"strings"
)

// Header is the name of the header.
const Header = "X-Forwarded-Client-Cert"

// Keys that Envoy writes.
const (
	KeyBy      = "By"
	KeyHash    = "Hash"
	KeyCert    = "Cert"
	KeyChain   = "Chain"
	KeySubject = "Subject"
	KeyURI     = "URI"
	KeyDNS     = "DNS"
)

// Pair is one key=value of an element, the value unquoted and unescaped
// (URL-encoded values such as Cert stay URL-encoded).
type Pair struct {
	Key   string
	Value string
}

// Element is the information one proxy added about its client.
type Element []Pair

// Get returns the value of the first pair with key, compared case-insensitively.
func (e Element) Get(key string) (string, bool) {
	for _, p := range e {
		if strings.EqualFold(p.Key, key) {
			return p.Value, true
		}
	}
	return "", false
}

// Parse splits a header value into its elements, in the order the proxies
// appended them. An empty value has no elements.
func Parse(header string) ([]Element, error) {
	if strings.TrimSpace(header) == "" {
		return nil, nil
	}
	p := parser{s: header}
	var out []Element
	for {
		el, more, err := p.element()
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", len(out)+1, err)
		}
		out = append(out, el)
		if !more {
			return out, nil
		}
	}
}

type parser struct {
	s   string
	pos int
}

// element reads pairs up to a top-level ',' (more is true) or the end.
func (p *parser) element() (el Element, more bool, err error) {
	for {
		pair, sep, err := p.pair()
		if err != nil {
			return nil, false, err
		}
		if dup := duplicate(el, pair.Key); dup {
			return nil, false, fmt.Errorf("key %q appears twice", pair.Key)
		}
		el = append(el, pair)
		switch sep {
		case ';':
			continue
		case ',':
			return el, true, nil
		default:
			return el, false, nil
		}
	}
}

// duplicate reports a key seen before in the element. URI and DNS may repeat
// (one per subject alternative name); every other key must be unique, so
// that no one can smuggle a second Cert into an element.
func duplicate(el Element, key string) bool {
	if strings.EqualFold(key, KeyURI) || strings.EqualFold(key, KeyDNS) {
		return false
	}
	_, seen := el.Get(key)
	return seen
}

// pair reads key=value and the separator after it (0 at the end).
func (p *parser) pair() (Pair, byte, error) {
	eq := strings.IndexAny(p.s[p.pos:], "=,;\"")
	if eq < 0 || p.s[p.pos+eq] != '=' {
		return Pair{}, 0, errors.New("expected key=value")
	}
	key := strings.TrimSpace(p.s[p.pos : p.pos+eq])
	if !isToken(key) {
		return Pair{}, 0, errors.New("empty or invalid key")
	}
	p.pos += eq + 1
	p.skipSpace()
	var value string
	var err error
	if p.pos < len(p.s) && p.s[p.pos] == '"' {
		value, err = p.quoted()
	} else {
		value, err = p.unquoted()
	}
	if err != nil {
		return Pair{}, 0, fmt.Errorf("key %q: %w", key, err)
	}
	p.skipSpace()
	if p.pos == len(p.s) {
		return Pair{Key: key, Value: value}, 0, nil
	}
	sep := p.s[p.pos]
	if sep != ';' && sep != ',' {
		return Pair{}, 0, fmt.Errorf("key %q: unexpected %q after the value", key, sep)
	}
	p.pos++
	if rest := strings.TrimSpace(p.s[p.pos:]); rest == "" {
		return Pair{}, 0, fmt.Errorf("key %q: nothing after the last %q", key, sep)
	}
	return Pair{Key: key, Value: value}, sep, nil
}

// unquoted reads up to the next separator. '=' is allowed in an unquoted
// value: the key already ended at the first one.
func (p *parser) unquoted() (string, error) {
	end := strings.IndexAny(p.s[p.pos:], ",;\"")
	if end < 0 {
		end = len(p.s) - p.pos
	}
	if p.pos+end < len(p.s) && p.s[p.pos+end] == '"' {
		return "", errors.New("quote inside an unquoted value")
	}
	v := strings.TrimSpace(p.s[p.pos : p.pos+end])
	p.pos += end
	return v, nil
}

// quoted reads a "..." value; a backslash takes the next byte literally.
// A value without backslashes (the usual case: certificates are
// URL-encoded) is returned as a slice of the header, without copying.
func (p *parser) quoted() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case '"':
			p.pos++
			return p.s[start : p.pos-1], nil
		case '\\':
			return p.unescape(start)
		default:
			p.pos++
		}
	}
	return "", errors.New("unterminated quoted value")
}

// unescape continues quoted from the first backslash.
func (p *parser) unescape(start int) (string, error) {
	var b strings.Builder
	b.WriteString(p.s[start:p.pos])
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch c {
		case '"':
			p.pos++
			return b.String(), nil
		case '\\':
			if p.pos+1 == len(p.s) {
				return "", errors.New("unterminated quoted value")
			}
			b.WriteByte(p.s[p.pos+1])
			p.pos += 2
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", errors.New("unterminated quoted value")
}

func (p *parser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
