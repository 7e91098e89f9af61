/**
 * The protocol versions `relay mcp` serves on stdio and streamable HTTP: the 2026-07-28 era and
 * the 2025-11-25 era (with the earlier versions `initialize` negotiates), from one process. The
 * SDK's modern entry answers a request naming another version with UnsupportedProtocolVersion
 * (-32022) listing the modern versions alone, as if nothing else were served; the specification
 * (basic/versioning) wants every version the server supports there, so a client can pick one.
 */
import { type JSONRPCMessage, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/server"

const UNSUPPORTED_PROTOCOL_VERSION = -32022

/** Newest first, each once: revisions are ISO dates. */
const newestFirst = (versions: ReadonlyArray<string>) => [...new Set(versions)].sort().reverse()

interface VersionError {
  readonly error: { readonly code: number; readonly data?: { readonly supported?: unknown } }
}

const isVersionError = (message: unknown): message is VersionError => {
  const error = typeof message === "object" && message !== null ? (message as { error?: unknown }).error : undefined
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === UNSUPPORTED_PROTOCOL_VERSION
}

/** `message` with the -32022 error's `supported` naming the legacy versions beside the modern ones; any other message as it is. */
export const withServedVersions = <M extends JSONRPCMessage>(message: M): M => {
  if (!isVersionError(message)) return message
  const named = Array.isArray(message.error.data?.supported) ? message.error.data.supported.filter((v) => typeof v === "string") : []
  return {
    ...message,
    error: { ...message.error, data: { ...message.error.data, supported: newestFirst([...named, ...SUPPORTED_PROTOCOL_VERSIONS]) } }
  }
}

/** The modern entry's HTTP answer, its -32022 error (a 400 with a JSON body) naming every served version. */
export const withServedVersionsResponse = async (response: Response): Promise<Response> => {
  if (response.status !== 400 || !(response.headers.get("content-type") ?? "").includes("application/json")) return response
  const body: unknown = await response.clone().json().catch(() => undefined)
  if (!isVersionError(body)) return response
  const headers = new Headers(response.headers)
  headers.delete("content-length")
  return new Response(JSON.stringify(withServedVersions(body as JSONRPCMessage)), { status: 400, headers })
}
