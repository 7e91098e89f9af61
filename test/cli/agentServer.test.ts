// `relay server agent` as a user runs it (the built dist/main.cjs): start-up lines, the
// generated key with its ready `relay auth set` line, serving requests, and a clean exit on
// SIGINT and SIGTERM with the port closed; with --grpc-port, its gRPC port too.
import * as grpc from "@grpc/grpc-js"
import { Either } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { grpcService } from "../../src/a2a/grpcCodec.js"
import { relayBin, requireBuiltRelay } from "../helpers/cli.js"
import { makeSelfSignedCert } from "../helpers/selfSignedCert.js"
import { tempHome } from "../helpers/stateHome.js"

const WAIT_MS = 10_000

let home: ReturnType<typeof tempHome>

beforeAll(() => {
  requireBuiltRelay()
  home = tempHome()
})

afterAll(() => home?.cleanup())

interface Running {
  readonly output: { stdout: string; stderr: string }
  readonly waitFor: (stream: "stdout" | "stderr", pattern: RegExp) => Promise<RegExpMatchArray>
  readonly stop: (signal: NodeJS.Signals) => Promise<number | null>
  readonly exited: Promise<number | null>
  readonly kill: () => void
}

const running: Array<Running> = []
afterEach(() => {
  for (const process of running.splice(0)) process.kill()
})

const startAgentCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}, nodeArgs: ReadonlyArray<string> = []): Running => {
  const child = spawn(process.execPath, [...nodeArgs, relayBin, "server", "agent", "--host", "127.0.0.1", "--port", "0", ...args], {
    env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", OLLAMA_HOST: "127.0.0.1:9", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const output = { stdout: "", stderr: "" }
  child.stdout.on("data", (chunk) => (output.stdout += chunk))
  child.stderr.on("data", (chunk) => (output.stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  const waitFor = async (stream: "stdout" | "stderr", pattern: RegExp) => {
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      const match = output[stream].match(pattern)
      if (match !== null) return match
      if (Date.now() > deadline) throw new Error(`no ${pattern} on ${stream}\nstdout: ${output.stdout}\nstderr: ${output.stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const stop = (signal: NodeJS.Signals) => {
    child.kill(signal)
    return Promise.race([
      exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no exit after ${signal}: ${output.stderr}`)), WAIT_MS))
    ])
  }
  const handle = { output, waitFor, stop, exited, kill: () => void (child.exitCode === null && child.kill("SIGKILL")) }
  running.push(handle)
  return handle
}

const sendMessage = (url: string, text: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } }
    })
  })

