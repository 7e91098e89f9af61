// The A2A domain model: lenient decoding, strict encoding, v0.3 ↔ v1.0 translation, card
// detection, result text and the error table. Pure code, so no servers: the SDKs serve as
// witnesses of the real wire shapes (ts-proto fromJSON/toJSON, and v0.3 types for fixtures).
import {
  AgentCard as SdkAgentCard,
  Role as SdkRole,
  StreamResponse as SdkStreamResponse,
  Task as SdkTask,
  TaskState as SdkTaskState
} from "@a2a-js/sdk"
import { describe, expect, it } from "@effect/vitest"
import type {
  AgentCard as V03SdkAgentCard,
  Message as V03SdkMessage,
  MessageSendParams as V03SdkMessageSendParams,
  Task as V03SdkTask,
  TaskArtifactUpdateEvent as V03SdkArtifactUpdate,
  TaskPushNotificationConfig as V03SdkPushConfig,
  TaskStatusUpdateEvent as V03SdkStatusUpdate
} from "a2a-sdk-v03"
import { Ajv } from "ajv"
import { Effect, Either, FastCheck as fc, Schema } from "effect"
import * as Errors from "../../src/a2a/errors.js"
import * as ProtoJson from "../../src/a2a/protoJson.js"
import { a2aV03AgentCardSchema } from "../../src/a2a/schemas/a2aV03Schema.js"
import * as Text from "../../src/a2a/text.js"
import * as Translate from "../../src/a2a/translate.js"
import * as V03 from "../../src/a2a/v03.js"
import * as V1 from "../../src/a2a/v1.js"

// The readers relay uses everywhere: the schemas, plus proto field names.
const decode = <A, I>(schema: Schema.Schema<A, I>) => ProtoJson.decoder(schema)
const encode = <A, I>(schema: Schema.Schema<A, I>) => Schema.encode(schema)
const decodeFails = <A, I>(schema: Schema.Schema<A, I>, input: unknown) => Either.isLeft(ProtoJson.decoderEither(schema)(input))

/** JSON text of an encoded value, to assert what never appears on the wire. */
const wire = (value: unknown): string => JSON.stringify(value)

const validateV03Card = new Ajv({ strict: false }).compile(a2aV03AgentCardSchema)

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

/** A v0.3 task as an @a2a-js 0.3.x server returns it from `message/send`. */
const v03Task: V03SdkTask = {
  kind: "task",
  id: "task-1",
  contextId: "ctx-1",
  status: {
    state: "completed",
    timestamp: "2026-11-21T10:00:00.000Z",
    message: {
      kind: "message",
      messageId: "status-1",
      role: "agent",
      parts: [{ kind: "text", text: "Done." }],
      taskId: "task-1",
      contextId: "ctx-1"
    }
  },
  artifacts: [
    {
      artifactId: "art-1",
      name: "answer",
      parts: [
        { kind: "text", text: "Paris" },
        { kind: "file", file: { uri: "https://example.com/map.png", mimeType: "image/png", name: "map.png" } },
        { kind: "file", file: { bytes: "aGVsbG8=", mimeType: "text/plain", name: "hello.txt" } },
        { kind: "data", data: { city: "Paris", population: 2100000 }, metadata: { source: "census" } }
      ]
    }
  ],
  history: [
    {
      kind: "message",
      messageId: "user-1",
      role: "user",
      parts: [{ kind: "text", text: "Capital of France?" }],
      contextId: "ctx-1",
      referenceTaskIds: ["task-0"]
    }
  ],
  metadata: { priority: 1 }
}

/** The same task in the v1.0 domain model. */
const v1Task: V1.Task = {
  id: "task-1",
  contextId: "ctx-1",
  status: {
    state: "TASK_STATE_COMPLETED",
    timestamp: "2026-11-21T10:00:00.000Z",
    message: {
      messageId: "status-1",
      role: "ROLE_AGENT",
      parts: [{ text: "Done." }],
      taskId: "task-1",
      contextId: "ctx-1"
    }
  },
  artifacts: [
    {
      artifactId: "art-1",
      name: "answer",
      parts: [
        { text: "Paris" },
        { url: "https://example.com/map.png", mediaType: "image/png", filename: "map.png" },
        { raw: "aGVsbG8=", mediaType: "text/plain", filename: "hello.txt" },
        { data: { city: "Paris", population: 2100000 }, metadata: { source: "census" } }
      ]
    }
  ],
  history: [
    {
      messageId: "user-1",
      role: "ROLE_USER",
      parts: [{ text: "Capital of France?" }],
      contextId: "ctx-1",
      referenceTaskIds: ["task-0"]
    }
  ],
  metadata: { priority: 1 }
}

/** The same task as v1.0 ProtoJSON. */
const v1TaskJson = {
  id: "task-1",
  contextId: "ctx-1",
  status: {
    state: "TASK_STATE_COMPLETED",
    message: {
      messageId: "status-1",
      contextId: "ctx-1",
      taskId: "task-1",
      role: "ROLE_AGENT",
      parts: [{ text: "Done." }]
    },
    timestamp: "2026-11-21T10:00:00.000Z"
  },
  artifacts: [
    {
      artifactId: "art-1",
      name: "answer",
      parts: [
        { text: "Paris" },
        { url: "https://example.com/map.png", filename: "map.png", mediaType: "image/png" },
        { raw: "aGVsbG8=", filename: "hello.txt", mediaType: "text/plain" },
        { data: { city: "Paris", population: 2100000 }, metadata: { source: "census" } }
      ]
    }
  ],
  history: [
    {
      messageId: "user-1",
      contextId: "ctx-1",
      role: "ROLE_USER",
      parts: [{ text: "Capital of France?" }],
      referenceTaskIds: ["task-0"]
    }
  ],
  metadata: { priority: 1 }
}

/** A v0.3 card in the style of the v0.3 specification's sample. */
const v03Card: V03SdkAgentCard = {
  protocolVersion: "0.3.0",
  name: "GeoSpatial Route Planner Agent",
  description: "Plans routes and draws custom maps.",
  url: "https://georoute.example.com/a2a/v1",
  preferredTransport: "JSONRPC",
  additionalInterfaces: [
    { url: "https://georoute.example.com/a2a/v1", transport: "JSONRPC" },
    { url: "https://georoute.example.com/a2a/grpc", transport: "GRPC" },
    { url: "https://georoute.example.com/a2a/json", transport: "HTTP+JSON" }
  ],
  provider: { organization: "Example Geo Services Inc.", url: "https://www.examplegeoservices.com" },
  iconUrl: "https://georoute.example.com/icon.png",
  version: "1.2.0",
  documentationUrl: "https://docs.examplegeoservices.com/georoute-agent/api",
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
  securitySchemes: {
    google: { type: "openIdConnect", openIdConnectUrl: "https://accounts.google.com/.well-known/openid-configuration" },
    bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
    key: { type: "apiKey", in: "header", name: "X-API-Key" },
    oauth: {
      type: "oauth2",
      flows: {
        authorizationCode: {
          authorizationUrl: "https://auth.example.com/authorize",
          tokenUrl: "https://auth.example.com/token",
          scopes: { read: "Read routes" }
        },
        clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: {} }
      }
    },
    mtls: { type: "mutualTLS", description: "client certificate" }
  },
  security: [{ google: ["openid", "profile", "email"] }],
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["application/json", "image/png"],
  skills: [
    {
      id: "route-optimizer-traffic",
      name: "Traffic-Aware Route Optimizer",
      description: "Calculates the optimal driving route between two or more locations.",
      tags: ["maps", "routing", "navigation"],
      examples: ["Plan a route from Mountain View to San Francisco."],
      inputModes: ["application/json", "text/plain"],
      outputModes: ["application/json", "application/vnd.geo+json"],
      security: [{ bearer: [] }]
    }
  ],
  supportsAuthenticatedExtendedCard: true,
  signatures: [{ protected: "eyJhbGciOiJFUzI1NiJ9", signature: "QFdkNLNszlGj3z3u0YQGt" }]
}

/** A v1.0 card built the way @a2a-js 1.3.0 agents build it (ts-proto objects). */
const sdkCard: SdkAgentCard = {
  name: "Echo Agent",
  description: "Echoes what you say.",
  supportedInterfaces: [
    { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: "http://127.0.0.1:4000/a2a/rest", protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }
  ],
  provider: { organization: "Relay Tests", url: "https://example.com" },
  version: "1.0.0",
  capabilities: {
    streaming: true,
    pushNotifications: true,
    extendedAgentCard: false,
    extensions: [{ uri: "https://example.com/ext/trace", description: "", required: true, params: undefined }]
  },
  securitySchemes: {
    bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "JWT" } } },
    oauth: {
      scheme: {
        $case: "oauth2SecurityScheme",
        value: {
          description: "Company SSO",
          oauth2MetadataUrl: "",
          flows: {
            flow: {
              $case: "clientCredentials",
              value: { tokenUrl: "https://auth.example.com/token", refreshUrl: "", scopes: { agent: "Use the agent" } }
            }
          }
        }
      }
    }
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [
    {
      id: "echo",
      name: "Echo",
      description: "Repeats the input.",
      tags: ["echo"],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: []
    }
  ],
  signatures: []
}

// ---------------------------------------------------------------------------
// v1.0 lenient decoding
// ---------------------------------------------------------------------------

