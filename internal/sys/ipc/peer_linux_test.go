package ipc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otherUID is the user the peer tests run their other end as (nobody).
const otherUID = 65534

// TestMain lets this test binary be the other end of a peer test, run
// as another user (see asOtherUser).
func TestMain(m *testing.M) {
	switch os.Getenv("IPC_TEST_ROLE") {
	case "":
		os.Exit(m.Run())
	case "client":
		os.Exit(peerClient(os.Getenv("IPC_TEST_PATH")))
	case "server":
		os.Exit(peerServer(os.Getenv("IPC_TEST_PATH")))
	}
	os.Exit(2)
}

// peerClient connects to path, sends a hello and an echo request, and
// prints what came back: "closed" when the server said nothing at all.
func peerClient(path string) int {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	for _, m := range []string{`{"type":"hello","body":{"protocol":"guardrun-test","version":3}}`, `{"type":"echo","id":1,"body":{"text":"x"}}`} {
		WriteFrame(c, AppendFrame(nil, MessageMagic, []byte(m)), nil)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	p, err := ReadFrameFrom(c, MessageMagic, 1<<20)
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		fmt.Println("closed")
	case err != nil:
		fmt.Println("read:", err)
	default:
		fmt.Println("answered:", string(p))
	}
	return 0
}

// peerServer serves echo in a private directory under dir and prints
// the socket's path, until its stdin ends.
func peerServer(dir string) int {
	l, err := ListenPrivate(dir, "ipc-peer-", "s")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	// Root's connection needs no permission; say where it is.
	s := &Server{Protocol: testProto, Handle: func(ctx context.Context, c *Conn) {
		c.Serve(ctx, Handler{Request: func(context.Context, *Message) (any, error) { return echoReply{Text: "served"}, nil }})
	}}
	go s.Serve(l)
	fmt.Println(l.Path())
	io.Copy(io.Discard, os.Stdin)
	s.Close()
	return 0
}

// asOtherUser starts this test binary (copied where that user can run
// it) as otherUID in role.
func asOtherUser(t *testing.T, role, path string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := openDir(t)
	bin := filepath.Join(dir, "ipc.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"IPC_TEST_ROLE=" + role, "IPC_TEST_PATH=" + path, "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	return cmd
}

// openDir is a fresh directory any user can enter.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ipc-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestPeerOtherUser: a process of another user that reaches the socket
// (its directory's mode loosened, as a person might by mistake) is
// closed on unanswered, and the server's handler never sees it; a
// client refuses a server of another user.
func TestPeerOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting a process of another user needs root")
	}
	t.Run("server refuses the client", func(t *testing.T) {
		handled := make(chan struct{}, 1)
		l, err := ListenPrivate(openDir(t), "ipc-peer-", "s")
		if err != nil {
			t.Fatal(err)
		}
		s := &Server{Protocol: testProto, Handle: func(ctx context.Context, c *Conn) {
			handled <- struct{}{}
			c.Serve(ctx, Handler{})
		}}
		go s.Serve(l)
		defer s.Close()
		path := l.Path()
		if err := os.Chmod(l.Dir(), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o777); err != nil {
			t.Fatal(err)
		}
		out, err := asOtherUser(t, "client", path).CombinedOutput()
		if err != nil {
			t.Fatalf("the other user's client: %v\n%s", err, out)
		}
		if got := strings.TrimSpace(string(out)); got != "closed" {
			t.Errorf("a client of uid %d got %q, want closed", otherUID, got)
		}
		select {
		case <-handled:
			t.Error("the handler saw a connection of another user")
		default:
		}
		// This user's own client is still served.
		raw := rawDial(t, path)
		raw.write(t, `{"type":"hello","body":{"protocol":"guardrun-test","version":3}}`)
		raw.read(t)
		select {
		case <-handled:
		case <-time.After(5 * time.Second):
			t.Error("this user's own client did not reach the handler")
		}
	})
	t.Run("client refuses the server", func(t *testing.T) {
		dir := openDir(t)
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		cmd := asOtherUser(t, "server", dir)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { stdin.Close(); cmd.Wait() }()
		line, err := bufio.NewReader(stdout).ReadString('\n')
		path := strings.TrimSpace(line)
		if err != nil || !strings.HasPrefix(path, "/") {
			t.Fatalf("the other user's server: %q, %v", line, err)
		}
		// Root can connect to it; the connection works at the socket's
		// level, and Dial refuses it for the server's uid.
		raw, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("the other user's server does not listen: %v", err)
		}
		raw.Close()
		c, err := Dial(context.Background(), path, testProto, Handler{})
		if err == nil {
			c.Close()
			t.Fatal("dialled a server of another user")
		}
		if !errors.Is(err, ErrForeignPeer) || !strings.Contains(err.Error(), fmt.Sprintf("uid %d", otherUID)) {
			t.Errorf("Dial: %v, want ErrForeignPeer naming uid %d", err, otherUID)
		}
	})
}
