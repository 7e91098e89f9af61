// A real A2A v1.0 agent for tests: @a2a-js/sdk 1.3.0 on express 5, bound to 127.0.0.1:0; with
// `grpc`, also the SDK's gRPC services (grpcService, and legacyGrpcService for v0.3) on a port of their own.
// The SDK's TS types are ts-proto shapes (oneofs as {$case, value}, numeric enums), so the
// events below are built in that style; the SDK turns them into ProtoJSON on the wire.
import { Role, TaskState } from "@a2a-js/sdk"
import type { AgentCard, AgentInterface, Artifact, Message, Part, Task, TaskStatus } from "@a2a-js/sdk"
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3"
import { createLegacyAwarePushNotificationSender } from "@a2a-js/sdk/compat/v0_3/server"
import { LegacyA2AService, legacyGrpcService } from "@a2a-js/sdk/compat/v0_3/server/grpc"
import {
  AgentEvent,
  DefaultExecutionEventBusManager,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore
} from "@a2a-js/sdk/server"
import type { AgentExecutor, ExecutionEventBus, RequestContext } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import { A2AService, grpcService } from "@a2a-js/sdk/server/grpc"
import * as grpc from "@grpc/grpc-js"
import express from "express"
import type { NextFunction, Request, Response } from "express"
import { randomUUID } from "node:crypto"
import http from "node:http"
import { BehaviourRunner, CANCELED_TEXT, REPORT, REPORT_PATH } from "./behaviours.js"
import type { BehaviourEmitter, BehaviourName, ChunkFlags, NeutralArtifact, NeutralPart, NeutralTaskState } from "./behaviours.js"
import {
  bearerTokenOf,
  closeServer,
  listenOnLoopback,
  presentedSecretOf,
  PresentingUser,
  recordRequest,
  rejectUnauthorized,
  userBuilderFor
} from "./httpUtil.js"
import type { RecordedRequest } from "./httpUtil.js"

export type { RecordedRequest } from "./httpUtil.js"

export type SdkBinding = "JSONRPC" | "HTTP+JSON" | "GRPC"

export const AGENT_CARD_PATH = "/.well-known/agent-card.json"
export const JSONRPC_PATH = "/a2a/jsonrpc"
export const REST_PATH = "/a2a/rest"

export interface SdkAgentCapabilities {
  readonly streaming?: boolean
  readonly pushNotifications?: boolean
  readonly extendedAgentCard?: boolean
}

export interface SdkAgentOptions {
  /** Default behaviour when a message carries no `behaviour:<name>` directive. Default `echo-complete`. */
  readonly behaviour?: BehaviourName
  /** Interfaces to declare and mount, in card preference order. Default `["JSONRPC", "HTTP+JSON"]`. */
  readonly bindings?: ReadonlyArray<SdkBinding>
  /** Turn on the SDK's v0.3 compatibility (card, JSON-RPC, REST, push) with v0.3 mirror interfaces. */
  readonly legacyCompat?: boolean
  /** Capability overrides. Defaults: streaming and pushNotifications true; extendedAgentCard follows `extendedCard`. */
  readonly capabilities?: SdkAgentCapabilities
  /** Require `Authorization: Bearer <token>` on everything but the public card (401 + WWW-Authenticate otherwise). */
  readonly requireBearer?: string
  /**
   * Accept a bearer token only when this says it is valid (e.g. a JWT checked against an OpenID
   * provider's keys); 401 + WWW-Authenticate otherwise. The public card stays open.
   */
  readonly verifyBearer?: (token: string) => Promise<boolean>
  /** The card's securitySchemes and securityRequirements, served as given. */
  readonly security?: { readonly securitySchemes: unknown; readonly securityRequirements: unknown }
  /** Serve an extended card (one more skill) to authenticated callers via GetExtendedAgentCard. */
  readonly extendedCard?: boolean
  /** Agent name on the card. Default `SDK Test Agent`. */
  readonly name?: string
  /**
   * With a GRPC binding: serve it over TLS with this certificate (for `localhost`), the card then
   * listing `grpcs://localhost:<port>`; plaintext on `127.0.0.1:<port>` otherwise.
   */
  readonly grpcTls?: { readonly cert: string; readonly key: string }
}