describe("v1 lenient decode", () => {
  it.effect("reads every spelling of every task state", () =>
    Effect.gen(function*() {
      const spellings: ReadonlyArray<readonly [string | number, V1.TaskState]> = [
        ["TASK_STATE_SUBMITTED", "TASK_STATE_SUBMITTED"],
        ["submitted", "TASK_STATE_SUBMITTED"],
        ["working", "TASK_STATE_WORKING"],
        ["input-required", "TASK_STATE_INPUT_REQUIRED"],
        ["INPUT_REQUIRED", "TASK_STATE_INPUT_REQUIRED"],
        ["auth-required", "TASK_STATE_AUTH_REQUIRED"],
        ["completed", "TASK_STATE_COMPLETED"],
        ["failed", "TASK_STATE_FAILED"],
        ["canceled", "TASK_STATE_CANCELED"],
        ["TASK_STATE_CANCELED", "TASK_STATE_CANCELED"],
        ["TASK_STATE_CANCELLED", "TASK_STATE_CANCELED"],
        ["rejected", "TASK_STATE_REJECTED"],
        ["unknown", "TASK_STATE_UNSPECIFIED"],
        ["TASK_STATE_UNSPECIFIED", "TASK_STATE_UNSPECIFIED"],
        [3, "TASK_STATE_COMPLETED"],
        [6, "TASK_STATE_INPUT_REQUIRED"],
        [8, "TASK_STATE_AUTH_REQUIRED"]
      ]
      for (const [input, expected] of spellings) {
        expect(yield* decode(V1.TaskState)(input)).toBe(expected)
      }
      expect(decodeFails(V1.TaskState, "paused")).toBe(true)
      expect(decodeFails(V1.TaskState, 42)).toBe(true)
      // The proto enum numbers agree with the SDK's.
      expect(yield* decode(V1.TaskState)(SdkTaskState.TASK_STATE_REJECTED)).toBe("TASK_STATE_REJECTED")
    }))

  it.effect("reads every spelling of a role", () =>
    Effect.gen(function*() {
      for (const input of ["ROLE_USER", "user", "USER", SdkRole.ROLE_USER]) {
        expect(yield* decode(V1.Role)(input)).toBe("ROLE_USER")
      }
      for (const input of ["ROLE_AGENT", "agent", "Agent", SdkRole.ROLE_AGENT]) {
        expect(yield* decode(V1.Role)(input)).toBe("ROLE_AGENT")
      }
      // A role A2A does not define is no reason to fail an agent's answer (issue 17): it reads as
      // ROLE_UNSPECIFIED, which the agent server refuses in a message sent to it.
      for (const input of ["ROLE_UNSPECIFIED", 0, "system", "ROLE_WEIRD", 7]) {
        expect(yield* decode(V1.Role)(input)).toBe("ROLE_UNSPECIFIED")
      }
    }))

  it.effect("reads parts with exactly one content member and drops empty or null extras", () =>
    Effect.gen(function*() {
      const part = decode(V1.Part)
      expect(yield* part({ text: "hi", mediaType: "", filename: null, kind: "text" })).toEqual({ text: "hi" })
      expect(yield* part({ raw: "AAE=", mediaType: "application/octet-stream" })).toEqual({
        raw: "AAE=",
        mediaType: "application/octet-stream"
      })
      expect(yield* part({ url: "https://x/y.pdf", filename: "y.pdf" })).toEqual({ url: "https://x/y.pdf", filename: "y.pdf" })
      // google.protobuf.Value: any JSON value, null included.
      expect(yield* part({ data: null })).toEqual({ data: null })
      expect(yield* part({ data: [1, 2] })).toEqual({ data: [1, 2] })
      // A serialiser that writes every oneof member, unset ones as null.
      expect(yield* part({ text: "hi", raw: null, url: null, data: null })).toEqual({ text: "hi" })
      expect(yield* part({ text: "" })).toEqual({ text: "" })
      expect(decodeFails(V1.Part, {})).toBe(true)
      expect(decodeFails(V1.Part, { mediaType: "text/plain" })).toBe(true)
      expect(decodeFails(V1.Part, { text: "a", url: "b" })).toBe(true)
      expect(decodeFails(V1.Part, { text: "a", data: { x: 1 } })).toBe(true)
    }))

  it.effect("reads messages with legacy spellings, nulls, omitted defaults and unknown fields", () =>
    Effect.gen(function*() {
      const message = yield* decode(V1.Message)({
        kind: "message",
        messageId: "m-1",
        role: "user",
        parts: [{ kind: "text", text: "hello" }],
        contextId: "",
        taskId: null,
        metadata: null,
        extensions: [],
        futureField: { anything: true }
      })
      expect(message).toEqual({ messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] })
      // ProtoJSON omits an empty repeated field.
      expect(yield* decode(V1.Message)({ messageId: "m-2", role: "ROLE_AGENT" })).toEqual({
        messageId: "m-2",
        role: "ROLE_AGENT",
        parts: []
      })
      expect(decodeFails(V1.Message, { role: "user", parts: [] })).toBe(true)
    }))

  it.effect("reads tasks, defaulting an omitted state to UNSPECIFIED and keeping empty artifacts", () =>
    Effect.gen(function*() {
      expect(yield* decode(V1.Task)({ id: "t", status: {} })).toEqual({
        id: "t",
        status: { state: "TASK_STATE_UNSPECIFIED" }
      })
      expect(yield* decode(V1.Task)({ id: "t", status: { state: "working" }, artifacts: [] })).toEqual({
        id: "t",
        status: { state: "TASK_STATE_WORKING" },
        artifacts: []
      })
      expect(yield* decode(V1.Task)(v1TaskJson)).toEqual(v1Task)
    }))

  it.effect("reads each kind of stream response", () =>
    Effect.gen(function*() {
      const stream = decode(V1.StreamResponse)
      expect(yield* stream({ task: { id: "t", status: { state: "TASK_STATE_SUBMITTED" } } })).toEqual({
        task: { id: "t", status: { state: "TASK_STATE_SUBMITTED" } }
      })
      expect(yield* stream({ message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }] } })).toEqual({
        message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }] }
      })
      expect(
        yield* stream({ statusUpdate: { taskId: "t", contextId: "c", status: { state: "input-required" }, final: true } })
      ).toEqual({ statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_INPUT_REQUIRED" } } })
      expect(
        yield* stream({
          artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ text: "x" }] }, lastChunk: true }
        })
      ).toEqual({
        artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ text: "x" }] }, lastChunk: true }
      })
      expect(decodeFails(V1.StreamResponse, { kind: "status-update", taskId: "t" })).toBe(true)
    }))

  it.effect("reads request parameters from JSON and from query strings", () =>
    Effect.gen(function*() {
      expect(
        yield* decode(V1.ListTasksRequest)({
          contextId: "c",
          status: "working",
          pageSize: "10",
          includeArtifacts: "true",
          historyLength: 0,
          pageToken: ""
        })
      ).toEqual({ contextId: "c", status: "TASK_STATE_WORKING", pageSize: 10, includeArtifacts: true, historyLength: 0 })
      expect(yield* decode(V1.GetTaskRequest)({ id: "t", historyLength: "3", tenant: "" })).toEqual({ id: "t", historyLength: 3 })
      expect(decodeFails(V1.GetTaskRequest, { id: "t", historyLength: "three" })).toBe(true)
      expect(decodeFails(V1.GetTaskRequest, { id: "t", historyLength: 1.5 })).toBe(true)
      expect(
        yield* decode(V1.SendMessageRequest)({
          message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] },
          configuration: {
            acceptedOutputModes: ["text/plain"],
            returnImmediately: true,
            historyLength: 2,
            taskPushNotificationConfig: { url: "http://127.0.0.1:9/hook", authentication: { scheme: "Bearer", credentials: "s" } }
          }
        })
      ).toEqual({
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] },
        configuration: {
          acceptedOutputModes: ["text/plain"],
          returnImmediately: true,
          historyLength: 2,
          taskPushNotificationConfig: { url: "http://127.0.0.1:9/hook", authentication: { scheme: "Bearer", credentials: "s" } }
        }
      })
    }))

  it.effect("fills the always-present list fields that ProtoJSON omits when empty", () =>
    Effect.gen(function*() {
      expect(yield* decode(V1.ListTasksResponse)({})).toEqual({ tasks: [], nextPageToken: "", pageSize: 0, totalSize: 0 })
      expect(yield* decode(V1.ListTaskPushNotificationConfigsResponse)({ nextPageToken: "" })).toEqual({ configs: [] })
    }))

  it.effect("reads the three security scheme shapes of every scheme type", () =>
    Effect.gen(function*() {
      const scheme = decode(V1.SecurityScheme)
      const cases: ReadonlyArray<readonly [V1.SecurityScheme, ReadonlyArray<unknown>]> = [
        [
          { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
          [
            { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
            { type: "http", scheme: "Bearer", bearerFormat: "JWT" },
            { scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "JWT" } } },
            { http_auth_security_scheme: { scheme: "Bearer", bearerFormat: "JWT" } }
          ]
        ],
        [
          { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
          [
            { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
            { type: "apiKey", in: "header", name: "X-API-Key" },
            { scheme: { $case: "apiKeySecurityScheme", value: { description: "", location: "header", name: "X-API-Key" } } }
          ]
        ],
        [
          { openIdConnectSecurityScheme: { openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" } },
          [
            { openIdConnectSecurityScheme: { openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" } },
            { type: "openIdConnect", openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" },
            {
              scheme: {
                $case: "openIdConnectSecurityScheme",
                value: { description: "", openIdConnectUrl: "https://id.example.com/.well-known/openid-configuration" }
              }
            }
          ]
        ],
        [
          { mtlsSecurityScheme: { description: "client cert" } },
          [
            { mtlsSecurityScheme: { description: "client cert" } },
            { type: "mutualTLS", description: "client cert" },
            { scheme: { $case: "mtlsSecurityScheme", value: { description: "client cert" } } }
          ]
        ],
        [
          {
            oauth2SecurityScheme: {
              flows: { clientCredentials: { tokenUrl: "https://auth/token", scopes: { a: "A" } } },
              oauth2MetadataUrl: "https://auth/.well-known/oauth-authorization-server"
            }
          },
          [
            {
              oauth2SecurityScheme: {
                flows: { clientCredentials: { tokenUrl: "https://auth/token", scopes: { a: "A" } } },
                oauth2MetadataUrl: "https://auth/.well-known/oauth-authorization-server"
              }
            },
            {
              type: "oauth2",
              flows: { clientCredentials: { tokenUrl: "https://auth/token", scopes: { a: "A" } } },
              oauth2MetadataUrl: "https://auth/.well-known/oauth-authorization-server"
            },
            {
              scheme: {
                $case: "oauth2SecurityScheme",
                value: {
                  description: "",
                  oauth2MetadataUrl: "https://auth/.well-known/oauth-authorization-server",
                  flows: {
                    flow: { $case: "clientCredentials", value: { tokenUrl: "https://auth/token", refreshUrl: "", scopes: { a: "A" } } }
                  }
                }
              }
            }
          ]
        ]
      ]
      for (const [expected, inputs] of cases) {
        for (const input of inputs) expect(yield* scheme(input)).toEqual(expected)
      }
      // v0.3 allowed several flows at once; v1.0 keeps one, authorization code first.
      expect(
        yield* scheme({
          type: "oauth2",
          flows: {
            clientCredentials: { tokenUrl: "https://auth/token", scopes: {} },
            authorizationCode: { authorizationUrl: "https://auth/authorize", tokenUrl: "https://auth/token", scopes: {} }
          }
        })
      ).toEqual({
        oauth2SecurityScheme: {
          flows: { authorizationCode: { authorizationUrl: "https://auth/authorize", tokenUrl: "https://auth/token", scopes: {} } }
        }
      })
      expect(decodeFails(V1.SecurityScheme, { type: "custom" })).toBe(true)
      expect(decodeFails(V1.SecurityScheme, { httpAuthSecurityScheme: { bearerFormat: "JWT" } })).toBe(true)
    }))

  it.effect("reads security requirements in the v1.0 and the v0.3 shape", () =>
    Effect.gen(function*() {
      const expected = { schemes: { oauth: { list: ["read", "write"] }, key: { list: [] } } }
      expect(yield* decode(V1.SecurityRequirement)(expected)).toEqual(expected)
      expect(yield* decode(V1.SecurityRequirement)({ oauth: ["read", "write"], key: [] })).toEqual(expected)
      expect(yield* decode(V1.SecurityRequirement)({ schemes: { key: {} } })).toEqual({ schemes: { key: { list: [] } } })
    }))
})

// ---------------------------------------------------------------------------
// v1.0 strict encoding
// ---------------------------------------------------------------------------

// Fast paths: canonical requests and near misses, every field drawn from values the fast path takes
// and values only the schema handles (other spellings, nulls, blanks, extra keys).
/** Mostly the canonical value, sometimes one the schema alone handles. */
const mostly = <A, B>(canonical: fc.Arbitrary<A>, other: fc.Arbitrary<B>) =>
  fc.oneof({ arbitrary: canonical, weight: 4 }, { arbitrary: other, weight: 1 })
const absentOr = <A>(arb: fc.Arbitrary<A>) => mostly(fc.constant(undefined), arb)
const id = mostly(fc.uuid(), fc.constantFrom("", null))
const withoutUndefined = (record: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined))
const historyLength = mostly(fc.option(fc.integer({ min: -2, max: 50 }), { nil: undefined }), fc.constantFrom(1.5, "3", 2 ** 53, 1e300))

/** A message's fields but its role (and kind): ids, parts, and keys only the schema handles. */
const messageFields = <P>(part: fc.Arbitrary<P>) => ({
  messageId: mostly(fc.uuid(), fc.constantFrom("", 7)),
  parts: mostly(fc.array(part, { maxLength: 3 }), fc.constant(null)),
  contextId: absentOr(id),
  taskId: absentOr(id),
  metadata: absentOr(fc.constant({ a: 1 })),
  extra: absentOr(fc.constant(true))
})

/** Runs `ours` and the schema's decode on every input: same success, same value; both ways taken. */
const decodesAsTheSchemaDoes = (
  request: fc.Arbitrary<unknown>,
  ours: (input: unknown) => Either.Either<unknown, unknown>,
  theirs: (input: unknown) => Either.Either<unknown, unknown>,
  isFast: (input: unknown, decoded: unknown) => boolean
) => {
  let fast = 0
  fc.assert(
    fc.property(request, (input) => {
      const a = ours(input)
      const b = theirs(input)
      if (Either.isRight(a) && isFast(input, a.right)) fast++
      expect(Either.isRight(a)).toBe(Either.isRight(b))
      if (Either.isRight(a) && Either.isRight(b)) expect(a.right).toEqual(b.right)
    }),
    { numRuns: 2000 }
  )
  // Both ways were exercised (a bound far below what a run takes of either: the inputs are random).
  expect(fast).toBeGreaterThan(20)
  expect(fast).toBeLessThan(2000 - 20)
}

describe("SendMessageRequest fast path", () => {
  const part = mostly(
    fc.record({ text: fc.string() }),
    fc.oneof(
      fc.record({ text: fc.string(), mediaType: fc.constant("text/plain") }),
      fc.record({ data: fc.jsonValue() }),
      fc.record({ url: fc.webUrl() }),
      fc.record({ text: fc.string(), url: fc.webUrl() }),
      fc.constant({})
    )
  )
  const message = fc.record({
    role: mostly(fc.constantFrom("ROLE_USER", "ROLE_AGENT"), fc.constantFrom("user", "agent", "ROLE_OTHER", 1)),
    ...messageFields(part)
  })
  const configuration = fc.record({
    returnImmediately: mostly(fc.option(fc.boolean(), { nil: undefined }), fc.constant("true")),
    historyLength,
    acceptedOutputModes: absentOr(fc.constant(["text/plain"]))
  })
  const request = fc.record({
    message: message.map(withoutUndefined),
    configuration: absentOr(mostly(configuration.map(withoutUndefined), fc.constant(null))),
    tenant: absentOr(fc.constant("t1"))
  }).map(withoutUndefined)
  const bySchema = Schema.decodeUnknownEither(V1.SendMessageRequest)

  it("decodes exactly as the schema does", () => {
    decodesAsTheSchemaDoes(request, V1.decodeSendMessageRequest, bySchema, (input, decoded) => decoded === input)
  })

  it("takes a canonical request as it is and leaves every other one to the schema", () => {
    const canonical = {
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }], contextId: "c1" },
      configuration: { returnImmediately: true, historyLength: 2 }
    }
    expect(V1.decodeSendMessageRequest(canonical)).toEqual(Either.right(canonical))
    expect(Either.getOrThrow(V1.decodeSendMessageRequest(canonical))).toBe(canonical)
    const lenient = { message: { messageId: "m1", role: "user", parts: [{ text: "hi" }] } }
    const decoded = Either.getOrThrow(V1.decodeSendMessageRequest(lenient))
    expect(decoded).not.toBe(lenient)
    expect(decoded.message.role).toBe("ROLE_USER")
    expect(Either.isLeft(V1.decodeSendMessageRequest({ message: { messageId: "m1", role: "ROLE_USER", parts: [{}] } }))).toBe(true)
  })
})

const textParts = mostly(
  fc.array(fc.record({ text: fc.string() }), { maxLength: 2 }),
  fc.constant([{ text: "a", mediaType: "text/plain" }])
)
const textMessage = fc.record({
  messageId: mostly(fc.uuid(), fc.constantFrom("", 7)),
  role: mostly(fc.constantFrom("ROLE_USER", "ROLE_AGENT"), fc.constantFrom("agent", "ROLE_OTHER", 2)),
  parts: textParts,
  contextId: absentOr(id),
  taskId: absentOr(id)
}).map(withoutUndefined)
const taskStatus = fc.record({
  state: mostly(fc.constantFrom(...V1.TASK_STATES), fc.constantFrom("working", "TASK_STATE_BOGUS", 3, "TASK_STATE_CANCELLED")),
  timestamp: absentOr(mostly(fc.constant("2026-01-01T00:00:00.000Z"), fc.constantFrom("", null))),
  message: absentOr(mostly(textMessage, fc.constant(null)))
}).map(withoutUndefined)

describe("StreamResponse fast path (status updates)", () => {
  const status = taskStatus
  const update = fc.record({
    taskId: mostly(fc.uuid(), fc.constantFrom("", 5)),
    contextId: mostly(fc.uuid(), fc.constantFrom(undefined, "", null)),
    status: mostly(status, fc.constant({})),
    metadata: absentOr(fc.constant({ a: 1 })),
    final: absentOr(fc.constant(true))
  }).map(withoutUndefined)
  const event = fc.oneof(
    { arbitrary: fc.record({ statusUpdate: update }), weight: 5 },
    { arbitrary: fc.record({ statusUpdate: update, extra: fc.constant(1) }), weight: 1 },
    { arbitrary: fc.record({ status_update: update }), weight: 1 },
    { arbitrary: fc.record({ task: fc.record({ id: fc.uuid(), status }) }), weight: 1 }
  )

  it("decodes exactly as the schema does", () => {
    decodesAsTheSchemaDoes(
      event,
      V1.decodeStreamResponse,
      (input) => ProtoJson.decoderEither(V1.StreamResponse)(input),
      (input, decoded) => decoded === input
    )
  })
})

describe("Task and SendMessageResponse fast paths (answers of text)", () => {
  const artifact = fc.record({
    artifactId: mostly(fc.uuid(), fc.constantFrom("", 4)),
    name: absentOr(mostly(fc.constant("answer"), fc.constantFrom("", null))),
    description: absentOr(fc.constantFrom("the answer", "")),
    parts: mostly(textParts, fc.constantFrom(undefined, null, [{ data: { a: 1 } }])),
    metadata: absentOr(fc.constant({ a: 1 }))
  }).map(withoutUndefined)
  const task = fc.record({
    id: mostly(fc.uuid(), fc.constantFrom("", 9, undefined)),
    contextId: absentOr(id),
    status: mostly(taskStatus, fc.constantFrom({}, undefined)),
    artifacts: absentOr(mostly(fc.array(artifact, { maxLength: 2 }), fc.constant(null))),
    history: absentOr(mostly(fc.array(textMessage, { maxLength: 3 }), fc.constant(null))),
    metadata: absentOr(fc.constant({ a: 1 })),
    kind: absentOr(fc.constant("task"))
  }).map(withoutUndefined)
  const answer = fc.oneof(
    { arbitrary: fc.record({ task }), weight: 5 },
    { arbitrary: fc.record({ task, extra: fc.constant(1) }), weight: 1 },
    { arbitrary: fc.record({ message: textMessage }), weight: 1 },
    { arbitrary: fc.constant({}), weight: 1 }
  )

  it("a Task decodes exactly as the schema does", () => {
    decodesAsTheSchemaDoes(task, V1.decodeTask, (input) => ProtoJson.decoderEither(V1.Task)(input), (input, decoded) => decoded === input)
  })

  it("a SendMessage answer decodes exactly as the schema does", () => {
    decodesAsTheSchemaDoes(
      answer,
      V1.decodeSendMessageResponse,
      (input) => ProtoJson.decoderEither(V1.SendMessageResponse)(input),
      (input, decoded) => decoded === input
    )
  })

  // One change at a time to a canonical task, so each near miss is drawn often.
  const canonicalTask = fc.record({
    id: fc.uuid(),
    contextId: fc.uuid(),
    status: fc.record({
      state: fc.constantFrom("TASK_STATE_WORKING", "TASK_STATE_COMPLETED"),
      timestamp: fc.constant("2026-01-01T00:00:00.000Z")
    }),
    history: fc.array(
      fc.record({
        messageId: fc.uuid(),
        role: fc.constantFrom("ROLE_USER", "ROLE_AGENT"),
        parts: fc.array(fc.record({ text: fc.string() }), { maxLength: 2 })
      }),
      { minLength: 1, maxLength: 2 }
    ),
    artifacts: fc.array(
      fc.record({
        artifactId: fc.uuid(),
        name: fc.constant("answer"),
        parts: fc.array(fc.record({ text: fc.string() }), { maxLength: 2 })
      }),
      { minLength: 1, maxLength: 2 }
    )
  })
  type Canonical = typeof canonicalTask extends fc.Arbitrary<infer T> ? T : never
  const withArtifact = (t: Canonical, change: Record<string, unknown>) => ({ ...t, artifacts: [{ ...t.artifacts[0]!, ...change }] })
  const withMessage = (t: Canonical, change: Record<string, unknown>) => ({ ...t, history: [{ ...t.history[0]!, ...change }] })
  const nearMisses: ReadonlyArray<(t: Canonical) => unknown> = [
    (t) => t,
    (t) => ({ ...t, contextId: "" }),
    (t) => ({ ...t, id: 9 }),
    (t) => ({ ...t, kind: "task" }),
    (t) => ({ ...t, metadata: {} }),
    (t) => ({ ...t, status: { ...t.status, timestamp: "" } }),
    (t) => ({ ...t, status: { state: "working" } }),
    (t) => ({ ...t, status: { state: "TASK_STATE_UNSPECIFIED" } }),
    (t) => withArtifact(t, { name: "" }),
    (t) => withArtifact(t, { description: "" }),
    (t) => withArtifact(t, { parts: undefined }),
    (t) => withArtifact(t, { parts: [{ text: "a", mediaType: "text/plain" }] }),
    (t) => withArtifact(t, { artifact_id: "a" }),
    (t) => withMessage(t, { role: "agent" }),
    (t) => withMessage(t, { contextId: "" }),
    (t) => withMessage(t, { parts: [{ data: { a: 1 } }] })
  ]

  it("each near miss of a canonical task decodes exactly as the schema does", () => {
    decodesAsTheSchemaDoes(
      fc.tuple(canonicalTask, fc.constantFrom(...nearMisses)).map(([t, change]) => JSON.parse(JSON.stringify(change(t)))),
      V1.decodeTask,
      (input) => ProtoJson.decoderEither(V1.Task)(input),
      (input, decoded) => decoded === input
    )
  })

  it("takes what relay's own agent answers as it is", () => {
    const answered = {
      id: "t1",
      contextId: "c1",
      status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-01T00:00:00.000Z" },
      history: [{ messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }], taskId: "t1", contextId: "c1" }],
      artifacts: [{ artifactId: "a1", name: "answer", parts: [{ text: "hello" }] }]
    }
    expect(Either.getOrThrow(V1.decodeTask(answered))).toBe(answered)
    const sent = { task: answered }
    expect(Either.getOrThrow(V1.decodeSendMessageResponse(sent))).toBe(sent)
  })
})

