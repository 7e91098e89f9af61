/**
 * A throwaway PostgreSQL cluster for the tests, from Debian's `postgresql` package: initdb in a temp
 * dir, the server on 127.0.0.1 at a free port with its unix socket in that dir, removed at the end.
 * initdb refuses to run as root: as root the cluster runs as the `postgres` user the package creates.
 *
 * Without the binaries the suites skip with a loud message, except in CI (CI set), where that fails.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { clientLayer } from "../../src/services/PostgresTaskStorage.js"

const binDir = (): string | undefined => {
  const candidates = [
    ...(process.env["PG_BIN"] === undefined ? [] : [process.env["PG_BIN"]]),
    ...(Fs.existsSync("/usr/lib/postgresql")
      ? Fs.readdirSync("/usr/lib/postgresql").sort().reverse().map((version) => `/usr/lib/postgresql/${version}/bin`)
      : []),
    "/usr/local/bin",
    "/usr/bin"
  ]
  return candidates.find((dir) => Fs.existsSync(Path.join(dir, "initdb")) && Fs.existsSync(Path.join(dir, "pg_ctl")))
}

export const POSTGRES_BIN = binDir()

/** Whether the suites can run; logs loudly when they cannot, and fails in CI. */
export const postgresAvailable = (): boolean => {
  if (POSTGRES_BIN !== undefined) return true
  if (process.env["CI"] !== undefined && process.env["CI"] !== "") {
    throw new Error("PostgreSQL binaries (initdb, pg_ctl) are missing: CI installs them with apt-get install postgresql (.ci/run)")
  }
  console.warn(
    "\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n" +
      "!!! SKIPPING the PostgreSQL store tests: initdb and pg_ctl are not installed.        !!!\n" +
      "!!! Install them (Debian: apt-get install postgresql) to run these tests.            !!!\n" +
      "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n"
  )
  return false
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as Net.AddressInfo
      server.close(() => resolve(address.port))
    })
  })

const asRoot = process.getuid?.() === 0

/** The command, run as `postgres` when we are root. */
const asClusterUser = (command: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  asRoot ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, [...args]]

/** The rows of one statement over the URL's database, on a connection of its own. */
export const sqlRows = (url: string, statement: string): Promise<ReadonlyArray<Record<string, unknown>>> =>
  Effect.runPromise(
    Effect.provide(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(statement)), clientLayer(url))
  )

export interface PostgresCluster {
  /** postgres://relay@127.0.0.1:PORT/postgres */
  readonly url: string
  readonly port: number
  /** A new empty database, its URL. */
  readonly createDatabase: (name?: string) => Promise<string>
  readonly stop: () => Promise<void>
}

let databases = 0

export const startPostgres = async (): Promise<PostgresCluster> => {
  const bin = POSTGRES_BIN
  if (bin === undefined) throw new Error("PostgreSQL binaries are missing (see postgresAvailable)")
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-pg-"))
  const data = Path.join(dir, "data")
  const socket = Path.join(dir, "socket")
  Fs.mkdirSync(socket)
  if (asRoot) execFileSync("chown", ["-R", "postgres", dir])
  const run = (command: string, args: ReadonlyArray<string>) => {
    const [file, argv] = asClusterUser(Path.join(bin, command), args)
    execFileSync(file, argv, { stdio: "pipe", timeout: 60_000 })
  }
  run("initdb", ["-D", data, "-U", "relay", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
  const port = await freePort()
  const [file, argv] = asClusterUser(Path.join(bin, "postgres"), [
    "-D",
    data,
    "-p",
    String(port),
    "-c",
    "listen_addresses=127.0.0.1",
    "-c",
    `unix_socket_directories=${socket}`,
    "-c",
    "fsync=off",
    "-c",
    "synchronous_commit=off",
    "-c",
    "full_page_writes=off",
    "-c",
    "max_connections=200"
  ])
  const server = spawn(file, argv, { stdio: ["ignore", "ignore", "pipe"] })
  let log = ""
  server.stderr.on("data", (chunk: Buffer) => {
    log += chunk.toString("utf8")
  })
  const url = `postgres://relay@127.0.0.1:${port}/postgres`
  const deadline = Date.now() + 30_000
  for (;;) {
    try {
      await sqlRows(url, "SELECT 1")
      break
    } catch (error) {
      if (server.exitCode !== null || Date.now() > deadline) {
        server.kill("SIGKILL")
        throw new Error(`PostgreSQL did not start: ${String(error)}\n${log}`)
      }
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  const createDatabase = async (name = `relay_test_${process.pid}_${++databases}`) => {
    await sqlRows(url, `CREATE DATABASE ${name}`)
    return `postgres://relay@127.0.0.1:${port}/${name}`
  }
  const stop = async () => {
    if (server.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve))
      // SIGQUIT to the postmaster itself (runuser stands between when we are root): immediate shutdown, nothing to keep.
      const pid = Number(Fs.readFileSync(Path.join(data, "postmaster.pid"), "utf8").split("\n")[0])
      process.kill(pid, "SIGQUIT")
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
      if (server.exitCode === null) server.kill("SIGKILL")
    }
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  return { url, port, createDatabase, stop }
}
