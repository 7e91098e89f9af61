/**
 * Logging in from the assistant. A tool refused for want of an OAuth login a person does in a
 * browser (authorization code + PKCE, or a device code) offers the login page to the user through
 * the client, finishes the flow on relay's own loopback listener, saves the tokens as `relay auth
 * login` does and runs the refused step once more. One login program, offered in each era's way
 * (toolCall.ts):
 *
 * - 2025-11-25 (`openUrl`): a URL-mode `elicitation/create` while the call waits for the login.
 * - 2026-07-28 (`pages`): the call ends with an `input_required` result offering the page; the
 *   login goes on here without it (a pending login, under the page's unguessable id), and the
 *   client's retry of the call waits for it, then runs the call again. A login still running after
 *   LOGIN_LEG asks the client to retry once more (requestState alone, as MRTR allows).
 *
 * The client and the model only ever see the page's URL, which carries no secret (PKCE keeps the
 * verifier here). Without a client that opens pages, or when the user declines, the refusal
 * stands as it is (needs_auth or auth_required, with the terminal command).
 */
import { Deferred, Duration, Effect, type Exit, Fiber, FiberId, FiberRef, Option } from "effect"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { login, LoginResult } from "../programs/oauth.js"
import type { A2aClient } from "../services/A2aClient.js"
import type { LoginPrompt } from "../services/OAuth.js"
import { SessionStore } from "../services/SessionStore.js"
import { currentUser, type PageOffers, type UrlRequest, type UserPrompt } from "./toolCall.js"

// The login program loads with the other programs, on first use (toolKit.ts withPrograms).
const programs = () => import("./toolPrograms.js")

/** How long the user has to finish logging in once the page was offered (as `relay auth login`). */
export const LOGIN_TIMEOUT = Duration.minutes(5)

/**
 * How long a 2026-07-28 retry waits for the login in progress before asking the client to retry
 * again: well inside a client's per-request timeout (the v2 SDK's is 60 s), and long enough that
 * its round cap (10 by default) covers LOGIN_TIMEOUT.
 */
export const LOGIN_LEG = Duration.seconds(30)

/** 2026-07-28 logins in progress at once, at most: each holds a loopback listener for up to LOGIN_TIMEOUT. */
export const MAX_PENDING_LOGINS = 16

/** Why a login through the client failed (it timed out, the provider refused, ...): each says what to do. */
type LoginFailure = Effect.Effect.Error<ReturnType<typeof login>>
type LoginNeeds = Effect.Effect.Context<ReturnType<typeof login>>

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

/**
 * The client id (and the secret kept with it, for the token endpoint it was kept with) of the
 * agent's saved OAuth tokens, else the one wanted, else the server's.
 */
const clientOf = (access: AgentAccess, wanted: Wanted, fallback: string | undefined) =>
  Effect.map(
    Effect.flatMap(SessionStore, (store) => store.getCredentials(access.agentUrl)).pipe(Effect.orElseSucceed(() => Option.none())),
    (saved) => {
      const oauth = Option.isSome(saved) && saved.value.kind === "oauth" ? saved.value : undefined
      const clientId = wanted.clientId ?? oauth?.client_id ?? fallback
      if (clientId === undefined) return undefined
      return oauth?.client_id === clientId && oauth.client_secret !== undefined
        ? { clientId, clientSecret: oauth.client_secret, clientSecretFor: oauth.token_endpoint }
        : { clientId }
    }
  )

const pageFor = (access: AgentAccess, prompt: LoginPrompt, id: string): UrlRequest => ({
  message: `Log in to the A2A agent at ${access.agentUrl} so relay can use it for you. ` +
    (prompt.userCode === undefined ? "" : `Enter the code ${prompt.userCode} on the page. `) +
    "relay receives the result itself: no token passes through the assistant.",
  url: prompt.url,
  id
})

/** The login program, showing its page with `prompt`: the same in both eras. */
type LoginWith = (prompt: (prompt: LoginPrompt) => Effect.Effect<void>) => Effect.Effect<LoginResult, LoginFailure, LoginNeeds>

// ---------------------------------------------------------------------------
// 2025-11-25: the page offered while the call waits

const loginDuringTheCall = (
  openUrl: NonNullable<UserPrompt["openUrl"]>,
  urlDone: UserPrompt["urlDone"],
  access: AgentAccess,
  loginWith: LoginWith
) =>
  Effect.gen(function*() {
    const id = crypto.randomUUID()
    const declined = yield* Deferred.make<void>()
    const prompt = (shown: LoginPrompt) =>
      Effect.flatMap(
        openUrl(pageFor(access, shown, id)),
        (reply) => (reply === "accept" ? Effect.void : Deferred.succeed(declined, undefined))
      )
    const loggedIn = yield* Effect.raceFirst(Effect.as(loginWith(prompt), true), Effect.as(Deferred.await(declined), false))
    if (loggedIn && urlDone !== undefined) yield* urlDone(id)
    return loggedIn
  })

// ---------------------------------------------------------------------------
// 2026-07-28: the page offered in the call's result, the login kept here for the retry