describe("v0.3 message/send params fast path", () => {
  const part = mostly(
    fc.record({ kind: fc.constant("text"), text: fc.string() }),
    fc.oneof(
      fc.record({ text: fc.string() }),
      fc.record({ kind: fc.constant("text"), text: fc.string(), metadata: fc.constant({ a: 1 }) }),
      fc.record({ kind: fc.constant("data"), data: fc.jsonValue() }),
      fc.record({ kind: fc.constant("file"), file: fc.record({ uri: fc.webUrl() }) }),
      fc.constant({ kind: "text" })
    )
  )
  const message = fc.record({
    kind: mostly(fc.constant("message"), fc.constantFrom(undefined, "task")),
    role: mostly(fc.constantFrom("user", "agent"), fc.constantFrom("ROLE_USER", "USER", "other", 1)),
    ...messageFields(part)
  })
  const configuration = fc.record({
    blocking: mostly(fc.option(fc.boolean(), { nil: undefined }), fc.constant("true")),
    historyLength,
    acceptedOutputModes: mostly(fc.option(fc.constant(["text/plain", "application/json"]), { nil: undefined }), fc.constant([1]))
  })
  const request = fc.record({
    message: message.map(withoutUndefined),
    configuration: absentOr(mostly(configuration.map(withoutUndefined), fc.constant(null))),
    metadata: absentOr(fc.constant({ a: 1 }))
  }).map(withoutUndefined)
  const bySchema = ProtoJson.decoderEither(Translate.SendRequestAsV03)
  it("decodes exactly as the schemas do", () => {
    decodesAsTheSchemaDoes(request, Translate.decodeSendRequestV03, bySchema, Translate.isCanonicalV03SendParams)
  })

  it("translates a v0.3 SDK's request without the schemas, to the v1 request", () => {
    const input = {
      message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "hi" }], contextId: "c1" },
      configuration: { blocking: false, historyLength: 2, acceptedOutputModes: ["text/plain"] }
    }
    expect(Either.getOrThrow(Translate.decodeSendRequestV03(input))).toEqual({
      message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hi" }], contextId: "c1" },
      configuration: { acceptedOutputModes: ["text/plain"], historyLength: 2, returnImmediately: true }
    })
    expect(
      Either.isLeft(
        Translate.decodeSendRequestV03({ message: { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text" }] } })
      )
    ).toBe(true)
  })

  it.effect("needs each part's kind in a request (v0.3 §6.5), while answers the client reads may leave it out", () =>
    Effect.gen(function*() {
      const kindless = { messageId: "m1", role: "user", parts: [{ text: "hi" }] }
      expect(Either.isLeft(Translate.decodeSendRequestV03({ message: { kind: "message", ...kindless } }))).toBe(true)
      expect(Either.isLeft(ProtoJson.decoderEither(Translate.SendRequestAsV03Rest)({ message: { ...kindless, role: "ROLE_USER" } }))).toBe(
        true
      )
      const task = {
        kind: "task",
        id: "t",
        contextId: "c",
        status: { state: "completed" },
        history: [kindless],
        artifacts: [{ artifactId: "a", parts: [{ text: "ok" }] }]
      }
      expect(yield* decode(Translate.SendResponseAsV03)(task)).toMatchObject({
        task: { history: [{ parts: [{ text: "hi" }] }], artifacts: [{ parts: [{ text: "ok" }] }] }
      })
      expect(yield* decode(Translate.StreamResponseAsV03)({ kind: "message", ...kindless, role: "agent" })).toEqual({
        message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "hi" }] }
      })
    }))
})

