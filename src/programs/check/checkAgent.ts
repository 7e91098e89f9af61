/**
 * `relay check` / `check_agent`: run the conformance checks of domain/conformance against an agent
 * and return the report. The card checks run once; the others once per interface the card declares
 * (filtered by the protocols and bindings asked for), each with its client pinned to that
 * interface so no fallback hides a fault. Everything is bounded: each request by the timeout, each
 * check by twice that, and the tasks created by MAX_TASKS_PER_INTERFACE per interface.
 */
import { Clock, Duration, Effect, Either, Option, Ref } from "effect"
import type { Binding } from "../../a2a/dialects.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import type * as V1 from "../../a2a/v1.js"
import {
  appliesTo,
  bindingName,
  CHECK_REPORT_SCHEMA_ID,
  checkById,
  type CheckGroup,
  type CheckOutcome,
  type CheckReport,
  type CheckResult,
  CHECKS,
  type CheckSpec,
  type CreatedTask,
  failed,
  type InterfaceId,
  selectChecks,
  skipped,
  specSection,
  summarize,
  unknownSelectors
} from "../../domain/conformance.js"
import { InvalidInput } from "../../domain/errors.js"
import { escapeForTerminal } from "../../domain/terminalText.js"
import { A2aClient, type DiscoveredCard, type Endpoint, selectEndpoints, type Target, withoutSecrets } from "../../services/A2aClient.js"
import type { RawGrpc } from "../../services/RawGrpc.js"
import type { RawHttp, RawResponse } from "../../services/RawHttp.js"
import { type AgentAccess, resolveTarget } from "../agentTarget.js"
import { authChecks } from "./authChecks.js"
import { cardBlocker, cardOutcome, cardProtocol, findCard } from "./cardChecks.js"
import { type InterfaceContext, MAX_CHECK_BODY_BYTES, type PartAnswer } from "./context.js"
import { equivalenceChecks } from "./equivalenceChecks.js"
import { grpcChecks } from "./grpcChecks.js"
import { interfaceHostsOutcome, notSentReason, splitByOrigin } from "./interfaceHosts.js"
import { messagingChecks } from "./messagingChecks.js"
import { partChecks } from "./partChecks.js"
import { pushChecks } from "./pushChecks.js"
import { streamingChecks } from "./streamingChecks.js"
import { taskChecks } from "./taskChecks.js"
import { transportChecks } from "./transportChecks.js"

/** What a dry run needs: the checks selected, and the agent's URL only to name it in the report. */
export interface CheckPlanInput {
  /** As given: a dry run sends nothing, so the URL is reported as it is and never decoded. */
  readonly agentUrl: string
  /** Group names or check ids; empty: all. */
  readonly only: ReadonlyArray<string>
  readonly skip: ReadonlyArray<string>
}

/** A run: the agent's URL is an AgentUrl, decoded by the door (the checks contact it). */
export interface CheckAgentInput extends Omit<AgentAccess, "protocol" | "binding" | "timeoutSeconds">, Omit<CheckPlanInput, "agentUrl"> {
  readonly protocols: ReadonlyArray<ProtocolVersion>
  readonly bindings: ReadonlyArray<Binding>
  /** Seconds each request may take (default 10). */
  readonly timeoutSeconds?: number | undefined
  /** Called as each group of one interface (or the card) is done: the doors show progress with it. */
  readonly onGroupDone?: ((group: CheckGroup, results: ReadonlyArray<CheckResult>) => Effect.Effect<void>) | undefined
}

export const DEFAULT_CHECK_TIMEOUT_SECONDS = 10

type InterfaceCheck = (ctx: InterfaceContext) => Effect.Effect<CheckOutcome, unknown, A2aClient | RawHttp | RawGrpc>

const INTERFACE_CHECKS: Readonly<Record<string, InterfaceCheck>> = {
  ...transportChecks,
  ...grpcChecks,
  ...messagingChecks,
  ...partChecks,
  ...taskChecks,
  ...streamingChecks,
  ...pushChecks,
  ...authChecks
}

/** Why the card rules a check out, if it does (a need the check itself judges, like a working task, is not here). */
const unmetNeed = (spec: CheckSpec, card: V1.AgentCard): string | undefined => {
  if (spec.needs.includes("streaming") && card.capabilities.streaming !== true) return "the card does not declare capabilities.streaming"
  if (spec.needs.includes("push") && card.capabilities.pushNotifications !== true) {
    return "the card does not declare capabilities.pushNotifications"
  }
  const guarded = Object.keys(card.securitySchemes ?? {}).length > 0 && (card.securityRequirements ?? []).length > 0
  if (spec.needs.includes("auth") && !guarded) return "the card asks for no credentials (no securitySchemes with securityRequirements)"
  return undefined
}

