package approval

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/guardrun/guardrun/internal/sys/atomicfile"
)

// ProjectRule is one "always in this project" answer: a rule pattern the
// person approved for the project rooted at Project. It pre-approves what
// the pattern matches there, as a config rule with approval: false would,
// below every block rule and every rule of an untrusted project file
// (rules.Engine.WithProject).
type ProjectRule struct {
	// Project is the project's resolved root (its repository, else its
	// zone).
	Project string `json:"project"`
	// Pattern is the rule's words, quoted so that each matches the word
	// approved literally.
	Pattern string    `json:"pattern"`
	Created time.Time `json:"created"`
	// Front is where the person answered ("web", "terminal", ...; empty
	// for guardrun's own terminal prompt).
	Front string `json:"front,omitempty"`
}

// maxProjectRules bounds the rules kept, over all projects: past it the
// oldest are forgotten (and ask again).
const maxProjectRules = 1000

// ProjectRulesFile is the store's file name in the state directory.
const ProjectRulesFile = "project-rules.json"

// RuleStore keeps the person's project rules in their own state (never
// in a repository): one file, shared by every guardrun process of the
// user, written under a lock by rename, and refused when it is not a
// private regular file of this user. A RuleStore holds no open file and
// is safe for concurrent use.
type RuleStore struct {
	dir string
}

// OpenRuleStore is the store in the state directory dir. Nothing is
// created until the first rule is added.
func OpenRuleStore(dir string) (*RuleStore, error) {
	if dir == "" {
		return nil, errors.New("project rules: no state directory")
	}
	return &RuleStore{dir: dir}, nil
}

// Path is the store's file.
func (s *RuleStore) Path() string { return filepath.Join(s.dir, ProjectRulesFile) }

func (s *RuleStore) lockPath() string { return filepath.Join(s.dir, "project-rules.lock") }

type ruleFile struct {
	Version int           `json:"version"`
	Rules   []ProjectRule `json:"rules"`
}

// AddProjectRule keeps pattern for project (approval.ProjectRules).
func (s *RuleStore) AddProjectRule(project, pattern, front string) error {
	if project == "" || !filepath.IsAbs(project) {
		return fmt.Errorf("project rules: project %q is not an absolute path", project)
	}
	if pattern == "" {
		return errors.New("project rules: empty pattern")
	}
	return s.update(func(rf *ruleFile) bool {
		rf.Rules = slices.DeleteFunc(rf.Rules, func(r ProjectRule) bool { return r.Project == project && r.Pattern == pattern })
		rf.Rules = append(rf.Rules, ProjectRule{Project: project, Pattern: pattern, Created: time.Now().UTC(), Front: front})
		if over := len(rf.Rules) - maxProjectRules; over > 0 {
			rf.Rules = slices.Delete(rf.Rules, 0, over)
		}
		return true
	})
}

// Rules are the rules of project, oldest first; nil when there are none
// or the store does not exist. A damaged store is an error (and grants
// nothing).
func (s *RuleStore) Rules(project string) ([]ProjectRule, error) {
	all, err := s.List()
	if err != nil {
		return nil, err
	}
	var out []ProjectRule
	for _, r := range all {
		if r.Project == project {
			out = append(out, r)
		}
	}
	return out, nil
}

// List is every project's rules, oldest first.
func (s *RuleStore) List() ([]ProjectRule, error) {
	rf, err := s.read()
	if err != nil || rf == nil {
		return nil, err
	}
	return rf.Rules, nil
}

// Revoke removes the rules of project whose pattern is pattern (every
// rule of the project when pattern is ""; of every project when project
// is "" too) and says how many went.
func (s *RuleStore) Revoke(project, pattern string) (int, error) {
	n := 0
	err := s.update(func(rf *ruleFile) bool {
		before := len(rf.Rules)
		rf.Rules = slices.DeleteFunc(rf.Rules, func(r ProjectRule) bool {
			return (project == "" || r.Project == project) && (pattern == "" || r.Pattern == pattern)
		})
		n = before - len(rf.Rules)
		return n > 0
	})
	return n, err
}

// update changes the store under its lock; change reports whether it
// changed anything to write.
func (s *RuleStore) update(change func(*ruleFile) bool) error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("project rules: %w", err)
	}
	lf, err := os.OpenFile(s.lockPath(), os.O_RDWR|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return fmt.Errorf("project rules: %w", openError("lock", s.lockPath(), err))
	}
	defer lf.Close()
	if err := checkRegularPrivate("project rules lock", lf); err != nil {
		return fmt.Errorf("project rules: %w", err)
	}
	if err := lockFile(lf, true); err != nil {
		return fmt.Errorf("project rules: %w", err)
	}
	defer unlockFile(lf)
	rf, err := s.read()
	if err != nil {
		return err
	}
	if rf == nil {
		rf = &ruleFile{Version: 1}
	}
	if !change(rf) {
		return nil
	}
	return s.write(rf)
}

// read loads the store; nil, nil when there is none. Writers replace the
// file by rename, so no lock is needed to read it whole.
func (s *RuleStore) read() (*ruleFile, error) {
	f, err := os.OpenFile(s.Path(), os.O_RDONLY|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("project rules: %w", openError("project rules", s.Path(), err))
	}
	defer f.Close()
	if err := checkRegularPrivate("project rules", f); err != nil {
		return nil, fmt.Errorf("project rules: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxStoreSize+1))
	if err != nil {
		return nil, fmt.Errorf("project rules: read %s: %w", s.Path(), err)
	}
	if len(data) > maxStoreSize {
		return nil, fmt.Errorf("project rules: %s is larger than %d bytes: refusing it", s.Path(), maxStoreSize)
	}
	var rf ruleFile
	if err := json.Unmarshal(data, &rf); err != nil {
		return nil, fmt.Errorf("project rules: %s is damaged (its rules are ignored): %w", s.Path(), err)
	}
	if rf.Version != 1 {
		return nil, fmt.Errorf("project rules: %s has version %d, not 1 (its rules are ignored)", s.Path(), rf.Version)
	}
	return &rf, nil
}

func (s *RuleStore) write(rf *ruleFile) error {
	data, err := json.MarshalIndent(rf, "", "  ")
	if err != nil {
		return fmt.Errorf("project rules: %w", err)
	}
	data = append(data, '\n')
	if err := atomicfile.Replace(s.Path(), data, atomicfile.Options{Perm: 0o600, Durable: true}); err != nil {
		return fmt.Errorf("project rules: %w", err)
	}
	return nil
}
