//go:build !guardrun_mcpfixtures

package mcpserver

import "github.com/modelcontextprotocol/go-sdk/mcp"

// addFixtures adds nothing: the conformance suite's fixture tools are in
// test builds only (fixtures.go, -tags guardrun_mcpfixtures).
func addFixtures(*mcp.Server) {}
