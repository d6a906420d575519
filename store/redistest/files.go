package redistest

import (
	"fmt"
	"os"
	"path/filepath"
)

// logName is the server's log file, which stays where it is when the
// data files are saved or restored (it is in the data directory unless
// InDir moved the data).
const logName = "redis.log"

// SaveFiles copies the server's data files (its append-only file and any
// snapshot) into dst, for RestoreFiles to bring them back later: a test
// of a Redis that comes back older than it was. The server must not run
// (Kill first), so that the files are whole.
func (s *Server) SaveFiles(dst string) error {
	if s.Running() {
		return fmt.Errorf("redistest: save the files of the server on port %d: it runs", s.port)
	}
	return copyTree(s.dir, dst)
}

// RestoreFiles replaces the server's data files with those SaveFiles
// saved in src. The server must not run; Restart then loads them.
func (s *Server) RestoreFiles(src string) error {
	if s.Running() {
		return fmt.Errorf("redistest: restore the files of the server on port %d: it runs", s.port)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("redistest: restore files: %w", err)
	}
	for _, e := range entries {
		if e.Name() == logName {
			continue
		}
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return fmt.Errorf("redistest: restore files: %w", err)
		}
	}
	return copyTree(src, s.dir)
}

// copyTree copies the files under src but the log into dst.
func copyTree(src, dst string) error {
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case rel == logName:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("redistest: copy %s to %s: %w", src, dst, err)
	}
	return nil
}
