/**
 * What every door says when a login is needed: which errors mean it, and the command that logs in.
 * Apart from the OAuth errors themselves (oauth.ts): every command's error handling and hints use
 * these, and loading them should not build those error classes (a cost to each start-up: bench/README.md).
 */

/** Errors that mean "log in" (exit code 3 on the terminal, needs_auth under MCP): oauth.ts's, marked authNeeded. */
export const isAuthNeeded = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "authNeeded" in error && error.authNeeded === true

const FLOW_FLAGS: Readonly<Record<string, string>> = {
  client_credentials: " --client-secret -",
  authorization_code: " --flow authorization_code",
  device_code: " --flow device_code"
}

/** The exact `relay auth login` command that repeats a login: also what an assistant tells its user. */
export const loginCommand = (
  a: { readonly agentUrl: string; readonly flow?: string | undefined; readonly clientId?: string | undefined }
) =>
  `relay auth login --url ${a.agentUrl}${a.clientId === undefined ? " --client-id <CLIENT_ID>" : ` --client-id ${a.clientId}`}` +
  (a.flow === undefined ? "" : FLOW_FLAGS[a.flow] ?? "")
