/**
 * How every program that contacts an agent turns user input into an A2aClient target:
 * resolve credentials (the door already made the URL canonical) in the order of SPEC §5 — explicit bearer token,
 * then explicit API key, then what is saved for the agent, then none — and the card URL: the one
 * given, else the one saved with the agent's session.
 */
import { Duration, Effect, Either, Option } from "effect"
import { pathToFileURL } from "node:url"
import type { Binding } from "../a2a/dialects.js"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import { readAsClient } from "../a2a/usableInterfaces.js"
import { type AgentUrl, normalizeAgentUrl } from "../domain/agentUrl.js"
import { AuthRequired } from "../domain/clientErrors.js"
import { InvalidInput } from "../domain/errors.js"
import { act } from "../domain/hints.js"
import type { InterfaceUsed } from "../domain/results.js"
import { type Credentials, DEFAULT_API_KEY_HEADER } from "../domain/session.js"
import { A2aClient, type Target } from "../services/A2aClient.js"
import { SessionStore } from "../services/SessionStore.js"
import { resolveAgentUrl } from "./agentNames.js"
import { credentialsFrom } from "./credentials.js"
import { readCardFile } from "./localFiles.js"
import { bearerFor } from "./oauth.js"
import { anyFile } from "./readPermission.js"
import { saveCardUrl, savedCardUrlOf } from "./sessions.js"

/**
 * Runs `use` against the agent; when saved OAuth tokens are refused with 401, they are renewed
 * once and the call repeated (the refused request was not processed, so repeating it is safe).
 */
