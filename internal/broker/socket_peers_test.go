package broker

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guardrun/guardrun/internal/sys/ipc"
)

// What other processes of the user can and cannot do to a request that
// is not theirs, over the socket.

// An asker's withdrawal reaches only its own requests: another
// connection that withdraws its request of the same message number
// leaves the first one waiting, and it is answered as usual.
func TestWithdrawTouchesOnlyItsOwnRequest(t *testing.T) {
	srv, path := listen(t)
	ctx := context.Background()
	mine, _ := Dial(ctx, path)
	defer mine.Close()
	theirs, _ := Dial(ctx, path)
	defer theirs.Close()
	got := ask(mine, ctx, "make deploy")
	waitPending(t, srv, 1)
	tctx, cancel := context.WithCancel(ctx)
	gone := ask(theirs, tctx, "make deploy")
	waitPending(t, srv, 2)
	// Both asks are message 1 of their connection.
	cancel()
	if r := <-gone; r.err == nil {
		t.Fatalf("the withdrawn ask was answered: %+v", r)
	}
	waitPending(t, srv, 1)
	theirs.Close()
	time.Sleep(50 * time.Millisecond)
	left := srv.Broker.Pending()
	if len(left) != 1 || left[0].AskerPID != os.Getpid() {
		t.Fatalf("pending after the other connection left: %+v", left)
	}
	if err := srv.Broker.Answer(left[0].ID, Answer{Approve: true}, "web"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || !r.a.Approve {
		t.Errorf("the asker got %+v", r)
	}
}

// Twenty fronts answer one request at the same moment, half approving,
// half denying: exactly one answer is taken, and it is the asker's.
func TestRacingAnswersTakeExactlyOne(t *testing.T) {
	_, path := listen(t)
	ctx := context.Background()
	const n = 20
	fronts := make([]*Front, n)
	for i := range fronts {
		f, err := Attach(ctx, path, "front"+string(rune('a'+i)), "front-token")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		fronts[i] = f
	}
	c, _ := Dial(ctx, path)
	defer c.Close()
	got := ask(c, ctx, "rm -rf build")
	var id string
	for _, f := range fronts {
		id = next(t, f).Pending.ID
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i, f := range fronts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = f.Answer(ctx, id, Answer{Approve: i%2 == 0, Note: "from " + string(rune('a'+i))})
		}()
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("fronts %d and %d were both taken", winner, i)
		case err == nil:
			winner = i
		case !strings.Contains(err.Error(), "answered already"):
			t.Errorf("front %d: %v, want answered already", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no answer was taken")
	}
	r := <-got
	if r.err != nil || r.a.Approve != (winner%2 == 0) || r.a.Front != "front"+string(rune('a'+winner)) {
		t.Errorf("the asker got %+v, the taken answer was front %d's", r, winner)
	}
}

// A broker that another user runs at the socket is never asked: the
// asker refuses to talk to it (and the prompter chain goes on to the
// terminal). Another user's directory where the socket goes is refused
// by Listen rather than used.
func TestAnotherUsersBroker(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting a process of another user needs root")
	}
	dir := openDir(t)
	path := filepath.Join(dir, "broker", "socket")
	cmd := asNobody(t, "broker", path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("the other user's broker said %q", l)
	}
	// Root passes the directory's mode; only the peer check stands.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := Dial(ctx, path); err == nil {
		c.Close()
		t.Fatal("dialled another user's broker")
	} else if !strings.Contains(err.Error(), "another user") {
		t.Errorf("dial: %v, want refused as another user's", err)
	}
	if srv, err := Listen(path, New()); err == nil {
		srv.Close()
		t.Error("listened in another user's directory")
	} else if !strings.Contains(err.Error(), "not yours") {
		t.Errorf("listen: %v, want refused as not this user's", err)
	}
}