describe("v1 strict encode", () => {
  it.effect("writes canonical ProtoJSON whatever spelling was read", () =>
    Effect.gen(function*() {
      const legacySpelled = yield* decode(V1.Task)({
        kind: "task",
        id: "t",
        contextId: "c",
        status: {
          state: "input-required",
          message: { kind: "message", messageId: "m", role: "agent", parts: [{ kind: "text", text: "Which city?" }] }
        },
        artifacts: null,
        history: [{ messageId: "u", role: "user", parts: [{ text: "Weather?", mediaType: null }], taskId: "" }]
      })
      const json = yield* encode(V1.Task)(legacySpelled)
      expect(json).toEqual({
        id: "t",
        contextId: "c",
        status: {
          state: "TASK_STATE_INPUT_REQUIRED",
          message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "Which city?" }] }
        },
        history: [{ messageId: "u", role: "ROLE_USER", parts: [{ text: "Weather?" }] }]
      })
      expect(wire(json)).not.toContain("null")
      expect(wire(json)).not.toContain("kind")
      expect(yield* encode(V1.Task)(v1Task)).toEqual(v1TaskJson)
    }))

  it.effect("writes stream responses that the SDK's ProtoJSON reader reproduces exactly", () =>
    Effect.gen(function*() {
      const responses: ReadonlyArray<V1.StreamResponse> = [
        { task: v1Task },
        { message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }, { data: { n: 1 } }], contextId: "c" } },
        { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING", timestamp: "2026-11-21T10:00:00.000Z" } } },
        {
          artifactUpdate: {
            taskId: "t",
            contextId: "c",
            artifact: { artifactId: "a", parts: [{ url: "https://x/y", mediaType: "image/png" }] },
            append: true,
            lastChunk: true
          }
        }
      ]
      for (const response of responses) {
        const json = yield* encode(V1.StreamResponse)(response)
        expect(SdkStreamResponse.toJSON(SdkStreamResponse.fromJSON(json))).toEqual(json)
        expect(yield* decode(V1.StreamResponse)(json)).toEqual(response)
      }
    }))

  it.effect("reads what the SDK writes and writes it back unchanged", () =>
    Effect.gen(function*() {
      const sdkJson = SdkTask.toJSON(
        SdkTask.fromJSON({
          id: "t",
          contextId: "c",
          status: { state: "TASK_STATE_CANCELED" },
          artifacts: [{ artifactId: "a", parts: [{ raw: "aGk=", filename: "hi.txt" }] }]
        })
      )
      const task = yield* decode(V1.Task)(sdkJson)
      expect(task.status.state).toBe("TASK_STATE_CANCELED")
      expect(yield* encode(V1.Task)(task)).toEqual(sdkJson)
    }))

  it.effect("writes push configs flat and without empty fields", () =>
    Effect.gen(function*() {
      const config = yield* decode(V1.TaskPushNotificationConfig)({
        id: "",
        taskId: "t",
        url: "http://127.0.0.1:9/hook",
        token: null,
        authentication: { scheme: "Bearer", credentials: "secret" },
        tenant: ""
      })
      expect(yield* encode(V1.TaskPushNotificationConfig)(config)).toEqual({
        taskId: "t",
        url: "http://127.0.0.1:9/hook",
        authentication: { scheme: "Bearer", credentials: "secret" }
      })
    }))

  it.effect("writes list responses with their required fields present", () =>
    Effect.gen(function*() {
      const json = yield* encode(V1.ListTasksResponse)({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 })
      expect(json).toEqual({ tasks: [], nextPageToken: "", pageSize: 50, totalSize: 0 })
    }))
})