interface PendingLogin {
  readonly agentUrl: string
  readonly fiber: Fiber.RuntimeFiber<LoginResult, LoginFailure>
  readonly expiry: ReturnType<typeof setTimeout>
}

/**
 * Logins begun for 2026-07-28 calls, by page id: the process's, since that era's requests share
 * nothing else. Each is forgotten once its retry took the outcome, when the user declines, or a
 * minute after it timed out (the retry that never came).
 */
const pendingLogins = new Map<string, PendingLogin>()

const forget = (id: string) => {
  const pending = pendingLogins.get(id)
  if (pending === undefined) return
  pendingLogins.delete(id)
  clearTimeout(pending.expiry)
  pending.fiber.unsafeInterruptAsFork(FiberId.none)
}

/** What the retry of page `id` gets: the login's outcome, or, while it runs past `leg`, another retry. */
const outcomeOf = (pages: PageOffers, id: string, pending: PendingLogin, leg: Duration.Duration) =>
  Effect.flatMap(
    Effect.timeoutOption(Fiber.await(pending.fiber), leg),
    (ended: Option.Option<Exit.Exit<LoginResult, LoginFailure>>) => {
      if (Option.isNone(ended)) return pages.retryLater(id)
      forget(id)
      return Effect.as(ended.value, true)
    }
  )

/** A first call: the login starts without the call, whose result offers its page. */
const startLogin = (pages: PageOffers, access: AgentAccess, loginWith: LoginWith) =>
  Effect.gen(function*() {
    if (pendingLogins.size >= MAX_PENDING_LOGINS) return false
    const id = crypto.randomUUID()
    const shown = yield* Deferred.make<LoginPrompt>()
    const fiber = yield* Effect.forkDaemon(loginWith((prompt) => Deferred.succeed(shown, prompt)))
    const expiry = setTimeout(() => forget(id), Duration.toMillis(Duration.sum(LOGIN_TIMEOUT, Duration.minutes(1)))).unref()
    pendingLogins.set(id, { agentUrl: access.agentUrl, fiber, expiry })
    // A login that fails before it shows a page (discovery, ...) fails the call as it would at once.
    const page = yield* Effect.raceFirst(Effect.map(Deferred.await(shown), Option.some), Effect.as(Fiber.join(fiber), Option.none())).pipe(
      Effect.onError(() => Effect.sync(() => forget(id)))
    )
    if (Option.isNone(page)) {
      forget(id)
      return true
    }
    return yield* pages.offer(pageFor(access, page.value, id))
  })

const loginThroughResults = (pages: PageOffers, access: AgentAccess, loginWith: LoginWith, leg: Duration.Duration) => {
  const answered = pages.answered
  const pending = answered === undefined ? undefined : pendingLogins.get(answered.id)
  // A page relay no longer knows (or another agent's) is a first call again.
  if (answered === undefined || pending === undefined || pending.agentUrl !== access.agentUrl) return startLogin(pages, access, loginWith)
  if (answered.reply === "decline" || answered.reply === "cancel") {
    forget(answered.id)
    return Effect.succeed(false)
  }
  return outcomeOf(pages, answered.id, pending, leg)
}

// ---------------------------------------------------------------------------

/**
 * The login the user did through the client, or none (not possible here, or declined). A login
 * that fails fails the step with its own error, which says what went wrong.
 */
const loginThroughClient = (
  user: UserPrompt,
  access: AgentAccess,
  wanted: Wanted,
  fallbackClientId: string | undefined,
  leg: Duration.Duration
) =>
  Effect.gen(function*() {
    const { openUrl, urlDone, pages } = user
    if (openUrl === undefined && pages === undefined) return false
    const client = yield* clientOf(access, wanted, fallbackClientId)
    if (client === undefined) return false
    const { login } = yield* Effect.promise(programs)
    const loginWith: LoginWith = (prompt) =>
      login({
        agentUrl: access.agentUrl,
        cardUrl: access.cardUrl,
        flow: wanted.flow,
        ...client,
        interaction: { prompt, openBrowser: false, timeout: LOGIN_TIMEOUT }
      })
    return yield* openUrl !== undefined
      ? loginDuringTheCall(openUrl, urlDone, access, loginWith)
      : loginThroughResults(pages!, access, loginWith, leg)
  })

/**
 * `step` against the agent; when it is refused for want of a login the user can do through the
 * client, the user is offered it and, once logged in, the step runs once more.
 */
export const loggingInWhenNeeded =
  (access: AgentAccess, fallbackClientId: string | undefined, leg = LOGIN_LEG) => <A, E, R>(step: Effect.Effect<A, E, R>) =>
    Effect.catchAll(step, (error): Effect.Effect<A, E | LoginFailure, R | SessionStore | A2aClient | LoginNeeds> => {
      const wanted = wantedBy(error)
      if (wanted === undefined) return Effect.fail(error)
      return Effect.flatMap(FiberRef.get(currentUser), (user) =>
        Effect.flatMap(
          loginThroughClient(user, access, wanted, fallbackClientId, leg),
          (loggedIn): Effect.Effect<A, E, R> => (loggedIn ? step : Effect.fail(error))
        ))
    })
