// The three storages side by side: one seeded random sequence of operations (tasks in several
// conversations with ties in their times, updates, waiting messages, push configs, lists with every
// filter and page tokens of their own, of other queries and tampered ones, the file store reopened
// midway) run against the memory, file and PostgreSQL storages, and every answer compared. Only the
// page tokens differ by design (each storage's own, opaque): their presence is compared, and each
// storage goes on with its own. Then each list is walked page by page while tasks come and change
// between the pages. Context and push config ids go up to the doors' limits (MAX_ID_BYTES).
import { Context, Effect, Either, Exit, Layer, Option, Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import { MAX_ID_BYTES, MAX_ID_CHARS } from "../../src/domain/limits.js"
import * as FileTaskStorage from "../../src/services/FileTaskStorage.js"
import { postgresStorage } from "../../src/services/PostgresTaskStorage.js"
import * as TaskStorage from "../../src/services/TaskStorage.js"
import { postgresAvailable } from "../helpers/postgres.js"
import { postgresForSuite } from "../helpers/postgresSuite.js"

const STORE_KEY = "test store key, not a secret"
/** Small pages by bytes too, so that the byte bound cuts some of them. */
const MAX_PAGE_BYTES = 4_000

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-differential-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))

/** mulberry32: a small seeded generator, so that a failing sequence can be run again. */
const generator = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6D2B79F5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  const pick = <A>(items: ReadonlyArray<A>): A => items[int(items.length)]!
  return { next, int, pick, chance: (p: number) => next() < p }
}

type Random = ReturnType<typeof generator>

const STATES: ReadonlyArray<V1.TaskState> = [
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_AUTH_REQUIRED",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED"
]

const SHORT_CONTEXTS = ["ctx", "other", "ünïcødé \u2028", "it's \"quoted\" 100% \\ back", ""]

/** Ids with odd characters (the server makes task ids: UUIDs, but a storage must not care). */
const TASK_IDS = ["plain", "ünïcødé-ταυτότητα-身份", "emoji 😀 pair", "quote ' \" and 100% and \\ back", "y".repeat(200)]

/** Ids a client chooses, at the edges of what the doors take (no NUL; at most MAX_ID_CHARS characters and MAX_ID_BYTES bytes). */
const longIds = (random: Random): ReadonlyArray<string> => {
  const letters = (count: number, from: number, span: number) =>
    Array.from({ length: count }, () => String.fromCodePoint(from + random.int(span))).join("")
  return [
    "x".repeat(MAX_ID_CHARS),
    // Many bytes per character, and no run a compressor folds.
    letters(Math.floor(MAX_ID_BYTES / 3), 0x4E00, 0x5000),
    letters(MAX_ID_CHARS / 2, 0x1F300, 0x200)
  ]
}

/** Status times from a few seconds, many tasks per millisecond. */
const timeOf = (random: Random) => `2026-01-01T00:00:0${random.int(4)}.00${random.int(3)}Z`

const makeTask = (random: Random, id: string, contextId: string | undefined, history: number): V1.Task => {
  const state = random.pick(STATES)
  return {
    id,
    ...(contextId === undefined ? {} : { contextId }),
    status: {
      state,
      timestamp: timeOf(random),
      ...(random.chance(0.3) ? { message: { messageId: `s-${random.int(1e6)}`, role: "ROLE_AGENT", parts: [{ text: "status" }] } } : {})
    },
    history: Array.from({ length: history }, (_, index) => ({
      messageId: `m${index}`,
      role: index % 2 === 0 ? "ROLE_USER" : "ROLE_AGENT",
      parts: [{ text: `turn ${index} ${"·".repeat(random.int(300))}` }]
    })),
    ...(random.chance(0.5)
      ? { artifacts: [{ artifactId: `a${random.int(3)}`, parts: [{ text: "answer ".repeat(random.int(50)) }] }] }
      : {})
  }
}

type Storage = TaskStorage.TaskStorage["Type"]

interface Opened {
  readonly storage: Storage
  readonly close: () => Promise<void>
}

const open = async (layer: Layer.Layer<TaskStorage.TaskStorage, unknown>): Promise<Opened> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  return { storage: Context.get(context, TaskStorage.TaskStorage), close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.either(effect))

/** What an answer is compared as: a failure by its tag, a page without its token. */
const shape = (answer: Either.Either<unknown, { readonly _tag: string }>): unknown =>
  Either.match(answer, {
    onLeft: (error) => ({ failed: error._tag }),
    onRight: (value) => JSON.parse(JSON.stringify(value)) as unknown
  })

const pageShape = (answer: Either.Either<TaskStorage.TaskPage, TaskStorage.InvalidPageToken>) =>
  Either.match(answer, {
    onLeft: (error) => ({ failed: error._tag }),
    onRight: (page) => ({
      ids: page.tasks.map((task) => task.id),
      tasks: page.tasks,
      totalSize: page.totalSize,
      more: page.nextPageToken !== undefined
    })
  })

