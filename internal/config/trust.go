package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// TrustEntry is one trusted file.
type TrustEntry struct {
	Path    string    `json:"path"`
	SHA256  string    `json:"sha256"`
	Trusted time.Time `json:"trusted"`
}

// TrustStore is the trust store file: which project config files the
// person has trusted, by content hash, in the user's state directory.
//
// A .guardrun.yaml found by walking up from the working directory comes
// with the repository the agent works in, so it is untrusted until the
// person runs `guardrun trust`. Any edit changes the hash and makes the
// file untrusted again. The store never decides what a config may do; the
// rules package's Tighten does.
type TrustStore struct{ path string }

// OpenTrustStore names the store in stateDir; nothing is created until
// Trust.
func OpenTrustStore(stateDir string) *TrustStore {
	return &TrustStore{path: filepath.Join(stateDir, "trusted.json")}
}

// Path is the store's file.
func (s *TrustStore) Path() string { return s.path }

// TrustHash is the content hash recorded for a file.
func TrustHash(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

func (s *TrustStore) load() (map[string]TrustEntry, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]TrustEntry{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trust store: %w", err)
	}
	var list []TrustEntry
	if err := json.Unmarshal(data, &list); err != nil {
		// Fail closed: a damaged store trusts nothing.
		return nil, fmt.Errorf("trust store %s is damaged (%v); remove it and trust files again", s.path, err)
	}
	m := make(map[string]TrustEntry, len(list))
	for _, e := range list {
		m[e.Path] = e
	}
	return m, nil
}

// Trusted reports whether file (absolute) with this content is trusted.
func (s *TrustStore) Trusted(file string, content []byte) (bool, error) {
	m, err := s.load()
	if err != nil {
		return false, err
	}
	e, ok := m[file]
	return ok && e.SHA256 == TrustHash(content), nil
}

// Trust records file's content hash.
func (s *TrustStore) Trust(file string, content []byte) error {
	return s.update(func(m map[string]TrustEntry) {
		m[file] = TrustEntry{Path: file, SHA256: TrustHash(content), Trusted: time.Now().UTC()}
	})
}

// Revoke forgets file; it reports whether it was trusted.
func (s *TrustStore) Revoke(file string) (bool, error) {
	found := false
	err := s.update(func(m map[string]TrustEntry) {
		_, found = m[file]
		delete(m, file)
	})
	return found, err
}

// List returns the trusted files, sorted by path.
func (s *TrustStore) List() ([]TrustEntry, error) {
	m, err := s.load()
	if err != nil {
		return nil, err
	}
	out := make([]TrustEntry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// update rewrites the store atomically under an exclusive lock: a
// temporary file in the same directory, fsync, rename.
func (s *TrustStore) update(f func(map[string]TrustEntry)) error {
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	unlock, err := lock(s.path + ".lock")
	if err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	defer unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	f(m)
	list := make([]TrustEntry, 0, len(m))
	for _, e := range m {
		list = append(list, e)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Path < list[j].Path })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".trusted-*.json")
	if err != nil {
		return fmt.Errorf("trust store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("trust store: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}
