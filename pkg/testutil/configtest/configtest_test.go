package configtest

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConfigurationIsCurrent fails when docs/configuration.md is not laid
// out as the generator lays it out (a hand edit of its header, a service
// missing or out of order). The rows of each section are checked against
// the code by each service's TestConfigDocumented, which compiles the
// service's configuration; together they hold the file to what
// `make config-docs` writes.
func TestConfigurationIsCurrent(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(RepoRoot(t), Path))
	require.NoError(t, err)
	rows := Parse(doc)
	var names []string
	for name := range rows {
		names = append(names, name)
	}
	slices.Sort(names)
	want := slices.Clone(Services)
	slices.Sort(want)
	require.Equal(t, want, names, "%s's sections: run make config-docs", Path)
	if string(Render(rows)) != string(doc) {
		t.Fatalf("%s is not what make config-docs writes (edit the generator or the desc tags, not the file): run make config-docs\n%s",
			Path, lineDiff(string(Render(rows)), string(doc)))
	}
}

func TestParseIsRendersInverse(t *testing.T) {
	rows := map[string][]byte{}
	for i, s := range Services {
		rows[s] = []byte("| `X_" + s + "` | " + string(rune('a'+i)) + " | why |\n| `Y` |  | b |\n")
	}
	assert.Equal(t, rows, Parse(Render(rows)))
}
