package patch

import (
	"slices"
	"sort"
	"strings"
)

// listSpec describes a list with the "merge" patch strategy.
type listSpec[T any] struct {
	keyName string                              // JSON name of the merge key
	key     func(*T) string                     // the merge key's Go value
	full    func([]byte, *T) []byte             // the whole element, canonically
	diff    func([]byte, *T, *T) ([]byte, bool) // the patch of a matched pair; false (and dst untouched) when equal
}

// planKind says what a list field contributes to its parent's patch.
type planKind uint8

const (
	planNone  planKind = iota // equal, or absent in both
	planNull                  // present before, absent now: null
	planWhole                 // absent before: the whole new list
	planMerge                 // present in both: element patches and directives
)

// listPlan is the diff of one merge list, computed before its parent object is written because
// the "$setElementOrder/<list>" member sorts ahead of every other member.
type listPlan struct {
	kind planKind
	seo  bool // write "$setElementOrder/<list>"
	a, b int  // scratch span of the "[...]" patch list; empty when there is none
}

// listItem is one element patch, written to scratch[a:b], for the element at index at of the
// new list.
type listItem struct {
	at   int
	a, b int
}

// planList diffs a merge list the way the reference does: both lists are sorted by merge key
// (with the reference's ordering of duplicate keys), walked in step, matched pairs diffed,
// unmatched new elements added whole and unmatched old ones deleted with a "$patch":"delete"
// directive; element patches then follow the new list's order, deletions last.
// "$setElementOrder" is due when there is any element patch or the key order changed.
func planList[T any](scratch []byte, o, n []T, spec *listSpec[T]) ([]byte, listPlan) {
	switch {
	case len(n) == 0 && len(o) == 0:
		return scratch, listPlan{kind: planNone}
	case len(n) == 0:
		return scratch, listPlan{kind: planNull}
	case len(o) == 0:
		return scratch, listPlan{kind: planWhole}
	}
	var kbuf [32]string
	var ibuf [32]int
	ko, kn := keysOf(kbuf[:0:16], o, spec.key), keysOf(kbuf[16:16:32], n, spec.key)
	po, pn := sortedOrder(ko, ibuf[:0:16]), sortedOrder(kn, ibuf[16:16:32])

	var itemBuf [16]listItem
	items := itemBuf[:0]
	var delBuf [16]int
	dels := delBuf[:0]
	i, j := 0, 0
	for i < len(po) || j < len(pn) {
		switch {
		case i < len(po) && j < len(pn) && ko[po[i]] == kn[pn[j]]:
			a := len(scratch)
			var changed bool
			scratch, changed = spec.diff(scratch, &o[po[i]], &n[pn[j]])
			if changed {
				items = append(items, listItem{at: pn[j], a: a, b: len(scratch)})
			}
			i++
			j++
		case i == len(po) || (j < len(pn) && ko[po[i]] > kn[pn[j]]):
			a := len(scratch)
			scratch = spec.full(scratch, &n[pn[j]])
			items = append(items, listItem{at: pn[j], a: a, b: len(scratch)})
			j++
		default:
			dels = append(dels, po[i])
			i++
		}
	}

	plan := listPlan{kind: planMerge, seo: len(items)+len(dels) > 0 || !sameOrder(ko, kn)}
	if len(items)+len(dels) == 0 {
		return scratch, plan
	}
	// Element patches follow the first position of their key in the new list; the sort is
	// stable, so patches for a duplicated key keep the walk's order.
	if hasDuplicates(kn, pn) {
		first := firstPositions(kn, pn)
		slices.SortStableFunc(items, func(x, y listItem) int { return first[x.at] - first[y.at] })
	} else {
		slices.SortStableFunc(items, func(x, y listItem) int { return x.at - y.at })
	}
	plan.a = len(scratch)
	scratch = append(scratch, '[')
	for x, it := range items {
		if x > 0 {
			scratch = append(scratch, ',')
		}
		scratch = append(scratch, scratch[it.a:it.b]...)
	}
	for x, d := range dels {
		if x > 0 || len(items) > 0 {
			scratch = append(scratch, ',')
		}
		scratch = append(scratch, `{"$patch":"delete","`...)
		scratch = append(scratch, spec.keyName...)
		scratch = append(scratch, '"', ':')
		scratch = appendString(scratch, ko[d])
		scratch = append(scratch, '}')
	}
	scratch = append(scratch, ']')
	plan.b = len(scratch)
	return scratch, plan
}

