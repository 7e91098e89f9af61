/**
 * The services a command group provides to its commands (`Command.provide`), composed once here.
 * main.ts provides only the base (cli/root.ts BaseServices). A group that needs one service alone
 * imports its layer directly: importing this module loads the HTTP client and the A2A client.
 */
import { Layer } from "effect"
import * as A2aClient from "../services/A2aClient.js"
import * as HttpClient from "../services/HttpClient.js"
import * as NotificationLog from "../services/NotificationLog.js"
import * as ReceivedFiles from "../services/ReceivedFiles.js"
import * as SessionStore from "../services/SessionStore.js"

/** Talking to agents: the A2A client, its HTTP client, the session store it reads and writes, and where answers' files go. */
export const ClientServices = A2aClient.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(HttpClient.layer, SessionStore.layer, ReceivedFiles.layer))
)

/** Everything the MCP tools use. */
export const McpServices = Layer.merge(ClientServices, NotificationLog.layer())
