/**
 * The conformance checks of `relay check` (and the MCP tool `check_agent`): what each one checks,
 * where the rule is written, how binding it is, and what the agent must offer for it to run. Pure:
 * the checks' code lives in programs/check, the rendering at each door.
 *
 * A check's id is stable: reports, CI filters and tests name checks by id, so an id is never
 * reused for another rule. Ids start with their group.
 */
import type { Binding } from "../a2a/dialects.js"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"

export const CHECK_GROUPS = ["card", "transport", "messaging", "tasks", "streaming", "push", "auth", "equivalence"] as const
export type CheckGroup = (typeof CHECK_GROUPS)[number]

/** `must`: the specification requires it; `should`: recommended. Which failures fail a run is `--fail-on`'s choice. */
export type Severity = "must" | "should"

/** The least severity that fails a run: `must` (the default) lets SHOULD-level findings be reported without failing CI. */
export type FailOn = Severity
export const DEFAULT_FAIL_ON: FailOn = "must"

/** What the agent must offer for a check to run; otherwise the check is skipped with the reason. */
export type CheckNeed = "streaming" | "push" | "auth" | "working-task" | "input-required-task"

/** Where a check runs: once per agent (its card), once per interface (protocol × binding), or once across all interfaces. */
export type CheckScope = "agent" | "interface" | "across"

export interface CheckSpec {
  readonly id: string
  readonly group: CheckGroup
  readonly severity: Severity
  readonly title: string
  /** The section of each generation's specification that states the rule. */
  readonly spec: { readonly "1.0"?: string; readonly "0.3"?: string }
  readonly scope: CheckScope
  readonly needs: ReadonlyArray<CheckNeed>
  /** Only on these bindings (default: all three). */
  readonly bindings?: ReadonlyArray<Binding>
  /** Only at these protocol versions (default: both). */
  readonly versions?: ReadonlyArray<ProtocolVersion>
}

const check = (spec: Omit<CheckSpec, "needs" | "scope"> & Partial<Pick<CheckSpec, "needs" | "scope">>): CheckSpec => ({
  scope: "interface",
  needs: [],
  ...spec
})

const JSONRPC_ONLY: ReadonlyArray<Binding> = ["JSONRPC"]
const REST_ONLY: ReadonlyArray<Binding> = ["HTTP+JSON"]
/** What only HTTP shows: content types, SSE framing, HTTP statuses and headers. */
const HTTP_ONLY: ReadonlyArray<Binding> = ["JSONRPC", "HTTP+JSON"]
const GRPC_ONLY: ReadonlyArray<Binding> = ["GRPC"]

