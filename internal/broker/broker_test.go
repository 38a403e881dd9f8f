package broker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// The test binary doubles as the processes of these tests: a broker that
// is killed, and askers that post many requests at once.
func TestMain(m *testing.M) {
	switch os.Getenv("BROKER_TEST_ROLE") {
	case "broker":
		serveForTest(os.Getenv("BROKER_TEST_SOCKET"))
		return
	case "asker":
		askForTest(os.Getenv("BROKER_TEST_SOCKET"), os.Getenv("BROKER_TEST_NAME"))
		return
	}
	os.Exit(m.Run())
}

// serveForTest serves a broker until killed, saying "ready" on stdout.
func serveForTest(path string) {
	srv, err := Listen(path, New())
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	go srv.Serve()
	fmt.Println("ready")
	select {}
}

// askForTest posts requests BROKER_TEST_COUNT at once on one connection
// and prints each answer as a JSON line.
func askForTest(path, name string) {
	n, _ := strconv.Atoi(os.Getenv("BROKER_TEST_COUNT"))
	c, err := Dial(context.Background(), path)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	enc := json.NewEncoder(os.Stdout)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := fmt.Sprintf("%s-%d", name, i)
			a, err := c.Prompt(context.Background(), request("echo "+what))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				enc.Encode(map[string]string{"what": what, "error": err.Error()})
				return
			}
			enc.Encode(map[string]any{"what": what, "approve": a.Approve, "note": a.Note, "front": a.Front})
		}()
	}
	wg.Wait()
}

func request(script string) *approval.Request {
	return &approval.Request{
		Display: script, Cwd: "/w", Sandbox: "workspace /w (rw); network off", Summary: script,
		Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{{Kind: "command", Text: script, Decision: rules.Ask, Reason: "matches no rule"}}},
	}
}

func listen(t *testing.T) (*Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broker", "socket")
	srv, err := Listen(path, New())
	if err != nil {
		t.Fatal(err)
	}
	srv.FrontToken = "front-token"
	go srv.Serve()
	t.Cleanup(func() { srv.Close() })
	return srv, path
}

