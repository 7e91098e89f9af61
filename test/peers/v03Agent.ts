// A pure A2A v0.3 agent for tests: @a2a-js/sdk 0.3.14 (npm alias `a2a-sdk-v03`) on express 5,
// bound to 127.0.0.1:0. Same scripted behaviours as the v1.0 peer, published as v0.3 `kind`
// objects with `final` set on terminal and interrupted status updates.
import type { AgentCard, Artifact, Message, Part, Task, TaskState, TaskStatus } from "a2a-sdk-v03"
import { DefaultPushNotificationSender, DefaultRequestHandler, InMemoryPushNotificationStore, InMemoryTaskStore } from "a2a-sdk-v03/server"
import type { AgentExecutor, ExecutionEventBus, RequestContext } from "a2a-sdk-v03/server"
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from "a2a-sdk-v03/server/express"
import express from "express"
import type { NextFunction, Request, Response } from "express"
import { randomUUID } from "node:crypto"
import http from "node:http"
import { BehaviourRunner, CANCELED_TEXT, endsInteraction, REPORT, REPORT_PATH } from "./behaviours.js"
import type { BehaviourEmitter, BehaviourName, ChunkFlags, NeutralArtifact, NeutralPart, NeutralTaskState } from "./behaviours.js"
import { bearerTokenOf, closeServer, listenOnLoopback, recordRequest, rejectUnauthorized, userBuilderFor } from "./httpUtil.js"
import type { RecordedRequest } from "./httpUtil.js"

export type { RecordedRequest } from "./httpUtil.js"

export const V03_AGENT_CARD_PATH = "/.well-known/agent-card.json"
export const V03_JSONRPC_PATH = "/a2a/jsonrpc"
/** Base of the v0.3 REST interface; the SDK serves `/v1/...` routes below it. */
export const V03_REST_PATH = "/a2a/rest"

export interface V03AgentOptions {
  /** Default behaviour when a message carries no `behaviour:<name>` directive. Default `echo-complete`. */
  readonly behaviour?: BehaviourName
  /** Capability overrides. Defaults: streaming and pushNotifications true. */
  readonly capabilities?: { readonly streaming?: boolean; readonly pushNotifications?: boolean }
  /** Also mount the 0.3.14 REST app and list it in `additionalInterfaces`. Default true. */
  readonly rest?: boolean
  /** Require `Authorization: Bearer <token>` on everything but the public card (401 + WWW-Authenticate otherwise). */
  readonly requireBearer?: string
  /** Serve an extended card to authenticated callers (`agent/getAuthenticatedExtendedCard`). */
  readonly extendedCard?: boolean
  /** Card-level protocolVersion. Default `0.3.0`. */
  readonly protocolVersion?: string
  /** Agent name on the card. Default `v0.3 Test Agent`. */
  readonly name?: string
  /**
   * Where the card is served instead of the well-known path, as Mastra serves its agents' cards
   * (`/api/.well-known/<id>/agent-card.json`): relay finds it only when given the card URL.
   */
  readonly cardPath?: string
}

export interface V03AgentHandle {
  readonly baseUrl: string
  readonly cardUrl: string
  readonly jsonRpcUrl: string
  /** Base URL of the REST interface (routes live under `${restUrl}/v1/...`), or undefined when off. */
  readonly restUrl: string | undefined
  readonly card: AgentCard
  readonly extendedCard: AgentCard | undefined
  readonly requests: RecordedRequest[]
  readonly pushStore: InMemoryPushNotificationStore
  readonly taskStore: InMemoryTaskStore
  close(): Promise<void>
}

const toPart = (part: NeutralPart): Part => {
  switch (part.kind) {
    case "text":
      return { kind: "text", text: part.text }
    case "data":
      return { kind: "data", data: { ...part.data } }
    case "file":
      return { kind: "file", file: { name: part.name, mimeType: part.mimeType, bytes: part.bytesBase64 } }
    case "file-url":
      return { kind: "file", file: { name: part.name, mimeType: part.mimeType, uri: part.url } }
  }
}