/** Every check, in the order they run and are reported. */
export const CHECKS: ReadonlyArray<CheckSpec> = [
  // card: once per agent
  check({
    id: "card.served",
    group: "card",
    severity: "must",
    scope: "agent",
    title: "The card is served as JSON at the well-known path",
    spec: { "1.0": "§8.2", "0.3": "§5.3" }
  }),
  check({
    id: "card.valid",
    group: "card",
    severity: "must",
    scope: "agent",
    title: "The card has every required field, well formed",
    spec: { "1.0": "§4.4.1", "0.3": "§5.5" }
  }),
  check({
    id: "card.interfaces",
    group: "card",
    severity: "must",
    scope: "agent",
    title: "The card declares an interface with a URL, a binding and a protocol version",
    spec: { "1.0": "§8.3.1", "0.3": "§5.6" }
  }),
  check({
    id: "card.caching",
    group: "card",
    severity: "should",
    scope: "agent",
    title: "The card is served with Cache-Control or ETag",
    spec: { "1.0": "§8.6.1" }
  }),
  // relay's own rule, not the spec's: a check sends nothing to a host the card alone names.
  check({
    id: "card.interface-hosts",
    group: "card",
    severity: "must",
    scope: "agent",
    title: "Every interface checked is on the card's origin, or on a host the user allowed",
    spec: {}
  }),
  // transport: the envelope, per interface
  check({
    id: "transport.parse-error",
    group: "transport",
    severity: "must",
    bindings: JSONRPC_ONLY,
    title: "Malformed JSON is answered with -32700",
    spec: { "1.0": "§9.5", "0.3": "§8.1" }
  }),
  check({
    id: "transport.invalid-request",
    group: "transport",
    severity: "must",
    bindings: JSONRPC_ONLY,
    title: "A request without a method is answered with -32600",
    spec: { "1.0": "§9.5", "0.3": "§8.1" }
  }),
  check({
    id: "transport.method-not-found",
    group: "transport",
    severity: "must",
    bindings: JSONRPC_ONLY,
    title: "An unknown method is answered with -32601 and the request's id",
    spec: { "1.0": "§9.5", "0.3": "§8.1" }
  }),
  check({
    id: "transport.json-content-type",
    group: "transport",
    severity: "must",
    bindings: HTTP_ONLY,
    title: "Answers are JSON with a JSON content type",
    spec: { "1.0": "§9.1, §11.1", "0.3": "§3.2.1, §3.2.3" }
  }),
  check({
    id: "transport.version-refused",
    group: "transport",
    severity: "must",
    versions: ["1.0"],
    title: "An A2A-Version the interface does not declare is refused with VersionNotSupported",
    spec: { "1.0": "§3.6.2" }
  }),
  check({
    id: "transport.rest-error-status",
    group: "transport",
    severity: "must",
    bindings: REST_ONLY,
    title: "A REST error has a 4xx status and an error body",
    spec: { "1.0": "§11.6", "0.3": "§3.2.3" }
  }),
  check({
    id: "transport.grpc-error-status",
    group: "transport",
    severity: "must",
    bindings: GRPC_ONLY,
    title: "Each A2A error is its gRPC status code with an ErrorInfo naming its reason, in domain a2a-protocol.org",
    spec: { "1.0": "§5.4, §10", "0.3": "§3.2.2" }
  }),
  check({
    id: "transport.grpc-version-empty",
    group: "transport",
    severity: "must",
    bindings: GRPC_ONLY,
    title: "A call without a2a-version is taken as A2A 0.3: served where the card offers 0.3, else refused as VersionNotSupported",
    spec: { "1.0": "§3.6.2, §10" }
  }),
  // messaging
  check({
    id: "messaging.send",
    group: "messaging",
    severity: "must",
    title: "A text message is answered with a Task or a Message",
    spec: { "1.0": "§3.1.1", "0.3": "§7.1" }
  }),
  check({
    id: "messaging.task-shape",
    group: "messaging",
    severity: "must",
    title: "A returned Task has an id, a context id and a known state",
    spec: { "1.0": "§4.1.1", "0.3": "§6.1" }
  }),
  check({
    id: "messaging.unknown-task",
    group: "messaging",
    severity: "must",
    title: "A message naming an unknown task is refused with TaskNotFound",
    spec: { "1.0": "§3.1.1", "0.3": "§7.1" }
  }),
  check({
    id: "messaging.invalid-params",
    group: "messaging",
    severity: "should",
    title: "A message without parts is refused as invalid parameters",
    spec: { "1.0": "§3.3.2, §4.1.4", "0.3": "§8.1" }
  }),
  check({
    id: "messaging.part-without-kind",
    group: "messaging",
    severity: "must",
    versions: ["0.3"],
    bindings: JSONRPC_ONLY,
    title: "A part without kind is refused with -32602",
    spec: { "0.3": "§6.5, §8.1" }
  }),
  check({
    id: "messaging.context-kept",
    group: "messaging",
    severity: "should",
    title: "A follow-up in the same context keeps its context id",
    spec: { "1.0": "§3.4.1", "0.3": "§6.1" }
  }),
  check({
    id: "messaging.follow-up-input-required",
    group: "messaging",
    severity: "must",
    needs: ["input-required-task"],
    title: "A message with the taskId of a task waiting for input continues that task",
    spec: { "1.0": "§3.4.3", "0.3": "§7.1, §9.4" }
  }),
  check({
    id: "messaging.follow-up-working",
    group: "messaging",
    severity: "should",
    needs: ["working-task"],
    title: "A message with the taskId of a working task is accepted for that task",
    spec: { "1.0": "§3.3.3, §3.4.3", "0.3": "§7.1" }
  }),
  // files and structured data: what the card's input modes allow is taken, and answers' file parts are well formed
  check({
    id: "messaging.file-part",
    group: "messaging",
    severity: "should",
    title: "A message with a file part is accepted when the card's input modes allow its media type",
    spec: { "1.0": "§3.3.2, §4.1.6, §4.4.1", "0.3": "§5.5, §6.5.2, §8.2" }
  }),
  check({
    id: "messaging.data-part",
    group: "messaging",
    severity: "should",
    title: "A message with a data part is accepted when the card's input modes allow application/json",
    spec: { "1.0": "§3.3.2, §4.1.6, §4.4.1", "0.3": "§5.5, §6.5.3, §8.2" }
  }),
  check({
    id: "messaging.answer-file-parts",
    group: "messaging",
    severity: "should",
    title: "File parts in answers have exactly one of bytes and a URL, and a media type",
    spec: { "1.0": "§4.1.6", "0.3": "§6.5.2, §6.6" }
  }),
  // tasks
  check({
    id: "tasks.get",
    group: "tasks",
    severity: "must",
    title: "GetTask returns the task just created",
    spec: { "1.0": "§3.1.3", "0.3": "§7.3" }
  }),
  check({
    id: "tasks.get-unknown",
    group: "tasks",
    severity: "must",
    title: "GetTask of an unknown id fails with TaskNotFound",
    spec: { "1.0": "§3.1.3", "0.3": "§7.3" }
  }),
  check({
    id: "tasks.history-length",
    group: "tasks",
    severity: "should",
    title: "GetTask with historyLength 0 returns no history",
    spec: { "1.0": "§3.2.4", "0.3": "§7.3.1" }
  }),
  check({
    id: "tasks.negative-history-length",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    title: "GetTask and ListTasks refuse a negative historyLength as invalid parameters",
    spec: { "1.0": "§3.3.2, §6.5" }
  }),
  check({
    id: "tasks.list",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    title: "ListTasks returns tasks and a nextPageToken",
    spec: { "1.0": "§3.1.4" }
  }),
  check({
    id: "tasks.list-filters",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    title: "ListTasks keeps only the tasks its contextId, status and statusTimestampAfter filters match",
    spec: { "1.0": "§3.1.4" }
  }),
  check({
    id: "tasks.list-pages",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    title: "ListTasks pages by pageSize and pageToken, with pageSize and totalSize in the answer",
    spec: { "1.0": "§3.1.4" }
  }),
  check({
    id: "tasks.list-history-length",
    group: "tasks",
    severity: "should",
    versions: ["1.0"],
    title: "ListTasks with historyLength 0 returns tasks without history",
    spec: { "1.0": "§3.1.4, §3.2.4" }
  }),
  check({
    id: "tasks.list-artifacts",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    title: "ListTasks leaves artifacts out unless includeArtifacts is true",
    spec: { "1.0": "§3.1.4" }
  }),
  check({
    id: "tasks.list-invalid-timestamp",
    group: "tasks",
    severity: "must",
    versions: ["1.0"],
    // gRPC's Timestamp is a message: a text that is no timestamp cannot be sent.
    bindings: HTTP_ONLY,
    title: "ListTasks refuses a statusTimestampAfter that is not a timestamp",
    spec: { "1.0": "§3.3.2, §5.6.1" }
  }),
  check({
    id: "tasks.cancel-terminal",
    group: "tasks",
    severity: "must",
    title: "Cancelling a finished task fails with TaskNotCancelable",
    spec: { "1.0": "§3.1.5", "0.3": "§7.4" }
  }),
  check({
    id: "tasks.cancel-working",
    group: "tasks",
    severity: "should",
    needs: ["working-task"],
    title: "Cancelling a working task returns it canceled",
    spec: { "1.0": "§3.1.5", "0.3": "§7.4" }
  }),
  // streaming
  check({
    id: "streaming.content-type",
    group: "streaming",
    severity: "must",
    bindings: HTTP_ONLY,
    needs: ["streaming"],
    title: "A streaming message is answered with text/event-stream",
    spec: { "1.0": "§3.1.2", "0.3": "§7.2" }
  }),
  check({
    id: "streaming.framing",
    group: "streaming",
    severity: "must",
    bindings: HTTP_ONLY,
    needs: ["streaming"],
    title: "Every SSE event is data: lines of one JSON value, ended by a blank line",
    spec: { "1.0": "§9.4.2, §11.7", "0.3": "§3.3" }
  }),
  check({
    id: "streaming.first-event",
    group: "streaming",
    severity: "must",
    needs: ["streaming"],
    title: "The stream starts with a Task, or is one Message alone",
    spec: { "1.0": "§3.1.2", "0.3": "§7.2" }
  }),
  check({
    id: "streaming.closes",
    group: "streaming",
    severity: "must",
    needs: ["streaming"],
    title: "The stream closes once the task is finished or interrupted",
    spec: { "1.0": "§3.1.2", "0.3": "§7.2" }
  }),
  check({
    id: "streaming.subscribe-unknown",
    group: "streaming",
    severity: "must",
    needs: ["streaming"],
    title: "Subscribing to an unknown task fails with TaskNotFound",
    spec: { "1.0": "§3.1.6", "0.3": "§7.9" }
  }),
  check({
    id: "streaming.subscribe-live",
    group: "streaming",
    severity: "must",
    needs: ["streaming", "working-task"],
    versions: ["1.0"],
    title: "Subscribing to a working task sends the task first, then each update once, in order",
    spec: { "1.0": "§3.1.6" }
  }),
  // push
  check({
    id: "push.config-roundtrip",
    group: "push",
    severity: "must",
    needs: ["push"],
    title: "A push config can be created, read, listed and deleted",
    spec: { "1.0": "§3.1.7–§3.1.10", "0.3": "§7.5–§7.8" }
  }),
  check({
    id: "push.rest-proto-fields",
    group: "push",
    severity: "must",
    needs: ["push"],
    versions: ["0.3"],
    bindings: REST_ONLY,
    title: "A push config created with the proto's field names (config_id, push_notification_config) is kept",
    spec: { "0.3": "§3.2.3, §7.5" }
  }),
  check({
    id: "push.delivery",
    group: "push",
    severity: "should",
    needs: ["push"],
    title: "A task registered with a push config posts its updates to the webhook",
    spec: { "1.0": "§3.5.3", "0.3": "§9.5" }
  }),
  // auth
  check({
    id: "auth.refused-without-credentials",
    group: "auth",
    severity: "must",
    needs: ["auth"],
    title: "A request without credentials is refused with 401 or 403",
    spec: { "1.0": "§7.4", "0.3": "§4.4" }
  }),
  check({
    id: "auth.challenge",
    group: "auth",
    severity: "should",
    bindings: HTTP_ONLY,
    needs: ["auth"],
    title: "A 401 names the scheme in WWW-Authenticate",
    spec: { "1.0": "§7.4", "0.3": "§4.4" }
  }),
  // equivalence: across the interfaces of one agent
  check({
    id: "equivalence.task-visible",
    group: "equivalence",
    severity: "must",
    scope: "across",
    title: "A task created over one interface is found, in the same state, over every other",
    spec: { "1.0": "§5.1", "0.3": "§3.4.1" }
  }),
  check({
    id: "equivalence.same-answers",
    group: "equivalence",
    severity: "must",
    scope: "across",
    title: "GetTask answers a task alike over every binding and generation: its context, state and artifacts",
    spec: { "1.0": "§5.1", "0.3": "§3.4.1" }
  })
]

