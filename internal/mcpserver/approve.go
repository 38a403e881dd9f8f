package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/approval"
)

// The choices of the approval form, as the client returns them. Keep in
// sync with docs/mcp.md.
const (
	choiceOnce    = "once"
	choiceSession = "session"
	choiceAlways  = "always"
	choiceDeny    = "deny"
)

// maxNote bounds the note the person may type.
const maxNote = 500

// formLines is how many lines of the script and of a diff the form
// shows, as the terminal prompt cuts them (with a count of the rest).
const formLines = 60

// prompterFor is who answers the prompts of a tool call: the person,
// through the client's form, when the client declares form elicitation
// (and the server was not told not to ask there); nil otherwise, and the
// request session then asks whom it finds (the supervisor), never a
// terminal.
func (s *Server) prompterFor(req *mcp.CallToolRequest) approval.Prompter {
	if s.cfg.NoElicitation || !formElicitation(req.ClientCapabilities()) {
		return nil
	}
	return &elicitor{ss: req.Session, titled: req.ProtocolVersion() >= "2025-11-25", asking: func() {
		//lint:ignore SA1019 logging is deprecated from protocol 2026-07-28 on, which guardrun does not speak (ProtocolVersions)
		req.Session.Log(context.Background(), &mcp.LoggingMessageParams{Level: "notice", Logger: "guardrun", Data: "guardrun: waiting for the person to answer the approval form"})
	}}
}

// formElicitation reports whether capabilities declare form elicitation:
// "elicitation": {} (all a client of 2025-06-18 can say) means form, as
// it does to the SDK; a client that offers only URL mode does not.
func formElicitation(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// elicitor asks the person with an MCP form (elicitation/create) on the
// client's session. The client shows it to the person, outside the
// model's reach, and returns the answer; guardrun never answers it.
type elicitor struct {
	ss *mcp.ServerSession
	// titled: the protocol (2025-11-25) has single-select choices with
	// titles; before it, a plain enum.
	titled bool
	// asking, when set, is called as the form is sent.
	asking func()
}

// Prompt shows r as the terminal prompt would, plain text, and offers
// once, session (where r can be remembered) and deny with a note.
// Accepting with "deny", declining and cancelling the form are denials;
// a form that fails (the client's error, an answer that does not fit
// the form) is an error, and nothing runs.
func (e *elicitor) Prompt(ctx context.Context, r *approval.Request) (approval.Answer, error) {
	if e.asking != nil {
		e.asking()
	}
	res, err := e.ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:            "form",
		Message:         formMessage(r),
		RequestedSchema: formSchema(r.Key != "", r.Always, e.titled),
	})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answer{}, ctx.Err()
		}
		return approval.Answer{}, fmt.Errorf("the client's approval form failed: %v", err)
	}
	return formAnswer(res)
}

// formAnswer is the person's answer in a form's result.
func formAnswer(res *mcp.ElicitResult) (approval.Answer, error) {
	switch res.Action {
	case "accept":
	case "decline", "cancel":
		// The person declined or dismissed the form (or the client did
		// so for them: claude -p cancels, codex exec declines).
		return approval.Answer{}, nil
	default:
		return approval.Answer{}, fmt.Errorf("the client answered the approval form with %q", res.Action)
	}
	decision, _ := res.Content["decision"].(string)
	note, _ := res.Content["note"].(string)
	note = strings.Join(strings.Fields(note), " ")
	switch decision {
	case choiceOnce:
		return approval.Answer{Approve: true, Note: note}, nil
	case choiceSession:
		return approval.Answer{Approve: true, Session: true, Note: note}, nil
	case choiceAlways:
		return approval.Answer{Approve: true, Always: true, Note: note}, nil
	case choiceDeny:
		return approval.Answer{Note: note}, nil
	}
	return approval.Answer{}, errors.New("the client's answer to the approval form has no decision")
}

// formMessage is the request as the terminal prompt shows it (SPEC §4:
// the command with its directory, each asking part with its rule and
// reason, a file's diff, the sandbox), without colour, and what the
// choices do.
func formMessage(r *approval.Request) string {
	var b strings.Builder
	b.WriteString(approval.Render(r, approval.Style{MaxLines: formLines}))
	b.WriteString("\nApprove it once")
	if r.Key != "" {
		b.WriteString(", approve it for the rest of this session (the same request will not ask again)")
	}
	if r.Always != "" {
		fmt.Fprintf(&b, ", approve it always in this project (a rule %q kept in your own state for %s, listed and revoked with guardrun rules)",
			approval.OneLine(r.Always), approval.OneLine(r.Project))
	}
	b.WriteString(", or deny it; a note is passed back to the agent.")
	return b.String()
}

// formSchema is the form: a decision (once, session where the request
// can be remembered, always in this project where guardrun proposes a
// rule (always, the rule's pattern), deny; deny first and the default,
// so that a form sent back as it came denies) and an optional note.
func formSchema(session bool, always string, titled bool) *jsonschema.Schema {
	type choice struct{ value, title string }
	choices := []choice{{choiceDeny, "Deny"}, {choiceOnce, "Approve once"}}
	if session {
		choices = append(choices, choice{choiceSession, "Approve for this session"})
	}
	if always != "" {
		choices = append(choices, choice{choiceAlways, "Always in this project: " + approval.OneLine(always)})
	}
	decision := &jsonschema.Schema{
		Type:        "string",
		Title:       "Decision",
		Description: "Approve once, or deny.",
		Default:     []byte(`"` + choiceDeny + `"`),
	}
	if session {
		decision.Description = "Approve once, approve for the rest of this session, or deny."
	}
	if always != "" {
		decision.Description = strings.TrimSuffix(decision.Description, ", or deny.") + ", approve always in this project, or deny."
	}
	for _, c := range choices {
		if titled {
			v := any(c.value)
			decision.OneOf = append(decision.OneOf, &jsonschema.Schema{Const: &v, Title: c.title})
		} else {
			decision.Enum = append(decision.Enum, c.value)
		}
	}
	n := maxNote
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"decision": decision,
			"note": {Type: "string", Title: "Note", MaxLength: &n,
				Description: "Optional. With a denial it is passed back to the agent (say what to do instead)."},
		},
		Required: []string{"decision"},
	}
}
