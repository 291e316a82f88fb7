package patch

import (
	"strconv"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const hexDigits = "0123456789abcdef"

// appendString appends s as encoding/json.Marshal writes a string: HTML-sensitive characters,
// control characters, U+2028 and U+2029 escaped, except that every invalid UTF-8 byte is
// written as the character U+FFFD itself: the patch holds strings as they read back after a
// JSON round trip, where encoding/json has already replaced such bytes. Two strings encode
// alike exactly when they are equal after a JSON round trip.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// normString returns s as it reads back after a JSON round trip: each byte that is not part
// of valid UTF-8 becomes U+FFFD. It allocates only when s is not valid UTF-8.
func normString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, s[i:i+size]...)
		}
		i += size
	}
	return string(out)
}

// eqString reports whether a and b are equal after a JSON round trip.
func eqString(a, b string) bool {
	if a == b {
		return true
	}
	if utf8.ValidString(a) && utf8.ValidString(b) {
		return false
	}
	return normString(a) == normString(b)
}

// appendTime appends t as metav1.Time marshals it: null when zero, else RFC 3339 in UTC at
// whole seconds.
func appendTime(dst []byte, t metav1.Time) []byte {
	if t.IsZero() {
		return append(dst, "null"...)
	}
	dst = append(dst, '"')
	dst = t.UTC().AppendFormat(dst, time.RFC3339)
	return append(dst, '"')
}

// eqTime reports whether a and b marshal alike.
func eqTime(a, b metav1.Time) bool {
	az, bz := a.IsZero(), b.IsZero()
	if az || bz {
		return az == bz
	}
	return a.Unix() == b.Unix()
}

// quantityString is the text a Quantity marshals to. It works on a copy: String caches its
// result in the receiver, and the caller's value must not be written to.
func quantityString(q resource.Quantity) string {
	return q.String()
}

func appendQuantity(dst []byte, q resource.Quantity) []byte {
	return appendString(dst, quantityString(q))
}

func eqQuantity(a, b resource.Quantity) bool {
	return eqString(quantityString(a), quantityString(b))
}

func appendInt(dst []byte, v int64) []byte {
	return strconv.AppendInt(dst, v, 10)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// member starts the member key of the object being written at the end of dst: a comma unless
// it is the object's first member, then the quoted key (a constant that needs no escaping).
func member(dst []byte, key string) []byte {
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

// diffString writes the patch member for an omitempty string: null when it was removed, the
// new value when it was added or changed.
func diffString(dst []byte, key, o, n string) []byte {
	switch {
	case n == "":
		if o != "" {
			dst = append(member(dst, key), "null"...)
		}
	case o == "" || !eqString(o, n):
		dst = appendString(member(dst, key), n)
	}
	return dst
}

// diffRequiredString writes the patch member for a string without omitempty.
func diffRequiredString(dst []byte, key, o, n string) []byte {
	if !eqString(o, n) {
		dst = appendString(member(dst, key), n)
	}
	return dst
}

// diffInt writes the patch member for an omitempty integer.
func diffInt(dst []byte, key string, o, n int64) []byte {
	switch {
	case n == 0:
		if o != 0 {
			dst = append(member(dst, key), "null"...)
		}
	case o != n:
		dst = appendInt(member(dst, key), n)
	}
	return dst
}

// diffTime writes the patch member for a metav1.Time value field (always marshalled, as null
// when zero).
func diffTime(dst []byte, key string, o, n metav1.Time) []byte {
	if !eqTime(o, n) {
		dst = appendTime(member(dst, key), n)
	}
	return dst
}

// diffTimePtr writes the patch member for an omitempty *metav1.Time: absent when nil, null
// when zero.
func diffTimePtr(dst []byte, key string, o, n *metav1.Time) []byte {
	switch {
	case n == nil:
		if o != nil {
			dst = append(member(dst, key), "null"...)
		}
	case o == nil || !eqTime(*o, *n):
		dst = appendTime(member(dst, key), *n)
	}
	return dst
}

// diffQuantityPtr writes the patch member for an omitempty *resource.Quantity.
func diffQuantityPtr(dst []byte, key string, o, n *resource.Quantity) []byte {
	switch {
	case n == nil:
		if o != nil {
			dst = append(member(dst, key), "null"...)
		}
	case o == nil || !eqQuantity(*o, *n):
		dst = appendQuantity(member(dst, key), *n)
	}
	return dst
}