export const checkById = (id: string): CheckSpec | undefined => CHECKS.find((spec) => spec.id === id)

/** `warning`: the rule is met, but short of what the specification recommends (a SHOULD-level finding). */
export type CheckStatus = "passed" | "failed" | "warning" | "skipped"

/** What a check found: the detail says why it failed, warned or was skipped (or what it saw, when it passed). */
export interface CheckOutcome {
  readonly status: CheckStatus
  readonly detail: string
}

export const passed = (detail = ""): CheckOutcome => ({ status: "passed", detail })
export const failed = (detail: string): CheckOutcome => ({ status: "failed", detail })
export const warned = (detail: string): CheckOutcome => ({ status: "warning", detail })
export const skipped = (detail: string): CheckOutcome => ({ status: "skipped", detail })

/** The interface a result belongs to; absent for checks of the agent as a whole. */
export interface InterfaceId {
  readonly protocol: ProtocolVersion
  readonly binding: "jsonrpc" | "rest" | "grpc"
}

export const bindingName = (binding: Binding): InterfaceId["binding"] =>
  binding === "JSONRPC" ? "jsonrpc" : binding === "GRPC" ? "grpc" : "rest"

/** One line of the report (its JSON form: see CHECK_REPORT_SCHEMA). */
export interface CheckResult {
  readonly id: string
  readonly group: CheckGroup
  readonly severity: Severity
  readonly title: string
  readonly spec: string | null
  readonly interface: InterfaceId | null
  readonly status: CheckStatus
  readonly detail: string
  readonly duration_ms: number
}

