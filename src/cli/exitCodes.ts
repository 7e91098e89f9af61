/**
 * How a command ends, decided in one place: the exit code of every error, of a usage error and of
 * a signal. Scripts branch on these numbers, so they are part of the interface (see `relay --help`).
 */

import { isAuthNeeded } from "../domain/authNeeded.js"

export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2
export const EXIT_AUTH = 3
export const EXIT_UNREACHABLE = 4

/** The shell's convention: 128 + the signal's number. */
export const EXIT_ON_SIGNAL = { SIGINT: 130, SIGTERM: 143 } as const
export type StopSignal = keyof typeof EXIT_ON_SIGNAL

const fieldOf = (error: unknown, name: string): unknown =>
  typeof error === "object" && error !== null && name in error ? (error as Record<string, unknown>)[name] : undefined

const isAuthStatus = (status: unknown) => status === 401 || status === 403

/** The exit code an error ends a command with, from its tag (and, for a few, the limit or status it names). */
export const exitCodeForError = (error: unknown): number => {
  // Every OAuth failure that a login would fix (needs_auth, invalid_grant, …) says so itself.
  if (isAuthNeeded(error)) return EXIT_AUTH
  switch (fieldOf(error, "_tag")) {
    case "InvalidInput":
    case "UsageError":
    // Files and data that cannot go with a message: the user's to fix, nothing was sent.
    case "FileUnreadable":
    case "FileNotAllowed":
    case "RequestTooLarge":
      return EXIT_USAGE
    case "AuthRequired":
      return EXIT_AUTH
    case "HttpError":
      return isAuthStatus(fieldOf(error, "status")) ? EXIT_AUTH : EXIT_FAILURE
    case "AgentUnreachable":
      return EXIT_UNREACHABLE
    // Only a request that got no answer at all means the agent is out of reach; a stream that fell
    // silent or a wait that ran out had answers before.
    case "RequestTimeout":
      return fieldOf(error, "limit") === "wait" || fieldOf(error, "limit") === "stream-idle" ? EXIT_FAILURE : EXIT_UNREACHABLE
    default:
      return EXIT_FAILURE
  }
}

/** The exit codes and what each means, as `relay --help` lists them. */
export const EXIT_CODE_ROWS: ReadonlyArray<readonly [code: string, meaning: string]> = [
  [`${EXIT_OK}`, "ok"],
  [`${EXIT_FAILURE}`, "failure (the agent refused, a task failed, a file is missing, ...)"],
  [`${EXIT_USAGE}`, "usage error (unknown option, missing argument)"],
  [`${EXIT_AUTH}`, "authentication needed (HTTP 401/403, missing or rejected credentials)"],
  [`${EXIT_UNREACHABLE}`, "agent unreachable (connection refused, DNS, no answer before the timeout)"],
  [`${EXIT_ON_SIGNAL.SIGINT}`, `interrupted by SIGINT (Ctrl-C); ${EXIT_ON_SIGNAL.SIGTERM} by SIGTERM`]
]
