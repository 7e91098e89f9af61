/**
 * relay's terminal commands over gRPC (#33, built CLI: `npm run build` first): against the a2a-js
 * 1.3.0 gRPC services over TLS with a certificate made for the test (trusted the way a user
 * trusts one, NODE_EXTRA_CA_CERTS; refused without) and in plaintext on loopback, `--binding grpc`
 * pinning it where the card lists JSON-RPC first, errors with their exit codes and hints; against
 * hand-made servers, an endless stream cut at the whole-answer limit and Ctrl-C cancelling the call.
 */
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { makeSelfSignedCert, type SelfSignedCert } from "../helpers/selfSignedCert.js"
import { stateDirsFor } from "../helpers/stateHome.js"
import { echoText } from "../peers/behaviours.js"
import { answerBytes, grpcCardStub, type GrpcStub, startGrpcStub, waitFor } from "../peers/grpcStub.js"
import { JSONRPC_PATH, type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import type { Stub } from "../services/a2aClientHarness.js"

const freshStateDir = stateDirsFor(afterAll)
let cert: SelfSignedCert
let tlsPeer: SdkAgentHandle
let plainPeer: SdkAgentHandle
let endless: GrpcStub
let endlessCard: Stub

beforeAll(async () => {
  requireBuiltRelay()
  cert = makeSelfSignedCert()
  ;[tlsPeer, plainPeer] = await Promise.all([
    startSdkAgent({ bindings: ["GRPC"], legacyCompat: true, grpcTls: cert }),
    startSdkAgent({ bindings: ["JSONRPC", "GRPC"], legacyCompat: true })
  ])
  // A stream without end: the task, then 10 kB appends to one artifact as fast as relay reads.
  endless = await startGrpcStub("1.0", {
    SendStreamingMessage: (stream) => {
      stream.write(
        answerBytes("1.0", "SendStreamingMessage", { task: { id: "endless", contextId: "c", status: { state: "TASK_STATE_WORKING" } } })
      )
      const append = answerBytes("1.0", "SendStreamingMessage", {
        artifactUpdate: {
          taskId: "endless",
          contextId: "c",
          artifact: { artifactId: "answer", parts: [{ text: "a".repeat(10_000) }] },
          append: true
        }
      })
      let open = true
      stream.on("cancelled", () => (open = false))
      const pump = () => {
        while (open) if (!stream.write(append)) return void stream.once("drain", pump)
      }
      pump()
    },
    GetTask: () => {}
  })
  endlessCard = await grpcCardStub(endless.address, "1.0")
})

afterAll(async () => {
  await Promise.allSettled([tlsPeer?.close(), plainPeer?.close(), endlessCard?.close()])
  endless?.close()
})

const trusting = () => ({ NODE_EXTRA_CA_CERTS: cert.certFile })

describe("over TLS (the card lists grpcs://localhost:PORT)", () => {
  it.each(["1.0", "0.3"])("relay message send speaks A2A %s to the SDK's gRPC service, trusting the certificate", async (protocol) => {
    const result = await runRelay(["message", "send", "--url", tlsPeer.baseUrl, "--protocol", protocol, "--json", "hello tls"], {
      stateDir: freshStateDir(),
      env: trusting()
    })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ state: "completed", text: echoText("hello tls") })
  })

  it("a certificate the system does not trust: agent_unreachable, exit 4, nothing sent in plaintext", async () => {
    const result = await runRelay(["task", "get", "--url", tlsPeer.baseUrl, "--json", "some-task"], { stateDir: freshStateDir() })
    expect(result.code, result.stderr).toBe(4)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "agent_unreachable" } })
  })
})

describe("in plaintext on loopback", () => {
  it("--binding grpc pins gRPC where the card lists JSON-RPC first, which is the default", async () => {
    const before = plainPeer.requests.length
    const pinned = await runRelay(["message", "send", "--url", plainPeer.baseUrl, "--binding", "grpc", "--json", "pinned"], {
      stateDir: freshStateDir()
    })
    expect(pinned.code, pinned.stderr).toBe(0)
    expect(JSON.parse(pinned.stdout)).toMatchObject({ state: "completed", text: echoText("pinned") })
    expect(plainPeer.requests.slice(before).filter((request) => request.path === JSONRPC_PATH)).toEqual([])

    const chosen = await runRelay(["message", "send", "--url", plainPeer.baseUrl, "--json", "chosen"], { stateDir: freshStateDir() })
    expect(chosen.code, chosen.stderr).toBe(0)
    expect(plainPeer.requests.slice(before).some((request) => request.path === JSONRPC_PATH)).toBe(true)
  })

  it("an unknown task is not_found (gRPC NOT_FOUND with TASK_NOT_FOUND), exit 1, with the usual hint", async () => {
    const result = await runRelay(["task", "get", "--url", plainPeer.baseUrl, "--binding", "grpc", "no-such-task"], {
      stateDir: freshStateDir()
    })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toContain("Check the task id")
  })
})

describe("hand-made gRPC servers", () => {
  it("an endless stream stops at --max-answer-bytes: response_too_large, exit 1, the call cancelled", async () => {
    const cancelledBefore = endless.cancelled
    const result = await runRelay(["message", "stream", "--url", endlessCard.baseUrl, "--max-answer-bytes", "200000", "--json", "hi"], {
      stateDir: freshStateDir()
    })
    expect(result.code, result.stderr).toBe(1)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "response_too_large" } })
    await waitFor(() => endless.cancelled > cancelledBefore, "the call cancelled")
  })

  it("Ctrl-C cancels the call: exit 130, and the server sees it cancelled", async () => {
    const cancelledBefore = endless.cancelled
    const callsBefore = endless.metadata.length
    const child = spawn(process.execPath, [relayBin, "task", "get", "--url", endlessCard.baseUrl, "--timeout", "60", "stuck"], {
      env: { ...process.env, RELAY_HOME: freshStateDir(), NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    await waitFor(() => endless.metadata.length > callsBefore, "the call")
    child.kill("SIGINT")
    expect(await exited).toBe(130)
    await waitFor(() => endless.cancelled > cancelledBefore, "the call cancelled")
  })
})
