package approval_test

import (
	"context"
	"fmt"

	"github.com/guardrun/guardrun/approval"
	"github.com/guardrun/guardrun/rules"
)

// The gate resolves policy's verdict by the mode: allow runs and block
// refuses in every mode; ask runs under approve-all, is refused under
// strict, and in interactive mode with nobody to ask (no Prompter) is
// refused as under strict, saying why.
func ExampleGate_Decide() {
	decided := func(v rules.Verdict, text, reason string) *approval.Request {
		return &approval.Request{
			Display: text,
			Decision: &rules.Decision{Decision: v, Reason: reason, Parts: []rules.Part{
				{Kind: "command", Text: text, Decision: v, Reason: reason},
			}},
		}
	}
	requests := []*approval.Request{
		decided(rules.Allow, "ls", "every part is pre-approved"),
		decided(rules.Ask, "make test", "make test matches no rule; unknown commands need approval"),
		decided(rules.Block, "rm -rf build", `rm -rf build matches rule "rm"`),
	}
	for _, mode := range []rules.Mode{rules.ModeApproveAll, rules.ModeStrict, rules.ModeInteractive} {
		gate := &approval.Gate{Mode: mode, ConfigFile: ".guardrun.yaml"}
		fmt.Println(mode + ":")
		for _, r := range requests {
			out, err := gate.Decide(context.Background(), r)
			if err != nil {
				fmt.Println(err)
				return
			}
			if out.Run {
				fmt.Printf("  %s: runs, decided by %s\n", r.Display, out.By)
			} else {
				fmt.Printf("  %s: refused by %s: %s\n", r.Display, out.By, out.Refusal)
			}
		}
	}
	// Output:
	// approve-all:
	//   ls: runs, decided by rule
	//   make test: runs, decided by mode
	//   rm -rf build: refused by policy: guardrun: blocked: rm -rf build matches rule "rm"
	// strict:
	//   ls: runs, decided by rule
	//   make test: refused by mode: guardrun: denied (strict mode): make test needs approval
	//   rm -rf build: refused by policy: guardrun: blocked: rm -rf build matches rule "rm"
	// interactive:
	//   ls: runs, decided by rule
	//   make test: refused by mode: guardrun: denied (no terminal to ask; interactive mode acts as strict): make test needs approval; add a rule with approval: false to .guardrun.yaml, or run the agent under `guardrun supervise`
	//   rm -rf build: refused by policy: guardrun: blocked: rm -rf build matches rule "rm"
}
