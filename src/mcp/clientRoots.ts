/**
 * The directories an MCP client declares as its roots (MCP "Roots": `roots/list`), which bound the
 * files send_message may read besides those the user allowed (programs/readPermission.ts). Asked
 * on the first read, kept until the client says they changed (`notifications/roots/list_changed`).
 * A client without the roots capability declares none; roots that are not `file://` URIs name no
 * directory and are left out; a client that fails to answer declares none for that call. In the
 * 2026-07-28 era there are no server-to-client requests and Roots is deprecated: such a client
 * declares none, and send_message reads only where `relay mcp --allow-read` allows.
 */
import type { McpServer } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"

/** How long a client may take to list its roots. */
const LIST_ROOTS_TIMEOUT_MS = 10_000

const directoryOf = (uri: string): ReadonlyArray<string> => {
  if (!uri.startsWith("file://")) return []
  try {
    return [fileURLToPath(uri)]
  } catch {
    return []
  }
}

/**
 * The client's roots as directories, asked of the client connected to `server` when first needed;
 * none where the server may not ask its client (`canAsk` false: the 2026-07-28 era).
 */
export const clientRoots = (server: McpServer, canAsk: boolean): Effect.Effect<ReadonlyArray<string>> => {
  if (!canAsk) return Effect.succeed([])
  let known: Promise<ReadonlyArray<string>> | undefined
  server.server.setNotificationHandler("notifications/roots/list_changed", () => {
    known = undefined
  })
  const listed = async (): Promise<ReadonlyArray<string>> => {
    if (server.server.getClientCapabilities()?.roots === undefined) return []
    const { roots } = await server.server.listRoots(undefined, { timeout: LIST_ROOTS_TIMEOUT_MS })
    return roots.flatMap((root) => directoryOf(root.uri))
  }
  // A failed answer is not kept: the next read asks again.
  const ask = () =>
    listed().catch((): ReadonlyArray<string> => {
      known = undefined
      return []
    })
  return Effect.promise(() => (known ??= ask()))
}