// next waits for the front's next event.
func next(t *testing.T, f *Front) Event {
	t.Helper()
	select {
	case ev, ok := <-f.Events:
		if !ok {
			t.Fatal("the front's connection ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return Event{}
}

type result struct {
	a   approval.Answer
	err error
}

func ask(c *Client, ctx context.Context, script string) chan result {
	ch := make(chan result, 1)
	go func() {
		a, err := c.Prompt(ctx, request(script))
		ch <- result{a, err}
	}()
	return ch
}

// Every front sees the request; the first answer is the asker's, with
// the front's name; a second answer, from any front, is refused; every
// front hears it was answered.
func TestFirstAnswerWins(t *testing.T) {
	srv, path := listen(t)
	ctx := context.Background()
	a, err := Attach(ctx, path, "web", "front-token")
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Attach(ctx, path, "terminal", "front-token")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	snap, local := srv.Broker.Subscribe("local")
	defer local.Cancel()
	if len(snap) != 0 {
		t.Fatalf("pending before any ask: %v", snap)
	}
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := ask(c, ctx, "make deploy")
	pa, pb := next(t, a), next(t, b)
	if pa.Pending == nil || pb.Pending == nil || pa.Pending.ID != pb.Pending.ID || pa.Pending.Display != "make deploy" {
		t.Fatalf("fronts saw %+v and %+v", pa, pb)
	}
	if !strings.Contains(pa.Pending.Asker, "pid "+strconv.Itoa(os.Getpid())) || pa.Pending.PID != os.Getpid() {
		t.Errorf("asker %q pid %d, want this process %d", pa.Pending.Asker, pa.Pending.PID, os.Getpid())
	}
	id := pa.Pending.ID
	if err := b.Answer(ctx, id, Answer{Note: "not now"}); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if diff := cmp.Diff(r.a, approval.Answer{Note: "not now", Front: "terminal"}); r.err != nil || diff != "" {
		t.Errorf("the asker got %v (-got +want):\n%s", r.err, diff)
	}
	if err := a.Answer(ctx, id, Answer{Approve: true}); err == nil || !strings.Contains(err.Error(), "answered already") {
		t.Errorf("a second answer: %v, want refused as answered already", err)
	}
	if err := srv.Broker.Answer(id, Answer{Approve: true}, "local"); !errors.Is(err, ErrAnswered) {
		t.Errorf("a second answer in process: %v", err)
	}
	for _, f := range []*Front{a, b} {
		ev := next(t, f)
		if ev.Resolved == nil || ev.Resolved.ID != id || ev.Resolved.How != "answered" || ev.Resolved.Front != "terminal" {
			t.Errorf("resolved notice %+v", ev)
		}
	}
	if len(srv.Broker.Pending()) != 0 {
		t.Error("the answered request is still pending")
	}
}

// A front that goes away while it shows a request loses nothing: the
// request waits for the next front, which sees it when it attaches.
func TestFrontGoneLosesNothing(t *testing.T) {
	_, path := listen(t)
	ctx := context.Background()
	a, err := Attach(ctx, path, "web", "front-token")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := Dial(ctx, path)
	defer c.Close()
	got := ask(c, ctx, "rm -rf build")
	id := next(t, a).Pending.ID
	a.Close()
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("the asker was answered when its front went away: %+v", r)
	default:
	}
	b, err := Attach(ctx, path, "terminal", "front-token")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ev := next(t, b); ev.Pending == nil || ev.Pending.ID != id {
		t.Fatalf("the new front did not see the waiting request: %+v", ev)
	}
	if err := b.Answer(ctx, id, Answer{Approve: true}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || !r.a.Approve || r.a.Front != "terminal" {
		t.Errorf("the asker got %+v", r)
	}
}

// An asker that gives up withdraws its request from every front, and an
// answer to it is refused as withdrawn.
func TestWithdrawn(t *testing.T) {
	_, path := listen(t)
	ctx := context.Background()
	f, err := Attach(ctx, path, "web", "front-token")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows := []struct {
		name string
		quit func(c *Client, cancel context.CancelFunc)
	}{
		{"its context ends", func(c *Client, cancel context.CancelFunc) { cancel() }},
		{"its connection closes", func(c *Client, cancel context.CancelFunc) { c.Close() }},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c, _ := Dial(ctx, path)
			defer c.Close()
			actx, cancel := context.WithCancel(ctx)
			defer cancel()
			got := ask(c, actx, "sleep 1")
			id := next(t, f).Pending.ID
			r.quit(c, cancel)
			if ev := next(t, f); ev.Resolved == nil || ev.Resolved.ID != id || ev.Resolved.How != "withdrawn" {
				t.Errorf("the front heard %+v", ev)
			}
			if err := f.Answer(ctx, id, Answer{Approve: true}); err == nil || !strings.Contains(err.Error(), "withdrawn") {
				t.Errorf("an answer to a withdrawn request: %v", err)
			}
			if res := <-got; res.err == nil {
				t.Errorf("the asker that left got an answer: %+v", res)
			}
		})
	}
}

// Only a connection that presents the front token can attach, and only
// an attached front can answer.
func TestFrontNeedsToken(t *testing.T) {
	srv, path := listen(t)
	ctx := context.Background()
	for _, tok := range []string{"", "wrong", "front-token-but-longer"} {
		if f, err := Attach(ctx, path, "web", tok); err == nil {
			f.Close()
			t.Errorf("attached with token %q", tok)
		}
	}
	c, _ := Dial(ctx, path)
	defer c.Close()
	got := ask(c, ctx, "make")
	for len(srv.Broker.Pending()) == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	id := srv.Broker.Pending()[0].ID
	var rep empty
	if err := c.conn.Call(ctx, typeAnswer, AnswerBody{ID: id, Answer: Answer{Approve: true}}, &rep); err == nil {
		t.Error("a connection that did not attach answered")
	}
	if err := srv.Broker.Answer(id, Answer{Approve: true, Session: true}, "web"); err == nil {
		t.Error("approved for the session a request that cannot be remembered")
	}
	if err := srv.Broker.Answer(id, Answer{Approve: true, Always: true}, "web"); err == nil {
		t.Error("approved always a request that offers no rule")
	}
	if err := srv.Broker.Answer(id, Answer{Note: "no"}, "web"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.a.Approve {
		t.Errorf("asker got %+v", r)
	}
}

// A broker that is killed while requests wait fails each of them: the
// gate refuses (never runs) with a line saying the broker went away.
func TestBrokerKilledFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker", "socket")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "BROKER_TEST_ROLE=broker", "BROKER_TEST_SOCKET="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("broker: %q", line)
	}
	ctx := context.Background()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var outs []chan approval.Outcome
	for i := range 3 {
		ch := make(chan approval.Outcome, 1)
		outs = append(outs, ch)
		go func() {
			g := &approval.Gate{Mode: rules.ModeInteractive, Prompter: c}
			o, err := g.Decide(ctx, request(fmt.Sprintf("touch f%d", i)))
			if err != nil {
				t.Error(err)
			}
			ch <- o
		}()
	}
	f, err := Attach(ctx, path, "web", "")
	if err == nil {
		f.Close()
		t.Fatal("attached without a token")
	}
	time.Sleep(200 * time.Millisecond) // the asks are on their way
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	for i, ch := range outs {
		select {
		case o := <-ch:
			want := fmt.Sprintf("guardrun: refused: the approval broker went away before anyone answered: touch f%d needs approval", i)
			if o.Run || o.Refusal != want || o.By != "broker" {
				t.Errorf("request %d: %+v, want refused with %q", i, o, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d still waits after the broker died", i)
		}
	}
}

// 100 requests from 10 processes wait at once; answered in a random
// order, each process gets exactly its own answers.
func TestHundredRequestsFromTenProcesses(t *testing.T) {
	srv, path := listen(t)
	const procs, each = 10, 10
	type line struct {
		What    string `json:"what"`
		Approve bool   `json:"approve"`
		Note    string `json:"note"`
		Front   string `json:"front"`
		Error   string `json:"error"`
	}
	outs := make([]*strings.Builder, procs)
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "BROKER_TEST_ROLE=asker", "BROKER_TEST_SOCKET="+path,
			"BROKER_TEST_NAME=p"+strconv.Itoa(p), "BROKER_TEST_COUNT="+strconv.Itoa(each))
		outs[p] = &strings.Builder{}
		cmd.Stdout, cmd.Stderr = outs[p], os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	deadline := time.Now().Add(60 * time.Second)
	for len(srv.Broker.Pending()) < procs*each {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests pending, want %d", len(srv.Broker.Pending()), procs*each)
		}
		time.Sleep(20 * time.Millisecond)
	}
	pending := srv.Broker.Pending()
	pids := map[int]bool{}
	for _, p := range pending {
		pids[p.AskerPID] = true
	}
	if len(pids) != procs {
		t.Errorf("the requests came from %d processes, want %d", len(pids), procs)
	}
	rand.Shuffle(len(pending), func(i, j int) { pending[i], pending[j] = pending[j], pending[i] })
	for _, p := range pending {
		what := strings.TrimPrefix(p.Display, "echo ")
		n, _ := strconv.Atoi(what[strings.IndexByte(what, '-')+1:])
		if err := srv.Broker.Answer(p.ID, Answer{Approve: n%2 == 0, Note: "note " + what}, "web"); err != nil {
			t.Fatal(err)
		}
	}
	for p, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("asker %d: %v\n%s", p, err, outs[p])
		}
		var got []line
		dec := json.NewDecoder(strings.NewReader(outs[p].String()))
		for dec.More() {
			var l line
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			got = append(got, l)
		}
		sort.Slice(got, func(i, j int) bool { return got[i].What < got[j].What })
		var want []line
		for i := range each {
			what := fmt.Sprintf("p%d-%d", p, i)
			want = append(want, line{What: what, Approve: i%2 == 0, Note: "note " + what, Front: "web"})
		}
		sort.Slice(want, func(i, j int) bool { return want[i].What < want[j].What })
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("process %d's answers (-got +want):\n%s", p, diff)
		}
	}
}

// One broker per user: a second Listen on the same socket is refused
// naming the first; after the first is gone the socket is taken again,
// in a directory only this user can enter.
func TestOneBroker(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker", "socket")
	first, err := Listen(path, New())
	if err != nil {
		t.Fatal(err)
	}
	go first.Serve()
	_, err = Listen(path, New())
	var running *AlreadyRunningError
	if !errors.As(err, &running) || running.PID != os.Getpid() {
		t.Errorf("second Listen: %v", err)
	}
	first.Close()
	again, err := Listen(path, New())
	if err != nil {
		t.Fatalf("Listen after the first broker closed: %v", err)
	}
	defer again.Close()
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket directory mode %v (%v)", fi.Mode(), err)
	}
}