describe("task state helpers", () => {
  it("classifies terminal and interrupted states", () => {
    expect(V1.TASK_STATES.filter(V1.isTerminalState)).toEqual([
      "TASK_STATE_COMPLETED",
      "TASK_STATE_FAILED",
      "TASK_STATE_CANCELED",
      "TASK_STATE_REJECTED"
    ])
    expect(new Set(V1.TERMINAL_STATES)).toEqual(new Set(V1.TASK_STATES.filter(V1.isTerminalState)))
    expect(V1.TASK_STATES.filter(V1.isInterruptedState)).toEqual(["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"])
    expect(V1.isTerminalState("TASK_STATE_WORKING")).toBe(false)
    expect(V1.isInterruptedState("TASK_STATE_COMPLETED")).toBe(false)
  })

  it("names states the v0.3 way and reads the names back", () => {
    expect(V1.TASK_STATES.map(V1.stateName)).toEqual([
      "unknown",
      "submitted",
      "working",
      "completed",
      "failed",
      "canceled",
      "input-required",
      "rejected",
      "auth-required"
    ])
    for (const state of V1.TASK_STATES) expect(V1.parseTaskState(V1.stateName(state))).toBe(state)
  })
})

// ---------------------------------------------------------------------------
// v0.3 ↔ v1.0 translation
// ---------------------------------------------------------------------------

describe("v0.3 JSON-RPC translation", () => {
  it.effect("turns a v0.3 task into the v1 model and back into the same JSON", () =>
    Effect.gen(function*() {
      const task = yield* decode(Translate.TaskAsV03)(v03Task)
      expect(task).toEqual(v1Task)
      expect(yield* encode(Translate.TaskAsV03)(task)).toEqual(v03Task)
    }))

  it.effect("round-trips messages with every part kind, v1 → v0.3 → v1", () =>
    Effect.gen(function*() {
      const message: V1.Message = {
        messageId: "m",
        role: "ROLE_USER",
        contextId: "c",
        taskId: "t",
        parts: [
          { text: "see attached", metadata: { lang: "en" } },
          { raw: "aGVsbG8=", mediaType: "text/plain", filename: "a.txt" },
          { url: "https://x/b.pdf", mediaType: "application/pdf" },
          { data: { answer: 42 } }
        ],
        extensions: ["https://example.com/ext"],
        referenceTaskIds: ["t0"],
        metadata: { k: "v" }
      }
      const v03 = Translate.messageToV03(message)
      expect(v03.role).toBe("user")
      expect(v03.parts).toEqual([
        { kind: "text", text: "see attached", metadata: { lang: "en" } },
        { kind: "file", file: { bytes: "aGVsbG8=", mimeType: "text/plain", name: "a.txt" } },
        { kind: "file", file: { uri: "https://x/b.pdf", mimeType: "application/pdf" } },
        { kind: "data", data: { answer: 42 } }
      ])
      expect(Translate.messageFromV03(v03)).toEqual(message)
      const json = yield* encode(Translate.MessageAsV03)(message)
      expect(json).toMatchObject({ kind: "message", role: "user" })
      expect(yield* decode(Translate.MessageAsV03)(json)).toEqual(message)
    }))

  it("wraps non-object data for v0.3 and unwraps it again", () => {
    for (const data of [[1, 2], "text", 7, true, null]) {
      const part = Translate.partToV03({ data, metadata: { origin: "tool" } })
      expect(part).toEqual({
        kind: "data",
        data: { value: data },
        metadata: { origin: "tool", [Translate.DATA_PART_COMPAT_FLAG]: true }
      })
      expect(Translate.partFromV03(part)).toEqual({ data, metadata: { origin: "tool" } })
    }
    expect(Translate.partFromV03({ kind: "data", data: { value: 1 }, metadata: { data_part_compat: true } })).toEqual({ data: 1 })
    // Without the flag, an object that happens to have `value` is left alone.
    expect(Translate.partFromV03({ kind: "data", data: { value: 1 } })).toEqual({ data: { value: 1 } })
  })

  it("drops what v0.3 text parts cannot carry", () => {
    expect(Translate.partToV03({ text: "hi", mediaType: "text/markdown" })).toEqual({ kind: "text", text: "hi" })
  })

  it.effect("reads v0.3 stream results of each kind, with or without `kind`", () =>
    Effect.gen(function*() {
      const statusUpdate: V03SdkStatusUpdate = {
        kind: "status-update",
        taskId: "task-1",
        contextId: "ctx-1",
        status: { state: "working", timestamp: "2026-11-21T10:00:00.000Z" },
        final: false
      }
      const artifactUpdate: V03SdkArtifactUpdate = {
        kind: "artifact-update",
        taskId: "task-1",
        contextId: "ctx-1",
        artifact: { artifactId: "art-1", parts: [{ kind: "text", text: "Par" }] },
        append: false,
        lastChunk: false
      }
      const event = decode(Translate.StreamResponseAsV03)
      expect(yield* event(v03Task)).toEqual({ task: v1Task })
      expect(yield* event(statusUpdate)).toEqual({
        statusUpdate: {
          taskId: "task-1",
          contextId: "ctx-1",
          status: { state: "TASK_STATE_WORKING", timestamp: "2026-11-21T10:00:00.000Z" }
        }
      })
      expect(yield* event(artifactUpdate)).toEqual({
        artifactUpdate: {
          taskId: "task-1",
          contextId: "ctx-1",
          artifact: { artifactId: "art-1", parts: [{ text: "Par" }] },
          append: false,
          lastChunk: false
        }
      })
      expect(yield* event({ kind: "message", messageId: "m", role: "agent", parts: [{ kind: "text", text: "hi" }] })).toEqual({
        message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }] }
      })
      // A peer that leaves `kind` out: the shape decides.
      const { kind: _kind, ...withoutKind } = statusUpdate
      expect(yield* event(withoutKind)).toEqual(yield* event(statusUpdate))
      const { kind: _taskKind, ...taskWithoutKind } = v03Task
      expect(yield* event(taskWithoutKind)).toEqual({ task: v1Task })
    }))

  it.effect("writes v0.3 stream results with `final` set at terminal and interrupted states", () =>
    Effect.gen(function*() {
      const status = (state: V1.TaskState): V1.StreamResponse => ({ statusUpdate: { taskId: "t", contextId: "c", status: { state } } })
      const finalOf = (state: V1.TaskState, final?: boolean) => {
        const event = Translate.streamResponseToV03(status(state), final)
        return event.kind === "status-update" ? event.final : undefined
      }
      expect(finalOf("TASK_STATE_WORKING")).toBe(false)
      expect(finalOf("TASK_STATE_SUBMITTED")).toBe(false)
      expect(finalOf("TASK_STATE_COMPLETED")).toBe(true)
      expect(finalOf("TASK_STATE_FAILED")).toBe(true)
      expect(finalOf("TASK_STATE_INPUT_REQUIRED")).toBe(true)
      expect(finalOf("TASK_STATE_AUTH_REQUIRED")).toBe(true)
      expect(finalOf("TASK_STATE_COMPLETED", false)).toBe(false)
      expect(yield* encode(Translate.StreamResponseAsV03)(status("TASK_STATE_CANCELED"))).toEqual({
        kind: "status-update",
        taskId: "t",
        contextId: "c",
        status: { state: "canceled" },
        final: true
      })
      const artifact = yield* encode(Translate.StreamResponseAsV03)({
        artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ text: "x" }] }, append: true }
      })
      expect(artifact).toEqual({
        kind: "artifact-update",
        taskId: "t",
        contextId: "c",
        artifact: { artifactId: "a", parts: [{ kind: "text", text: "x" }] },
        append: true
      })
    }))

  it.effect("turns send results into a SendMessageResponse and back", () =>
    Effect.gen(function*() {
      expect(yield* decode(Translate.SendResponseAsV03)(v03Task)).toEqual({ task: v1Task })
      const reply: V03SdkMessage = {
        kind: "message",
        messageId: "r",
        role: "agent",
        parts: [{ kind: "text", text: "pong" }],
        contextId: "c"
      }
      const response = yield* decode(Translate.SendResponseAsV03)(reply)
      expect(response).toEqual({ message: { messageId: "r", role: "ROLE_AGENT", parts: [{ text: "pong" }], contextId: "c" } })
      expect(yield* encode(Translate.SendResponseAsV03)(response)).toEqual(reply)
    }))

  it.effect("translates push configs both ways", () =>
    Effect.gen(function*() {
      const v03Config: V03SdkPushConfig = {
        taskId: "t",
        pushNotificationConfig: {
          id: "cfg-1",
          url: "http://127.0.0.1:9/hook",
          token: "tok",
          authentication: { schemes: ["Bearer"], credentials: "secret" }
        }
      }
      const v1Config: V1.TaskPushNotificationConfig = {
        id: "cfg-1",
        taskId: "t",
        url: "http://127.0.0.1:9/hook",
        token: "tok",
        authentication: { scheme: "Bearer", credentials: "secret" }
      }
      expect(yield* decode(Translate.PushConfigAsV03)(v03Config)).toEqual(v1Config)
      expect(yield* encode(Translate.PushConfigAsV03)(v1Config)).toEqual(v03Config)
      expect(
        Translate.pushConfigFromV03({
          taskId: "t",
          pushNotificationConfig: { url: "u", authentication: { schemes: [], credentials: "c" } }
        })
      ).toEqual({
        taskId: "t",
        url: "u",
        authentication: { scheme: "Bearer", credentials: "c" }
      })
      expect(Translate.pushConfigFromV03({ taskId: "t", pushNotificationConfig: { url: "u", authentication: { schemes: [] } } })).toEqual({
        taskId: "t",
        url: "u"
      })
      // A config registered inline has no task yet.
      expect(Translate.pushConfigToV03({ url: "u" })).toEqual({ taskId: "", pushNotificationConfig: { url: "u" } })
    }))

  it.effect("translates send params: returnImmediately is the inverse of blocking", () =>
    Effect.gen(function*() {
      const request: V1.SendMessageRequest = {
        tenant: "acme",
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }], contextId: "c" },
        configuration: {
          acceptedOutputModes: ["text/plain"],
          historyLength: 5,
          returnImmediately: true,
          taskPushNotificationConfig: {
            url: "http://127.0.0.1:9/hook",
            token: "tok",
            authentication: { scheme: "Bearer", credentials: "s" }
          }
        },
        metadata: { trace: "1" }
      }
      const params = Translate.sendParamsToV03(request)
      const expected: V03SdkMessageSendParams = {
        message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "hi" }], contextId: "c" },
        configuration: {
          acceptedOutputModes: ["text/plain"],
          historyLength: 5,
          pushNotificationConfig: {
            url: "http://127.0.0.1:9/hook",
            token: "tok",
            authentication: { schemes: ["Bearer"], credentials: "s" }
          },
          blocking: false
        },
        metadata: { trace: "1" }
      }
      expect(yield* encode(V03.MessageSendParams)(params)).toEqual(expected)
      // The tenant has no v0.3 field; everything else comes back.
      const { tenant: _tenant, ...withoutTenant } = request
      expect(yield* decode(Translate.SendRequestAsV03)(expected)).toEqual(withoutTenant)

      const plain: V1.SendMessageRequest = { message: request.message }
      expect(Translate.sendParamsToV03(plain).configuration).toEqual({ blocking: true })
      expect(Translate.sendParamsFromV03(Translate.sendParamsToV03(plain))).toEqual({
        message: request.message,
        configuration: { returnImmediately: false }
      })
      expect(
        Translate.sendParamsFromV03({
          message: Translate.messageToV03(request.message),
          configuration: { acceptedOutputModes: ["text/plain"] }
        })
      ).toEqual({ message: request.message, configuration: { acceptedOutputModes: ["text/plain"] } })
    }))
})

