package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// gemini is the Gemini API: models/MODEL:streamGenerateContent?alt=sse
// for turns, models/MODEL:generateContent for Gemini CLI's side queries.
type gemini struct {
	stream bool
	// schema is the JSON schema a generateContent request asks the
	// answer to follow, if any.
	schema map[string]any
}

func (g *gemini) parse(body []byte) (bool, []ToolResult, error) {
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					ID       string          `json:"id"`
					Name     string          `json:"name"`
					Response json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
		Tools []struct {
			FunctionDeclarations []json.RawMessage `json:"functionDeclarations"`
		} `json:"tools"`
		GenerationConfig struct {
			ResponseMimeType   string         `json:"responseMimeType"`
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
			ResponseSchema     map[string]any `json:"responseSchema"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return false, nil, fmt.Errorf("gemini: %w", err)
	}
	if gc := req.GenerationConfig; gc.ResponseMimeType == "application/json" {
		g.schema = gc.ResponseJSONSchema
		if g.schema == nil {
			g.schema = gc.ResponseSchema
		}
		if g.schema == nil {
			g.schema = map[string]any{"type": "object"}
		}
	}
	var results []ToolResult
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				results = append(results, ToolResult{CallID: fr.ID, Name: fr.Name, Output: responseText(fr.Response)})
			}
		}
	}
	tools := 0
	for _, t := range req.Tools {
		tools += len(t.FunctionDeclarations)
	}
	return g.stream && tools > 0, results, nil
}

// responseText reads a functionResponse's response: Gemini CLI sends
// {"output": TEXT} or {"error": TEXT}; anything else is given as JSON.
func responseText(raw json.RawMessage) string {
	var r map[string]json.RawMessage
	if json.Unmarshal(raw, &r) == nil && len(r) == 1 {
		for _, k := range []string{"output", "error"} {
			var s string
			if v, ok := r[k]; ok && json.Unmarshal(v, &s) == nil {
				return s
			}
		}
	}
	return string(raw)
}

func (g *gemini) reply(w http.ResponseWriter, step Step, n int) {
	var parts []map[string]any
	text := step.Text
	if g.schema != nil {
		j, _ := json.Marshal(fill(g.schema))
		text = string(j)
	}
	if text != "" {
		parts = append(parts, map[string]any{"text": text})
	}
	if step.Tool != "" {
		var args map[string]any
		json.Unmarshal([]byte(argsJSON(step)), &args)
		parts = append(parts, map[string]any{"functionCall": map[string]any{"id": CallID(n), "name": step.Tool, "args": args}})
	}
	resp := map[string]any{
		"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
	}
	if !g.stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).event("", resp)
}

// fill makes a value that satisfies a (simple) JSON schema: every
// property of an object, the first enum value, "fake" for strings, 1 for
// numbers, false, and empty arrays.
func fill(schema map[string]any) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	typ, _ := schema["type"].(string)
	switch typ {
	case "object", "OBJECT", "":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if sub, ok := v.(map[string]any); ok {
				out[k] = fill(sub)
			}
		}
		return out
	case "string", "STRING":
		return "fake"
	case "integer", "INTEGER", "number", "NUMBER":
		return 1
	case "boolean", "BOOLEAN":
		return false
	case "array", "ARRAY":
		return []any{}
	}
	return nil
}
