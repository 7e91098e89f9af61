/**
 * `relay check URL`: the conformance report of an A2A agent, for people (grouped ✔ / ✘ / ! / – lines,
 * the last line `N passed, N failed, N skipped`) and for CI (--json, --junit FILE, exit codes:
 * 0 nothing failed at the --fail-on level, 1 a check failed, 2 usage, 4 agent unreachable).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Logger, LogLevel, Option, Redacted } from "effect"
import type { Binding } from "../a2a/dialects.js"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import {
  type CheckGroup,
  type CheckReport,
  type CheckResult,
  DEFAULT_FAIL_ON,
  type FailOn,
  failsRun,
  type InterfaceId,
  runFailed,
  summaryLine
} from "../domain/conformance.js"
import { InvalidInput } from "../domain/errors.js"
import { checkAgent, type CheckPlanInput, planChecks } from "../programs/check/checkAgent.js"
import { saveJunit } from "../programs/check/saveJunit.js"
import { checkRunLayer } from "../servers/webhook/checkReceiver.js"
import { withSuggestions, withValuesFrom } from "./commandTree.js"
import { optional } from "./optional.js"
import {
  AGENT_NAMES_COMMAND,
  agentOf,
  agentUrl as url,
  allowInterfaceHost,
  BINDING_VALUES,
  cardUrl,
  json,
  PROTOCOL_VALUES,
  secretOption,
  verbose,
  wholeNumber
} from "./options.js"
import { CommandFailed, EXIT_FAILURE, makeStyle, reportError, type Style, writeOut } from "./output.js"
import { ClientServices } from "./services.js"
import { escapeForTerminal } from "./terminalText.js"

export const EXIT_UNREACHABLE = 4

const urlArg = Args.text({ name: "URL" }).pipe(
  Args.withDescription("The A2A agent: a name saved with relay agent add, or its base URL (or give it with --url)"),
  withValuesFrom(AGENT_NAMES_COMMAND),
  Args.optional
)
const protocol = Options.choice("protocol", ["1.0", "0.3", "all"]).pipe(
  Options.withDescription("Protocol generations to check (default all the card declares)"),
  Options.withDefault("all" as const),
  withSuggestions([...PROTOCOL_VALUES, ["all", "Every one the card declares"]])
)
const binding = Options.choice("binding", ["jsonrpc", "rest", "grpc", "all"]).pipe(
  Options.withDescription("Bindings to check: JSON-RPC, HTTP+JSON or gRPC (default all the card declares)"),
  Options.withDefault("all" as const),
  withSuggestions([...BINDING_VALUES, ["all", "Every one the card declares"]])
)
/** What each group of checks covers, as completions offer the groups to --only and --skip. */
const GROUPS: Record<CheckGroup, string> = {
  card: "The agent card: where it is served, fields, interfaces",
  transport: "Malformed requests, content types, versions, errors (gRPC: status codes and ErrorInfo)",
  messaging: "Messages are answered; follow-ups keep task and context",
  tasks: "GetTask, ListTasks (filters, pages) and cancelling",
  streaming: "Streamed answers (SSE or gRPC streams) and subscribing to a task",
  push: "Push notification configs and deliveries to a webhook",
  auth: "Requests without credentials are refused, naming the scheme",
  equivalence: "A task is the same over every interface"
}
const groupList = (name: string, description: string) =>
  Options.text(name).pipe(Options.withDescription(description), Options.repeated, withSuggestions(Object.entries(GROUPS)))
const only = groupList("only", "Run only these groups or check ids (comma-separated, repeatable)")
const skip = groupList("skip", "Leave out these groups or check ids (comma-separated, repeatable)")
const timeout = wholeNumber("timeout", "seconds", 1, 3600).pipe(
  Options.withDescription("Seconds each request may take (default 10); a check gets twice that"),
  Options.optional
)
const junit = optional(Options.file("junit"), "Also write the report as JUnit XML to this file")
const failOn = Options.choice("fail-on", ["must", "should"]).pipe(
  Options.withDescription(
    "Fail the run (exit 1, JUnit failures) on failed MUST checks only (default), or on SHOULD checks and warnings too"
  ),
  Options.withDefault(DEFAULT_FAIL_ON),
  withSuggestions([["must", "Only failed MUST checks (the default)"], ["should", "Failed SHOULD checks and warnings too"]])
)
const dryRun = Options.boolean("dry-run").pipe(Options.withDescription("List the checks that would run; send nothing"))
const bearerToken = optional(secretOption("bearer-token"), "Bearer token for the agent")
const apiKey = optional(secretOption("api-key"), "API key for the agent, sent in X-API-Key")