// appendSetElementOrder writes the "$setElementOrder/<field>" member when plan asks for it.
func appendSetElementOrder[T any](dst []byte, field string, n []T, spec *listSpec[T], plan listPlan) []byte {
	if !plan.seo {
		return dst
	}
	if dst[len(dst)-1] != '{' {
		dst = append(dst, ',')
	}
	dst = append(dst, `"$setElementOrder/`...)
	dst = append(dst, field...)
	dst = append(dst, '"', ':', '[')
	for i := range n {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '{', '"')
		dst = append(dst, spec.keyName...)
		dst = append(dst, '"', ':')
		dst = appendString(dst, spec.key(&n[i]))
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// appendListField writes the list's own member as plan says.
func appendListField[T any](dst, scratch []byte, field string, n []T, spec *listSpec[T], plan listPlan) []byte {
	switch plan.kind {
	case planNull:
		dst = append(member(dst, field), "null"...)
	case planWhole:
		dst = appendList(member(dst, field), n, spec.full)
	case planMerge:
		if plan.b > plan.a {
			dst = append(member(dst, field), scratch[plan.a:plan.b]...)
		}
	}
	return dst
}

func keysOf[T any](buf []string, l []T, key func(*T) string) []string {
	for i := range l {
		buf = append(buf, normString(key(&l[i])))
	}
	return buf
}

func sameOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sortedOrder returns the indices of keys in the order the reference sorts its list. Without
// duplicate keys that is simply ascending key order. With duplicates the reference's order
// among equal keys depends on its sort algorithm and on its comparison, which reports equal
// keys as less: it is reproduced by running sort.Sort with the same comparison.
func sortedOrder(keys []string, buf []int) []int {
	idx := buf
	for i := range keys {
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(keys[a], keys[b]) })
	if !hasDuplicates(keys, idx) {
		return idx
	}
	q := &quirkSort{keys: make([]string, len(keys)), idx: make([]int, len(keys))}
	copy(q.keys, keys)
	for i := range q.idx {
		q.idx[i] = i
	}
	sort.Sort(q)
	copy(idx, q.idx)
	return idx
}

// quirkSort sorts idx by keys with a comparison that is true for equal keys, like the
// reference's.
type quirkSort struct {
	keys []string
	idx  []int
}

func (q *quirkSort) Len() int           { return len(q.keys) }
func (q *quirkSort) Less(i, j int) bool { return q.keys[i] <= q.keys[j] }
func (q *quirkSort) Swap(i, j int) {
	q.keys[i], q.keys[j] = q.keys[j], q.keys[i]
	q.idx[i], q.idx[j] = q.idx[j], q.idx[i]
}

// hasDuplicates reports whether keys, visited in the sorted order, has two equal neighbours.
func hasDuplicates(keys []string, order []int) bool {
	for i := 1; i < len(order); i++ {
		if keys[order[i]] == keys[order[i-1]] {
			return true
		}
	}
	return false
}

// firstPositions maps every index of keys to the first index holding an equal key.
func firstPositions(keys []string, order []int) []int {
	first := make([]int, len(keys))
	for g := 0; g < len(order); {
		h, m := g, order[g]
		for h < len(order) && keys[order[h]] == keys[order[g]] {
			m = min(m, order[h])
			h++
		}
		for ; g < h; g++ {
			first[order[g]] = m
		}
	}
	return first
}