/** A token no storage gives: cut, padded, re-encoded over another position, or not base64 at all. */
const tampered = (random: Random, token: string | undefined): string =>
  random.pick([
    "",
    "not a token",
    "W10",
    token === undefined ? "eA" : token.slice(0, -2),
    token === undefined ? "eA" : `${token}AA`,
    Buffer.from(JSON.stringify([timeOf(random), -1])).toString("base64url"),
    Buffer.from(JSON.stringify([timeOf(random), 1.5])).toString("base64url"),
    Buffer.from(JSON.stringify({ timestamp: timeOf(random) })).toString("base64url")
  ])

/** Every task the query matches, page after page (a page may stop short at the byte bound). */
const walk = async (storage: Storage, query: Omit<TaskStorage.TaskQuery, "pageSize">) => {
  const ids: Array<string> = []
  let pageToken: string | undefined
  let totalSize = 0
  do {
    const page = Either.getOrThrow(await run(storage.list({ ...query, pageSize: 100, ...(pageToken === undefined ? {} : { pageToken }) })))
    ids.push(...page.tasks.map((task) => task.id))
    totalSize = page.totalSize
    pageToken = page.nextPageToken
  } while (pageToken !== undefined && ids.length <= totalSize)
  return { ids, totalSize }
}

describe.runIf(postgresAvailable())("the memory, file and PostgreSQL storages answer alike", () => {
  const cluster = postgresForSuite()

  const sequence = async (seed: number, steps: number) => {
    const random = generator(seed)
    const dir = Path.join(root, `store-${seed}`)
    const url = await cluster.createDatabase()
    const fileLayer = () => FileTaskStorage.layer({ dir, maxPageBytes: MAX_PAGE_BYTES, maxAge: "36500 days" })
    const stores: Array<Opened> = [
      await open(TaskStorage.layer({ maxPageBytes: MAX_PAGE_BYTES })),
      await open(fileLayer()),
      await open(postgresStorage(url, { storeKey: STORE_KEY, maxPageBytes: MAX_PAGE_BYTES }))
    ]
    const names = ["memory", "file", "postgres"]
    const long = longIds(random)
    const contexts = [...SHORT_CONTEXTS, long[1]!]
    const known: Array<string> = []
    /** Each storage's page tokens so far, by the step that got them. */
    const tokens: Array<ReadonlyArray<string | undefined>> = []
    const configIds = ["p1", "p2", "p-ü 'x'", ...long]
    try {
      for (let step = 0; step < steps; step++) {
        const all = async <A, E>(
          what: string,
          op: (storage: Storage, index: number) => Effect.Effect<A, E>,
          compare: (answer: Either.Either<A, E>) => unknown
        ) => {
          const answers: Array<Either.Either<A, E>> = []
          for (const [index, store] of stores.entries()) answers.push(await run(op(store.storage, index)))
          const shapes = answers.map(compare)
          for (let index = 1; index < shapes.length; index++) {
            expect(shapes[index], `seed ${seed}, step ${step}: ${what}, ${names[index]} against memory`).toEqual(shapes[0])
          }
          return answers
        }
        const roll = random.int(100)
        if (roll < 25) {
          const id = random.chance(0.2) ? random.pick(TASK_IDS) : random.chance(0.1) && known.length > 0 ? random.pick(known) : `t${step}`
          const task = makeTask(random, id, random.chance(0.1) ? undefined : random.pick(contexts), random.int(4))
          await all(`create ${JSON.stringify(id).slice(0, 40)}`, (storage) => storage.create(task), shape)
          if (!known.includes(id)) known.push(id)
        } else if (roll < 45 && known.length > 0) {
          const id = random.pick(known)
          const [read] = await all("get before update", (storage) => storage.get(id), shape)
          const current = Either.getOrThrow(read!)
          const version = Option.match(current, { onNone: () => 1, onSome: (stored) => stored.version }) -
            (random.chance(0.1) ? 1 : 0)
          const contextId = Option.match(current, { onNone: () => "ctx", onSome: (stored) => stored.task.contextId })
          const task = makeTask(random, id, contextId, random.int(6))
          const queued = random.chance(0.3)
            ? [] as ReadonlyArray<V1.Message>
            : random.chance(0.3)
            ? [{ messageId: `q${step}`, role: "ROLE_USER" as const, parts: [{ text: "next" }] }]
            : undefined
          await all(`update ${id.slice(0, 40)} over ${version}`, (storage) => storage.update(id, { task, queued }, version), shape)
        } else if (roll < 52 && known.length > 0) {
          const id = random.pick(known)
          const configId = random.pick(configIds)
          const stored: TaskStorage.StoredPushConfig = {
            config: { id: configId, taskId: id, url: `https://hooks.example/${step}`, token: `token-${step}` },
            generation: random.pick(["1.0", "0.3"] as const)
          }
          await all(`put push config ${configId.slice(0, 20)} of ${id.slice(0, 20)}`, (storage) => storage.putPushConfig(id, stored), shape)
        } else if (roll < 56 && known.length > 0) {
          const id = random.chance(0.9) ? random.pick(known) : "missing"
          const configId = random.pick(configIds)
          await all(
            `remove push config ${configId.slice(0, 20)} of ${id.slice(0, 20)}`,
            (storage) => storage.removePushConfig(id, configId),
            shape
          )
        } else if (roll < 62) {
          const id = known.length > 0 && random.chance(0.9) ? random.pick(known) : "missing"
          await all("push configs", (storage) => storage.pushConfigs(id), shape)
          await all("get", (storage) => storage.get(id), shape)
        } else if (roll < 66) {
          const contextId = random.pick(contexts)
          await all("context tasks", (storage) => storage.contextTasks(contextId), shape)
        } else if (roll < 97) {
          const query: TaskStorage.TaskQuery = {
            pageSize: random.pick([1, 2, 3, 5, 10, 50, 100]),
            ...(random.chance(0.3) ? { contextId: random.pick(contexts) } : {}),
            ...(random.chance(0.3) ? { status: random.pick(STATES) } : {}),
            ...(random.chance(0.3) ? { statusTimestampAfter: timeOf(random) } : {})
          }
          // A token from an earlier list (of the same query or another), a tampered one, or none.
          const from = tokens.length > 0 && random.chance(0.5) ? random.int(tokens.length) : undefined
          const forged = random.chance(0.1) ? tampered(random, from === undefined ? undefined : tokens[from]![0]) : undefined
          const answers = await all(
            `list ${JSON.stringify(query)} after ${forged ?? from}`,
            (storage, index) => {
              const pageToken = forged ?? (from === undefined ? undefined : tokens[from]![index])
              return storage.list(pageToken === undefined ? query : { ...query, pageToken })
            },
            pageShape
          )
          tokens.push(answers.map((answer) => Either.match(answer, { onLeft: () => undefined, onRight: (page) => page.nextPageToken })))
        } else {
          // The file store reopened: what a restart gives back must answer alike.
          await stores[1]!.close()
          stores[1] = await open(fileLayer())
        }
      }
      // Every page walked in turn while tasks come and change between the pages (newer than any, as a clock
      // makes them; a changed task is one already listed): each task there at the start once, in list order.
      const queries = [{}, { contextId: "ctx" }, { status: "TASK_STATE_COMPLETED" as const }]
      for (const [number, query] of queries.entries()) {
        const walks: Array<ReadonlyArray<string>> = []
        for (const [index, store] of stores.entries()) {
          const before = await walk(store.storage, query)
          /** The times of the tasks made or changed between pages: each later than any before, the same in each storage. */
          let lateness = 1000 * number
          const walked: Array<string> = []
          let pageToken: string | undefined
          for (let pages = 0; pages <= steps; pages++) {
            const page = Either.getOrThrow(
              await run(store.storage.list({ ...query, pageSize: 2, ...(pageToken === undefined ? {} : { pageToken }) }))
            )
            walked.push(...page.tasks.map((task) => task.id))
            const later = new Date(Date.UTC(2026, 0, 2) + ++lateness).toISOString()
            const fresh = {
              id: `late-${lateness}`,
              contextId: "ctx",
              status: { state: "TASK_STATE_COMPLETED" as const, timestamp: later }
            }
            await run(store.storage.create(fresh))
            const seen = page.tasks[0]
            if (seen !== undefined) {
              const stored = Option.getOrThrow(Either.getOrThrow(await run(store.storage.get(seen.id))))
              await run(
                store.storage.update(
                  seen.id,
                  { task: { ...stored.task, status: { ...stored.task.status, timestamp: later } } },
                  stored.version
                )
              )
            }
            pageToken = page.nextPageToken
            if (pageToken === undefined) break
          }
          expect(walked, `seed ${seed}: the pages of ${names[index]}`).toEqual(before.ids)
          expect([new Set(walked).size, walked.length], `seed ${seed}: the pages of ${names[index]}`).toEqual([
            before.totalSize,
            before.totalSize
          ])
          walks.push(walked)
        }
        expect(walks[1], `seed ${seed}: the file store's pages`).toEqual(walks[0])
        expect(walks[2], `seed ${seed}: PostgreSQL's pages`).toEqual(walks[0])
      }
    } finally {
      for (const store of stores) await store.close()
    }
  }

  it("answer one random sequence alike", async () => {
    for (const seed of [1, 2]) await sequence(seed, 200)
  }, 60_000)
})