const splitNames = (values: ReadonlyArray<string>) =>
  values.flatMap((value) => value.split(",")).map((name) => name.trim()).filter((name) => name !== "")

const protocolsOf = (value: "1.0" | "0.3" | "all"): ReadonlyArray<ProtocolVersion> => (value === "all" ? ["1.0", "0.3"] : [value])
const BINDINGS: Readonly<Record<"jsonrpc" | "rest" | "grpc", Binding>> = { jsonrpc: "JSONRPC", rest: "HTTP+JSON", grpc: "GRPC" }
const bindingsOf = (value: "jsonrpc" | "rest" | "grpc" | "all"): ReadonlyArray<Binding> =>
  value === "all" ? Object.values(BINDINGS) : [BINDINGS[value]]

// ---------------------------------------------------------------------------
// The terminal view

const interfaceLabel = (id: InterfaceId | null) => (id === null ? "" : ` · ${id.protocol} ${id.binding}`)

/** ✘ fails the run; ! is a finding that does not at this --fail-on level (a failed SHOULD check, a warning). */
const resultLine = (style: Style, failOn: FailOn, result: CheckResult) => {
  const fails = failsRun(result, failOn)
  const paint = result.status === "skipped" ? style.dim : fails ? style.red : style.yellow
  const mark = result.status === "passed" ? style.green("✔") : result.status === "skipped" ? style.dim("–") : paint(fails ? "✘" : "!")
  const severity = result.severity === "should" ? style.dim(" (should)") : ""
  const head = `  ${mark} ${result.id}${severity}  ${escapeForTerminal(result.title)}`
  if (result.status === "passed" || result.detail === "") return head
  const why = result.status === "skipped"
    ? `skipped: ${result.detail}`
    : result.status === "warning"
    ? `warning: ${result.detail}`
    : result.detail
  const cite = result.status !== "skipped" && result.spec !== null ? ` [${result.spec}]` : ""
  return `${head}\n      ${paint(escapeForTerminal(why) + cite)}`
}

/** Results in runs of the same group and interface, in the order they ran. */
const sections = (results: ReadonlyArray<CheckResult>) => {
  const runs: Array<{ readonly heading: string; readonly results: Array<CheckResult> }> = []
  for (const result of results) {
    const heading = `${result.group}${interfaceLabel(result.interface)}`
    const last = runs[runs.length - 1]
    if (last?.heading === heading) last.results.push(result)
    else runs.push({ heading, results: [result] })
  }
  return runs
}

export const terminalReport = (report: CheckReport, style: Style, failOn: FailOn = DEFAULT_FAIL_ON): string => {
  const title = report.dry_run
    ? `Checks relay would run against ${report.agent_url} (dry run: nothing sent)`
    : `Conformance of ${report.agent_url}${report.card_url === null ? "" : ` (card ${report.card_url})`}`
  const body = sections(report.results).map((run) =>
    [style.bold(run.heading), ...run.results.map((r) => resultLine(style, failOn, r))].join("\n")
  )
  const tasks = report.tasks_created.length === 0
    ? []
    : [
      style.dim(
        `Tasks created on the agent (${report.tasks_created.length}): ${
          report.tasks_created.map((t) => escapeForTerminal(t.task_id)).join(", ")
        }`
      )
    ]
  const lenient = report.results.filter((r) => (r.status === "failed" || r.status === "warning") && !failsRun(r, failOn)).length
  const note = lenient === 0
    ? []
    : [style.dim(`${lenient} SHOULD-level finding(s) marked ! do not fail the run (--fail-on should fails on them)`)]
  return [escapeForTerminal(title), "", ...body, "", ...tasks, ...note, summaryLine(report.summary)].join("\n")
}