export interface SdkAgentHandle {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly baseUrl: string
  readonly cardUrl: string
  readonly jsonRpcUrl: string
  readonly restUrl: string
  /** The gRPC interface's address as the card lists it, when GRPC is among the bindings. */
  readonly grpcAddress: string | undefined
  /** The card as the SDK holds it (ts-proto shape, bound port included). */
  readonly card: AgentCard
  /** The extended card served to authenticated callers, when `extendedCard` is set. */
  readonly extendedCard: AgentCard | undefined
  /** Every incoming request in arrival order. */
  readonly requests: RecordedRequest[]
  readonly pushStore: InMemoryPushNotificationStore
  readonly taskStore: InMemoryTaskStore
  close(): Promise<void>
}

// Tasks and push configs are visible to every caller: the peers test protocol flows, not
// per-user isolation, and a test sending credentials on some calls only must not lose its task.
const sharedOwner = (): string => "test-peer"

const STATE: Readonly<Record<NeutralTaskState, TaskState>> = {
  submitted: TaskState.TASK_STATE_SUBMITTED,
  working: TaskState.TASK_STATE_WORKING,
  "input-required": TaskState.TASK_STATE_INPUT_REQUIRED,
  "auth-required": TaskState.TASK_STATE_AUTH_REQUIRED,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  canceled: TaskState.TASK_STATE_CANCELED,
  rejected: TaskState.TASK_STATE_REJECTED
}

const toPart = (part: NeutralPart): Part => {
  switch (part.kind) {
    case "text":
      return { content: { $case: "text", value: part.text }, mediaType: "text/plain", filename: "", metadata: undefined }
    case "data":
      return { content: { $case: "data", value: { ...part.data } }, mediaType: "application/json", filename: "", metadata: undefined }
    case "file":
      return {
        content: { $case: "raw", value: Buffer.from(part.bytesBase64, "base64") },
        mediaType: part.mimeType,
        filename: part.name,
        metadata: undefined
      }
    case "file-url":
      return { content: { $case: "url", value: part.url }, mediaType: part.mimeType, filename: part.name, metadata: undefined }
  }
}

const agentMessage = (text: string, taskId: string, contextId: string): Message => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: Role.ROLE_AGENT,
  parts: [toPart({ kind: "text", text })],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const statusOf = (state: NeutralTaskState, message: Message | undefined): TaskStatus => ({
  state: STATE[state],
  message,
  timestamp: new Date().toISOString()
})

export const textOfMessage = (message: Message): string =>
  message.parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : [])).join("\n")

/** Translates neutral behaviour events into SDK 1.3.0 execution events for one request. */
class V1Emitter implements BehaviourEmitter {
  constructor(
    private readonly request: RequestContext,
    private readonly bus: ExecutionEventBus
  ) {}

  task(state: NeutralTaskState): void {
    const existing = this.request.task
    // On a follow-up the SDK has already appended the new user message to the stored history.
    const task: Task = existing === undefined
      ? {
        id: this.request.taskId,
        contextId: this.request.contextId,
        status: statusOf(state, undefined),
        artifacts: [],
        history: [this.request.userMessage],
        metadata: undefined
      }
      : { ...existing, status: statusOf(state, undefined) }
    this.bus.publish(AgentEvent.task(task))
  }

  republish(): void {
    if (this.request.task === undefined) throw new Error("republish() needs an existing task")
    this.bus.publish(AgentEvent.task(this.request.task))
  }

  status(state: NeutralTaskState, agentText?: string): void {
    const { taskId, contextId } = this.request
    const message = agentText === undefined ? undefined : agentMessage(agentText, taskId, contextId)
    this.bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: statusOf(state, message), metadata: undefined }))
  }

  artifact(artifact: NeutralArtifact, flags: ChunkFlags): void {
    const sdkArtifact: Artifact = {
      artifactId: artifact.artifactId,
      name: artifact.name,
      description: "",
      parts: artifact.parts.map(toPart),
      metadata: undefined,
      extensions: []
    }
    this.bus.publish(
      AgentEvent.artifactUpdate({
        taskId: this.request.taskId,
        contextId: this.request.contextId,
        artifact: sdkArtifact,
        append: flags.append,
        lastChunk: flags.lastChunk,
        metadata: undefined
      })
    )
  }

  message(agentText: string): void {
    // A direct reply belongs to no task, so it carries the context only.
    this.bus.publish(AgentEvent.message(agentMessage(agentText, "", this.request.contextId)))
  }
}

/** The AgentExecutor the SDK drives; the request handler settles the bus, so no finished() here. */
class ScriptedExecutor implements AgentExecutor {
  private readonly contextByTask = new Map<string, string>()

