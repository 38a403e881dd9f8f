package fakemodel_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/guardrun/guardrun/internal/testing/fakemodel"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// events returns the data of each server-sent event in body, decoded.
func events(t *testing.T, body string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("event %q: %v", data, err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the first value at the dotted path (numbers index lists)
// among the events, or nil.
func find(evs []map[string]any, path string) any {
	for _, e := range evs {
		var v any = e
		for _, k := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[k]
			case []any:
				i := int(k[0] - '0')
				if i >= len(x) {
					v = nil
				} else {
					v = x[i]
				}
			default:
				v = nil
			}
		}
		if v != nil {
			return v
		}
	}
	return nil
}

func TestServerPlaysStepsOnTurnsOnly(t *testing.T) {
	type answer struct {
		Status int
		Kind   fakemodel.Kind
		Step   int
		// Got is what the answer says at the path the row names.
		Got any
	}
	tests := []struct {
		name       string
		path, body string
		at         string // where in the answer to look
		want       answer
	}{
		{"messages turn with tools plays the first step as a tool_use block",
			"/v1/messages?beta=true", `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"go"}]}`,
			"content_block.name", answer{200, fakemodel.Turn, 0, "Bash"}},
		{"messages request without tools gets text and plays nothing",
			"/v1/messages", `{"model":"m","stream":false,"messages":[{"role":"user","content":"title?"}]}`,
			"content.0.text", answer{200, fakemodel.Aux, -1, "ok"}},
		{"token counting plays nothing",
			"/v1/messages/count_tokens", `{"model":"m","messages":[]}`,
			"input_tokens", answer{200, fakemodel.Aux, -1, float64(100)}},
		{"responses turn plays the second step as a custom tool call when the tool is freeform",
			"/v1/responses", `{"tools":[{"type":"custom","name":"apply_patch"}],"input":[{"type":"function_call_output","call_id":"fakemodel-call-0","output":"README.md\n"}]}`,
			"item.input", answer{200, fakemodel.Turn, 1, "*** Begin Patch\n*** End Patch\n"}},
		{"gemini classifier gets an object filled from its schema and plays nothing",
			"/v1beta/models/flash:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"complexity_score":{"type":"INTEGER"},"next":{"type":"STRING","enum":["user","model"]}}}}}`,
			"candidates.0.content.parts.0.text", answer{200, fakemodel.Aux, -1, `{"complexity_score":1,"next":"user"}`}},
		{"gemini turn plays the third step as a functionCall with its id",
			"/v1beta/models/pro:streamGenerateContent", `{"contents":[{"role":"user","parts":[{"functionResponse":{"id":"fakemodel-call-1","name":"apply_patch","response":{"output":"Success"}}}]}],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}`,
			"candidates.0.content.parts.0.functionCall.id", answer{200, fakemodel.Turn, 2, "fakemodel-call-2"}},
		{"responses turn calls a namespaced tool with its namespace",
			"/v1/responses", `{"tools":[{"type":"function","name":"exec_command"}],"input":[]}`,
			"item.namespace", answer{200, fakemodel.Turn, 3, "mcp__srv"}},
		{"a turn after the last step says so",
			"/v1/responses", `{"tools":[{"type":"function","name":"exec_command"}],"input":[]}`,
			"item.content.0.text", answer{200, fakemodel.Turn, -1, "fakemodel: the script has no more steps"}},
		{"an unknown endpoint is refused",
			"/v1/chat/completions", `{}`, "", answer{404, fakemodel.Unknown, -1, nil}},
	}
	srv := fakemodel.Start(t,
		fakemodel.Call("Bash", map[string]any{"command": "ls"}),
		fakemodel.Call("apply_patch", map[string]any{"input": "*** Begin Patch\n*** End Patch\n"}),
		fakemodel.Call("run_shell_command", map[string]any{"command": "ls"}),
		fakemodel.Call("mcp__srv/ask", map[string]any{"q": "may I?"}),
	)
	for i, tt := range tests {
		status, body := post(t, srv.URL+tt.path, tt.body)
		var evs []map[string]any
		if strings.Contains(body, "data: ") {
			evs = events(t, body)
		} else {
			var m map[string]any
			json.Unmarshal([]byte(body), &m)
			evs = []map[string]any{m}
		}
		var got any
		if tt.at != "" {
			got = find(evs, tt.at)
		}
		reqs := srv.Requests()
		if len(reqs) != i+1 {
			t.Fatalf("%s: %d requests logged, want %d", tt.name, len(reqs), i+1)
		}
		r := reqs[i]
		if diff := cmp.Diff(answer{status, r.Kind, r.Step, got}, tt.want); diff != "" {
			t.Errorf("%s (-got +want):\n%s\nbody: %s", tt.name, diff, body)
		}
	}
	if got := srv.Played(); got != 4 {
		t.Errorf("played %d steps, want 4", got)
	}
	last := srv.Requests()[len(tests)-2]
	if !last.Exhausted {
		t.Errorf("the turn after the script is not marked exhausted")
	}
}

