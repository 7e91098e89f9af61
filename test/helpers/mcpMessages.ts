/** The raw JSON-RPC messages of an MCP handshake, for tests that speak to `relay mcp` without an SDK client. */
export const initializeRequest = (client: string, id = 0) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: client, version: "1" } }
})

export const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" }