export interface CheckSummary {
  readonly passed: number
  readonly failed: number
  readonly skipped: number
  readonly warnings: number
}

export interface CreatedTask {
  readonly task_id: string
  readonly interface: InterfaceId
  readonly state: string
}

export interface CheckReport {
  readonly schema: typeof CHECK_REPORT_SCHEMA_ID
  readonly agent_url: string
  readonly card_url: string | null
  readonly dry_run: boolean
  readonly interfaces: ReadonlyArray<InterfaceId & { readonly url: string }>
  readonly results: ReadonlyArray<CheckResult>
  /** Every task the run created on the agent (bounded by MAX_TASKS_PER_INTERFACE per interface). */
  readonly tasks_created: ReadonlyArray<CreatedTask>
  readonly summary: CheckSummary
  readonly duration_ms: number
}

export const CHECK_REPORT_SCHEMA_ID = "relay.check.v1" as const

/** At most this many tasks are created on the agent per interface checked. */
export const MAX_TASKS_PER_INTERFACE = 10

export const summarize = (results: ReadonlyArray<CheckResult>): CheckSummary => ({
  passed: results.filter((r) => r.status === "passed").length,
  failed: results.filter((r) => r.status === "failed").length,
  skipped: results.filter((r) => r.status === "skipped").length,
  warnings: results.filter((r) => r.status === "warning").length
})

