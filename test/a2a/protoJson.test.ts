// ProtoJSON as every SDK family writes it: each field by its JSON name or its proto name, enums
// by name or number. Requests go through the agent server's own door decoders (both generations,
// both bindings) and answers through the client's dialect decoders; a request or answer written
// in any mix of styles must read exactly as the canonical one does.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, type ParseResult, Schema } from "effect"
import { dialectFor, type WireRequest } from "../../src/a2a/dialects.js"
import { describeParseError } from "../../src/a2a/parseProblems.js"
import * as ProtoJson from "../../src/a2a/protoJson.js"
import * as T from "../../src/a2a/translate.js"
import * as V03 from "../../src/a2a/v03.js"
import * as V1 from "../../src/a2a/v1.js"
import { summarizeNotification } from "../../src/domain/notification.js"
import { taskView } from "../../src/domain/results.js"
import { resolveMethod } from "../../src/servers/agent/jsonRpc.js"
import { matchRoute } from "../../src/servers/agent/rest.js"
import type { VersionRequest } from "../../src/servers/agent/versions.js"
import { answerWriters, coin, protoStyled } from "../helpers/protoJsonStyle.js"
import { DIALECTS } from "../services/a2aClientHarness.js"

// ---------------------------------------------------------------------------
// Generators of domain values (free-form keys are lower-case words, which no style changes)

const word = fc.stringMatching(/^[a-z]{1,8}$/)
const freeForm = fc.dictionary(word, fc.oneof(fc.integer(), word, fc.boolean()), { minKeys: 1, maxKeys: 3 })
const id = fc.uuid()

const part: fc.Arbitrary<V1.Part> = fc.oneof(
  fc.record({ text: fc.string({ minLength: 1 }) }),
  fc.record({ data: freeForm }),
  fc.record({ url: fc.webUrl(), mediaType: fc.constant("application/pdf"), filename: fc.constant("report.pdf") }),
  fc.record({ raw: fc.base64String({ minLength: 4, maxLength: 12 }), mediaType: fc.constant("image/png") })
)

const message = (role: V1.Role): fc.Arbitrary<V1.Message> =>
  fc.record(
    {
      messageId: id,
      role: fc.constant(role),
      parts: fc.array(part, { minLength: 1, maxLength: 3 }),
      contextId: id,
      taskId: id,
      metadata: freeForm,
      extensions: fc.array(fc.webUrl(), { minLength: 1, maxLength: 2 }),
      referenceTaskIds: fc.array(id, { minLength: 1, maxLength: 2 })
    },
    { requiredKeys: ["messageId", "role", "parts"] }
  )

const pushConfig: fc.Arbitrary<V1.TaskPushNotificationConfig> = fc.record(
  {
    id: id,
    url: fc.webUrl(),
    token: word,
    authentication: fc.record({ scheme: fc.constant("Bearer"), credentials: word }, { requiredKeys: ["scheme"] })
  },
  { requiredKeys: ["url"] }
)

const sendRequest: fc.Arbitrary<V1.SendMessageRequest> = fc.record(
  {
    message: message("ROLE_USER"),
    configuration: fc.record(
      {
        acceptedOutputModes: fc.array(fc.constantFrom("text/plain", "application/json"), { minLength: 1, maxLength: 2 }),
        taskPushNotificationConfig: pushConfig,
        historyLength: fc.nat({ max: 20 }),
        returnImmediately: fc.boolean()
      },
      { requiredKeys: [] }
    ),
    metadata: freeForm
  },
  { requiredKeys: ["message"] }
)

const knownState = fc.constantFrom(...V1.TASK_STATES.filter((state) => state !== "TASK_STATE_UNSPECIFIED"))

const artifact: fc.Arbitrary<V1.Artifact> = fc.record(
  { artifactId: id, name: word, description: word, parts: fc.array(part, { minLength: 1, maxLength: 2 }), metadata: freeForm },
  { requiredKeys: ["artifactId", "parts"] }
)

