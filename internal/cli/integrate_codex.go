package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/guardrun/guardrun/approval"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/guardrun/guardrun/internal/agents"
)

// codexHookTrust asks Codex for the trust entry of guardrun's hook in
// config (the content config.toml at path would have): the key it files
// the hook under and the hook's hash. `codex app-server` reads a copy in
// a temporary CODEX_HOME (so the person's own is not touched) and lists
// its hooks (hooks/list); the key names the copy's path, which is put
// back to path. Codex does not document how it hashes a hook; asking it
// is the one way to be right for the version installed.
func codexHookTrust(path string, config []byte, command string) (*agents.CodexTrust, error) {
	bin, err := exec.LookPath("codex")
	if err != nil {
		return nil, errors.New("codex is not on PATH, so the hash Codex trusts guardrun's hook by could not be asked for")
	}
	tmp, err := os.MkdirTemp("", "guardrun-codex-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	copyPath := filepath.Join(tmp, "config.toml")
	if err := os.WriteFile(copyPath, config, 0o600); err != nil {
		return nil, err
	}
	empty := filepath.Join(tmp, "cwd")
	if err := os.Mkdir(empty, 0o700); err != nil {
		return nil, err
	}
	hooks, err := codexListHooks(bin, tmp, empty)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		if h.Command != command || h.SourcePath != copyPath {
			continue
		}
		rest, ok := strings.CutPrefix(h.Key, copyPath+":")
		if !ok || !strings.HasPrefix(h.CurrentHash, "sha256:") {
			return nil, fmt.Errorf("codex app-server listed guardrun's hook as %q with hash %q, which guardrun does not understand", h.Key, h.CurrentHash)
		}
		return &agents.CodexTrust{Key: path + ":" + rest, Hash: h.CurrentHash}, nil
	}
	return nil, errors.New("codex app-server did not list guardrun's hook from the new config.toml")
}

type codexHook struct {
	Key         string `json:"key"`
	Command     string `json:"command"`
	SourcePath  string `json:"sourcePath"`
	CurrentHash string `json:"currentHash"`
	TrustStatus string `json:"trustStatus"`
}

// codexListHooks runs `codex app-server` with CODEX_HOME=home and asks
// hooks/list for cwd.
func codexListHooks(bin, home, cwd string) ([]codexHook, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "app-server")
	cmd.Dir = cwd
	cmd.Env = append(unsetenv(os.Environ(), "CODEX_HOME"), "CODEX_HOME="+home)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("codex app-server: %w", err)
	}
	defer func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	}()
	send := func(v any) error {
		b, _ := json.Marshal(v)
		_, err := stdin.Write(append(b, '\n'))
		return err
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{"clientInfo": map[string]any{"name": "guardrun", "version": "1"}}})
	send(map[string]any{"jsonrpc": "2.0", "method": "initialized"})
	send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": map[string]any{"cwds": []string{cwd}}})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     *int `json:"id"`
			Result struct {
				Data []struct {
					Hooks  []codexHook       `json:"hooks"`
					Errors []json.RawMessage `json:"errors"`
				} `json:"data"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil || *msg.ID != 2 {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("codex app-server: hooks/list: %s", msg.Error.Message)
		}
		var hooks []codexHook
		for _, d := range msg.Result.Data {
			if len(d.Errors) > 0 {
				return nil, fmt.Errorf("codex reads the new config.toml with errors: %s", d.Errors[0])
			}
			hooks = append(hooks, d.Hooks...)
		}
		return hooks, nil
	}
	msg := strings.TrimSpace(stderr.String())
	if ctx.Err() != nil {
		msg = "no answer within 30 seconds"
	}
	return nil, fmt.Errorf("codex app-server ended without listing the hooks: %s", approval.OneLine(msg))
}