/** One result; it cites the interface's generation (or, for the card checks, the card's: `protocol`). */
const resultOf = (
  spec: CheckSpec,
  id: InterfaceId | null,
  outcome: CheckOutcome,
  durationMs: number,
  protocol = id?.protocol
): CheckResult => ({
  id: spec.id,
  group: spec.group,
  severity: spec.severity,
  title: spec.title,
  spec: specSection(spec, protocol),
  interface: id,
  status: outcome.status,
  // Details quote what agents sent: escaped here, they are safe in every report (text, JSON, JUnit, MCP).
  detail: escapeForTerminal(outcome.detail),
  duration_ms: Math.max(0, Math.round(durationMs))
})

/**
 * The outcome with the run's credentials masked in its detail: details quote agents, and an agent may
 * echo the headers it was sent (as `relay auth show` shows them).
 */
const maskedFor = (target: Target) => (outcome: CheckOutcome): CheckOutcome => ({
  ...outcome,
  detail: withoutSecrets(target, outcome.detail)
})

const timed = <R>(
  spec: CheckSpec,
  id: InterfaceId | null,
  limit: Duration.Duration,
  run: Effect.Effect<CheckOutcome, unknown, R>,
  masked: (outcome: CheckOutcome) => CheckOutcome
) =>
  Effect.gen(function*() {
    const start = yield* Clock.currentTimeMillis
    const outcome = yield* run.pipe(
      Effect.timeoutFail({ duration: limit, onTimeout: () => `no verdict within ${Duration.format(limit)}` }),
      Effect.catchAllDefect((defect) => Effect.fail(`the check itself failed: ${String(defect)}`)),
      Effect.catchAll((error) => Effect.succeed(failed(typeof error === "string" ? error : errorMessage(error))))
    )
    return resultOf(spec, id, masked(outcome), (yield* Clock.currentTimeMillis) - start)
  })

const errorMessage = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error ? String((error as { message: unknown }).message) : String(error)

const validateSelectors = (input: CheckPlanInput) => {
  const unknown = unknownSelectors([...input.only, ...input.skip])
  return unknown.length === 0
    ? Effect.void
    : Effect.fail(
      new InvalidInput({
        reason: `Unknown check group or id: ${unknown.join(", ")}`,
        suggestion:
          "Use group names (card, transport, messaging, tasks, streaming, push, auth, equivalence) or check ids; --dry-run lists them."
      })
    )
}

/** A dry run: every selected check, listed once, skipped; nothing is sent. */
const dryRunReport = (input: CheckPlanInput, specs: ReadonlyArray<CheckSpec>): CheckReport => {
  const results = specs.map((spec) => resultOf(spec, null, skipped("dry run: nothing sent"), 0))
  return {
    schema: CHECK_REPORT_SCHEMA_ID,
    agent_url: input.agentUrl,
    card_url: null,
    dry_run: true,
    interfaces: [],
    results,
    tasks_created: [],
    summary: summarize(results),
    duration_ms: 0
  }
}

/** The card's interfaces to check, one per protocol × binding asked for that it declares. */
const interfacesToCheck = (input: CheckAgentInput, found: DiscoveredCard, target: Target): ReadonlyArray<Endpoint> =>
  input.protocols.flatMap((protocol) =>
    input.bindings.flatMap((binding) => {
      const endpoint = selectEndpoints(found.card, found.cardUrl, { ...target, protocol, binding })[0]
      return endpoint === undefined ? [] : [endpoint]
    })
  )

/** The dry run of checkAgent: the checks it would run, listed and skipped; nothing is sent. */
export const planChecks = Effect.fn("planChecks")(function*(input: CheckPlanInput) {
  yield* validateSelectors(input)
  return dryRunReport(input, selectChecks(input.only, input.skip))
})