describe("push payloads", () => {
  it.effect("reads webhook bodies of both generations and tells them apart", () =>
    Effect.gen(function*() {
      const v1Body = yield* encode(V1.StreamResponse)({ task: v1Task })
      expect(yield* Translate.pushPayloadFromWire(v1Body)).toEqual({ event: { task: v1Task }, generation: "1.0" })
      expect(yield* Translate.pushPayloadFromWire(v03Task)).toEqual({ event: { task: v1Task }, generation: "0.3" })
      const statusBody = { kind: "status-update", taskId: "t", contextId: "c", status: { state: "failed" }, final: true }
      expect(yield* Translate.pushPayloadFromWire(statusBody)).toEqual({
        event: { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_FAILED" } } },
        generation: "0.3"
      })
      const error = yield* Effect.flip(Translate.pushPayloadFromWire({ hello: "world" }))
      expect(String(error)).toContain("StreamResponse")
    }))
})

describe("v0.3 REST translation", () => {
  it("writes messages in the v0.3 proto JSON shape", () => {
    const message: V1.Message = {
      messageId: "m",
      role: "ROLE_USER",
      contextId: "c",
      parts: [
        { text: "hello" },
        { raw: "aGk=", mediaType: "text/plain", filename: "hi.txt" },
        { url: "https://x/y.png", mediaType: "image/png" },
        { data: { a: 1 } },
        { data: [1] }
      ],
      referenceTaskIds: ["t0"]
    }
    expect(Translate.messageToV03Rest(message)).toEqual({
      messageId: "m",
      contextId: "c",
      role: "ROLE_USER",
      content: [
        { text: "hello" },
        // Only what the v0.3 proto has (strict ProtoJSON readers refuse other fields): no file
        // name, no part metadata, so data that is not an object stays wrapped.
        { file: { fileWithBytes: "aGk=", mimeType: "text/plain" } },
        { file: { fileWithUri: "https://x/y.png", mimeType: "image/png" } },
        { data: { data: { a: 1 } } },
        { data: { data: { value: [1] } } }
      ]
    })
    const { referenceTaskIds: _refs, ...withoutRefs } = message
    expect(Translate.messageFromV03Rest(Translate.messageToV03Rest(message))).toEqual({
      ...withoutRefs,
      parts: [{ text: "hello" }, { raw: "aGk=", mediaType: "text/plain" }, { url: "https://x/y.png", mediaType: "image/png" }, {
        data: { a: 1 }
      }, {
        data: { value: [1] }
      }]
    })
  })

  it.effect("reads REST tasks with the CANCELLED spelling and the `update` status field", () =>
    Effect.gen(function*() {
      const task = yield* decode(Translate.TaskAsV03Rest)({
        id: "t",
        contextId: "c",
        status: {
          state: "TASK_STATE_CANCELLED",
          update: { messageId: "s", role: "ROLE_AGENT", content: [{ text: "stopped" }] },
          timestamp: "2026-11-21T10:00:00Z"
        },
        artifacts: [{ artifactId: "a", parts: [{ file: { fileWithUri: "https://x/z", mimeType: "text/csv" } }] }],
        history: [{ messageId: "u", role: "ROLE_USER", content: [{ text: "go" }] }]
      })
      expect(task).toEqual({
        id: "t",
        contextId: "c",
        status: {
          state: "TASK_STATE_CANCELED",
          message: { messageId: "s", role: "ROLE_AGENT", parts: [{ text: "stopped" }] },
          timestamp: "2026-11-21T10:00:00Z"
        },
        artifacts: [{ artifactId: "a", parts: [{ url: "https://x/z", mediaType: "text/csv" }] }],
        history: [{ messageId: "u", role: "ROLE_USER", parts: [{ text: "go" }] }]
      })
      const json = yield* encode(Translate.TaskAsV03Rest)(task)
      expect(json).toMatchObject({ status: { state: "TASK_STATE_CANCELLED", message: { content: [{ text: "stopped" }] } } })
      expect(yield* decode(Translate.TaskAsV03Rest)(json)).toEqual(task)
    }))

  it.effect("reads REST stream events and send responses in all their wrappings", () =>
    Effect.gen(function*() {
      const event = decode(Translate.StreamResponseAsV03Rest)
      const reply = { messageId: "r", role: "ROLE_AGENT", content: [{ text: "pong" }] }
      const expectedReply = { message: { messageId: "r", role: "ROLE_AGENT", parts: [{ text: "pong" }] } }
      expect(yield* event({ message: reply })).toEqual(expectedReply)
      expect(yield* event({ msg: reply })).toEqual(expectedReply)
      expect(yield* decode(Translate.SendResponseAsV03Rest)({ msg: reply })).toEqual(expectedReply)
      expect(yield* decode(Translate.SendResponseAsV03Rest)({ task: { id: "t", status: { state: "TASK_STATE_SUBMITTED" } } })).toEqual({
        task: { id: "t", status: { state: "TASK_STATE_SUBMITTED" } }
      })
      expect(yield* event({ statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" }, final: true } }))
        .toEqual({
          statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } }
        })
      expect(
        yield* event({
          artifactUpdate: {
            taskId: "t",
            contextId: "c",
            artifact: { artifactId: "a", parts: [{ data: { data: { k: 1 } } }] },
            lastChunk: true
          }
        })
      ).toEqual({
        artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ data: { k: 1 } }] }, lastChunk: true }
      })
      expect(
        yield* encode(Translate.StreamResponseAsV03Rest)({
          statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_CANCELED" } }
        })
      ).toEqual({ statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_CANCELLED" }, final: true } })
    }))

  it.effect("writes the REST send body with `pushNotification` and an explicit `blocking`", () =>
    Effect.gen(function*() {
      const body = Translate.sendRequestToV03Rest({
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: "http://127.0.0.1:9/h", token: "t" } }
      })
      expect(yield* encode(V03.RestSendMessageRequest)(body)).toEqual({
        message: { messageId: "m", role: "ROLE_USER", content: [{ text: "hi" }] },
        configuration: { pushNotification: { url: "http://127.0.0.1:9/h", token: "t" }, blocking: false }
      })
      expect(Translate.sendRequestFromV03Rest(body)).toEqual({
        message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "hi" }] },
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: "http://127.0.0.1:9/h", token: "t" } }
      })
    }))

  it("writes a push config create body both @a2a-js generations accept, and reads configs back", () => {
    const config: V1.TaskPushNotificationConfig = {
      id: "cfg",
      taskId: "task-9",
      url: "http://127.0.0.1:9/h",
      authentication: { scheme: "Bearer", credentials: "s" }
    }
    const inner = { id: "cfg", url: "http://127.0.0.1:9/h", authentication: { schemes: ["Bearer"], credentials: "s" } }
    expect(Translate.pushConfigToV03Rest(config)).toEqual({
      parent: "tasks/task-9",
      configId: "cfg",
      config: { name: "tasks/task-9/pushNotificationConfigs/cfg", pushNotificationConfig: inner },
      name: "tasks/task-9/pushNotificationConfigs/cfg",
      pushNotificationConfig: inner
    })
    expect(Translate.pushConfigFromV03Rest({ name: "tasks/task-9/pushNotificationConfigs/cfg", pushNotificationConfig: inner })).toEqual(
      config
    )
    // The id may live only in the resource name.
    expect(
      Translate.pushConfigFromV03Rest({ name: "tasks/task-9/pushNotificationConfigs/cfg-2", pushNotificationConfig: { url: "u" } })
    ).toEqual({ id: "cfg-2", taskId: "task-9", url: "u" })
  })
})

