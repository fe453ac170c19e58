package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.yaml")
	f, err := Load(path)
	require.NoError(t, err, "a missing file is an empty one")
	assert.Empty(t, f.Profiles)
	f.Profiles["ci"] = &Profile{URL: "https://assay.example", APIKey: "k1"}
	f.Current = "ci"
	require.NoError(t, f.Save(path))
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file holds keys")
	dst, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), dst.Mode().Perm())
	g, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, f, g)
	ents, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, ents, 1, "no temporary file left behind")

	require.NoError(t, os.WriteFile(path, []byte("profiles: [not a map"), 0o600))
	_, err = Load(path)
	assert.ErrorContains(t, err, path)
}

func TestPath(t *testing.T) {
	t.Setenv("ASSAY_CONFIG", "/x/y.yaml")
	p, err := Path()
	require.NoError(t, err)
	assert.Equal(t, "/x/y.yaml", p)
	t.Setenv("ASSAY_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	p, err = Path()
	require.NoError(t, err)
	assert.Equal(t, "/cfg/assay/config.yaml", p)
}