export const withAgentTarget = <A, E, R>(access: AgentAccess, use: (target: Target) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(resolveTarget(access), (target) => retryWithRenewedToken(target, use))

/**
 * `use(target)`, repeated once with renewed OAuth tokens if the agent refused the saved ones with
 * 401 — unless `repeatable` says the first attempt already had an effect worth not repeating.
 */
export const retryWithRenewedToken = <A, E, R>(
  target: Target,
  use: (target: Target) => Effect.Effect<A, E, R>,
  repeatable: () => boolean = () => true
) =>
  use(target).pipe(
    Effect.map((result) => ({ target, result })),
    Effect.catchIf((error) => refusedSavedToken(error) && repeatable(), (error) =>
      Effect.flatMap(
        Effect.flatMap(SessionStore, (store) => store.getCredentials(target.agentUrl)),
        (saved) => {
          if (Option.isNone(saved) || saved.value.kind !== "oauth") return Effect.fail(error)
          // Renewal is told the token that was refused: one another caller renewed meanwhile is used, not renewed again.
          const sent = target.credentials?.kind === "bearer" ? target.credentials.token : saved.value.access_token
          return Effect.flatMap(bearerFor(target.agentUrl, { ...saved.value, access_token: sent }, true), (credentials) => {
            const renewed = { ...target, credentials }
            return Effect.map(use(renewed), (result) => ({ target: renewed, result }))
          })
        }
      ))
  )

/** The agent refused the saved credentials as no longer valid (401, not 403's "not allowed"). */
const refusedSavedToken = (error: unknown): error is AuthRequired =>
  error instanceof AuthRequired && error.status === 401 && error.credentials === "saved"

/** What a door passes to reach an agent; everything but the URL is optional. */
export interface AgentAccess {
  readonly agentUrl: AgentUrl
  readonly bearerToken?: string | undefined
  readonly apiKey?: string | undefined
  /** Header for an explicit API key (default X-API-Key). */
  readonly apiKeyHeader?: string | undefined
  readonly cardUrl?: string | undefined
  readonly protocol?: ProtocolVersion | undefined
  readonly binding?: Binding | undefined
  readonly allowCrossOriginCredentials?: boolean | undefined
  /** Interface hosts the user vouches for (--allow-interface-host). */
  readonly allowInterfaceHosts?: ReadonlyArray<string> | undefined
  /** Hosts relay may speak plaintext gRPC to (--insecure); loopback needs no naming. */
  readonly insecureHosts?: ReadonlyArray<string> | undefined
  readonly timeoutSeconds?: number | undefined
  readonly streamIdleSeconds?: number | undefined
  /** Largest answer (card, JSON body, one stream event) read from the agent (default MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes?: number | undefined
  /** The agent's card as the user gave it (`--card-file`, read by cardFileAccess): no discovery then. */
  readonly card?: GivenCard | undefined
}

/** A card the user gave in a file: its JSON, and the path it was read from. */
export interface GivenCard {
  readonly json: unknown
  readonly source: string
}

const explicitCredentials = (access: AgentAccess) =>
  access.bearerToken === undefined && access.apiKey === undefined
    ? Effect.succeed(Option.none<Credentials>())
    : Effect.map(
      credentialsFrom({
        bearerToken: access.bearerToken,
        apiKey: access.apiKey,
        apiKeyHeader: access.apiKeyHeader ?? DEFAULT_API_KEY_HEADER
      }),
      Option.some
    )

/**
 * The credentials saved for an origin (`relay auth set --url ORIGIN`), OAuth tokens renewed as for
 * the agent; none where nothing usable is saved there.
 */
const savedCredentialsAt = (origin: string) =>
  Effect.gen(function*() {
    const agentUrl = Either.getOrUndefined(normalizeAgentUrl(origin))
    if (agentUrl === undefined) return undefined
    const saved = yield* Effect.flatMap(SessionStore, (store) => store.getCredentials(agentUrl))
    if (Option.isNone(saved)) return undefined
    return saved.value.kind === "oauth" ? yield* bearerFor(agentUrl, saved.value) : saved.value as Credentials
  }).pipe(Effect.orElseSucceed(() => undefined))

export const resolveTarget = Effect.fn("resolveTarget")(function*(access: AgentAccess) {
  const store = yield* SessionStore
  const context = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof savedCredentialsAt>>>()
  const agentUrl = access.agentUrl
  const savedCardUrl = yield* savedCardUrlOf(agentUrl)
  const explicit = yield* explicitCredentials(access)
  const saved = Option.isSome(explicit) ? Option.none() : yield* store.getCredentials(agentUrl)
  // OAuth tokens go out as a bearer token, renewed first when about to expire.
  const credentials: Option.Option<Credentials> = Option.isSome(explicit)
    ? explicit
    : Option.isSome(saved) && saved.value.kind === "oauth"
    ? Option.some(yield* bearerFor(agentUrl, saved.value))
    : (saved as Option.Option<Credentials>)
  const seconds = (value: number | undefined) => (value === undefined ? undefined : Duration.seconds(value))
  const target: Target = {
    agentUrl,
    cardUrl: access.cardUrl ?? savedCardUrl,
    credentials: Option.getOrUndefined(credentials),
    credentialsGiven: Option.isSome(explicit),
    protocol: access.protocol,
    binding: access.binding,
    allowCrossOriginCredentials: access.allowCrossOriginCredentials,
    allowInterfaceHosts: access.allowInterfaceHosts,
    insecureHosts: access.insecureHosts,
    timeout: seconds(access.timeoutSeconds),
    streamIdleTimeout: seconds(access.streamIdleSeconds),
    maxResponseBytes: access.maxResponseBytes,
    card: access.card,
    savedCredentialsOf: (origin) => Effect.provide(savedCredentialsAt(origin), context),
    used: { endpoint: undefined }
  }
  if (access.cardUrl !== undefined && access.cardUrl !== savedCardUrl) yield* rememberCardUrl(target)
  return target
})

/** The binding and protocol version the target's last call went over (none before one answered): results name them. */
export const interfaceUsed = (target: Target): InterfaceUsed => {
  const endpoint = target.used?.endpoint
  return endpoint === undefined ? {} : { binding: endpoint.binding, protocol_version: endpoint.version }
}

/**
 * A card file given for the agent (`--card-file`), read and decoded at the door, and the agent it
 * stands for: the URL given, else the card's first interface that fits the pins (the one a call
 * takes). A file that is missing, not JSON or not a card is the user's to fix: a usage error.
 */
export const cardFileAccess = Effect.fn("cardFileAccess")(function*(
  path: string,
  pins: { readonly binding?: Binding | undefined; readonly protocol?: ProtocolVersion | undefined },
  agentUrl: AgentUrl | undefined
) {
  const unusable = (reason: string) =>
    new InvalidInput({
      reason: `--card-file ${path}: ${reason}`,
      suggestion: ["Check the card with ", act("ValidateCard", { source: path }), "."]
    })
  const json = yield* readCardFile(path, anyFile).pipe(Effect.mapError((error) => unusable(error.reason)))
  const reading = readAsClient(json, pathToFileURL(path).href)
  if (Either.isLeft(reading)) return yield* unusable(`it is not an agent card (${reading.left})`)
  const card: GivenCard = { json, source: path }
  if (agentUrl !== undefined) return { agentUrl, card }
  const chosen = reading.right.usable.find((use) =>
    (pins.binding === undefined || use.binding === pins.binding) && (pins.protocol === undefined || use.version === pins.protocol)
  )
  if (chosen === undefined) {
    return yield* unusable(
      `it offers no interface relay can use${
        pins.binding !== undefined || pins.protocol !== undefined ? " with the pinned binding/version" : ""
      }`
    )
  }
  const own = yield* Effect.mapError(resolveAgentUrl(chosen.url), (error) => unusable(error.message))
  return { agentUrl: own, card }
})

/**
 * Saves the card URL the user gave with the agent's session once a card is found there, so every
 * later call (and every command a hint suggests) finds the card without being told again. A URL
 * with no card is not saved: the call itself then reports what is wrong with it.
 */
const rememberCardUrl = (target: Target) =>
  Effect.flatMap(A2aClient, (client) => Effect.option(client.discover(target))).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.void,
      onSome: (found) => saveCardUrl(target.agentUrl, found.cardUrl)
    }))
  )