export const checkAgent = Effect.fn("checkAgent")(function*(input: CheckAgentInput) {
  yield* validateSelectors(input)
  const specs = selectChecks(input.only, input.skip)
  const started = yield* Clock.currentTimeMillis
  const timeout = Duration.seconds(input.timeoutSeconds ?? DEFAULT_CHECK_TIMEOUT_SECONDS)
  const checkLimit = Duration.times(timeout, 2)
  const target: Target = {
    ...(yield* resolveTarget({ ...input, timeoutSeconds: input.timeoutSeconds ?? DEFAULT_CHECK_TIMEOUT_SECONDS })),
    maxResponseBytes: MAX_CHECK_BODY_BYTES
  }
  const report = input.onGroupDone ?? (() => Effect.void)
  const masked = maskedFor(target)

  // The card first: without one (or one relay cannot read) one check names the root cause and nothing else runs.
  const findings = yield* findCard(target, timeout)
  const blocker = cardBlocker(findings)
  const discovered = Either.getRight(findings.card)
  const endpoints = Option.match(discovered, { onNone: () => [], onSome: (found) => interfacesToCheck(input, found, target) })
  // Nothing goes to an interface on another origin than the card unless the user allowed its host.
  const { checked, refused } = Option.match(discovered, {
    onNone: () => ({ checked: endpoints, refused: [] as ReadonlyArray<Endpoint> }),
    onSome: (found) => splitByOrigin(endpoints, found.cardUrl, target.allowInterfaceHosts)
  })
  const outcomeOf = (spec: CheckSpec): CheckOutcome =>
    spec.id !== "card.interface-hosts"
      ? cardOutcome(spec.id, findings)
      : Option.match(discovered, {
        onNone: () => skipped(blocker?.reason ?? "no card"),
        onSome: (found) => interfaceHostsOutcome(checked, refused, found.cardUrl)
      })
  // The root cause, and what was not sent, are never left out of the report.
  const hostsRule = checkById("card.interface-hosts")!
  const cardSpecs = CHECKS.filter((spec) =>
    spec.scope === "agent" &&
    (specs.includes(spec) || spec.id === blocker?.id || (spec === hostsRule && refused.length > 0))
  )
  const cited = cardProtocol(findings)
  const cardResults = cardSpecs.map((spec) => resultOf(spec, null, masked(outcomeOf(spec)), 0, cited))
  if (cardResults.length > 0) yield* report("card", cardResults)

  const created = yield* Ref.make<ReadonlyArray<CreatedTask>>([])
  const interfaceResults: Array<CheckResult> = []
  const contexts: Array<InterfaceContext> = []
  for (const endpoint of endpoints) {
    const id: InterfaceId = { protocol: endpoint.version, binding: bindingName(endpoint.binding) }
    const ctx: InterfaceContext = {
      target: { ...target, protocol: endpoint.version, binding: endpoint.binding },
      endpoint,
      id,
      card: Option.getOrThrow(discovered).card,
      timeout,
      created,
      firstAnswer: yield* Ref.make(Option.none<V1.SendMessageResponse>()),
      streamAnswer: yield* Ref.make(Option.none<RawResponse>()),
      partAnswers: yield* Ref.make<ReadonlyMap<string, PartAnswer>>(new Map())
    }
    const notSent = refused.includes(endpoint) ? notSentReason(endpoint, Option.getOrThrow(discovered).cardUrl) : undefined
    if (notSent === undefined) contexts.push(ctx)
    const applicable = specs.filter((spec) => appliesTo(spec, id))
    for (const group of new Set(applicable.map((spec) => spec.group))) {
      const groupResults: Array<CheckResult> = []
      for (const spec of applicable.filter((s) => s.group === group)) {
        const run = INTERFACE_CHECKS[spec.id]
        const unmet = notSent ?? unmetNeed(spec, ctx.card)
        groupResults.push(
          unmet !== undefined
            ? resultOf(spec, id, skipped(unmet), 0)
            : run === undefined
            ? resultOf(spec, id, skipped("not implemented in this relay version"), 0)
            : yield* timed(spec, id, checkLimit, run(ctx), masked)
        )
      }
      interfaceResults.push(...groupResults)
      yield* report(group, groupResults)
    }
  }
  const acrossResults: Array<CheckResult> = []
  for (const spec of specs.filter((s) => s.scope === "across" && contexts.length > 0)) {
    const run = equivalenceChecks[spec.id as keyof typeof equivalenceChecks]
    acrossResults.push(yield* timed(spec, null, checkLimit, run(contexts), masked))
  }
  if (acrossResults.length > 0) yield* report("equivalence", acrossResults)
  // Interfaces the card does not declare (or no card to read them from) were not tested: say so rather than pass silently.
  const untested = blocker?.reason ??
    `the card declares no interface for protocol ${input.protocols.join("/")} and binding ${input.bindings.map(bindingName).join("/")}`
  const noInterface = endpoints.length === 0
    ? specs.filter((spec) => spec.scope !== "agent").map((spec) => resultOf(spec, null, skipped(untested), 0))
    : []
  const results = [...cardResults, ...interfaceResults, ...acrossResults, ...noInterface]
  return {
    schema: CHECK_REPORT_SCHEMA_ID,
    agent_url: target.agentUrl,
    card_url: findings.served?.cardUrl ?? null,
    dry_run: false,
    interfaces: endpoints.map((endpoint) => ({ protocol: endpoint.version, binding: bindingName(endpoint.binding), url: endpoint.url })),
    results,
    tasks_created: yield* Ref.get(created),
    summary: summarize(results),
    duration_ms: (yield* Clock.currentTimeMillis) - started
  } satisfies CheckReport
})