describe("relay server agent", () => {
  it("prints its address and model, serves the echo model and exits 0 on SIGINT with the port closed", async () => {
    const agent = startAgentCli(["--json", "-m", "echo"])
    const [line] = await agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; model: string; model_reason: string; auth: boolean }
    expect(started).toMatchObject({ model: "echo", model_reason: "chosen with --model", auth: false })
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    await agent.waitFor("stderr", /Model: echo \(chosen with --model\)/)
    expect(agent.output.stderr).toContain(`listening on ${started.url}`)

    const answer = (await (await sendMessage(started.url, "hi from the cli")).json()) as {
      result: { task: { artifacts: Array<{ parts: Array<{ text: string }> }> } }
    }
    expect(answer.result.task.artifacts[0]?.parts[0]?.text).toBe("hi from the cli")

    expect(await agent.stop("SIGINT")).toBe(0)
    await expect(fetch(`${started.url}/health`)).rejects.toThrow()
  })

  it("with --auth generates a key, prints a ready relay auth set line, and requires the key", async () => {
    const agent = startAgentCli(["--auth", "--json", "-m", "echo"])
    const [line] = await agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; auth: boolean; api_key: string }
    expect(started.auth).toBe(true)
    expect(started.api_key).toMatch(/^[A-Za-z0-9_-]{43}$/)
    // The key goes on no command line: `--api-key -` asks for it (test/cli/secretPrompt.test.ts pastes it).
    await agent.waitFor("stderr", /relay auth set --url \S+ --api-key -\n/)
    expect(agent.output.stderr).toContain(`relay auth set --url ${started.url} --api-key -\n`)

    expect((await sendMessage(started.url, "no key")).status).toBe(401)
    expect((await sendMessage(started.url, "with key", { "x-api-key": started.api_key })).status).toBe(200)
    expect((await fetch(`${started.url}/.well-known/agent-card.json`)).status).toBe(200)
    expect(await agent.stop("SIGTERM")).toBe(0)
  })

  it("takes the key from RELAY_AGENT_KEY without printing it", async () => {
    const agent = startAgentCli(["--auth", "--json", "-m", "echo"], { RELAY_AGENT_KEY: "from-the-environment" })
    const [line] = await agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; api_key?: string }
    expect(started.api_key).toBeUndefined()
    await agent.waitFor("stderr", /from RELAY_AGENT_KEY/)
    expect(agent.output.stderr).not.toContain("from-the-environment")
    expect((await sendMessage(started.url, "env key", { authorization: "Bearer from-the-environment" })).status).toBe(200)
    expect(await agent.stop("SIGINT")).toBe(0)
  })

  it("runs the mock test agent with --latency: its scenarios in the card, each turn working that long", async () => {
    const agent = startAgentCli(["--json", "-m", "mock", "--latency", "300ms"])
    const [line] = await agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; model: string; latency_ms: number }
    expect(started).toMatchObject({ model: "mock", latency_ms: 300 })
    await agent.waitFor("stderr", /Latency: each turn stays working 300ms/)
    const card = (await (await fetch(`${started.url}/.well-known/agent-card.json`)).json()) as { skills: Array<{ examples: string[] }> }
    expect(card.skills[0]?.examples).toContain("stream 50 every 20ms")

    const began = Date.now()
    const answer = (await (await sendMessage(started.url, "input-required")).json()) as { result: { task: { status: { state: string } } } }
    expect(answer.result.task.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(Date.now() - began).toBeGreaterThanOrEqual(300)
    expect(await agent.stop("SIGINT")).toBe(0)
  })

  it("keeps tasks in the state directory by default, one server per store; --store memory and a postgres URL as told", async () => {
    const agent = startAgentCli(["--json", "-m", "echo"])
    const [line] = await agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; store: string; store_dir: string }
    expect(started).toMatchObject({ store: "file", store_dir: `${home.stateDir}/agent-store` })
    await agent.waitFor("stderr", /Tasks: kept in \S+agent-store/)
    const sent = (await (await sendMessage(started.url, "kept")).json()) as { result: { task: { id: string } } }

    const second = startAgentCli(["-m", "echo"])
    expect(await second.exited).toBe(1)
    expect(second.output.stderr).toContain("another relay server agent is using it")
    const inMemory = startAgentCli(["--json", "-m", "echo"], { RELAY_STORE: "memory" })
    expect(JSON.parse((await inMemory.waitFor("stdout", /^\{.*\}\n/))[0])).toMatchObject({ store: "memory" })
    expect(await inMemory.stop("SIGINT")).toBe(0)
    const postgres = startAgentCli(["-m", "echo", "--store", "postgres://relay:pg-s3cret@127.0.0.1:9/relay"])
    expect(await postgres.exited).toBe(1)
    expect(postgres.output.stderr).toContain("The task store postgres://***@127.0.0.1:9/relay cannot be used")
    expect(postgres.output.stderr).not.toContain("pg-s3cret")

    expect(await agent.stop("SIGINT")).toBe(0)
    const again = startAgentCli(["--json", "-m", "echo"])
    const url = (JSON.parse((await again.waitFor("stdout", /^\{.*\}\n/))[0]) as { url: string }).url
    const read = await fetch(`${url}/tasks/${sent.result.task.id}`, { headers: { "a2a-version": "1.0" } })
    expect(((await read.json()) as { status: { state: string } }).status.state).toBe("TASK_STATE_COMPLETED")
    expect(await again.stop("SIGINT")).toBe(0)
  })

  it("refuses a --latency that is not a duration", async () => {
    const agent = startAgentCli(["-m", "mock", "--latency", "soon"])
    expect(await agent.exited).not.toBe(0)
    expect(agent.output.stderr).toContain("--latency must be a duration such as 500ms, 2s or 1m")
  })

  it("refuses an invalid model with a hint and exit code 1", async () => {
    const agent = startAgentCli(["-m", "nonsense"])
    expect(await agent.exited).toBe(1)
    expect(agent.output.stderr).toContain("Invalid model")
    expect(agent.output.stderr).toContain("hint:")
  })
})

// ---------------------------------------------------------------------------
// --grpc-port

const recorder = fileURLToPath(new URL("../fixtures/recordLoadedModules.mjs", import.meta.url))

/** Starts the CLI recording the modules it loads (test/fixtures/recordLoadedModules.mjs); `loadsGrpc` reads the record. */
const startRecorded = (args: ReadonlyArray<string>) => {
  const record = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-loaded-")), "loaded.txt")
  const agent = startAgentCli(args, { RELAY_TEST_LOADED_MODULES: record }, ["--import", recorder])
  /** Whether a chunk holding the gRPC door (and its protobuf codec) was loaded so far (the build's metafile names each chunk's sources). */
  const loadsGrpc = () => {
    const dist = Path.dirname(relayBin)
    const meta = JSON.parse(Fs.readFileSync(Path.join(dist, "meta.json"), "utf8")) as {
      outputs: Record<string, { inputs: Record<string, unknown> }>
    }
    return Fs.readFileSync(record, "utf8").split("\n").filter((line) => line.startsWith("file:")).some((line) => {
      const file = Path.relative(Path.dirname(dist), fileURLToPath(line.split(" cache=")[0]!))
      return Object.keys(meta.outputs[file]?.inputs ?? {}).some((source) =>
        source.endsWith("src/servers/agent/grpcServer.ts") || source.includes("node_modules/@bufbuild/protobuf/")
      )
    })
  }
  return { agent, loadsGrpc }
}