// ---------------------------------------------------------------------------
// Agent cards
// ---------------------------------------------------------------------------

describe("agent cards", () => {
  it.effect("reads a v1.0 card as @a2a-js serves it, in both its serialisations, to the same card", () =>
    Effect.gen(function*() {
      // The well-known endpoint sends JSON.stringify of the ts-proto object ($case oneofs, "" and []);
      // GetExtendedAgentCard sends AgentCard.toJSON (ProtoJSON).
      const fromStringify = yield* Translate.cardFromWire(JSON.parse(JSON.stringify(sdkCard)))
      const fromProtoJson = yield* Translate.cardFromWire(SdkAgentCard.toJSON(sdkCard))
      expect(fromStringify.generation).toBe("1.0")
      expect(fromStringify.declaredProtocolVersion).toBeUndefined()
      expect(fromStringify.card).toEqual(fromProtoJson.card)
      expect(fromStringify.card.supportedInterfaces).toEqual([
        { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: "http://127.0.0.1:4000/a2a/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }
      ])
      expect(fromStringify.card.securitySchemes).toEqual({
        bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
        oauth: {
          oauth2SecurityScheme: {
            description: "Company SSO",
            flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { agent: "Use the agent" } } }
          }
        }
      })
      expect(fromStringify.card.skills).toEqual([{ id: "echo", name: "Echo", description: "Repeats the input.", tags: ["echo"] }])
      // The SDK reads our strict encoding back into the very card it started from. (It writes an
      // empty scope list as `{}`, we write `{"list":[]}`; both are ProtoJSON.)
      const ours = yield* encode(V1.AgentCard)(fromStringify.card)
      expect(ours).toMatchObject({ securityRequirements: [{ schemes: { bearer: { list: [] } } }] })
      expect(SdkAgentCard.toJSON(SdkAgentCard.fromJSON(ours))).toEqual(SdkAgentCard.toJSON(sdkCard))
    }))

  it.effect("reads a v0.3 card, building interfaces from url, preferredTransport and additionalInterfaces", () =>
    Effect.gen(function*() {
      const { card, declaredProtocolVersion, generation } = yield* Translate.cardFromWire(v03Card)
      expect(generation).toBe("0.3")
      expect(declaredProtocolVersion).toBe("0.3.0")
      expect(card.supportedInterfaces).toEqual([
        { url: "https://georoute.example.com/a2a/v1", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: "https://georoute.example.com/a2a/grpc", protocolBinding: "GRPC", protocolVersion: "0.3" },
        { url: "https://georoute.example.com/a2a/json", protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }
      ])
      expect(card.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: true })
      expect(card.securityRequirements).toEqual([{ schemes: { google: { list: ["openid", "profile", "email"] } } }])
      expect(card.skills[0]?.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }])
      expect(card.securitySchemes).toEqual({
        google: { openIdConnectSecurityScheme: { openIdConnectUrl: "https://accounts.google.com/.well-known/openid-configuration" } },
        bearer: { httpAuthSecurityScheme: { scheme: "bearer", bearerFormat: "JWT" } },
        key: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } },
        oauth: {
          oauth2SecurityScheme: {
            flows: {
              authorizationCode: {
                authorizationUrl: "https://auth.example.com/authorize",
                tokenUrl: "https://auth.example.com/token",
                scopes: { read: "Read routes" }
              }
            }
          }
        },
        mtls: { mtlsSecurityScheme: { description: "client certificate" } }
      })
      expect(card.provider).toEqual({ organization: "Example Geo Services Inc.", url: "https://www.examplegeoservices.com" })
      expect(card.signatures).toEqual([{ protected: "eyJhbGciOiJFUzI1NiJ9", signature: "QFdkNLNszlGj3z3u0YQGt" }])
      // Strict encoding of the result is v1.0 only.
      const json = yield* encode(V1.AgentCard)(card)
      expect(Object.keys(json)).not.toContain("url")
      expect(wire(json)).not.toContain("\"type\"")
      expect(wire(json)).not.toContain("supportsAuthenticatedExtendedCard")
    }))

  it.effect("defaults a v0.3 card's transport to JSONRPC and keeps any declared version string", () =>
    Effect.gen(function*() {
      const { card, declaredProtocolVersion, generation } = yield* Translate.cardFromWire({
        protocolVersion: "0.2.9",
        name: "Old",
        description: "d",
        url: "https://old.example.com/rpc",
        version: "1",
        capabilities: {},
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: []
      })
      expect(generation).toBe("0.3")
      expect(declaredProtocolVersion).toBe("0.2.9")
      expect(card.supportedInterfaces).toEqual([{ url: "https://old.example.com/rpc", protocolBinding: "JSONRPC", protocolVersion: "0.3" }])
    }))

  it.effect("reads a hybrid card as @a2a-js emits it in compat mode, preferring supportedInterfaces", () =>
    Effect.gen(function*() {
      const hybrid = {
        ...v03Card,
        url: "http://127.0.0.1:4000/a2a/jsonrpc",
        protocolVersion: "0.3",
        additionalInterfaces: [{ url: "http://127.0.0.1:4000/a2a/rest", transport: "HTTP+JSON" }],
        supportedInterfaces: [
          { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
          { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" }
        ]
      }
      const { card, declaredProtocolVersion, generation } = yield* Translate.cardFromWire(hybrid)
      expect(generation).toBe("hybrid")
      expect(declaredProtocolVersion).toBe("0.3")
      expect(card.supportedInterfaces.map((i) => i.protocolVersion)).toEqual(["1.0", "0.3"])
      expect(card.securityRequirements).toEqual([{ schemes: { google: { list: ["openid", "profile", "email"] } } }])
      expect(card.capabilities.extendedAgentCard).toBe(true)
    }))

  it.effect("drops a security scheme it cannot read instead of refusing the card", () =>
    Effect.gen(function*() {
      const { card } = yield* Translate.cardFromWire({
        // ts-proto types toJSON as unknown; it is a plain object.
        ...(SdkAgentCard.toJSON(sdkCard) as Record<string, unknown>),
        securitySchemes: { weird: { type: "carrier-pigeon" }, key: { type: "apiKey", in: "query", name: "k" } }
      })
      expect(card.securitySchemes).toEqual({ key: { apiKeySecurityScheme: { location: "query", name: "k" } } })
    }))

  it.effect("fails on JSON that is no card at all", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Translate.cardFromWire({ description: "no name" }))
      expect(error._tag).toBe("ParseError")
      expect(yield* Effect.flip(Translate.cardFromWire("<html>"))).toHaveProperty("_tag", "ParseError")
    }))

  it.effect("writes a valid v0.3 card for a v1 card", () =>
    Effect.gen(function*() {
      const { card } = yield* Translate.cardFromWire(v03Card)
      const legacy = Translate.cardToV03(card)
      expect(legacy).toMatchObject({
        protocolVersion: "0.3.0",
        url: "https://georoute.example.com/a2a/v1",
        preferredTransport: "JSONRPC",
        additionalInterfaces: [
          { url: "https://georoute.example.com/a2a/grpc", transport: "GRPC" },
          { url: "https://georoute.example.com/a2a/json", transport: "HTTP+JSON" }
        ],
        supportsAuthenticatedExtendedCard: true,
        security: [{ google: ["openid", "profile", "email"] }]
      })
      expect(legacy.securitySchemes?.["bearer"]).toEqual({ type: "http", scheme: "bearer", bearerFormat: "JWT" })
      const json = yield* encode(V03.AgentCard)(legacy)
      expect(validateV03Card(json)).toBe(true)

      // A v1-only card given the URL of its v0.3 JSON-RPC endpoint.
      const v1Only = (yield* Translate.cardFromWire(SdkAgentCard.toJSON(sdkCard))).card
      const served = Translate.cardToV03(v1Only, "http://127.0.0.1:4000/a2a/v03")
      expect(served.url).toBe("http://127.0.0.1:4000/a2a/v03")
      expect(served.preferredTransport).toBe("JSONRPC")
      expect(served.additionalInterfaces).toBeUndefined()
      expect(served.securitySchemes?.["oauth"]).toEqual({
        type: "oauth2",
        description: "Company SSO",
        flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { agent: "Use the agent" } } }
      })
      expect(validateV03Card(yield* encode(V03.AgentCard)(served))).toBe(true)
    }))

  it.effect("writes a hybrid card that v1 readers, v0.3 readers and the SDK all understand", () =>
    Effect.gen(function*() {
      const card = (yield* Translate.cardFromWire(SdkAgentCard.toJSON(sdkCard))).card
      const hybrid = yield* Translate.hybridCard(card, "http://127.0.0.1:4000/a2a/v03")
      expect(hybrid).toMatchObject({
        protocolVersion: "0.3.0",
        url: "http://127.0.0.1:4000/a2a/v03",
        preferredTransport: "JSONRPC",
        supportedInterfaces: card.supportedInterfaces,
        supportsAuthenticatedExtendedCard: false,
        security: [{ bearer: [] }],
        securityRequirements: [{ schemes: { bearer: { list: [] } } }]
      })
      expect(hybrid["securitySchemes"]).toEqual({
        bearer: { type: "http", scheme: "Bearer", bearerFormat: "JWT", httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
        oauth: {
          type: "oauth2",
          description: "Company SSO",
          flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { agent: "Use the agent" } } },
          oauth2SecurityScheme: {
            description: "Company SSO",
            flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { agent: "Use the agent" } } }
          }
        }
      })
      expect(validateV03Card(hybrid)).toBe(true)
      const reread = yield* Translate.cardFromWire(hybrid)
      expect(reread.generation).toBe("hybrid")
      expect(reread.card).toEqual(card)
      expect(SdkAgentCard.toJSON(SdkAgentCard.fromJSON(hybrid))).toEqual(SdkAgentCard.toJSON(sdkCard))
    }))
})

