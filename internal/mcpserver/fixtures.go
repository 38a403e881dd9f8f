//go:build guardrun_mcpfixtures

//lint:file-ignore SA1019 the suite calls for sampling and logging, deprecated only from protocol 2026-07-28 on
//lint:file-ignore ST1005 the suite expects the fixtures' texts as they are

package mcpserver

// The tools the MCP conformance suite (@modelcontextprotocol/conformance
// 0.1.16) calls by name, for a test build only (-tags
// guardrun_mcpfixtures): registered on guardrun's own server, behind its
// own HTTP checks, they let the suite exercise the protocol machinery
// guardrun relies on (tool errors, logging, progress, elicitation over
// guardrun's HTTP stack) where guardrun's real tools cannot be named by
// the suite. They touch nothing. See docs/mcp.md.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 1x1 PNG and a WAV of two silent samples.
const (
	fixturePNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	fixtureWAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

type noArgs struct{}

func decoded(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

func fixture(srv *mcp.Server, name string, h func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error)) {
	mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "conformance fixture " + name},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			r, err := h(ctx, req)
			return r, nil, err
		})
}

func addFixtures(srv *mcp.Server) {
	fixture(srv, "test_simple_text", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResult("This is a simple text response for testing."), nil
	})
	fixture(srv, "test_image_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: decoded(fixturePNG), MIMEType: "image/png"}}}, nil
	})
	fixture(srv, "test_audio_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: decoded(fixtureWAV), MIMEType: "audio/wav"}}}, nil
	})
	fixture(srv, "test_embedded_resource", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
			URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}}}, nil
	})
	fixture(srv, "test_multiple_content_types", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: decoded(fixturePNG), MIMEType: "image/png"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}},
		}}, nil
	})
	fixture(srv, "test_tool_with_logging", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "guardrun", Data: m})
			time.Sleep(50 * time.Millisecond)
		}
		return textResult("Tool with logging executed successfully"), nil
	})
	fixture(srv, "test_tool_with_progress", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		for _, p := range []float64{0, 50, 100} {
			if tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100})
			}
			time.Sleep(50 * time.Millisecond)
		}
		return textResult(fmt.Sprint(tok)), nil
	})
	fixture(srv, "test_error_handling", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("This tool intentionally returns an error for testing")
	})
	type samplingIn struct {
		Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "test_sampling", Description: "conformance fixture test_sampling"},
		func(ctx context.Context, req *mcp.CallToolRequest, in samplingIn) (*mcp.CallToolResult, any, error) {
			r, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}}, MaxTokens: 100})
			if err != nil {
				return nil, nil, err
			}
			t, _ := r.Content.(*mcp.TextContent)
			if t == nil {
				t = &mcp.TextContent{}
			}
			return textResult("LLM response: " + t.Text), nil, nil
		})
	type elicitIn struct {
		Message string `json:"message" jsonschema:"The message to show the user"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation", Description: "conformance fixture test_elicitation"},
		func(ctx context.Context, req *mcp.CallToolRequest, in elicitIn) (*mcp.CallToolResult, any, error) {
			return elicitFixture(ctx, req, in.Message, `{"type":"object","properties":{
				"username":{"type":"string","description":"User's response"},
				"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation_sep1034_defaults", Description: "conformance fixture test_elicitation_sep1034_defaults"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return elicitFixture(ctx, req, "Test defaults for primitives", `{"type":"object","properties":{
				"name":{"type":"string","description":"User name","default":"John Doe"},
				"age":{"type":"integer","description":"User age","default":30},
				"score":{"type":"number","description":"User score","default":95.5},
				"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
				"verified":{"type":"boolean","description":"Verification status","default":true}}}`)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "test_elicitation_sep1330_enums", Description: "conformance fixture test_elicitation_sep1330_enums"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ noArgs) (*mcp.CallToolResult, any, error) {
			return elicitFixture(ctx, req, "Test enum schemas", `{"type":"object","properties":{
				"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
				"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
				"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
				"untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
				"titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "json_schema_2020_12_tool", Description: "conformance fixture json_schema_2020_12_tool",
		InputSchema: json.RawMessage(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
			"$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
			"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`)},
		func(ctx context.Context, req *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
			return textResult("called with " + string(in)), nil, nil
		})
	fixture(srv, "test_reconnection", func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Extra != nil && req.Extra.CloseSSEStream != nil {
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: 10 * time.Millisecond})
		}
		time.Sleep(100 * time.Millisecond)
		return textResult("Reconnection test completed successfully."), nil
	})
}

func elicitFixture(ctx context.Context, req *mcp.CallToolRequest, msg, schema string) (*mcp.CallToolResult, any, error) {
	r, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: msg, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return nil, nil, fmt.Errorf("elicitation failed: %w", err)
	}
	return textResult(fmt.Sprintf("Elicitation completed: action=%s, content=%v", r.Action, r.Content)), nil, nil
}