const status: fc.Arbitrary<V1.TaskStatus> = fc.record(
  { state: knownState, message: message("ROLE_AGENT"), timestamp: fc.constant("2026-03-01T10:00:00Z") },
  { requiredKeys: ["state"] }
)

const task: fc.Arbitrary<V1.Task> = fc.record(
  {
    id,
    contextId: id,
    status,
    artifacts: fc.array(artifact, { minLength: 1, maxLength: 2 }),
    history: fc.array(fc.oneof(message("ROLE_USER"), message("ROLE_AGENT")), { minLength: 1, maxLength: 3 }),
    metadata: freeForm
  },
  { requiredKeys: ["id", "contextId", "status"] }
)

const streamEvent: fc.Arbitrary<V1.StreamResponse> = fc.oneof(
  task.map((value) => ({ task: value })),
  message("ROLE_AGENT").map((value) => ({ message: value })),
  fc.record({ taskId: id, contextId: id, status }).map((value) => ({ statusUpdate: value })),
  fc.record(
    { taskId: id, contextId: id, artifact, append: fc.boolean(), lastChunk: fc.boolean() },
    { requiredKeys: ["taskId", "contextId", "artifact"] }
  ).map((value) => ({ artifactUpdate: value }))
)

// ---------------------------------------------------------------------------
// The server's doors, as pure functions of a request

const V1_HEADER: VersionRequest = { _tag: "Supported", generation: "1.0" }
const NO_HEADER: VersionRequest = { _tag: "Missing" }

type Read = (json: unknown) => Either.Either<unknown, unknown>

const rpcDoor = (method: string, version: VersionRequest): Read => (params) =>
  Either.flatMap(resolveMethod(method, version), (dialect) => dialect.decode(params))

const restDoor = (verb: string, path: string, version: VersionRequest, in_: "body" | "query" = "body"): Read => (json) => {
  const matched = matchRoute(verb, path, version)
  if (matched._tag !== "Route") throw new Error(`no route for ${verb} ${path}`)
  const query = in_ === "query" ? (json as Record<string, string>) : {}
  return matched.route.build({ body: in_ === "body" ? json : undefined, query })
}

/** Each door that takes a SendMessage, with the canonical JSON its clients send. */
const SEND_DOORS: ReadonlyArray<
  { readonly name: string; readonly wire: (request: V1.SendMessageRequest) => unknown; readonly read: Read }
> = [
  { name: "JSON-RPC 1.0", wire: Schema.encodeSync(V1.SendMessageRequest), read: rpcDoor("SendMessage", V1_HEADER) },
  { name: "HTTP+JSON 1.0", wire: Schema.encodeSync(V1.SendMessageRequest), read: restDoor("POST", "/message:send", V1_HEADER) },
  { name: "JSON-RPC 0.3", wire: Schema.encodeSync(T.SendRequestAsV03), read: rpcDoor("message/send", NO_HEADER) },
  { name: "HTTP+JSON 0.3", wire: Schema.encodeSync(T.SendRequestAsV03Rest), read: restDoor("POST", "/v1/message:send", NO_HEADER) }
]