  constructor(private readonly runner: BehaviourRunner) {}

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    this.contextByTask.set(request.taskId, request.contextId)
    const current = request.userMessage
    const earlier = (request.task?.history ?? []).filter(
      (message) => message.role === Role.ROLE_USER && message.messageId !== current.messageId
    )
    await this.runner.run(
      {
        taskId: request.taskId,
        text: textOfMessage(current),
        earlierUserTexts: earlier.map(textOfMessage),
        isFollowUp: request.task !== undefined,
        presentedSecret: request.context.user instanceof PresentingUser ? request.context.user.presented : undefined
      },
      new V1Emitter(request, bus)
    )
  }

  // A running turn cancels itself from its loop; a parked task (input/auth required) is
  // cancelled here, because nothing else would ever publish on its bus.
  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    if (this.runner.requestCancel(taskId)) return
    const contextId = this.contextByTask.get(taskId) ?? ""
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: statusOf("canceled", agentMessage(CANCELED_TEXT, taskId, contextId)),
        metadata: undefined
      })
    )
  }
}

const interfaceFor = (binding: SdkBinding, baseUrl: string, grpcAddress: string | undefined): AgentInterface => ({
  url: binding === "GRPC" ? grpcAddress ?? "" : `${baseUrl}${binding === "JSONRPC" ? JSONRPC_PATH : REST_PATH}`,
  protocolBinding: binding,
  tenant: "",
  protocolVersion: "1.0"
})