// A front killed in the middle of sending its answer gives no answer:
// the request waits for the next front.
func TestFrontKilledMidAnswer(t *testing.T) {
	srv, path := listen(t)
	ctx := context.Background()
	c, _ := Dial(ctx, path)
	defer c.Close()
	got := ask(c, ctx, "make deploy")
	waitPending(t, srv, 1)
	id := srv.Broker.Pending()[0].ID
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BROKER_TEST_ROLE=half-answer", "BROKER_TEST_SOCKET="+path, "BROKER_TEST_ID="+id)
	cmd.Stderr = os.Stderr
	if out, err := cmd.Output(); err != nil || string(out) != "sent half\n" {
		t.Fatalf("the front: %v %q", err, out)
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("a half-sent answer was taken: %+v", r)
	default:
	}
	if len(srv.Broker.Pending()) != 1 {
		t.Fatal("the request is no longer waiting")
	}
	if err := srv.Broker.Answer(id, Answer{Note: "no"}, "web"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.a.Approve || r.a.Front != "web" {
		t.Errorf("the asker got %+v", r)
	}
}

func waitPending(t *testing.T, srv *Server, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Broker.Pending()) != n {
		if time.Now().After(deadline) {
			t.Fatalf("%d pending, want %d", len(srv.Broker.Pending()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// asNobody starts this test binary in role as the user nobody, from a
// copy that user can run.
func asNobody(t *testing.T, role, path string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(openDir(t), "broker.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"BROKER_TEST_ROLE=" + role, "BROKER_TEST_SOCKET=" + path, "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, NoSetGroups: true}}
	return cmd
}

// openDir is a fresh directory any user can enter and write.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "broker-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

// halfAnswerForTest attaches as a front on a raw connection, sends the
// first half of an approving answer to request id, says so and exits.
func halfAnswerForTest(path, id string) {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	for _, m := range []string{
		`{"type":"hello","body":{"protocol":"guardrun-broker","version":1}}`,
		`{"type":"attach","id":1,"body":{"name":"dying","token":"front-token"}}`,
	} {
		ipc.WriteFrame(c, ipc.AppendFrame(nil, ipc.MessageMagic, []byte(m)), nil)
	}
	for {
		p, err := ipc.ReadFrameFrom(c, ipc.MessageMagic, MaxMessage)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		if strings.Contains(string(p), `"reply":1`) {
			break
		}
	}
	f := ipc.AppendFrame(nil, ipc.MessageMagic, []byte(`{"type":"answer","id":2,"body":{"id":"`+id+`","approve":true}}`))
	ipc.WriteFrame(c, f[:len(f)-10], nil)
	fmt.Println("sent half")
	os.Exit(0)
}

// Brokers started at once on one socket: exactly one serves it, the
// others are told one runs. One killed leaves its socket behind; the
// next takes it over and is the one askers reach.
func TestBrokersRacingForTheSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker", "socket")
	const n = 8
	var wg sync.WaitGroup
	servers := make([]*Server, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			servers[i], errs[i] = Listen(path, New())
		}()
	}
	close(start)
	wg.Wait()
	won := 0
	for i := range n {
		var running *AlreadyRunningError
		switch {
		case errs[i] == nil:
			won++
			servers[i].Close()
		case !errors.As(errs[i], &running):
			t.Errorf("broker %d: %v, want told one runs", i, errs[i])
		}
	}
	if won != 1 {
		t.Fatalf("%d brokers took the socket, want 1", won)
	}

	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BROKER_TEST_ROLE=broker", "BROKER_TEST_SOCKET="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if l, _ := bufio.NewReader(out).ReadString('\n'); l != "ready\n" {
		t.Fatalf("the broker said %q", l)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("the killed broker left no socket: %v", err)
	}
	ctx := context.Background()
	if c, err := Dial(ctx, path); err == nil {
		c.Close()
		t.Fatal("dialled a dead broker's socket")
	}
	srv, err := Listen(path, New())
	if err != nil {
		t.Fatalf("Listen over a dead broker's socket: %v", err)
	}
	go srv.Serve()
	defer srv.Close()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := ask(c, ctx, "make")
	waitPending(t, srv, 1)
	srv.Broker.Answer(srv.Broker.Pending()[0].ID, Answer{Note: "no"}, "web")
	if r := <-got; r.err != nil || r.a.Approve {
		t.Errorf("the asker got %+v", r)
	}
}
