package supervisor

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
)

// relayWorld is a supervisor whose requests are also offered on a real
// broker, with a front attached to that broker.
func relayWorld(t *testing.T) (*Server, *fakePrompter, *broker.Server, *broker.Front) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broker", "socket")
	bs, err := broker.Listen(path, broker.New())
	if err != nil {
		t.Fatal(err)
	}
	bs.FrontToken = "tok"
	go bs.Serve()
	t.Cleanup(func() { bs.Close() })
	bc, err := broker.Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	bc.Via = "supervisor"
	t.Cleanup(func() { bc.Close() })
	f := newFake()
	s, err := Listen(t.TempDir(), f)
	if err != nil {
		t.Fatal(err)
	}
	s.Relay = bc
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	front, err := broker.Attach(context.Background(), path, "web", "tok")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { front.Close() })
	return s, f, bs, front
}

func nextEvent(t *testing.T, f *broker.Front) broker.Event {
	t.Helper()
	select {
	case ev := <-f.Events:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("the broker's front heard nothing")
	}
	return broker.Event{}
}

type answered struct {
	a   approval.Answer
	err error
}

func askAsync(t *testing.T, s *Server, r *approval.Request) chan answered {
	ch := make(chan answered, 1)
	go func() {
		a, err := askVia(t, s, r)
		ch <- answered{a, err}
	}()
	return ch
}

// With a broker attached, a request is on the supervisor's terminal and
// on the broker's fronts at once; the first answer is the asker's, and
// the other place is withdrawn.
func TestRelayFirstAnswerWins(t *testing.T) {
	t.Run("the broker's front answers first", func(t *testing.T) {
		s, f, _, front := relayWorld(t)
		r := request("npm run lint", testKey)
		r.Always, r.Project = "npm run lint", "/w"
		got := askAsync(t, s, r)
		waitShown(t, f)
		ev := nextEvent(t, front)
		if ev.Pending == nil || ev.Pending.Via != "supervisor" || ev.Pending.Always != "npm run lint" {
			t.Fatalf("the front saw %+v", ev)
		}
		if err := front.Answer(context.Background(), ev.Pending.ID, broker.Answer{Approve: true, Always: true}); err != nil {
			t.Fatal(err)
		}
		res := <-got
		if diff := cmp.Diff(res.a, approval.Answer{Approve: true, Always: true, Front: "web"}); res.err != nil || diff != "" {
			t.Errorf("the asker got %v (-got +want):\n%s", res.err, diff)
		}
		f.waitIdle(t) // the terminal's prompt was withdrawn
	})
	t.Run("the terminal answers first", func(t *testing.T) {
		s, f, _, front := relayWorld(t)
		got := askAsync(t, s, request("make", testKey))
		waitShown(t, f)
		id := nextEvent(t, front).Pending.ID
		f.answers <- approval.Answer{Approve: true, Session: true}
		res := <-got
		if diff := cmp.Diff(res.a, approval.Answer{Approve: true, Session: true, Front: "supervisor"}); res.err != nil || diff != "" {
			t.Errorf("the asker got %v (-got +want):\n%s", res.err, diff)
		}
		if ev := nextEvent(t, front); ev.Resolved == nil || ev.Resolved.ID != id || ev.Resolved.How != "withdrawn" {
			t.Errorf("the broker's front heard %+v", ev)
		}
		// The session grant is the supervisor's, wherever it was given.
		if a, err := askVia(t, s, request("make", testKey)); err != nil || a.By != "session" {
			t.Errorf("the same request again: %+v %v", a, err)
		}
	})
	t.Run("nobody at the terminal: the broker's front answers", func(t *testing.T) {
		s, f, _, front := relayWorld(t)
		f.nobody = true
		got := askAsync(t, s, request("make", ""))
		waitShown(t, f)
		ev := nextEvent(t, front)
		if err := front.Answer(context.Background(), ev.Pending.ID, broker.Answer{Approve: true}); err != nil {
			t.Fatal(err)
		}
		if res := <-got; res.err != nil || !res.a.Approve || res.a.Front != "web" {
			t.Errorf("the asker got %+v", res)
		}
	})
	t.Run("nobody at the terminal and the broker gone: nobody can be asked", func(t *testing.T) {
		s, f, bs, front := relayWorld(t)
		f.nobody = true
		got := askAsync(t, s, request("make", ""))
		waitShown(t, f)
		nextEvent(t, front)
		bs.Close()
		res := <-got
		if !errors.Is(res.err, approval.ErrNoPerson) || res.a.Approve {
			t.Errorf("the asker got %+v; want nobody can be asked", res)
		}
	})
	t.Run("a broker that goes away leaves the terminal asking", func(t *testing.T) {
		s, f, bs, front := relayWorld(t)
		got := askAsync(t, s, request("make", ""))
		waitShown(t, f)
		nextEvent(t, front)
		bs.Close()
		time.Sleep(100 * time.Millisecond)
		f.answers <- approval.Answer{Note: "not now"}
		if res := <-got; res.err != nil || res.a.Approve || res.a.Note != "not now" || res.a.Front != "supervisor" {
			t.Errorf("the asker got %+v", res)
		}
	})
}
