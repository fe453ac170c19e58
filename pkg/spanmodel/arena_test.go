package spanmodel

import "testing"

// TestArenaRelease: Release takes back the small maps it lent, emptied,
// and lends them again; it keeps neither larger maps nor more than
// maxFree of them, and renews its maps every renewEvery releases.
func TestArenaRelease(t *testing.T) {
	a := &Arena{}
	small, big := a.obj(), a.obj()
	small["k"] = 1
	for i := range 9 {
		big[string(rune('a'+i))] = i
	}
	for range maxFree + 10 {
		a.obj()
	}
	a.releases = 0
	a.Release()
	arenas.Get() // a itself, out of the pool again (or a new one: not used)
	if len(a.made) != 0 || len(a.free) != maxFree {
		t.Fatalf("after Release: %d lent, %d free, want 0 and %d", len(a.made), len(a.free), maxFree)
	}
	if len(small) != 0 {
		t.Fatalf("a map taken back is not emptied: %v", small)
	}
	if len(big) != 9 {
		t.Fatal("a map of more than eight entries was emptied")
	}
	for _, m := range a.free {
		if isSame(m, big) {
			t.Fatal("a map of more than eight entries was taken back")
		}
	}
	if m := a.obj(); len(m) != 0 {
		t.Fatalf("lent a map that is not empty: %v", m)
	}
	for range renewEvery - 1 {
		a.Release()
		arenas.Get()
	}
	if a.releases%renewEvery != 0 || len(a.free) != 0 {
		t.Fatalf("after %d releases: %d maps kept, want 0", a.releases, len(a.free))
	}
	var nilArena *Arena
	if m := nilArena.obj(); m == nil || len(m) != 0 {
		t.Fatal("a nil arena lends no map")
	}
	nilArena.Release()
}

func isSame(a, b map[string]any) bool {
	a["\x00probe"] = true
	_, same := b["\x00probe"]
	delete(a, "\x00probe")
	return same
}