/** The other operations at each door, each with the canonical JSON of one request. */
const OTHER_REQUESTS: ReadonlyArray<readonly [string, Read, unknown]> = [
  ["GetTask JSON-RPC 1.0", rpcDoor("GetTask", V1_HEADER), { id: "t1", historyLength: 2 }],
  ["GetTask HTTP+JSON 1.0", restDoor("GET", "/tasks/t1", V1_HEADER, "query"), { historyLength: "2" }],
  ["tasks/get JSON-RPC 0.3", rpcDoor("tasks/get", NO_HEADER), { id: "t1", historyLength: 2 }],
  ["GetTask HTTP+JSON 0.3", restDoor("GET", "/v1/tasks/t1", NO_HEADER, "query"), { historyLength: "2" }],
  [
    "ListTasks JSON-RPC 1.0",
    rpcDoor("ListTasks", V1_HEADER),
    { contextId: "c1", status: "TASK_STATE_WORKING", pageSize: 5, pageToken: "p", historyLength: 1, includeArtifacts: true }
  ],
  [
    "ListTasks HTTP+JSON 1.0",
    restDoor("GET", "/tasks", V1_HEADER, "query"),
    { contextId: "c1", status: "TASK_STATE_WORKING", pageSize: "5", pageToken: "p", historyLength: "1", includeArtifacts: "true" }
  ],
  ["CancelTask JSON-RPC 1.0", rpcDoor("CancelTask", V1_HEADER), { id: "t1", metadata: { reason: "done" } }],
  ["CancelTask HTTP+JSON 1.0", restDoor("POST", "/tasks/t1:cancel", V1_HEADER), { metadata: { reason: "done" } }],
  ["tasks/cancel JSON-RPC 0.3", rpcDoor("tasks/cancel", NO_HEADER), { id: "t1" }],
  ["SubscribeToTask JSON-RPC 1.0", rpcDoor("SubscribeToTask", V1_HEADER), { id: "t1" }],
  ["tasks/resubscribe JSON-RPC 0.3", rpcDoor("tasks/resubscribe", NO_HEADER), { id: "t1" }],
  [
    "CreateTaskPushNotificationConfig JSON-RPC 1.0",
    rpcDoor("CreateTaskPushNotificationConfig", V1_HEADER),
    { taskId: "t1", id: "c1", url: "https://hooks.example/a2a", token: "tok", authentication: { scheme: "Bearer", credentials: "k" } }
  ],
  [
    "CreateTaskPushNotificationConfig HTTP+JSON 1.0",
    restDoor("POST", "/tasks/t1/pushNotificationConfigs", V1_HEADER),
    { id: "c1", url: "https://hooks.example/a2a", token: "tok", authentication: { scheme: "Bearer", credentials: "k" } }
  ],
  [
    "tasks/pushNotificationConfig/set JSON-RPC 0.3",
    rpcDoor("tasks/pushNotificationConfig/set", NO_HEADER),
    { taskId: "t1", pushNotificationConfig: { id: "c1", url: "https://hooks.example/a2a", authentication: { schemes: ["Bearer"] } } }
  ],
  [
    "CreateTaskPushNotificationConfig HTTP+JSON 0.3",
    restDoor("POST", "/v1/tasks/t1/pushNotificationConfigs", NO_HEADER),
    { name: "tasks/t1/pushNotificationConfigs/c1", pushNotificationConfig: { url: "https://hooks.example/a2a", token: "tok" } }
  ],
  ["GetTaskPushNotificationConfig JSON-RPC 1.0", rpcDoor("GetTaskPushNotificationConfig", V1_HEADER), { taskId: "t1", id: "c1" }],
  [
    "tasks/pushNotificationConfig/get JSON-RPC 0.3",
    rpcDoor("tasks/pushNotificationConfig/get", NO_HEADER),
    { id: "t1", pushNotificationConfigId: "c1" }
  ],
  [
    "ListTaskPushNotificationConfigs JSON-RPC 1.0",
    rpcDoor("ListTaskPushNotificationConfigs", V1_HEADER),
    { taskId: "t1", pageSize: 3, pageToken: "p" }
  ],
  [
    "ListTaskPushNotificationConfigs HTTP+JSON 1.0",
    restDoor("GET", "/tasks/t1/pushNotificationConfigs", V1_HEADER, "query"),
    { pageSize: "3", pageToken: "p" }
  ],
  ["DeleteTaskPushNotificationConfig JSON-RPC 1.0", rpcDoor("DeleteTaskPushNotificationConfig", V1_HEADER), { taskId: "t1", id: "c1" }],
  [
    "tasks/pushNotificationConfig/delete JSON-RPC 0.3",
    rpcDoor("tasks/pushNotificationConfig/delete", NO_HEADER),
    { id: "t1", pushNotificationConfigId: "c1" }
  ]
]

