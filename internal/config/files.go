package config

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/guardrun/guardrun/internal/sys/regfile"
	"github.com/guardrun/guardrun/rules"
)

// ProjectFile is the name of a project config file, found by walking up
// from the working directory.
const ProjectFile = ".guardrun.yaml"

// FindProjects lists the .guardrun.yaml files from dir up to /, nearest
// first.
func FindProjects(dir string) []string {
	var out []string
	for {
		p := filepath.Join(dir, ProjectFile)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			out = append(out, p)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// resolver is what one load looks at in the file system, each once:
// the paths it resolves (rules.Resolve from /), the project files found
// above a directory and the bytes of each read. So the checks and the
// two discoveries of one load (from the file system alone, and with the
// environment's choices) see the file system as at one moment, and a
// path met again (a zone root checked against the state directory, the
// session store and the user config; the working directory's project
// files) costs no second walk or read. It lives no longer than the load.
type resolver struct {
	resolved map[string]string
	projects map[string][]string
	read     map[string]readFile
}

type readFile struct {
	data []byte
	err  error
}

func newResolver() *resolver {
	return &resolver{resolved: map[string]string{}, projects: map[string][]string{}, read: map[string]readFile{}}
}

func (r *resolver) resolve(p string) string {
	if out, ok := r.resolved[p]; ok {
		return out
	}
	out := rules.Resolve(p, "/")
	r.resolved[p] = out
	return out
}

// findProjects is FindProjects(dir).
func (r *resolver) findProjects(dir string) []string {
	if out, ok := r.projects[dir]; ok {
		return out
	}
	out := FindProjects(dir)
	r.projects[dir] = out
	return out
}

// readFile is rules.ReadFile(path) of a project file: size-checked
// before it is read. Nothing changes the bytes it returns.
func (r *resolver) readFile(path string) ([]byte, error) {
	if f, ok := r.read[path]; ok {
		return f.data, f.err
	}
	data, err := ReadProject(path)
	r.read[path] = readFile{data, err}
	return data, err
}

// ReadRegular reads a config file that must be a regular file: the
// user config or $GUARDRUN_CONFIG (ReadProject for a project file). In a
// directory the sandbox may write, it can have been replaced by a FIFO,
// whose open would wait for a writer forever (and with it guardrun, or a
// request of `guardrun serve`, holding the client's descriptors), or by
// a link to a device, whose open alone can act: regfile.Open refuses
// both without opening them. (--config is read as given: it may be a
// pipe, `--config <(...)`.)
func ReadRegular(path string) ([]byte, error) {
	return readConfig(path, regfile.Open)
}

// ReadProject is ReadRegular of a project file, which must not be a
// symbolic link either: guardrun reads and parses it before it knows
// whether it is trusted, and a link a command left there could send
// guardrun, unsandboxed, to a file the command cannot read (a
// credentials file), whose first bytes would come back quoted in the
// parse error the agent is shown.
func ReadProject(path string) ([]byte, error) {
	return readConfig(path, regfile.OpenNoFollow)
}

func readConfig(path string, open func(string) (*os.File, fs.FileInfo, error)) ([]byte, error) {
	f, _, err := open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	return rules.ReadOpened(f)
}

// loadRegular is rules.Load of a file read by ReadRegular.
func loadRegular(path string, env rules.Env) (*rules.Config, error) {
	data, err := ReadRegular(path)
	if err != nil {
		return nil, err
	}
	return rules.ParseFile(path, data, env)
}
