package spanmodel

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/assayhq/assay/pkg/internal/jsontext"
)

// Unflatten turns dotted keys into nested objects. Numeric segments index
// lists (padded with nulls). Already-nested values pass through, so flat and
// nested input are equivalent; on conflict, an existing scalar blocks deeper
// keys and a later scalar replaces an object (keys are applied in sorted
// order so the result does not depend on map iteration).
func Unflatten(in map[string]any) map[string]any { return unflatten(in, nil) }

// padding bounds the null cells that list indexes in dotted keys create:
// "a.1023.b.1023" makes two lists of 1024 cells from 13 bytes. A key that
// would need more than left is dropped and counted. A nil *padding is no
// bound. Its arena, when set, lends the objects un-flattening builds.
type padding struct {
	left, dropped int
	arena         *Arena
}

// obj is a new empty object for un-flattening: from p's arena if it has
// one.
func (p *padding) obj() map[string]any {
	if p == nil {
		return map[string]any{}
	}
	return p.arena.obj()
}

// Arena lends the objects the normaliser builds for one request's
// attributes (un-flattening dotted keys makes about twenty small maps per
// span, each two allocations) and takes them back, emptied, when the
// request is done with them: the next request reuses them. Only the maps
// the arena itself lent are taken back, each once; the caller's own
// values in the tree are never touched. A nil *Arena lends new maps.
type Arena struct {
	made     []map[string]any // lent since the last Release
	free     []map[string]any // emptied, to lend again
	releases int
	mu       sync.Mutex
	forks    []*Arena // lent to the other goroutines of a's request, released with a
}

// arenas keeps the released arenas (and their emptied maps) for the next
// requests; the runtime drops what is not reused within two collections.
var arenas = sync.Pool{New: func() any { return new(Arena) }}

// maxFree bounds the maps one arena keeps: about 5 MB of small maps.
const maxFree = 16 << 10

// renewEvery is how many requests an arena's emptied maps serve before
// they are left to the collector: a map that grew and was then trimmed
// (clean's parking, the limits) keeps its table through clear, and
// len cannot tell; what one request made large is kept this long at
// most, and in no more arenas than requests ran at once.
const renewEvery = 256

// NewArena is an arena for one request's normalisation
// (Normalizer.BatchIn); Release it once nothing reads the spans' trees.
func NewArena() *Arena { return arenas.Get().(*Arena) }

// fork is an arena for another goroutine normalising spans of a's request
// (an Arena is not safe for concurrent use): nil for nil, and released
// with a.
func (a *Arena) fork() *Arena {
	if a == nil {
		return nil
	}
	f := NewArena()
	a.mu.Lock()
	a.forks = append(a.forks, f)
	a.mu.Unlock()
	return f
}

func (a *Arena) obj() map[string]any {
	if a == nil {
		return map[string]any{}
	}
	var m map[string]any
	if n := len(a.free); n > 0 {
		m = a.free[n-1]
		a.free[n-1] = nil
		a.free = a.free[:n-1]
	} else {
		m = map[string]any{}
	}
	a.made = append(a.made, m)
	return m
}

// Release takes back every map a lent: the spans (and everything else)
// built with a must no longer be read or kept, as the maps are emptied
// and lent again to another request. Call it once per NewArena. Maps that
// held more than a small map's eight entries are left to the collector
// (emptying keeps a map's memory).
func (a *Arena) Release() {
	if a == nil {
		return
	}
	for _, f := range a.forks {
		f.Release()
	}
	clear(a.forks)
	a.forks = a.forks[:0]
	for i, m := range a.made {
		if len(m) <= 8 && len(a.free) < maxFree {
			clear(m)
			a.free = append(a.free, m)
		}
		a.made[i] = nil
	}
	a.made = a.made[:0]
	if cap(a.made) > 2*maxFree {
		a.made = nil // one huge request's list is not kept for the next
	}
	if a.releases++; a.releases%renewEvery == 0 {
		clear(a.free)
		a.free = a.free[:0]
	}
	arenas.Put(a)
}

func unflatten(in map[string]any, pad *padding) map[string]any {
	// The entries sorted on the stack (most objects have few keys): no
	// lookup of each key afterwards.
	var buf [16]entry
	entries := buf[:0]
	for k, v := range in {
		entries = append(entries, entry{k, v})
	}
	sortEntries(entries)
	out := pad.obj()
	for _, e := range entries {
		v := e.v
		if m, ok := v.(map[string]any); ok {
			v = unflatten(m, pad)
		}
		setPath(out, e.path, v, pad)
	}
	return out
}

// entry is a path (or key) and its value.
type entry struct {
	path string
	v    any
}

