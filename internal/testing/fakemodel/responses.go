package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responses is the OpenAI Responses API (POST /v1/responses), streamed.
type responses struct {
	// custom holds the tools declared as freeform ("type": "custom"):
	// a call to one is a custom_tool_call whose input is the text of the
	// step's "input" argument.
	custom map[string]bool
}

func (r *responses) parse(body []byte) (bool, []ToolResult, error) {
	var req struct {
		Tools []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"tools"`
		Input []struct {
			Type   string          `json:"type"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return false, nil, fmt.Errorf("responses: %w", err)
	}
	r.custom = map[string]bool{}
	for _, t := range req.Tools {
		if t.Type == "custom" {
			r.custom[t.Name] = true
		}
	}
	var results []ToolResult
	for _, in := range req.Input {
		if in.Type == "function_call_output" || in.Type == "custom_tool_call_output" {
			results = append(results, ToolResult{CallID: in.CallID, Output: outputText(in.Output)})
		}
	}
	return len(req.Tools) > 0, results, nil
}

// outputText reads a function_call_output's output: a string, a list of
// content items, or (older clients) an object with "content".
func outputText(raw json.RawMessage) string {
	var obj struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Content != nil {
		return *obj.Content
	}
	return textOf(raw)
}

func (r *responses) reply(w http.ResponseWriter, step Step, n int) {
	id := fmt.Sprintf("resp_fakemodel_%d", n+1)
	var items []map[string]any
	if step.Text != "" {
		items = append(items, map[string]any{
			"type": "message", "role": "assistant", "id": fmt.Sprintf("msg_fakemodel_%d", n+1),
			"content": []any{map[string]any{"type": "output_text", "text": step.Text, "annotations": []any{}}},
		})
	}
	if step.Tool != "" {
		if r.custom[step.Tool] {
			input, _ := step.Args["input"].(string)
			items = append(items, map[string]any{
				"type": "custom_tool_call", "id": "ctc_" + CallID(n), "call_id": CallID(n),
				"name": step.Tool, "input": input, "status": "completed",
			})
		} else {
			item := map[string]any{
				"type": "function_call", "id": "fc_" + CallID(n), "call_id": CallID(n),
				"name": step.Tool, "arguments": argsJSON(step), "status": "completed",
			}
			// NAMESPACE/NAME calls a tool of a namespace (Codex's MCP
			// servers, mcp__SERVER).
			if ns, name, ok := strings.Cut(step.Tool, "/"); ok {
				item["namespace"], item["name"] = ns, name
			}
			items = append(items, item)
		}
	}
	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created",
		"response": map[string]any{"id": id, "object": "response", "status": "in_progress"}})
	for i, it := range items {
		e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
		"id": id, "object": "response", "status": "completed", "output": items,
		"usage": map[string]any{
			"input_tokens": 100, "input_tokens_details": map[string]any{"cached_tokens": 0},
			"output_tokens": 10, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
			"total_tokens": 110,
		},
	}})
}
