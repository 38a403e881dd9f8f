package bwrap

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/sandbox"
)

// TestEnv: the environment a command starts with under bwrap
// (sandbox.CommandEnv, which Command uses).
func TestEnv(t *testing.T) {
	p := &sandbox.Profile{EnvDeny: sandbox.DefaultEnvDeny, PrivateTmp: true}
	in := []string{
		"PATH=/usr/bin:/bin",
		"GITHUB_TOKEN=x", "NPM_TOKEN=x", "MY_TOKEN=x", "MY_TOKEN_FILE=x", "DB_PASSWORD=x",
		"AWS_REGION=x", "OPENAI_API_KEY=x", "STRIPE_SECRET_KEY=x", "SSH_AUTH_SOCK=/run/x",
		"GUARDRUN_SOCKET=/run/y", "GH_HOST=x",
		"TOKENIZER=keep", "TERM=xterm", "TMPDIR=/var/folders/x", "HOME=/root", "PWD=/root",
		"noequals", "=novalue",
		"LANG=C", "LANG=C.UTF-8",
	}
	want := []string{"PATH=/usr/bin:/bin", "TOKENIZER=keep", "TERM=xterm", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	if diff := cmp.Diff(sandbox.CommandEnv(p, in), want); diff != "" {
		t.Errorf("Env (-got +want):\n%s", diff)
	}
	p = &sandbox.Profile{EnvDeny: []string{"["}} // malformed: fails closed
	if got := sandbox.CommandEnv(p, []string{"A=1"}); len(got) != 0 {
		t.Errorf("malformed glob let %q through", got)
	}
}
