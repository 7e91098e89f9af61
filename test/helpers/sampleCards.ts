/** Agent cards of both generations, valid and broken, as files or served JSON for validation tests. */
import * as Fs from "node:fs"
import * as Path from "node:path"

type Card = Record<string, unknown>

/** A clean v1.0 card (canonical ProtoJSON, every REQUIRED field). */
export const validV1Card = (baseUrl = "https://weather.example.com"): Card => ({
  name: "Weather Agent",
  description: "Answers questions about the weather.",
  version: "1.0.0",
  supportedInterfaces: [{ url: `${baseUrl}/a2a/jsonrpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
  provider: { organization: "Example Weather", url: "https://example.com" },
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "forecast", name: "Forecast", description: "Tomorrow's weather.", tags: ["weather"] }]
})

/** A valid v0.3 card (url + preferredTransport + protocolVersion). */
export const validV03Card = (): Card => ({
  protocolVersion: "0.3.0",
  name: "Legacy Weather Agent",
  description: "Answers questions about the weather, the v0.3 way.",
  url: "https://weather.example.com/a2a/jsonrpc",
  preferredTransport: "JSONRPC",
  version: "0.9.0",
  capabilities: { streaming: false, pushNotifications: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "forecast", name: "Forecast", description: "Tomorrow's weather.", tags: ["weather"] }]
})

/** A v1.0 card missing most REQUIRED fields: eight errors at once. */
export const brokenV1Card = (): Card => ({ supportedInterfaces: [] })

/** The errors `brokenV1Card` has, as `code path` pairs. */
export const BROKEN_V1_ERRORS: ReadonlyArray<readonly [string, string]> = [
  ["field.required", "/capabilities"],
  ["field.required", "/defaultInputModes"],
  ["field.required", "/defaultOutputModes"],
  ["field.required", "/description"],
  ["field.required", "/name"],
  ["field.required", "/skills"],
  ["field.empty_list", "/supportedInterfaces"],
  ["field.required", "/version"]
]

/** A v0.3 card with a wrong-typed field and required fields missing. */
export const brokenV03Card = (): Card => ({
  protocolVersion: "0.3.0",
  name: "Half a card",
  url: "https://weather.example.com/a2a/jsonrpc",
  capabilities: { streaming: "sometimes" }
})

/** The errors `brokenV03Card` has, as `code path` pairs (plus an info that it is a v0.3 card). */
export const BROKEN_V03_ERRORS: ReadonlyArray<readonly [string, string]> = [
  ["v03.type", "/capabilities/streaming"],
  ["v03.required", "/defaultInputModes"],
  ["v03.required", "/defaultOutputModes"],
  ["v03.required", "/description"],
  ["v03.required", "/skills"],
  ["v03.required", "/version"]
]

/** Writes `json` (or raw text) to `<dir>/<name>` and returns the path. */
export const writeCardFile = (dir: string, name: string, json: unknown): string => {
  const path = Path.join(dir, name)
  Fs.writeFileSync(path, typeof json === "string" ? json : JSON.stringify(json, null, 2))
  return path
}
