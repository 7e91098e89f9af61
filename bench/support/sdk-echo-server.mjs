// The reference point for bench/agent-server.mjs: the official @a2a-js/sdk 1.3.0 on express 5
// with an echo executor that answers like relay's echo model (task → working → artifact →
// completed). Binds 127.0.0.1:0 and prints its base URL on stdout.
import { TaskState } from "@a2a-js/sdk"
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server"
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express"
import express from "express"
import { randomUUID } from "node:crypto"

const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() })

const executor = {
  async execute({ taskId, contextId, userMessage }, bus) {
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED),
        artifacts: [],
        history: [userMessage],
        metadata: undefined
      })
    )
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: undefined }))
    const text = userMessage.parts.map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("")
    const artifact = {
      artifactId: randomUUID(),
      name: "answer",
      description: "",
      parts: [{ content: { $case: "text", value: text }, mediaType: "", filename: "", metadata: undefined }],
      metadata: undefined,
      extensions: []
    }
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }))
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }))
    bus.finished()
  },
  async cancelTask() {}
}

const app = express()
const server = app.listen(0, "127.0.0.1", () => {
  const baseUrl = `http://127.0.0.1:${server.address().port}`
  const card = {
    name: "SDK echo",
    description: "Reference echo agent",
    version: "1.0.0",
    supportedInterfaces: [{ url: `${baseUrl}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" }],
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{
      id: "echo",
      name: "Echo",
      description: "Echoes",
      tags: ["echo"],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: []
    }],
    securitySchemes: {},
    securityRequirements: [],
    signatures: []
  }
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor)
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }))
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
  process.stdout.write(`${baseUrl}\n`)
})
// Keep-alive connections would hold a graceful close open: this server has nothing to finish.
process.on("SIGTERM", () => process.exit(0))
