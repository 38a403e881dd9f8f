package landlock

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/guardrun/guardrun/sandbox"
)

func TestSmoke(t *testing.T) {
	ws, _ := os.MkdirTemp("/var/tmp/lltest", "ws")
	os.WriteFile(filepath.Join(ws, ".env"), []byte("secret"), 0o644)
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	p, err := sandbox.Derive(sandbox.Spec{
		Zones:      []sandbox.Zone{{Name: "ws", Root: ws, Writable: true}},
		SystemRead: sandbox.DefaultSystemPaths,
		DenyNames:  []string{".env"},
		Cwd:        filepath.Join(ws, "sub"),
		Home:       ws,
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Command(context.Background(), p, []string{"sh", "-c", "id; echo hi > x; cat x; cat ../.env; cat /etc/shadow | head -1; ls /tmp; echo $TMPDIR; touch $TMPDIR/a && ls $TMPDIR; ls ..; kill -0 1; echo kill=$?"}, []string{"PATH=/usr/bin:/bin"}, []string{"deny_create"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	st, err := c.Wait()
	t.Logf("status %d err %v\n%s\nrules %d fixed %v lost %v", st, err, out.String(), len(c.Ruleset.Rules), c.Ruleset.Fixed, c.Ruleset.Lost)
}