/** A query string carries numbers as text. */
const asQuery = (json: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(json as Record<string, unknown>).map(([key, value]) => [key, String(value)]))

describe("requests in every ProtoJSON style read alike at every door", () => {
  it("SendMessage, both generations and both bindings", () => {
    fc.assert(
      fc.property(sendRequest, fc.integer(), (request, seed) => {
        for (const door of SEND_DOORS) {
          const wire = door.wire(request)
          const canonical = door.read(wire)
          expect(Either.isRight(canonical), door.name).toBe(true)
          expect(door.read(protoStyled(wire, coin(seed))), `${door.name} mixed`).toEqual(canonical)
          expect(door.read(protoStyled(wire)), `${door.name} proto names, enum numbers`).toEqual(canonical)
        }
        // v1.0 loses nothing on the way.
        expect(Either.getOrThrow(SEND_DOORS[0]!.read(protoStyled(SEND_DOORS[0]!.wire(request))))).toEqual({
          _tag: "SendMessage",
          request
        })
      }),
      { numRuns: 300 }
    )
  })

  it("every other operation", () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        for (const [name, read, canonicalJson] of OTHER_REQUESTS) {
          const isQuery = name.includes("HTTP+JSON") && !name.includes("Cancel") && !name.includes("Create")
          const style = (json: unknown) => (isQuery ? asQuery(protoStyled(json, coin(seed))) : protoStyled(json, coin(seed)))
          const canonical = read(canonicalJson)
          expect(Either.isRight(canonical), name).toBe(true)
          expect(read(style(canonicalJson)), name).toEqual(canonical)
        }
      }),
      { numRuns: 100 }
    )
  })

  it("reads the fields the Python SDK names, and enum numbers, as the named ones", () => {
    const python = {
      message: {
        message_id: "m1",
        context_id: "c1",
        task_id: "t1",
        role: 1,
        parts: [{ text: "hi", media_type: "text/plain" }],
        reference_task_ids: ["t0"]
      },
      configuration: {
        accepted_output_modes: ["text/plain"],
        history_length: 2,
        return_immediately: true,
        task_push_notification_config: { url: "https://hooks.example/a2a", authentication: { scheme: "Bearer" } }
      }
    }
    expect(Either.getOrThrow(rpcDoor("SendMessage", V1_HEADER)(python))).toEqual({
      _tag: "SendMessage",
      request: {
        message: {
          messageId: "m1",
          contextId: "c1",
          taskId: "t1",
          role: "ROLE_USER",
          parts: [{ text: "hi", mediaType: "text/plain" }],
          referenceTaskIds: ["t0"]
        },
        configuration: {
          acceptedOutputModes: ["text/plain"],
          historyLength: 2,
          returnImmediately: true,
          taskPushNotificationConfig: { url: "https://hooks.example/a2a", authentication: { scheme: "Bearer" } }
        }
      }
    })
    expect(Either.getOrThrow(rpcDoor("ListTasks", V1_HEADER)({ status: 6 }))).toEqual({
      _tag: "ListTasks",
      request: { status: "TASK_STATE_INPUT_REQUIRED" }
    })
  })
})