const agentMessage = (text: string, taskId: string | undefined, contextId: string): Message => ({
  kind: "message",
  messageId: randomUUID(),
  role: "agent",
  parts: [{ kind: "text", text }],
  contextId,
  ...(taskId === undefined ? {} : { taskId })
})

const statusOf = (state: NeutralTaskState, message: Message | undefined): TaskStatus => ({
  state: state satisfies TaskState,
  timestamp: new Date().toISOString(),
  ...(message === undefined ? {} : { message })
})

export const textOfV03Message = (message: Message): string =>
  message.parts.flatMap((part) => (part.kind === "text" ? [part.text] : [])).join("\n")

/** Translates neutral behaviour events into SDK 0.3.14 events for one request. */
class V03Emitter implements BehaviourEmitter {
  constructor(
    private readonly request: RequestContext,
    private readonly bus: ExecutionEventBus
  ) {}

  task(state: NeutralTaskState): void {
    const existing = this.request.task
    // On a follow-up the SDK has already appended the new user message to the stored history.
    const task: Task = existing === undefined
      ? {
        kind: "task",
        id: this.request.taskId,
        contextId: this.request.contextId,
        status: statusOf(state, undefined),
        history: [this.request.userMessage],
        artifacts: []
      }
      : { ...existing, status: statusOf(state, undefined) }
    this.bus.publish(task)
  }

  republish(): void {
    if (this.request.task === undefined) throw new Error("republish() needs an existing task")
    this.bus.publish(this.request.task)
  }

  status(state: NeutralTaskState, agentText?: string): void {
    const { taskId, contextId } = this.request
    const message = agentText === undefined ? undefined : agentMessage(agentText, taskId, contextId)
    this.bus.publish({ kind: "status-update", taskId, contextId, status: statusOf(state, message), final: endsInteraction(state) })
  }

  artifact(artifact: NeutralArtifact, flags: ChunkFlags): void {
    const v03Artifact: Artifact = { artifactId: artifact.artifactId, name: artifact.name, parts: artifact.parts.map(toPart) }
    this.bus.publish({
      kind: "artifact-update",
      taskId: this.request.taskId,
      contextId: this.request.contextId,
      artifact: v03Artifact,
      append: flags.append,
      lastChunk: flags.lastChunk
    })
  }

  message(agentText: string): void {
    this.bus.publish(agentMessage(agentText, undefined, this.request.contextId))
  }
}

class ScriptedV03Executor implements AgentExecutor {
  private readonly contextByTask = new Map<string, string>()

  constructor(private readonly runner: BehaviourRunner) {}

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    this.contextByTask.set(request.taskId, request.contextId)
    const current = request.userMessage
    const earlier = (request.task?.history ?? []).filter(
      (message) => message.role === "user" && message.messageId !== current.messageId
    )
    await this.runner.run(
      {
        taskId: request.taskId,
        text: textOfV03Message(current),
        earlierUserTexts: earlier.map(textOfV03Message),
        isFollowUp: request.task !== undefined
      },
      new V03Emitter(request, bus)
    )
    bus.finished()
  }

  // The 0.3.14 handler only calls this while a bus exists; a parked turn has none running,
  // so publish the cancellation ourselves in that case.
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    if (this.runner.requestCancel(taskId)) return
    const contextId = this.contextByTask.get(taskId) ?? ""
    bus.publish({
      kind: "status-update",
      taskId,
      contextId,
      status: statusOf("canceled", agentMessage(CANCELED_TEXT, taskId, contextId)),
      final: true
    })
    bus.finished()
  }
}

