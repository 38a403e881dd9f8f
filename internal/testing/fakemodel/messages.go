package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// messages is the Anthropic Messages API (POST /v1/messages).
type messages struct {
	model  string
	stream bool
}

func (m *messages) parse(body []byte) (bool, []ToolResult, error) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Tools    []json.RawMessage `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return false, nil, fmt.Errorf("messages: %w", err)
	}
	m.model, m.stream = req.Model, req.Stream
	var results []ToolResult
	for _, msg := range req.Messages {
		var blocks []struct {
			Type      string          `json:"type"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			continue // a plain string
		}
		for _, b := range blocks {
			if b.Type == "tool_result" {
				results = append(results, ToolResult{CallID: b.ToolUseID, Output: textOf(b.Content), IsError: b.IsError})
			}
		}
	}
	return len(req.Tools) > 0, results, nil
}

func (m *messages) reply(w http.ResponseWriter, step Step, n int) {
	id := fmt.Sprintf("msg_fakemodel_%d", n+1)
	var content []map[string]any
	if step.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": step.Text})
	}
	stop := "end_turn"
	if step.Tool != "" {
		stop = "tool_use"
		var input map[string]any
		json.Unmarshal([]byte(argsJSON(step)), &input)
		content = append(content, map[string]any{"type": "tool_use", "id": CallID(n), "name": step.Tool, "input": input})
	}
	usage := map[string]any{"input_tokens": 100, "output_tokens": 10}
	if !m.stream {
		writeJSON(w, map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": m.model,
			"content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage,
		})
		return
	}
	e := newSSE(w)
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": m.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 1},
	}})
	for i, c := range content {
		switch c["type"] {
		case "text":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": c["text"]}})
		case "tool_use":
			e.event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": c["id"], "name": c["name"], "input": map[string]any{}}})
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(step)}})
		}
		e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
	e.event("message_stop", map[string]any{"type": "message_stop"})
}