describe("v0.3 HTTP+JSON messages, as the v0.3 proto has them", () => {
  const send = restDoor("POST", "/v1/message:send", NO_HEADER)
  const expected = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }] }

  it("reads parts from `content`, and from `parts` in the JSON-RPC shape", () => {
    const fromContent = Either.getOrThrow(send({ message: { message_id: "m1", role: 1, content: [{ text: "hi" }] } }))
    const fromParts = Either.getOrThrow(send({ message: { messageId: "m1", role: "ROLE_USER", parts: [{ kind: "text", text: "hi" }] } }))
    expect(fromContent).toMatchObject({ request: { message: expected } })
    expect(fromParts).toMatchObject({ request: { message: expected } })
  })

  it("reads the request's message under its proto name `request`, and push configs under `push_notification`", () => {
    const read = Either.getOrThrow(send({
      request: { message_id: "m1", role: "ROLE_USER", content: [{ text: "hi" }] },
      configuration: { blocking: true, push_notification: { url: "https://hooks.example/a2a", token: "tok" } }
    }))
    expect(read).toMatchObject({
      request: {
        message: expected,
        configuration: { returnImmediately: false, taskPushNotificationConfig: { url: "https://hooks.example/a2a", token: "tok" } }
      }
    })
  })

  it("routes the create of a push config at the proto's `/v1/task/{id}/pushNotificationConfigs` too", () => {
    const matched = matchRoute("POST", "/v1/task/t1/pushNotificationConfigs", NO_HEADER)
    expect(matched._tag).toBe("Route")
    if (matched._tag !== "Route") return
    expect(Either.getOrThrow(matched.route.build({ body: { push_notification_config: { url: "https://h.example/x" } }, query: {} })))
      .toMatchObject({ _tag: "CreatePushConfig", config: { taskId: "t1", url: "https://h.example/x" } })
  })
})

// ---------------------------------------------------------------------------
// Answers, as the client reads them

const decoderOf = <A>(wire: Effect.Effect<WireRequest<A>, ParseResult.ParseError>) => {
  const request = Effect.runSync(wire)
  return (json: unknown) => Effect.runSync(Effect.either(request.decode(json)))
}

const anySend: V1.SendMessageRequest = { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }

describe("answers in every ProtoJSON style read alike in the client", () => {
  it("tasks, send results and stream events of every dialect", () => {
    fc.assert(
      fc.property(task, streamEvent, fc.integer(), (value, event, seed) => {
        const sendResult: V1.SendMessageResponse = { task: value }
        for (const [binding, version] of DIALECTS) {
          const name = `${binding} ${version}`
          const dialect = dialectFor(binding, version)
          const write = answerWriters(binding, version)
          const readers: ReadonlyArray<readonly [string, (json: unknown) => unknown, unknown]> = [
            ["task", decoderOf(dialect.getTask({ id: value.id })), write.task(value)],
            ["send", decoderOf(dialect.send(anySend)), write.send(sendResult)],
            ["event", decoderOf(dialect.stream(anySend)), write.event(event)]
          ]
          for (const [what, read, wire] of readers) {
            const canonical = read(wire)
            expect(Either.isRight(canonical as Either.Either<unknown, unknown>), `${name} ${what}`).toBe(true)
            expect(read(protoStyled(wire, coin(seed))), `${name} ${what} mixed`).toEqual(canonical)
            expect(read(protoStyled(wire)), `${name} ${what} proto names, enum numbers`).toEqual(canonical)
          }
        }
      }),
      { numRuns: 150 }
    )
  })

  it("cards with proto field names", () =>
    Effect.gen(function*() {
      const { card, generation } = yield* T.cardFromWire({
        name: "Py",
        description: "A Python agent",
        version: "1",
        supported_interfaces: [{ url: "http://127.0.0.1:9/a2a", protocol_binding: "HTTP+JSON", protocol_version: "1.0" }],
        capabilities: { streaming: true, push_notifications: true, extended_agent_card: false },
        default_input_modes: ["text/plain"],
        default_output_modes: ["text/plain"],
        security_schemes: { bearer_auth: { http_auth_security_scheme: { scheme: "Bearer", bearer_format: "JWT" } } },
        security_requirements: [{ schemes: { bearer_auth: { list: [] } } }],
        skills: [{ id: "s", name: "S", description: "d", tags: [], input_modes: ["text/plain"] }],
        icon_url: "https://x.example/icon.png"
      })
      expect(generation).toBe("1.0")
      expect(card).toMatchObject({
        supportedInterfaces: [{ url: "http://127.0.0.1:9/a2a", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }],
        capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
        defaultInputModes: ["text/plain"],
        // The map's keys are names, never renamed.
        securitySchemes: { bearer_auth: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } } },
        securityRequirements: [{ schemes: { bearer_auth: { list: [] } } }],
        skills: [{ id: "s", inputModes: ["text/plain"] }],
        iconUrl: "https://x.example/icon.png"
      })
      const legacy = yield* T.cardFromWire({
        name: "Py 0.3",
        url: "http://127.0.0.1:9/a2a",
        preferred_transport: "HTTP+JSON",
        protocol_version: "0.3.0",
        supports_authenticated_extended_card: true
      })
      expect(legacy.generation).toBe("0.3")
      expect(legacy.declaredProtocolVersion).toBe("0.3.0")
      expect(legacy.card.supportedInterfaces).toEqual([{
        url: "http://127.0.0.1:9/a2a",
        protocolBinding: "HTTP+JSON",
        protocolVersion: "0.3"
      }])
      expect(legacy.card.capabilities.extendedAgentCard).toBe(true)
    }).pipe(Effect.runPromise))

  it("push bodies, decoded and summarised", async () => {
    const body = {
      status_update: {
        task_id: "t1",
        context_id: "c1",
        status: { state: 6, message: { message_id: "m", role: 2, parts: [{ text: "Which city?" }] } }
      }
    }
    const payload = await Effect.runPromise(T.pushPayloadFromWire(body))
    expect(payload.generation).toBe("1.0")
    expect(payload.event).toMatchObject({ statusUpdate: { taskId: "t1", status: { state: "TASK_STATE_INPUT_REQUIRED" } } })
    expect(summarizeNotification(body)).toMatchObject({
      kind: "status-update",
      task_id: "t1",
      context_id: "c1",
      state: "input-required",
      text: "Which city?"
    })
    const bare = { kind: "status-update", task_id: "t2", context_id: "c2", status: { state: "completed" }, final: true }
    expect(summarizeNotification(bare)).toMatchObject({ kind: "status-update", protocol: "0.3", task_id: "t2", state: "completed" })
  })
})