const buildCard = (baseUrl: string, options: V03AgentOptions): AgentCard => {
  const jsonRpcUrl = `${baseUrl}${V03_JSONRPC_PATH}`
  const withRest = options.rest ?? true
  const bearer = options.requireBearer !== undefined
  return {
    name: options.name ?? "v0.3 Test Agent",
    description: "Scripted A2A v0.3 test peer (@a2a-js/sdk 0.3.14).",
    version: "0.3.14",
    protocolVersion: options.protocolVersion ?? "0.3.0",
    url: jsonRpcUrl,
    preferredTransport: "JSONRPC",
    ...(withRest
      ? {
        additionalInterfaces: [
          { url: jsonRpcUrl, transport: "JSONRPC" },
          { url: `${baseUrl}${V03_REST_PATH}`, transport: "HTTP+JSON" }
        ]
      }
      : {}),
    provider: { organization: "a2a-relay tests", url: baseUrl },
    capabilities: {
      streaming: options.capabilities?.streaming ?? true,
      pushNotifications: options.capabilities?.pushNotifications ?? true,
      stateTransitionHistory: false
    },
    ...(bearer
      ? {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Bearer token" } },
        security: [{ bearer: [] }]
      }
      : {}),
    ...(options.extendedCard === true ? { supportsAuthenticatedExtendedCard: true } : {}),
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: "scripted",
        name: "Scripted behaviours",
        description: "Echoes and scripted task flows; prefix a message with behaviour:<name> to pick one.",
        tags: ["test"],
        examples: ["behaviour:echo-complete hello"]
      }
    ]
  }
}

const extendedCardFrom = (card: AgentCard): AgentCard => ({
  ...card,
  description: `${card.description} Extended card.`,
  skills: [
    ...card.skills,
    { id: "extended-only", name: "Extended-only skill", description: "Listed only on the extended card.", tags: ["test", "extended"] }
  ]
})

const bearerGate = (token: string, cardPath: string) => (req: Request, res: Response, next: NextFunction): void => {
  if (req.path === cardPath || bearerTokenOf(req.header("authorization")) === token) {
    next()
    return
  }
  rejectUnauthorized(res)
}

/** Start a pure v0.3 SDK agent on 127.0.0.1:0. Call `close()` when done. */
export const startV03Agent = async (options: V03AgentOptions = {}): Promise<V03AgentHandle> => {
  const server = http.createServer()
  const baseUrl = await listenOnLoopback(server)
  const card = buildCard(baseUrl, options)
  const extendedCard = options.extendedCard === true ? extendedCardFrom(card) : undefined
  const withRest = options.rest ?? true
  const cardPath = options.cardPath ?? V03_AGENT_CARD_PATH

  const runner = new BehaviourRunner(options.behaviour ?? "echo-complete", baseUrl)
  const taskStore = new InMemoryTaskStore()
  const pushStore = new InMemoryPushNotificationStore()
  const requestHandler = new DefaultRequestHandler(
    card,
    taskStore,
    new ScriptedV03Executor(runner),
    undefined,
    pushStore,
    new DefaultPushNotificationSender(pushStore),
    extendedCard
  )
  const userBuilder = userBuilderFor(options.requireBearer, UserBuilder.noAuthentication)

  const requests: RecordedRequest[] = []
  const app = express()
  app.use((req: Request, res: Response, next: NextFunction) => {
    recordRequest(requests, req, res, () => req.body as unknown)
    next()
  })
  if (options.requireBearer !== undefined) app.use(bearerGate(options.requireBearer, cardPath))
  app.get(REPORT_PATH, (_req: Request, res: Response) => void res.type(REPORT.mimeType).send(REPORT.bytes))
  app.use(cardPath, agentCardHandler({ agentCardProvider: async () => card }))
  app.use(V03_JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder }))
  if (withRest) app.use(V03_REST_PATH, restHandler({ requestHandler, userBuilder }))
  server.on("request", app)

  return {
    baseUrl,
    cardUrl: `${baseUrl}${cardPath}`,
    jsonRpcUrl: `${baseUrl}${V03_JSONRPC_PATH}`,
    restUrl: withRest ? `${baseUrl}${V03_REST_PATH}` : undefined,
    card,
    extendedCard,
    requests,
    pushStore,
    taskStore,
    close: async () => {
      runner.stopAll()
      await closeServer(server)
    }
  }
}
