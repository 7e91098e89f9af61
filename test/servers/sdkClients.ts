// The official A2A clients as the agent server suites drive them: @a2a-js/sdk 1.3.0 (ts-proto
// shapes: oneofs as {$case, value}, numeric enums) and the 0.3.14 client (npm alias a2a-sdk-v03;
// kind shapes, lower-case states), with builders for their messages and readers for their results.
import { Role, type TaskState } from "@a2a-js/sdk"
import type { Message, Part, StreamResponse, Task } from "@a2a-js/sdk"
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client"
import type * as V03 from "a2a-sdk-v03"
import * as V03Client from "a2a-sdk-v03/client"
import { randomUUID } from "node:crypto"

export type Binding = "JSONRPC" | "HTTP+JSON"
export const BINDINGS: ReadonlyArray<Binding> = ["JSONRPC", "HTTP+JSON"]

// ---------------------------------------------------------------------------
// @a2a-js/sdk 1.3.0

export const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  mediaType: "",
  filename: "",
  metadata: undefined
})

export const userMessage = (text: string, ids: { taskId?: string; contextId?: string } = {}): Message => ({
  messageId: randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [textPart(text)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

export const send = (message: Message, configuration: { returnImmediately?: boolean; historyLength?: number } = {}) => ({
  tenant: "",
  message,
  configuration: {
    acceptedOutputModes: [],
    taskPushNotificationConfig: undefined,
    historyLength: configuration.historyLength,
    returnImmediately: configuration.returnImmediately ?? false
  },
  metadata: undefined
})

export const textOf = (parts: ReadonlyArray<Part>) =>
  parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("")

export const asTask = (result: Message | Task): Task => {
  if (!("status" in result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`)
  return result
}

export const answerOf = (task: Task) => task.artifacts.map((artifact) => textOf(artifact.parts)).join("")

export const collect = async <A>(stream: AsyncGenerator<A, void, undefined>, limit = 1000): Promise<A[]> => {
  const events: A[] = []
  for await (const event of stream) {
    events.push(event)
    if (events.length >= limit) break
  }
  return events
}

/** A 1.3.0 client from the agent's card, preferring `binding`; `fetchImpl` replaces fetch. */
export const sdkClient = (baseUrl: string, binding: Binding, fetchImpl?: typeof fetch): Promise<Client> =>
  new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    preferredTransports: [binding],
    ...(fetchImpl === undefined
      ? {}
      : { transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })] })
  })).createFromUrl(baseUrl)

/** The error a call fails with; fails the test when it succeeds. */
export const rejection = async (promise: Promise<unknown>): Promise<Error> => {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  throw new Error("expected the call to fail")
}

export const stateOf = (event: StreamResponse): TaskState | undefined =>
  event.payload?.$case === "task"
    ? event.payload.value.status?.state
    : event.payload?.$case === "statusUpdate"
    ? event.payload.value.status?.state
    : undefined

// ---------------------------------------------------------------------------
// The 0.3.14 client

export const v03Message = (text: string, ids: { taskId?: string; contextId?: string } = {}): V03.Message => ({
  kind: "message",
  messageId: randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
  ...ids
})

/** A 0.3.14 client from the agent's card, preferring `binding`. */
export const v03Client = (baseUrl: string, binding: Binding) =>
  new V03Client.ClientFactory(V03Client.ClientFactoryOptions.createFrom(V03Client.ClientFactoryOptions.default, {
    preferredTransports: [binding]
  })).createFromUrl(baseUrl)

export const v03Text = (parts: ReadonlyArray<V03.Part>) => parts.map((part) => (part.kind === "text" ? part.text : "")).join("")

export const v03Task = (result: V03.Message | V03.Task): V03.Task => {
  if (result.kind !== "task") throw new Error(`expected a task, got ${JSON.stringify(result)}`)
  return result
}