/** The report's last line, exactly (warnings named only when there are any). */
export const summaryLine = (summary: CheckSummary) =>
  `${summary.passed} passed, ${summary.failed} failed, ${summary.skipped} skipped` +
  (summary.warnings === 0 ? "" : `, ${summary.warnings} warning${summary.warnings === 1 ? "" : "s"}`)

/**
 * Whether a result fails a run: with `must`, only a failed MUST-level check; with `should`, any
 * failed check and any warning.
 */
export const failsRun = (result: CheckResult, failOn: FailOn): boolean =>
  failOn === "should" ? result.status === "failed" || result.status === "warning" : result.status === "failed" && result.severity === "must"

export const runFailed = (report: CheckReport, failOn: FailOn): boolean => report.results.some((result) => failsRun(result, failOn))

/** The spec section to cite for a result: the interface's generation, else v1.0's. */
export const specSection = (spec: CheckSpec, protocol: ProtocolVersion | undefined): string | null => {
  const section = protocol === undefined ? spec.spec["1.0"] ?? spec.spec["0.3"] : spec.spec[protocol]
  if (section === undefined) return null
  return `A2A v${protocol ?? (spec.spec["1.0"] !== undefined ? "1.0" : "0.3")} ${section}`
}

/** Whether a check applies to an interface at all (one that does not is left out, not skipped). */
export const appliesTo = (spec: CheckSpec, id: InterfaceId): boolean =>
  spec.scope === "interface" &&
  (spec.bindings === undefined || spec.bindings.some((b) => bindingName(b) === id.binding)) &&
  (spec.versions === undefined || spec.versions.includes(id.protocol))

