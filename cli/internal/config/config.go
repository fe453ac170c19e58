// Package config reads and writes the CLI's profile file
// (~/.config/assay/config.yaml, or $ASSAY_CONFIG): named profiles of a
// server URL and an API key. The file holds secrets, so it is written 0600
// and its directory 0700.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"
)

// DefaultURL is the address `make up` serves the gateway on.
const DefaultURL = "http://127.0.0.1:8080"

// Profile is one server and key.
type Profile struct {
	URL    string `yaml:"url,omitempty"`
	APIKey string `yaml:"api_key,omitempty"`
}

// File is the profile file.
type File struct {
	Current  string              `yaml:"current,omitempty"`
	Profiles map[string]*Profile `yaml:"profiles,omitempty"`
}

// Path is $ASSAY_CONFIG, else ~/.config/assay/config.yaml (the user's
// config directory as the OS defines it).
func Path() (string, error) {
	if p := os.Getenv("ASSAY_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory (set ASSAY_CONFIG): %w", err)
	}
	return filepath.Join(dir, "assay", "config.yaml"), nil
}

// Load reads the file at path; a missing file is an empty one.
func Load(path string) (*File, error) {
	f := &File{Profiles: map[string]*Profile{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if f.Profiles == nil {
		f.Profiles = map[string]*Profile{}
	}
	return f, nil
}

// Save writes the file atomically with mode 0600 (a rename over the old
// one, so a crash never leaves half a file and the key is never readable
// by others, even for a moment).
func (f *File) Save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := yaml.Marshal(f)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
