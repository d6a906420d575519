package api

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrTokenFileOpen is wrapped by ReadTokenFile when the token file may be
// read or written by its group or others.
var ErrTokenFileOpen = errors.New("the API token file is open to its group or others")

// ReadTokenFile returns the token in the file at path, which only its
// owner may read and write: a file with any group or other permission is
// refused (ErrTokenFileOpen), as ssh refuses an open private key, since
// the token opens every route.
func ReadTokenFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("API token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("API token file: %w", err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("%s: mode %04o: %w; chmod 600 %s", path, perm, ErrTokenFileOpen, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", fmt.Errorf("API token file %s: %w", path, err)
	}
	token := strings.TrimSpace(string(data))
	if token == "" || strings.ContainsAny(token, " \t\r\n") {
		return "", fmt.Errorf("API token file %s: must hold one token on one line", path)
	}
	return token, nil
}

// EnsureTokenFile returns the token in the file at path, first creating
// the file with a new random token (mode 0600) when there is none;
// created reports that it did.
func EnsureTokenFile(path string) (token string, created bool, err error) {
	token, err = ReadTokenFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", false, err
	}
	token = hex.EncodeToString(b)
	switch err := writeNew(path, token+"\n"); {
	case errors.Is(err, fs.ErrExist):
		// Another cnsd sharing the directory was first: use its token.
		token, err = ReadTokenFile(path)
		return token, false, err
	case err != nil:
		return "", false, fmt.Errorf("create the API token file %s: %w (set api.token_file to a file cnsd may create)", path, err)
	}
	return token, true, nil
}

// writeNew writes data to a new file at path with mode 0600, whole or not
// at all: it is written under a temporary name and linked into place, so
// that a reader never sees half a token and an existing file is kept.
func writeNew(path, data string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".api.token.*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(data); err != nil {
		tmp.Close()
		return err
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
	return os.Link(tmp.Name(), path)
}