/** The checks selected by --only / --skip (group names or check ids). */
export const selectChecks = (only: ReadonlyArray<string>, skip: ReadonlyArray<string>): ReadonlyArray<CheckSpec> => {
  const matches = (spec: CheckSpec, names: ReadonlyArray<string>) => names.some((name) => name === spec.group || name === spec.id)
  return CHECKS.filter((spec) => (only.length === 0 || matches(spec, only)) && !matches(spec, skip))
}

/** Names given to --only / --skip that are neither a group nor a check id. */
export const unknownSelectors = (names: ReadonlyArray<string>): ReadonlyArray<string> =>
  names.filter((name) => !(CHECK_GROUPS as ReadonlyArray<string>).includes(name) && checkById(name) === undefined)

/**
 * The JSON Schema of `relay check --json` (and of the MCP tool's structured result). Stable:
 * fields are only ever added; a breaking change gets a new `schema` id.
 */
export const CHECK_REPORT_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: CHECK_REPORT_SCHEMA_ID,
  type: "object",
  required: ["schema", "agent_url", "card_url", "dry_run", "interfaces", "results", "tasks_created", "summary", "duration_ms"],
  properties: {
    schema: { const: CHECK_REPORT_SCHEMA_ID },
    agent_url: { type: "string" },
    card_url: { type: ["string", "null"] },
    dry_run: { type: "boolean", description: "true: nothing was sent; every result is skipped" },
    interfaces: {
      type: "array",
      items: {
        type: "object",
        required: ["protocol", "binding", "url"],
        properties: { protocol: { enum: ["1.0", "0.3"] }, binding: { enum: ["jsonrpc", "rest", "grpc"] }, url: { type: "string" } }
      }
    },
    results: {
      type: "array",
      items: {
        type: "object",
        required: ["id", "group", "severity", "title", "spec", "interface", "status", "detail", "duration_ms"],
        properties: {
          id: { type: "string", description: "stable check id, e.g. transport.parse-error" },
          group: { enum: [...CHECK_GROUPS] },
          severity: { enum: ["must", "should"] },
          title: { type: "string" },
          spec: { type: ["string", "null"], description: "e.g. \"A2A v1.0 §9.4\"" },
          interface: {
            type: ["object", "null"],
            properties: { protocol: { enum: ["1.0", "0.3"] }, binding: { enum: ["jsonrpc", "rest", "grpc"] } }
          },
          status: { enum: ["passed", "failed", "warning", "skipped"] },
          detail: { type: "string", description: "why it failed, warned or was skipped" },
          duration_ms: { type: "integer", minimum: 0 }
        }
      }
    },
    tasks_created: {
      type: "array",
      items: {
        type: "object",
        required: ["task_id", "interface", "state"],
        properties: { task_id: { type: "string" }, interface: { type: "object" }, state: { type: "string" } }
      }
    },
    summary: {
      type: "object",
      required: ["passed", "failed", "skipped", "warnings"],
      properties: { passed: { type: "integer" }, failed: { type: "integer" }, skipped: { type: "integer" }, warnings: { type: "integer" } }
    },
    duration_ms: { type: "integer", minimum: 0 }
  }
} as const
