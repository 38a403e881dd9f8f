package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestApprovalScope: a person's yes for host:port is not a yes for
// another port, nor for another name on the same address; the same name
// spelled otherwise is the same host.
func TestApprovalScope(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	for _, u := range []string{
		"https://unlisted.test:" + f.tlsPort + "/",
		"https://UNLISTED.test.:" + f.tlsPort + "/",
		"http://unlisted.test:" + f.httpPort + "/",
		"https://other.test:" + f.tlsPort + "/",
	} {
		if _, err := f.get(t, u); err != nil {
			t.Fatalf("%s: %v", u, err)
		}
	}
	want := []string{"unlisted.test:" + f.tlsPort, "unlisted.test:" + f.httpPort, "other.test:" + f.tlsPort}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("asked %v, want %v", f.asked, want)
	}
}

// TestAskStorm: a command that CONNECTs to many unlisted hosts at
// once does not queue a question for each: past a bound, the rest are
// refused at once, and the person is asked about a few only.
func TestAskStorm(t *testing.T) {
	old := maxPendingAsks
	maxPendingAsks = 4
	defer func() { maxPendingAsks = old }()
	f := newFixture(t, domains(t, loopback, nil), true)
	f.askDelay = time.Hour
	f.proxy.AskTimeout = 20 * time.Second
	const n = 12
	var wg sync.WaitGroup
	quick := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", f.proxyURL.Host)
			if err != nil {
				return
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(3 * time.Second))
			fmt.Fprintf(c, "CONNECT h%d.unlisted.test:443 HTTP/1.1\r\n\r\n", i)
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil {
				quick <- line
			}
		}()
	}
	wg.Wait()
	close(quick)
	refused := 0
	for l := range quick {
		if strings.Contains(l, " 403 ") && strings.Contains(l, "waiting") {
			refused++
		}
	}
	if refused < n-4 {
		t.Errorf("%d of %d CONNECTs refused at once, want at least %d", refused, n, n-4)
	}
	f.mu.Lock()
	asked := len(f.asked)
	f.mu.Unlock()
	if asked > 4 {
		t.Errorf("asked %d times", asked)
	}
}

// TestNoAfterNo: after a person refused a host, the command's
// further connections to it are refused without asking again, so that a
// command cannot ask until it hears yes; another port still asks.
func TestNoAfterNo(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), true)
	f.answer = Answer{By: "person", Note: "no", Refusal: "guardrun: denied by user: no"}
	for range 3 {
		_, status := connect(t, f, "unlisted.test:"+f.tlsPort)
		if !strings.Contains(status, " 403 guardrun: denied by user: no") {
			t.Errorf("CONNECT: %s", status)
		}
	}
	connect(t, f, "unlisted.test:"+f.httpPort)
	want := []string{"unlisted.test:" + f.tlsPort, "unlisted.test:" + f.httpPort}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fmt.Sprint(f.asked) != fmt.Sprint(want) {
		t.Errorf("asked %v, want %v", f.asked, want)
	}
}

// TestQuestionWithdrawn: when a command ends (its client is
// closed) or the proxy closes, a question still waiting for the person is
// withdrawn at once, not left on the terminal for a command that is gone
// (where an `s` would still grant the host to the session).
func TestQuestionWithdrawn(t *testing.T) {
	f := newFixture(t, domains(t, loopback, nil), false)
	f.proxy.AskTimeout = 20 * time.Second
	for _, closeProxy := range []bool{false, true} {
		asked, withdrawn := make(chan struct{}), make(chan struct{})
		cl := &Client{Ask: func(ctx context.Context, q Query) Answer {
			close(asked)
			<-ctx.Done()
			close(withdrawn)
			return Answer{By: "mode"}
		}}
		addr := serveClient(t, f, cl)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "CONNECT unlisted.test:443 HTTP/1.1\r\nHost: unlisted.test:443\r\n\r\n")
		select {
		case <-asked:
		case <-time.After(5 * time.Second):
			t.Fatal("never asked")
		}
		if closeProxy {
			f.proxy.Close()
		} else {
			cl.Close()
		}
		select {
		case <-withdrawn:
		case <-time.After(3 * time.Second):
			t.Errorf("closing the proxy=%v: the question stayed up", closeProxy)
		}
	}
}
