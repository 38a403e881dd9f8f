package mcpserver

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/guardrun/guardrun/approval"
)

// TestFormAnswer: what the person's answer in the form means to the gate.
func TestFormAnswer(t *testing.T) {
	tests := []struct {
		name    string
		res     mcp.ElicitResult
		want    approval.Answer
		wantErr bool
	}{
		{name: "approve once", res: mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "once"}}, want: approval.Answer{Approve: true}},
		{name: "approve for the session", res: mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "session"}}, want: approval.Answer{Approve: true, Session: true}},
		{name: "always in this project", res: mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "always"}}, want: approval.Answer{Approve: true, Always: true}},
		{name: "deny with a note made one line", res: mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny", "note": " use\n make\ttest "}}, want: approval.Answer{Note: "use make test"}},
		{name: "decline is a denial", res: mcp.ElicitResult{Action: "decline"}, want: approval.Answer{}},
		{name: "cancel is a denial", res: mcp.ElicitResult{Action: "cancel"}, want: approval.Answer{}},
		{name: "accept without a decision", res: mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, wantErr: true},
		{name: "an unknown action", res: mcp.ElicitResult{Action: "maybe"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := formAnswer(&tt.res)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
		})
	}
}

// TestFormSchema: the choices the form offers, deny first and by
// default, session only for a request that can be remembered, always
// only where guardrun proposes a project rule, titled
// choices from protocol 2025-11-25 on and a plain enum before.
func TestFormSchema(t *testing.T) {
	tests := []struct {
		name            string
		session, titled bool
		always          string
		want            string
	}{
		{"titled, with session", true, true, "", `{"type":"string","title":"Decision","description":"Approve once, approve for the rest of this session, or deny.","default":"deny","oneOf":[{"title":"Deny","const":"deny"},{"title":"Approve once","const":"once"},{"title":"Approve for this session","const":"session"}]}`},
		{"titled, a request that cannot be remembered", false, true, "", `{"type":"string","title":"Decision","description":"Approve once, or deny.","default":"deny","oneOf":[{"title":"Deny","const":"deny"},{"title":"Approve once","const":"once"}]}`},
		{"an enum before 2025-11-25", true, false, "", `{"type":"string","title":"Decision","description":"Approve once, approve for the rest of this session, or deny.","default":"deny","enum":["deny","once","session"]}`},
		{"titled, with a rule to keep for the project", true, true, "npm run lint", `{"type":"string","title":"Decision","description":"Approve once, approve for the rest of this session, approve always in this project, or deny.","default":"deny","oneOf":[{"title":"Deny","const":"deny"},{"title":"Approve once","const":"once"},{"title":"Approve for this session","const":"session"},{"title":"Always in this project: npm run lint","const":"always"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := formSchema(tt.session, tt.always, tt.titled)
			b, err := json.Marshal(s.Properties["decision"])
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(b), tt.want); diff != "" {
				t.Errorf("(-got +want)\n%s", diff)
			}
			if diff := cmp.Diff(s.Required, []string{"decision"}); diff != "" {
				t.Errorf("required (-got +want)\n%s", diff)
			}
		})
	}
}