describe("the proto-name reader", () => {
  const read = ProtoJson.decoderEither(V1.Message)

  it("never renames inside free-form values, and keeps the JSON name when both are sent", () => {
    const message = Either.getOrThrow(read({
      message_id: "m1",
      messageId: "m2",
      role: "ROLE_USER",
      parts: [{ data: { some_key: 1, someKey: { inner_key: 2 } } }],
      metadata: { trace_id: "x", traceId: "y" }
    }))
    expect(message).toEqual({
      messageId: "m2",
      role: "ROLE_USER",
      parts: [{ data: { some_key: 1, someKey: { inner_key: 2 } } }],
      metadata: { trace_id: "x", traceId: "y" }
    })
  })

  it("leaves canonical JSON as the very same object", () => {
    const json = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }], metadata: { a_b: 1 } }
    expect(ProtoJson.normalizer(V1.Message)(json)).toBe(json)
  })

  it("turns proto names into JSON names as protoc does", () => {
    expect(ProtoJson.jsonName("message_id")).toBe("messageId")
    expect(ProtoJson.jsonName("oauth2_metadata_url")).toBe("oauth2MetadataUrl")
    expect(ProtoJson.jsonName("status_timestamp_after")).toBe("statusTimestampAfter")
  })
})

// ---------------------------------------------------------------------------
// Unknown enum values from an agent

