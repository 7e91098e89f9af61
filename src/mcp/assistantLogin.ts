/**
 * Logging in from the assistant. A tool refused for want of an OAuth login a person does in a
 * browser (authorization code + PKCE, or a device code) offers the login page to the user through
 * the client (toolCall.ts `openUrl`: URL-mode elicitation), finishes the flow on relay's own
 * loopback listener, saves the tokens as `relay auth login` does and runs the refused step once
 * more. The client and the model only ever see the page's URL, which carries no secret (PKCE keeps
 * the verifier here). Without a client that opens pages, or when the user declines, the refusal
 * stands as it is (needs_auth or auth_required, with the terminal command).
 */
import { Deferred, Duration, Effect, FiberRef, Option } from "effect"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { login } from "../programs/oauth.js"
import type { A2aClient } from "../services/A2aClient.js"
import { SessionStore } from "../services/SessionStore.js"
import { currentUser, type UserPrompt } from "./toolCall.js"

// The login program loads with the other programs, on first use (toolKit.ts withPrograms).
const programs = () => import("./toolPrograms.js")

/** How long the user has to finish logging in once the page was offered (as `relay auth login`). */
export const LOGIN_TIMEOUT = Duration.minutes(5)

/** Why a login through the client failed (it timed out, the provider refused, ...): each says what to do. */
type LoginFailure = Effect.Effect.Error<ReturnType<typeof login>>

type PersonFlow = "authorization_code" | "device_code"

/** A login a person can do, and the client id it takes (when one is known). */
interface Wanted {
  readonly flow: PersonFlow
  readonly clientId: string | undefined
}

const isPersonFlow = (flow: unknown): flow is PersonFlow => flow === "authorization_code" || flow === "device_code"

const fieldOf = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined

/**
 * The login `error` asks for, read by shape (the error classes load with the programs): saved
 * tokens that cannot be renewed (LoginRequired), or an agent whose card declares OAuth refusing
 * the call (AuthRequired; the card's flow, authorization code when it names none).
 */
const wantedBy = (error: unknown): Wanted | undefined => {
  const tag = fieldOf(error, "_tag")
  if (tag === "LoginRequired") {
    const login = fieldOf(error, "login")
    const flow = fieldOf(login, "flow")
    const clientId = fieldOf(login, "clientId")
    return isPersonFlow(flow) ? { flow, clientId: typeof clientId === "string" ? clientId : undefined } : undefined
  }
  if (tag === "AuthRequired") {
    const offered = fieldOf(error, "oauthLogin")
    const credentials = fieldOf(error, "credentials")
    const flow = fieldOf(offered, "flow") ?? "authorization_code"
    return offered !== undefined && (credentials === "none" || credentials === "saved") && isPersonFlow(flow)
      ? { flow, clientId: undefined }
      : undefined
  }
  return undefined
}

/** The client id (and the secret kept with it) of the agent's saved OAuth tokens, else the one wanted, else the server's. */
const clientOf = (access: AgentAccess, wanted: Wanted, fallback: string | undefined) =>
  Effect.map(
    Effect.flatMap(SessionStore, (store) => store.getCredentials(access.agentUrl)).pipe(Effect.orElseSucceed(() => Option.none())),
    (saved) => {
      const oauth = Option.isSome(saved) && saved.value.kind === "oauth" ? saved.value : undefined
      const clientId = wanted.clientId ?? oauth?.client_id ?? fallback
      return clientId === undefined
        ? undefined
        : { clientId, clientSecret: oauth?.client_id === clientId ? oauth.client_secret : undefined }
    }
  )

const messageFor = (access: AgentAccess, userCode: string | undefined) =>
  `Log in to the A2A agent at ${access.agentUrl} so relay can use it for you. ` +
  (userCode === undefined ? "" : `Enter the code ${userCode} on the page. `) +
  "relay receives the result itself: no token passes through the assistant."

/**
 * The login the user did through the client, or none (not possible here, or declined). A login
 * that fails fails the step with its own error, which says what went wrong.
 */
const loginThroughClient = (user: UserPrompt, access: AgentAccess, wanted: Wanted, fallbackClientId: string | undefined) =>
  Effect.gen(function*() {
    const { openUrl, urlDone } = user
    if (openUrl === undefined) return false
    const client = yield* clientOf(access, wanted, fallbackClientId)
    if (client === undefined) return false
    const id = crypto.randomUUID()
    const declined = yield* Deferred.make<void>()
    const interaction = {
      prompt: (prompt: { readonly url: string; readonly userCode?: string | undefined }) =>
        Effect.flatMap(
          openUrl({ message: messageFor(access, prompt.userCode), url: prompt.url, id }),
          (reply) => (reply === "accept" ? Effect.void : Deferred.succeed(declined, undefined))
        ),
      openBrowser: false,
      timeout: LOGIN_TIMEOUT
    }
    const { login } = yield* Effect.promise(programs)
    const loggedIn = yield* Effect.raceFirst(
      Effect.as(login({ agentUrl: access.agentUrl, cardUrl: access.cardUrl, flow: wanted.flow, ...client, interaction }), true),
      Effect.as(Deferred.await(declined), false)
    )
    if (loggedIn && urlDone !== undefined) yield* urlDone(id)
    return loggedIn
  })

/**
 * `step` against the agent; when it is refused for want of a login the user can do through the
 * client, the user is offered it and, once logged in, the step runs once more.
 */
export const loggingInWhenNeeded = (access: AgentAccess, fallbackClientId: string | undefined) => <A, E, R>(step: Effect.Effect<A, E, R>) =>
  Effect.catchAll(step, (error): Effect.Effect<A, E | LoginFailure, R | SessionStore | A2aClient> => {
    const wanted = wantedBy(error)
    if (wanted === undefined) return Effect.fail(error)
    return Effect.flatMap(FiberRef.get(currentUser), (user) =>
      Effect.flatMap(
        loginThroughClient(user, access, wanted, fallbackClientId),
        (loggedIn): Effect.Effect<A, E, R> => (loggedIn ? step : Effect.fail(error))
      ))
  })
