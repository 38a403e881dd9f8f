package agents

import (
	"bytes"
	"encoding/json"
	"maps"
)

// Verdict is what a hook answers a call.
type Verdict int

const (
	// Pass lets the call go on as the agent would without guardrun: its
	// own permission rules and prompts still apply.
	Pass Verdict = iota
	// Allow lets the call go on (with Command, when set, in place of
	// the shell command) without the agent asking again.
	Allow
	// Deny refuses the call; Reason reaches the model.
	Deny
	// Ask has the agent ask the person in its own permission dialog
	// (Claude Code only; the others run or end the session on "ask", so
	// Render denies instead).
	Ask
)

// Answer is a hook's reply to one call.
type Answer struct {
	Verdict Verdict
	// Reason is the one line the model (Deny) or the person (Ask) reads.
	Reason string
	// Command replaces the shell command (Allow, Ask); "" keeps it.
	Command string
}

// Render is the answer as the agent reads it on the hook's stdout; nil
// for Pass (an empty answer, which every agent takes as no decision).
func Render(c *Call, ans Answer) []byte {
	a := c.Agent
	if ans.Verdict == Ask && a != Claude {
		// Codex runs the command on "ask"; Gemini CLI without a person
		// ends the session. Neither asks anyone.
		ans.Verdict = Deny
	}
	var out map[string]any
	switch a {
	case Gemini:
		switch ans.Verdict {
		case Pass:
			return nil
		case Deny:
			out = map[string]any{"decision": "deny", "reason": ans.Reason}
		default:
			out = map[string]any{"decision": "allow"}
			if ans.Reason != "" {
				out["reason"] = ans.Reason
			}
			if ans.Command != "" {
				out["hookSpecificOutput"] = map[string]any{
					"hookEventName": a.Event, "tool_input": map[string]any{"command": ans.Command},
				}
			}
		}
	default:
		hso := map[string]any{"hookEventName": a.Event}
		switch ans.Verdict {
		case Pass:
			return nil
		case Deny:
			hso["permissionDecision"] = "deny"
		case Ask:
			hso["permissionDecision"] = "ask"
		default:
			hso["permissionDecision"] = "allow"
		}
		if ans.Reason != "" {
			hso["permissionDecisionReason"] = ans.Reason
		}
		if ans.Command != "" && ans.Verdict != Deny {
			// The whole input with the command replaced: the agent takes
			// updatedInput as the tool's input, so a field left out
			// (run_in_background, timeout) would be lost.
			in := map[string]any{}
			for k, v := range maps.All(c.Input) {
				in[k] = v
			}
			in["command"] = ans.Command
			hso["updatedInput"] = in
		}
		out = map[string]any{"hookSpecificOutput": hso}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		// Only strings, maps and raw JSON from a parsed input go in.
		panic("agents: render hook answer: " + err.Error())
	}
	return b.Bytes()
}

// DenyUnknown is the denial for input that could not be read at all
// (not even which agent's call it is beyond a): every agent's native
// denial form, with reason.
func DenyUnknown(a *Agent, reason string) []byte {
	return Render(&Call{Agent: a}, Answer{Verdict: Deny, Reason: reason})
}
