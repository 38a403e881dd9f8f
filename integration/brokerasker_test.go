package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/internal/broker"
	"github.com/guardrun/guardrun/internal/config"
	"github.com/guardrun/guardrun/rules"
)

// brokerAsker is the test binary as one process asking the broker for
// BROKER_IT_COUNT requests at once, printing each answer as a JSON line.
func brokerAsker() int {
	e, err := config.NewEnv()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	c, err := broker.Dial(context.Background(), broker.SocketPath(e))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	n, _ := strconv.Atoi(os.Getenv("BROKER_IT_COUNT"))
	name := os.Getenv("BROKER_IT_NAME")
	var mu sync.Mutex
	var wg sync.WaitGroup
	enc := json.NewEncoder(os.Stdout)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := fmt.Sprintf("%s-%d", name, i)
			a, err := c.Prompt(context.Background(), brokerRequest("make "+what))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				enc.Encode(map[string]any{"what": what, "error": err.Error()})
				return
			}
			enc.Encode(map[string]any{"what": what, "approve": a.Approve, "note": a.Note, "front": a.Front})
		}()
	}
	wg.Wait()
	return 0
}

func brokerRequest(script string) *approval.Request {
	return &approval.Request{
		Display: script, Cwd: "/w", Sandbox: "workspace /w (rw); network off", Summary: script,
		Decision: &rules.Decision{Decision: rules.Ask, Parts: []rules.Part{{Kind: "command", Text: script, Decision: rules.Ask, Pos: "1:1", Reason: "matches no rule; unknown commands need approval"}}},
	}
}