// sortEntries sorts es by path, stably: by insertion for the few keys of
// most objects (no comparison function called per step), by the
// library's sort beyond, so the cost stays n log n.
func sortEntries(es []entry) {
	if len(es) > 12 {
		slices.SortStableFunc(es, func(a, b entry) int { return strings.Compare(a.path, b.path) })
		return
	}
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].path < es[j-1].path; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

// unflattenKeys is unflatten of in's keys (sorted); noAg leaves out the
// keys "ag" and "ag.*".
func unflattenKeys(in map[string]any, keys []string, pad *padding, noAg bool) map[string]any {
	out := pad.obj()
	for _, k := range keys {
		if noAg && (k == "ag" || strings.HasPrefix(k, "ag.")) {
			continue
		}
		v := in[k]
		if m, ok := v.(map[string]any); ok {
			v = unflatten(m, pad)
		}
		setPath(out, k, v, pad)
	}
	return out
}

// setPath sets the dotted path in m to v. It walks the path in place
// (cut at each dot) rather than splitting it: no slice per key.
func setPath(m map[string]any, path string, v any, pad *padding) {
	head, rest, deeper := strings.Cut(path, ".")
	if !deeper {
		if old, ok := m[head].(map[string]any); ok {
			if nv, ok := v.(map[string]any); ok {
				merge(old, nv)
				return
			}
		}
		m[head] = v
		return
	}
	next, exists := m[head]
	seg, after, more := strings.Cut(rest, ".")
	switch n := next.(type) {
	case map[string]any:
		setPath(n, rest, v, pad)
	case []any:
		if i, ok := listIndex(seg); ok {
			if gap := i - len(n); gap > 0 && pad != nil {
				if gap > pad.left {
					pad.dropped++
					return
				}
				pad.left -= gap
			}
			for len(n) <= i {
				n = append(n, nil)
			}
			if !more {
				n[i] = v
			} else {
				child, ok := n[i].(map[string]any)
				if !ok {
					child = pad.obj()
					n[i] = child
				}
				setPath(child, after, v, pad)
			}
			m[head] = n
		}
	default:
		if exists && next != nil {
			return // an existing scalar blocks deeper keys
		}
		if i, ok := listIndex(seg); ok {
			if pad != nil && i > pad.left {
				pad.dropped++ // before the list exists: no empty list left behind
				return
			}
			m[head] = []any{}
			setPath(m, path, v, pad)
			return
		}
		child := pad.obj()
		m[head] = child
		setPath(child, rest, v, pad)
	}
}

// listIndex is a path segment read as a list index (0..1023), as
// strconv.Atoi reads it, without Atoi's error allocation for the common
// non-numeric segment.
func listIndex(s string) (int, bool) {
	if s == "" || (s[0] < '0' || s[0] > '9') && s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	i, err := strconv.Atoi(s)
	return i, err == nil && i >= 0 && i < 1024
}

func merge(dst, src map[string]any) {
	for k, v := range src {
		if dm, ok := dst[k].(map[string]any); ok {
			if sm, ok := v.(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// Flatten lists the leaves of a nested object as dotted keys and their text:
// strings as they are, other values as JSON. A list is a leaf (its JSON) and
// its elements are leaves too, under key.N, so `in` can match elements.
func Flatten(m map[string]any) (keys, values []string) {
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			names := make([]string, 0, len(t))
			for k := range t {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, t[k])
			}
		case []any:
			keys, values = append(keys, prefix), append(values, LeafText(t))
			for i, e := range t {
				walk(prefix+"."+strconv.Itoa(i), e)
			}
		default:
			keys, values = append(keys, prefix), append(values, LeafText(t))
		}
	}
	walk("", m)
	return keys, values
}

// LeafText is how a value is stored in attr_values and compared by filters.
func LeafText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	b, _ := jsontext.Marshal(v)
	return string(b)
}

// get returns the value at a dotted path.
// It walks the path in place (cut at each dot) rather than splitting it.
func get(m map[string]any, path string) (any, bool) {
	for {
		head, rest, more := strings.Cut(path, ".")
		v, ok := m[head]
		if !ok || !more {
			return v, ok
		}
		if m, ok = v.(map[string]any); !ok {
			return nil, false
		}
		path = rest
	}
}

// sub returns the object at path, creating it (lent by a).
func sub(a *Arena, m map[string]any, path ...string) map[string]any {
	cur := m
	for _, p := range path {
		next, ok := cur[p].(map[string]any)
		if !ok {
			next = a.obj()
			cur[p] = next
		}
		cur = next
	}
	return cur
}

func num(v any) (float64, bool) {
	switch t := v.(type) {
	case float64:
		return t, true
	case int64:
		return float64(t), true
	case int:
		return float64(t), true
	case json.Number:
		f, err := t.Float64()
		return f, err == nil
	}
	return 0, false
}
