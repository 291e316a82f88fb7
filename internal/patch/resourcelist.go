package patch

import (
	"slices"
	"strings"
	"unicode/utf8"

	v1 "k8s.io/api/core/v1"
)

// rlEntry is one member of a ResourceList as it reads back after a JSON round trip.
type rlEntry struct {
	raw  v1.ResourceName // key in the Go map
	norm string          // key after the round trip
}

// sortedEntries returns rl's members in the order encoding/json writes a map, keyed as they
// read back. encoding/json sorts by the Go key and escapes each key, so two keys that differ
// only in invalid UTF-8 collapse into one on decoding, and the later one wins; that is
// reproduced here. buf is reused when large enough.
func sortedEntries(rl v1.ResourceList, buf []rlEntry) []rlEntry {
	out := buf[:0]
	valid := true
	for k := range rl {
		s := string(k)
		if !utf8.ValidString(s) {
			valid = false
		}
		out = append(out, rlEntry{raw: k, norm: s})
	}
	slices.SortFunc(out, func(a, b rlEntry) int { return strings.Compare(string(a.raw), string(b.raw)) })
	if valid {
		return out
	}
	for i := range out {
		out[i].norm = normString(out[i].norm)
	}
	// Keep the last of each run of equal normalised keys (stable sort keeps the raw order).
	slices.SortStableFunc(out, func(a, b rlEntry) int { return strings.Compare(a.norm, b.norm) })
	w := 0
	for i := range out {
		if i+1 < len(out) && out[i+1].norm == out[i].norm {
			continue
		}
		out[w] = out[i]
		w++
	}
	return out[:w]
}

// appendResourceList writes a non-empty ResourceList canonically.
func appendResourceList(dst []byte, rl v1.ResourceList) []byte {
	var buf [8]rlEntry
	dst = append(dst, '{')
	for i, e := range sortedEntries(rl, buf[:]) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, e.norm)
		dst = append(dst, ':')
		dst = appendQuantity(dst, rl[e.raw])
	}
	return append(dst, '}')
}

// diffResourceList writes the patch member for an omitempty ResourceList field: null when it
// was emptied, the whole map when it was empty before, otherwise a map with the changed and
// added resources and null for the removed ones. Nothing is written when nothing changed.
func diffResourceList(dst []byte, key string, o, n v1.ResourceList) []byte {
	switch {
	case len(n) == 0:
		if len(o) > 0 {
			dst = append(member(dst, key), "null"...)
		}
		return dst
	case len(o) == 0:
		return appendResourceList(member(dst, key), n)
	}
	var obuf, nbuf [8]rlEntry
	oe, ne := sortedEntries(o, obuf[:]), sortedEntries(n, nbuf[:])
	mark := len(dst)
	dst = append(member(dst, key), '{')
	open := len(dst)
	i, j := 0, 0
	for i < len(oe) || j < len(ne) {
		switch {
		case j == len(ne) || (i < len(oe) && oe[i].norm < ne[j].norm):
			dst = appendRawMember(dst, open, oe[i].norm)
			dst = append(dst, "null"...)
			i++
		case i == len(oe) || ne[j].norm < oe[i].norm:
			dst = appendRawMember(dst, open, ne[j].norm)
			dst = appendQuantity(dst, n[ne[j].raw])
			j++
		default:
			if nq := n[ne[j].raw]; !eqQuantity(o[oe[i].raw], nq) {
				dst = appendRawMember(dst, open, ne[j].norm)
				dst = appendQuantity(dst, nq)
			}
			i++
			j++
		}
	}
	if len(dst) == open {
		return dst[:mark]
	}
	return append(dst, '}')
}

// appendRawMember writes the key of a member whose name is data rather than a constant.
func appendRawMember(dst []byte, open int, key string) []byte {
	if len(dst) > open {
		dst = append(dst, ',')
	}
	dst = appendString(dst, key)
	return append(dst, ':')
}
