// Package fakemodel is a scripted language-model server on 127.0.0.1 for
// end-to-end tests of real agent CLIs: it speaks the Anthropic Messages
// API (Claude Code), the OpenAI Responses API (Codex) and the Gemini API
// (Gemini CLI), plays a test's script of steps one per model turn, and
// logs every request so the test can read what the agent sent back.
//
// It does not reason, check credentials, validate a request against the
// real APIs' schemas, speak websockets or the Chat Completions API, or
// reach any network beyond its own listener. It answers what it does not
// know with 404 and logs it.
//
// # Steps and turns
//
// A script is a list of [Step]: [Call] asks the agent to run one tool
// with the given arguments, [Say] sends text and ends the turn. A request
// consumes the next step when it is a model turn:
//
//   - POST /v1/messages (any query, e.g. ?beta=true) whose body declares
//     tools;
//   - POST /v1/responses whose body declares tools;
//   - POST .../models/MODEL:streamGenerateContent whose body declares
//     tools (functionDeclarations).
//
// Everything else is answered without consuming a step:
//
//   - a Messages or Responses request without tools (titles, summaries,
//     quota probes) gets the text "ok";
//   - POST /v1/messages/count_tokens gets {"input_tokens": N};
//   - POST .../models/MODEL:generateContent (Gemini CLI's routing
//     classifier, next-speaker and loop checks) gets, when the request
//     asks for JSON with a schema, an object filled from that schema
//     (first enum value, "fake" for strings, 1 for numbers, false, empty
//     arrays), otherwise the text "ok";
//   - POST .../models/MODEL:countTokens gets {"totalTokens": N};
//   - a turn after the script has run out gets the text
//     "fakemodel: the script has no more steps" and the request is marked
//     [Request.Exhausted], so a test can fail on an agent that kept going.
//
// A [Call] is sent in the form the agent declared for that tool: a
// tool_use block (Messages), a function_call item, or a custom_tool_call
// item with the "input" argument as its text when Codex declares the tool
// as freeform (custom), a function_call with a namespace for a tool named
// NAMESPACE/NAME (Codex offers an MCP server's tools as namespace
// mcp__SERVER: Call("mcp__srv/ask", ...)) (Responses), or a functionCall
// part (Gemini).
// Each call carries the id "fakemodel-call-N" (N the step's index), which
// the agents echo with the result.
//
// # Reading the log
//
// [Server.Requests] returns every request in order, with its path, query,
// headers, full body, and the step it played. [Server.ToolResult] returns
// the tool output the agent sent back for step N's call: the text of the
// tool_result block, function_call_output or custom_tool_call_output
// item, or functionResponse part carrying that call's id, found in the
// first request after step N that holds it.
//
// # Base URLs
//
// Claude Code: ANTHROPIC_BASE_URL=[Server.URL]. Codex: a model provider
// with base_url = URL + "/v1" and wire_api = "responses". Gemini CLI:
// GOOGLE_GEMINI_BASE_URL=[Server.URL].
package fakemodel
