package versioned

import (
	"bytes"
	"slices"
)

// sortByID orders revisions oldest first: ids are UUIDv7.
func sortByID(rs []Revision) {
	slices.SortFunc(rs, func(a, b Revision) int { return bytes.Compare(a.ID[:], b.ID[:]) })
}
