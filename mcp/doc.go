// Package mcp is `handoff mcp`: an MCP server that fronts upstream MCP servers
// and puts the tool calls its configuration names through the ledger as a
// workflow client, so an agent's retried call returns the stored result, an
// unknown outcome is handed to a person, and an approved snapshot is what
// runs — with no change to the agent. Tools not named pass through, unless
// their annotations say (or leave it to be assumed) that they are
// destructive, which the configuration must then allow explicitly.
//
// It speaks to Handoff only through the Go client and to MCP peers through
// the official Go SDK.
package mcp