func TestToolResultIsTheOutputAfterItsStep(t *testing.T) {
	srv := fakemodel.Start(t,
		fakemodel.Call("Bash", map[string]any{"command": "ls"}),
		fakemodel.Call("Bash", map[string]any{"command": "false"}),
		fakemodel.Say("done"),
	)
	turn := func(results string) {
		post(t, srv.URL+"/v1/messages", `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[`+results+`]}]}`)
	}
	// A result that names step 1's id before step 1 was played is not
	// taken as its result.
	turn(`{"type":"tool_result","tool_use_id":"fakemodel-call-1","content":"too early"}`)
	turn(`{"type":"tool_result","tool_use_id":"fakemodel-call-0","content":[{"type":"text","text":"README.md"}]}`)
	turn(`{"type":"tool_result","tool_use_id":"fakemodel-call-0","content":"README.md"},` +
		`{"type":"tool_result","tool_use_id":"fakemodel-call-1","content":"Exit code 1","is_error":true}`)

	type result struct {
		Found  bool
		Result fakemodel.ToolResult
	}
	var got []result
	for n := range 3 {
		r, ok := srv.ToolResult(n)
		got = append(got, result{ok, r})
	}
	want := []result{
		{true, fakemodel.ToolResult{CallID: "fakemodel-call-0", Output: "README.md"}},
		{true, fakemodel.ToolResult{CallID: "fakemodel-call-1", Output: "Exit code 1", IsError: true}},
		{false, fakemodel.ToolResult{}},
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("tool results (-got +want):\n%s\n%s", diff, srv.Summary())
	}
}

func TestCallAfterMakesItsArgumentsFromThePreviousResult(t *testing.T) {
	var saw []string
	srv := fakemodel.Start(t,
		fakemodel.Call("Bash", map[string]any{"command": "start"}),
		fakemodel.CallAfter("Bash", func(prev fakemodel.ToolResult) map[string]any {
			saw = append(saw, prev.Output)
			return map[string]any{"command": "poll " + prev.Output}
		}),
	)
	turn := func(results string) string {
		_, body := post(t, srv.URL+"/v1/messages", `{"model":"m","tools":[{"name":"Bash"}],"messages":[{"role":"user","content":[`+results+`]}]}`)
		return body
	}
	turn(`{"type":"text","text":"go"}`)
	body := turn(`{"type":"tool_result","tool_use_id":"fakemodel-call-0","content":"session 42"}`)
	var msg struct {
		Content []struct {
			Input map[string]string `json:"input"`
		} `json:"content"`
	}
	json.Unmarshal([]byte(body), &msg)
	got := ""
	if len(msg.Content) > 0 {
		got = msg.Content[0].Input["command"]
	}
	if diff := cmp.Diff([]any{saw, got}, []any{[]string{"session 42"}, "poll session 42"}); diff != "" {
		t.Errorf("(-got +want):\n%s\n%s", diff, body)
	}
}