describe("enum values A2A does not define, in an agent's answer", () => {
  const weird = {
    id: "t1",
    contextId: "c1",
    status: { state: "TASK_STATE_WEIRD" },
    history: [{ messageId: "m", role: "ROLE_ROBOT", parts: [{ text: "beep" }] }]
  }

  it("read as unknown, keeping the value sent, in every generation", () => {
    const v1 = Either.getOrThrow(ProtoJson.decoderEither(V1.Task)(weird))
    expect(v1.status).toEqual({ state: "TASK_STATE_UNSPECIFIED", unknownState: "TASK_STATE_WEIRD" })
    expect(v1.history?.[0]?.role).toBe("ROLE_UNSPECIFIED")
    expect(V1.stateLabel(v1.status)).toBe("unknown (TASK_STATE_WEIRD)")
    expect(taskView(v1).state).toBe("unknown (TASK_STATE_WEIRD)")
    expect(V1.unknownEnumsIn(v1)).toEqual(["task state \"TASK_STATE_WEIRD\"", "a message role other than user or agent"])

    const v03 = Either.getOrThrow(ProtoJson.decoderEither(T.TaskAsV03)({ ...weird, kind: "task", status: { state: "paused" } }))
    expect(v03.status).toEqual({ state: "TASK_STATE_UNSPECIFIED", unknownState: "paused" })
    const v03Rest = Either.getOrThrow(ProtoJson.decoderEither(T.TaskAsV03Rest)({ ...weird, status: { state: 42 } }))
    expect(V1.stateLabel(v03Rest.status)).toBe("unknown (42)")
  })

  it("are never written back", () => {
    const status: V1.TaskStatus = { state: "TASK_STATE_UNSPECIFIED", unknownState: "TASK_STATE_WEIRD" }
    expect(Schema.encodeSync(V1.TaskStatus)(status)).toEqual({ state: "TASK_STATE_UNSPECIFIED" })
    expect(T.statusToV03(status)).toEqual({ state: "unknown" })
  })

  it("in a request are refused: a state filter must name a state", () => {
    const listed = rpcDoor("ListTasks", V1_HEADER)({ status: "TASK_STATE_WEIRD" })
    expect(Either.isLeft(listed)).toBe(true)
    expect(V03.TASK_STATE_NAMES).toContain("unknown")
  })
})

// ---------------------------------------------------------------------------
// Error sentences

describe("decoding problems, in one sentence naming the field", () => {
  const problem = <A, I>(schema: Schema.Schema<A, I>, json: unknown, root = "params") => {
    const decoded = ProtoJson.decoderEither(schema)(json)
    if (Either.isRight(decoded)) throw new Error("expected a failure")
    return describeParseError(decoded.left, root)
  }

  it.each([
    [{ message: { role: "ROLE_USER", parts: [] } }, "message.messageId is required", "message.messageId"],
    [{ message: { messageId: 7, role: "ROLE_USER" } }, "message.messageId must be a string, not 7", "message.messageId"],
    [
      { message: { messageId: "m", role: "ROLE_USER", parts: [{}] } },
      "message.parts[0] needs exactly one of text, raw, url or data, but has none",
      "message.parts[0]"
    ],
    [
      { message: { messageId: "m", role: "ROLE_USER" }, configuration: { historyLength: 1.5 } },
      "configuration.historyLength must be an integer, not 1.5",
      "configuration.historyLength"
    ],
    [
      { message: { messageId: "m", role: "ROLE_USER" }, configuration: { returnImmediately: "maybe" } },
      "configuration.returnImmediately must be true or false, not \"maybe\"",
      "configuration.returnImmediately"
    ],
    ["x", "params must be an object, not \"x\"", ""],
    [undefined, "params is required", ""]
  ])("%j → %s", (json, message, field) => {
    expect(problem(V1.SendMessageRequest, json)).toEqual({ message, field })
  })

  it("names the state filter's problem", () => {
    expect(problem(V1.ListTasksRequest, { status: "TASK_STATE_WEIRD" }).message).toMatch(
      /^status must be a task state .*not "TASK_STATE_WEIRD"$/
    )
  })

  it("says which member a oneof needs", () => {
    expect(problem(V1.StreamResponse, {}, "the answer").message).toBe(
      "the answer needs one of task, message, statusUpdate or artifactUpdate"
    )
  })
})