const buildCard = (
  baseUrl: string,
  bindings: ReadonlyArray<SdkBinding>,
  options: SdkAgentOptions,
  grpcAddress: string | undefined
): AgentCard => {
  const interfaces = bindings.map((binding) => interfaceFor(binding, baseUrl, grpcAddress))
  const bearer = options.requireBearer !== undefined
  return {
    name: options.name ?? "SDK Test Agent",
    description: "Scripted A2A v1.0 test peer (@a2a-js/sdk 1.3.0).",
    supportedInterfaces: options.legacyCompat === true ? duplicateInterfacesForLegacy(interfaces, [...bindings]) : interfaces,
    provider: { organization: "a2a-relay tests", url: baseUrl },
    version: "1.0.0",
    capabilities: {
      streaming: options.capabilities?.streaming ?? true,
      pushNotifications: options.capabilities?.pushNotifications ?? true,
      extendedAgentCard: options.capabilities?.extendedAgentCard ?? options.extendedCard === true,
      extensions: []
    },
    // Served as-is by the SDK, i.e. in the ts-proto {$case, value} form (a known SDK quirk).
    securitySchemes: options.security !== undefined
      ? options.security.securitySchemes as AgentCard["securitySchemes"]
      : bearer
      ? {
        bearer: {
          scheme: {
            $case: "httpAuthSecurityScheme",
            value: { description: "Bearer token", scheme: "Bearer", bearerFormat: "" }
          }
        }
      }
      : {},
    securityRequirements: options.security !== undefined
      ? options.security.securityRequirements as AgentCard["securityRequirements"]
      : bearer
      ? [{ schemes: { bearer: { list: [] } } }]
      : [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain", "application/json"],
    skills: [
      {
        id: "scripted",
        name: "Scripted behaviours",
        description: "Echoes and scripted task flows; prefix a message with behaviour:<name> to pick one.",
        tags: ["test"],
        examples: ["behaviour:echo-complete hello"],
        inputModes: [],
        outputModes: [],
        securityRequirements: []
      }
    ],
    signatures: []
  }
}

const extendedCardFrom = (card: AgentCard): AgentCard => ({
  ...card,
  description: `${card.description} Extended card.`,
  skills: [
    ...card.skills,
    {
      id: "extended-only",
      name: "Extended-only skill",
      description: "Listed only on the authenticated extended card.",
      tags: ["test", "extended"],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: []
    }
  ]
})

const bearerGate = (token: string) => (req: Request, res: Response, next: NextFunction): void => {
  if (req.path === AGENT_CARD_PATH || bearerTokenOf(req.header("authorization")) === token) {
    next()
    return
  }
  rejectUnauthorized(res)
}

const verifiedBearerGate = (verify: (token: string) => Promise<boolean>) => (req: Request, res: Response, next: NextFunction): void => {
  const token = bearerTokenOf(req.header("authorization"))
  if (req.path === AGENT_CARD_PATH) {
    next()
    return
  }
  void (token === undefined ? Promise.resolve(false) : verify(token).catch(() => false)).then((valid) =>
    valid ? next() : rejectUnauthorized(res)
  )
}

/** Start a v1.0 SDK agent on 127.0.0.1:0. Call `close()` when done. */
export const startSdkAgent = async (options: SdkAgentOptions = {}): Promise<SdkAgentHandle> => {
  const bindings = options.bindings ?? ["JSONRPC", "HTTP+JSON"]
  if (bindings.length === 0) throw new Error("startSdkAgent: bindings must name at least one binding")
  const legacyCompat = { enabled: options.legacyCompat === true }

  // Bind first so the card can carry the real port; the app is attached right after.
  const server = http.createServer()
  const baseUrl = await listenOnLoopback(server)
  const grpcServer = bindings.includes("GRPC") ? new grpc.Server() : undefined
  const grpcAddress = grpcServer === undefined ? undefined : await bindGrpc(grpcServer, options.grpcTls)
  const card = buildCard(baseUrl, bindings, options, grpcAddress)
  const extendedCard = options.extendedCard === true ? extendedCardFrom(card) : undefined

  const runner = new BehaviourRunner(options.behaviour ?? "echo-complete", baseUrl)
  const taskStore = new InMemoryTaskStore(sharedOwner)
  const pushStore = new InMemoryPushNotificationStore(sharedOwner)
  const pushSender = options.legacyCompat === true
    ? createLegacyAwarePushNotificationSender(pushStore)
    : new DefaultPushNotificationSender(pushStore)
  const requestHandler = new DefaultRequestHandler(
    card,
    taskStore,
    new ScriptedExecutor(runner),
    new DefaultExecutionEventBusManager(sharedOwner),
    pushStore,
    pushSender,
    extendedCard
  )
  const checkedUser = userBuilderFor(options.requireBearer, UserBuilder.noAuthentication)
  const userBuilder = async (req: { header(name: string): string | undefined }) =>
    new PresentingUser(await checkedUser(req), presentedSecretOf(req))

  const requests: RecordedRequest[] = []
  const app = express()
  app.use((req: Request, res: Response, next: NextFunction) => {
    recordRequest(requests, req, res, () => req.body as unknown)
    next()
  })
  if (options.requireBearer !== undefined) app.use(bearerGate(options.requireBearer))
  if (options.verifyBearer !== undefined) app.use(verifiedBearerGate(options.verifyBearer))
  app.get(REPORT_PATH, (_req: Request, res: Response) => void res.type(REPORT.mimeType).send(REPORT.bytes))
  app.use(AGENT_CARD_PATH, agentCardHandler({ agentCardProvider: async () => card, legacyCompat }))
  if (bindings.includes("JSONRPC")) app.use(JSONRPC_PATH, jsonRpcHandler({ requestHandler, userBuilder, legacyCompat }))
  if (bindings.includes("HTTP+JSON")) app.use(REST_PATH, restHandler({ requestHandler, userBuilder, legacyCompat }))
  server.on("request", app)
  if (grpcServer !== undefined) {
    // The bearer user as over HTTP, read from the call's metadata.
    const grpcUserBuilder = (call: { readonly metadata: grpc.Metadata }) =>
      userBuilder({ header: (name: string) => call.metadata.get(name.toLowerCase())[0]?.toString() })
    grpcServer.addService(A2AService, grpcService({ requestHandler, userBuilder: grpcUserBuilder }))
    if (options.legacyCompat === true) {
      grpcServer.addService(LegacyA2AService, legacyGrpcService({ requestHandler, userBuilder: grpcUserBuilder }))
    }
  }

  return {
    baseUrl,
    cardUrl: `${baseUrl}${AGENT_CARD_PATH}`,
    jsonRpcUrl: `${baseUrl}${JSONRPC_PATH}`,
    restUrl: `${baseUrl}${REST_PATH}`,
    grpcAddress,
    card,
    extendedCard,
    requests,
    pushStore,
    taskStore,
    close: async () => {
      runner.stopAll()
      grpcServer?.forceShutdown()
      await closeServer(server)
    }
  }
}

/** Binds a gRPC server on loopback, port 0: the card's address for it. */
const bindGrpc = (server: grpc.Server, tls: SdkAgentOptions["grpcTls"]) =>
  new Promise<string>((resolve, reject) => {
    const credentials = tls === undefined
      ? grpc.ServerCredentials.createInsecure()
      : grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(tls.cert), private_key: Buffer.from(tls.key) }])
    server.bindAsync("127.0.0.1:0", credentials, (error, port) => {
      if (error !== null) reject(error)
      else resolve(tls === undefined ? `127.0.0.1:${port}` : `grpcs://localhost:${port}`)
    })
  })