// ---------------------------------------------------------------------------
// Result text and artifact chunks
// ---------------------------------------------------------------------------

describe("result text", () => {
  const agent = (text: string): V1.Message => ({ messageId: text, role: "ROLE_AGENT", parts: [{ text }] })
  const user = (text: string): V1.Message => ({ messageId: text, role: "ROLE_USER", parts: [{ text }] })
  const base: V1.Task = { id: "t", status: { state: "TASK_STATE_COMPLETED" } }

  it("reads a message's parts", () => {
    expect(Text.resultText({ messageId: "m", role: "ROLE_AGENT", parts: [{ text: "one" }, { text: "two" }] })).toBe("one\ntwo")
  })

  it("prefers artifacts, then the status message, then the agent messages of the history", () => {
    const full: V1.Task = {
      ...base,
      status: { state: "TASK_STATE_COMPLETED", message: agent("from status") },
      artifacts: [
        { artifactId: "a", parts: [{ text: "first artifact" }] },
        { artifactId: "b", parts: [{ text: "second artifact" }] }
      ],
      history: [user("question"), agent("from history")]
    }
    expect(Text.resultText(full)).toBe("first artifact\nsecond artifact")
    expect(Text.resultText({ ...full, artifacts: [] })).toBe("from status")
    expect(Text.resultText({ ...full, artifacts: [{ artifactId: "a", parts: [] }], status: { state: "TASK_STATE_COMPLETED" } })).toBe(
      "from history"
    )
    expect(Text.resultText({ ...base, history: [user("q1"), agent("a1"), user("q2"), agent("a2")] })).toBe("a1\na2")
    expect(Text.resultText({ ...base, history: [user("only the question")] })).toBe("")
    expect(Text.resultText(base)).toBe("")
  })

  it("shows data parts whole (indented JSON) and summarises file parts, dropping nothing", () => {
    const longData = { items: Array.from({ length: 50 }, (_, i) => i) }
    const message: V1.Message = {
      messageId: "m",
      role: "ROLE_AGENT",
      parts: [
        { text: "Here you go:" },
        { data: { a: 1 } },
        { data: longData },
        { url: "https://x/report.pdf", filename: "report.pdf", mediaType: "application/pdf" },
        { raw: "aGVsbG8=", filename: "hello.txt", mediaType: "text/plain" },
        { raw: "AAECAw==" },
        { url: "https://x/anon" }
      ]
    }
    // A data part is its whole JSON, indented (it is part of the answer); files are summarised.
    expect(Text.resultText(message)).toBe([
      "Here you go:",
      "{\n  \"a\": 1\n}",
      JSON.stringify(longData, null, 2),
      "[file: report.pdf (application/pdf), https://x/report.pdf]",
      "[file: hello.txt (text/plain), 5 bytes]",
      "[file: unnamed, 4 bytes]",
      "[file: unnamed, https://x/anon]"
    ].join("\n"))
  })
})

describe("artifact chunks", () => {
  const chunk = (artifact: V1.Artifact, flags: { append?: boolean; lastChunk?: boolean } = {}): V1.TaskArtifactUpdateEvent => ({
    taskId: "t",
    contextId: "c",
    artifact,
    ...flags
  })

  it("appends, replaces and adds by artifactId", () => {
    const first = Text.mergeArtifactChunk([], chunk({ artifactId: "a", name: "answer", parts: [{ text: "Hel" }] }))
    expect(first).toEqual([{ artifactId: "a", name: "answer", parts: [{ text: "Hel" }] }])
    const appended = Text.mergeArtifactChunk(first, chunk({ artifactId: "a", parts: [{ text: "lo" }] }, { append: true, lastChunk: true }))
    // Chunks are kept as the agent stores them; rendering joins the streamed text (artifactText).
    expect(appended).toEqual([{ artifactId: "a", name: "answer", parts: [{ text: "Hel" }, { text: "lo" }] }])
    expect(Text.artifactText(appended[0]!.parts)).toBe("Hello")
    const withData = Text.mergeArtifactChunk(appended, chunk({ artifactId: "a", parts: [{ data: 1 }, { text: "!" }] }, { append: true }))
    expect(withData[0]?.parts).toEqual([{ text: "Hel" }, { text: "lo" }, { data: 1 }, { text: "!" }])
    expect(Text.artifactText(withData[0]!.parts)).toBe("Hello\n1\n!")
    const other = Text.mergeArtifactChunk(appended, chunk({ artifactId: "b", parts: [{ data: { x: 1 } }] }, { append: true }))
    expect(other.map((a) => a.artifactId)).toEqual(["a", "b"])
    const replaced = Text.mergeArtifactChunk(other, chunk({ artifactId: "a", parts: [{ text: "Bye" }] }))
    expect(replaced).toEqual([
      { artifactId: "a", parts: [{ text: "Bye" }] },
      { artifactId: "b", parts: [{ data: { x: 1 } }] }
    ])
    // The input is never mutated.
    expect(first).toEqual([{ artifactId: "a", name: "answer", parts: [{ text: "Hel" }] }])
  })

  it("folds a stream into the final task snapshot", () => {
    const events: ReadonlyArray<V1.StreamResponse> = [
      { task: { id: "t", contextId: "c", status: { state: "TASK_STATE_SUBMITTED" } } },
      { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } },
      { artifactUpdate: chunk({ artifactId: "a", parts: [{ text: "Par" }] }) },
      { artifactUpdate: chunk({ artifactId: "a", parts: [{ text: "is" }] }, { append: true, lastChunk: true }) },
      { statusUpdate: { taskId: "other", contextId: "c", status: { state: "TASK_STATE_FAILED" } } },
      { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } } }
    ]
    const final = events.reduce(Text.applyStreamEvent, undefined)
    expect(final).toEqual({
      id: "t",
      contextId: "c",
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ artifactId: "a", parts: [{ text: "Par" }, { text: "is" }] }]
    })
    expect(Text.resultText(final!)).toBe("Paris")
    expect(Text.applyStreamEvent(undefined, { message: { messageId: "m", role: "ROLE_AGENT", parts: [] } })).toBeUndefined()
    // Some agents open a stream with an update instead of the Task: the snapshot starts from it.
    const fromUpdates = [
      { statusUpdate: { taskId: "u", contextId: "c", status: { state: "TASK_STATE_WORKING" } } },
      { artifactUpdate: chunk({ artifactId: "a", parts: [{ text: "hi" }] }) }
    ] satisfies ReadonlyArray<V1.StreamResponse>
    const started = fromUpdates.reduce<V1.Task | undefined>(Text.applyStreamEvent, undefined)
    expect(started).toEqual({ id: "u", contextId: "c", status: { state: "TASK_STATE_WORKING" } })
    expect(Text.applyStreamEvent(undefined, fromUpdates[1]!)).toMatchObject({ id: "t", artifacts: [{ artifactId: "a" }] })
  })
})

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

describe("error table", () => {
  it("matches the protocol's code, status and reason for every A2A error", () => {
    const rows = Object.values(Errors.A2A_ERRORS).map((e) => [e.jsonRpcCode, e.grpcStatus, e.httpStatus, e.reason])
    expect(rows).toEqual([
      [-32001, "NOT_FOUND", 404, "TASK_NOT_FOUND"],
      [-32002, "FAILED_PRECONDITION", 400, "TASK_NOT_CANCELABLE"],
      [-32003, "FAILED_PRECONDITION", 400, "PUSH_NOTIFICATION_NOT_SUPPORTED"],
      [-32004, "FAILED_PRECONDITION", 400, "UNSUPPORTED_OPERATION"],
      [-32005, "INVALID_ARGUMENT", 400, "CONTENT_TYPE_NOT_SUPPORTED"],
      [-32006, "INTERNAL", 500, "INVALID_AGENT_RESPONSE"],
      [-32007, "FAILED_PRECONDITION", 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED"],
      [-32008, "FAILED_PRECONDITION", 400, "EXTENSION_SUPPORT_REQUIRED"],
      [-32009, "FAILED_PRECONDITION", 400, "VERSION_NOT_SUPPORTED"]
    ])
    expect(Object.values(Errors.JSON_RPC_ERRORS).map((e) => e.jsonRpcCode)).toEqual([-32700, -32600, -32601, -32602, -32603])
  })

  it("looks errors up by code and by reason", () => {
    for (const spec of [...Object.values(Errors.A2A_ERRORS), ...Object.values(Errors.JSON_RPC_ERRORS)]) {
      expect(Errors.a2aErrorByCode(spec.jsonRpcCode)).toBe(spec)
      expect(Errors.a2aErrorByReason(spec.reason)).toBe(spec)
    }
    expect(Errors.a2aErrorByCode(-32042)).toBeUndefined()
    expect(Errors.a2aErrorByReason("NOPE")).toBeUndefined()
    expect(Errors.isA2aErrorCode(-32001)).toBe(true)
    expect(Errors.isA2aErrorCode(-32099)).toBe(true)
    expect(Errors.isA2aErrorCode(-32601)).toBe(false)
  })

  it("builds and reads ErrorInfo details", () => {
    expect(Errors.errorInfoDetail("TASK_NOT_FOUND", { taskId: "t" })).toEqual({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: "t" }
    })
    expect(Errors.errorInfoDetail("VERSION_NOT_SUPPORTED", {})).toEqual({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "VERSION_NOT_SUPPORTED",
      domain: "a2a-protocol.org"
    })
    const details = [
      { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [] },
      Errors.errorInfoDetail("TASK_NOT_CANCELABLE")
    ]
    expect(Errors.errorInfoReason(details)).toBe("TASK_NOT_CANCELABLE")
    expect(Errors.errorInfoReason({ reason: "free-form v0.3 data" })).toBeUndefined()
    expect(Errors.errorInfoReason(undefined)).toBeUndefined()
  })
})
