package signature

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// signaturesField is the top-level member of a descriptor that holds its
// signatures; it is not part of what is signed.
const signaturesField = "signatures"

// Canonical returns the canonical form of a descriptor (JSON or YAML): the
// document as deterministic JSON without its signatures.
func Canonical(doc []byte) ([]byte, error) {
	v, err := decode(doc)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("the descriptor is not an object")
	}
	delete(obj, signaturesField)
	return canonicalJSON(obj)
}

// DigestOf returns the digest a signature of doc signs.
func DigestOf(doc []byte) (Digest, error) {
	c, err := Canonical(doc)
	if err != nil {
		return Digest{}, err
	}
	return sha256Digest(c), nil
}

// ObjectDigest returns "sha256:<hex>" of the canonical form of any JSON
// value, such as a default CR.
func ObjectDigest(v any) (string, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("encoding: %w", err)
	}
	parsed, err := decode(raw)
	if err != nil {
		return "", err
	}
	c, err := canonicalJSON(parsed)
	if err != nil {
		return "", err
	}
	return "sha256:" + sha256Digest(c).Value, nil
}

func sha256Digest(canonical []byte) Digest {
	sum := sha256.Sum256(canonical)
	return Digest{HashAlgorithm: HashSHA256, NormalisationAlgorithm: NormalisationV1, Value: hex.EncodeToString(sum[:])}
}

// decode reads JSON, or YAML converted to JSON, keeping numbers as written.
func decode(doc []byte) (any, error) {
	data := bytes.TrimSpace(doc)
	if len(data) == 0 {
		return nil, errors.New("the descriptor is empty")
	}
	if data[0] != '{' || !json.Valid(data) {
		converted, err := yaml.YAMLToJSON(data)
		if err != nil {
			return nil, fmt.Errorf("the descriptor is neither JSON nor YAML: %w", err)
		}
		data = converted
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding the descriptor: %w", err)
	}
	return v, nil
}

// canonicalJSON writes v deterministically. Null object members are left
// out: the API server and server-side apply drop them, and a signature
// must survive the round trip through a ModuleTemplate.
func canonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		writeString(b, x)
	case json.Number:
		n, err := canonicalNumber(x)
		if err != nil {
			return err
		}
		b.WriteString(n)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		return writeObject(b, x)
	default:
		return fmt.Errorf("unexpected JSON value of type %T", v)
	}
	return nil
}

func writeObject(b *bytes.Buffer, obj map[string]any) error {
	keys := make([]string, 0, len(obj))
	for k, v := range obj {
		if v != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if err := writeCanonical(b, obj[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode ends with a newline
}

// canonicalNumber writes a number by its value: 1, 1.0 and 1e0 are one
// number, as the API server may rewrite any of them as another.
func canonicalNumber(n json.Number) (string, error) {
	s := n.String()
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if !strings.ContainsAny(s, ".eE") {
			return s, nil // an integer beyond int64, kept as written
		}
		return "", fmt.Errorf("number %s: %w", s, err)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), nil
	}
	return strconv.FormatFloat(f, 'g', -1, 64), nil
}