// ---------------------------------------------------------------------------

const isUnreachable = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && (error._tag === "AgentUnreachable" || error._tag === "RequestTimeout")

const usage = (reason: string) => new InvalidInput({ reason, suggestion: "Run relay check --help for the options." })

interface CheckValues {
  readonly urlArg: Option.Option<string>
  readonly url: Option.Option<string>
  readonly protocol: "1.0" | "0.3" | "all"
  readonly binding: "jsonrpc" | "rest" | "grpc" | "all"
  readonly only: ReadonlyArray<string>
  readonly skip: ReadonlyArray<string>
  readonly timeout: Option.Option<number>
  readonly cardUrl: Option.Option<string>
  readonly dryRun: boolean
  readonly bearerToken: Option.Option<Redacted.Redacted<string>>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly allowInterfaceHost: ReadonlyArray<string>
}

/** The run asked for: the agent's name or URL (absent: the default agent) is resolved and decoded here, once; a dry run sends nothing. */
const runOf = (values: CheckValues) =>
  Effect.gen(function*() {
    if (Option.isSome(values.url) && Option.isSome(values.urlArg) && values.url.value !== values.urlArg.value) {
      return yield* usage("Two different agents were given (URL and --url)")
    }
    const agentUrl = yield* agentOf(Option.orElse(values.url, () => values.urlArg))
    const plan = { agentUrl, only: splitNames(values.only), skip: splitNames(values.skip) } satisfies CheckPlanInput
    if (values.dryRun) return yield* planChecks(plan)
    return yield* checkAgent({
      ...plan,
      protocols: protocolsOf(values.protocol),
      bindings: bindingsOf(values.binding),
      timeoutSeconds: Option.getOrUndefined(values.timeout),
      cardUrl: Option.getOrUndefined(values.cardUrl),
      bearerToken: Option.getOrUndefined(Option.map(values.bearerToken, Redacted.value)),
      apiKey: Option.getOrUndefined(Option.map(values.apiKey, Redacted.value)),
      allowInterfaceHosts: values.allowInterfaceHost
    })
  })

/** The report on stdout (and in the JUnit file), then the exit code: 1 when a check failed at the --fail-on level. */
const publish = (values: { readonly json: boolean; readonly junit: Option.Option<string>; readonly failOn: FailOn }, report: CheckReport) =>
  Effect.gen(function*() {
    if (Option.isSome(values.junit)) yield* saveJunit(values.junit.value, report, values.failOn)
    yield* writeOut(values.json ? JSON.stringify(report, null, 2) : terminalReport(report, makeStyle(process.stdout), values.failOn))
    if (runFailed(report, values.failOn)) return yield* new CommandFailed({ exitCode: EXIT_FAILURE })
  })

export const checkCommand = Command.make(
  "check",
  {
    urlArg,
    url,
    cardUrl,
    protocol,
    binding,
    only,
    skip,
    json,
    verbose,
    timeout,
    junit,
    failOn,
    dryRun,
    bearerToken,
    apiKey,
    allowInterfaceHost
  },
  (values) =>
    runOf(values).pipe(
      // The receiver of push.delivery listens on loopback for the length of the run.
      Effect.provide(checkRunLayer),
      Effect.provide(ClientServices),
      Effect.flatMap((report) => publish(values, report)),
      // A CommandFailed is the exit code of a report already printed; anything else is reported now.
      Effect.catchAll((error) =>
        error instanceof CommandFailed
          ? Effect.fail(error)
          : Effect.mapError(
            reportError(error, values.json),
            (reported) => isUnreachable(error) ? new CommandFailed({ exitCode: EXIT_UNREACHABLE }) : reported
          )
      ),
      Logger.withMinimumLogLevel(values.verbose ? LogLevel.Debug : LogLevel.Warning)
    )
).pipe(Command.withDescription(
  "Check an A2A agent's conformance (card, transport, messaging, tasks, streaming, push, auth, equivalence); --junit FILE for CI; exit 0 nothing failed (at --fail-on, default must), 1 a check failed, 2 usage, 4 unreachable"
))