/** One SendMessage over gRPC (1.0) with `credentials`; the answer's ProtoJSON. */
const grpcSend = (address: string, credentials: grpc.ChannelCredentials, text: string) =>
  new Promise<unknown>((resolve, reject) => {
    const method = grpcService("1.0").methods["SendMessage"]!
    const request = Either.getOrThrow(method.request.toBinary({
      message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] }
    }))
    const client = new grpc.Client(address, credentials)
    const metadata = new grpc.Metadata()
    metadata.set("a2a-version", "1.0")
    client.makeUnaryRequest(
      method.path,
      (bytes: Buffer) => bytes,
      (bytes: Buffer) => bytes,
      Buffer.from(request),
      metadata,
      { deadline: Date.now() + WAIT_MS },
      (error, answer) => {
        client.close()
        return error === null ? resolve(Either.getOrThrow(method.response.toJson(answer!))) : reject(error)
      }
    )
  })

describe("relay server agent --grpc-port", () => {
  it("serves gRPC with TLS from the PEM files, names the port at start-up, loads gRPC only then, and closes it on SIGINT", async () => {
    const cert = makeSelfSignedCert()
    const keyFile = Path.join(Path.dirname(cert.certFile), "key.pem")
    // Two servers at once: each keeps its tasks in memory (one state directory holds one file store).
    const plain = startRecorded(["--json", "-m", "echo", "--store", "memory"])
    const withGrpc = startRecorded([
      "--store",
      "memory",
      "--json",
      "-m",
      "echo",
      "--grpc-port",
      "0",
      "--grpc-tls-cert",
      cert.certFile,
      "--grpc-tls-key",
      keyFile
    ])
    const [plainLine] = await plain.agent.waitFor("stdout", /^\{.*\}\n/)
    expect(JSON.parse(plainLine)).not.toHaveProperty("grpc_address")
    expect(plain.loadsGrpc()).toBe(false)

    const [line] = await withGrpc.agent.waitFor("stdout", /^\{.*\}\n/)
    const started = JSON.parse(line) as { url: string; grpc_address: string; grpc_tls: boolean }
    expect(started.grpc_address).toMatch(/^127\.0\.0\.1:\d+$/)
    expect(started.grpc_tls).toBe(true)
    await withGrpc.agent.waitFor("stderr", /gRPC on 127\.0\.0\.1:\d+ \(TLS\)/)
    expect(withGrpc.loadsGrpc()).toBe(true)
    const answer = await grpcSend(started.grpc_address, grpc.credentials.createSsl(Buffer.from(cert.cert)), "hi over grpc")
    expect(answer).toMatchObject({
      task: { status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: "hi over grpc" }] }] }
    })
    // A plaintext client gets nothing from a TLS port.
    await expect(grpcSend(started.grpc_address, grpc.credentials.createInsecure(), "plain")).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE
    })

    expect(await Promise.all([plain.agent.stop("SIGINT"), withGrpc.agent.stop("SIGINT")])).toEqual([0, 0])
    await expect(grpcSend(started.grpc_address, grpc.credentials.createSsl(Buffer.from(cert.cert)), "gone")).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE
    })
  })

  it("refuses a TLS certificate without its key, a key that is none, and TLS files without --grpc-port (usage errors)", async () => {
    const cert = makeSelfSignedCert()
    const halfTls = startAgentCli(["-m", "echo", "--grpc-port", "0", "--grpc-tls-cert", cert.certFile])
    const noPort = startAgentCli(["-m", "echo", "--grpc-tls-cert", cert.certFile, "--grpc-tls-key", cert.certFile])
    const notAKey = startAgentCli(["-m", "echo", "--grpc-port", "0", "--grpc-tls-cert", cert.certFile, "--grpc-tls-key", cert.certFile])
    expect(await Promise.all([halfTls.exited, noPort.exited, notAKey.exited])).toEqual([2, 2, 2])
    expect(halfTls.output.stderr).toContain("--grpc-tls-cert and --grpc-tls-key go together")
    expect(noPort.output.stderr).toContain("--grpc-tls-cert is only used with --grpc-port")
    expect(notAKey.output.stderr).toContain("--grpc-tls-cert and --grpc-tls-key are not a certificate and its key")
  })
})
