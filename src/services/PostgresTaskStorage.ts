/**
 * The TaskStorage that several `relay server agent` instances share: PostgreSQL through @effect/sql-pg
 * (pure JS `pg`). Loaded only by the agent server when `--store postgres://…` is chosen.
 *
 * Tables (migrations below run at start, one instance at a time):
 * - relay_tasks: one row per task, the task as JSON text, its version for compare-and-set writes,
 *   and the columns lists filter and sort on (state, status time, context, creation order), each
 *   filter served by an index that also keeps the list order, so a page costs its rows; the lease of
 *   the instance working on the task.
 * - relay_task_events: every write after the first, (task, version) → the task and its event; other
 *   instances' subscribers read it after their cursor when a NOTIFY says "task T reached version V".
 * - relay_push_configs: a task's push configs in creation order, sealed (see domain/sealing.ts).
 * - relay_push_deliveries (migration 2): each update on its way to a push config, (task, config,
 *   version) → the event and task to post, attempts, next attempt's time, and the claim of the
 *   instance making it; a delivered one stays as a settled row without its payload (until its task
 *   goes), so that no other instance records and makes it again. No credentials: they stay sealed in
 *   relay_push_configs and are read from there when posting.
 *
 * Where this differs from a2a-js 1.3.0's DatabaseTaskStore (node_modules/@a2a-js/sdk): its `tasks`
 * table holds the task JSON under its id and nothing else (no version: a save overwrites; no columns
 * to filter on: it lists nothing), and its `push_notification_configs` keep tokens in clear; events
 * stay in the process that produced them. Here writes compare versions, lists are keyset pages
 * (status time, creation order), the event log and NOTIFY carry events across instances, leases end
 * the tasks of a dead instance, and push secrets are sealed. JSON is kept as text, not jsonb: jsonb
 * reorders keys and refuses \u0000, and a task must come back as it was stored.
 */
import * as PgClient from "@effect/sql-pg/PgClient"
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection as SqlConnection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import { Duration, Effect, Fiber, Layer, Option, Queue, Redacted, Schedule, Stream } from "effect"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import * as V1 from "../a2a/v1.js"
import { MAX_TASK_PAGE_BYTES } from "../domain/limits.js"
import { MIN_STORE_KEY_CHARS, pushConfigRow, type Sealer, sealerOf, STORE_KEY_VARIABLE } from "../domain/sealing.js"
import { redactUrl } from "../domain/secrets.js"
import { TaskStoreUnavailable } from "../domain/taskStoreChoice.js"
import { notifications } from "./postgresNotifications.js"
import {
  bytesInPage,
  byWriteOrder,
  type ChangesResumed,
  decodeCursor,
  DEFAULT_MAX_TASKS,
  encodeCursor,
  InvalidPageToken,
  type LoggedChange,
  type PageCursor,
  type PendingDeliveries,
  type PendingDelivery,
  type StoredPushConfig,
  type StoredTask,
  type TaskChanged,
  type TaskPage,
  type TaskQuery,
  TaskStorage,
  TaskVersionConflict,
  type TaskWrite
} from "./TaskStorage.js"

export interface PostgresStorageOptions {
  /** How long a task's lease lasts without renewal: a dead instance's tasks end after about this. Default 15 s. */
  readonly leaseTime?: Duration.DurationInput | undefined
  /** The key text push secrets are sealed with; default: RELAY_STORE_KEY. */
  readonly storeKey?: string | undefined
  /** Bytes of JSON a list page holds at most (always at least one task). Default MAX_TASK_PAGE_BYTES. */
  readonly maxPageBytes?: number | undefined
  /** Tasks kept: past it the least recently changed settled ones are deleted, down to 90 %. Default 10 000. */
  readonly maxTasks?: number | undefined
  /** How long a finished or waiting task is kept after its last change. Default 30 days. */
  readonly maxAge?: Duration.DurationInput | undefined
  /** How often an instance sweeps (besides at start and after each tenth of maxTasks it created). Default 1 minute. */
  readonly sweepEvery?: Duration.DurationInput | undefined
}

/** The database named cannot be used; never with the URL's password (redactUrl). */
const unavailable = (url: string, reason: string) =>
  new TaskStoreUnavailable({
    store: redactUrl(url),
    reason,
    suggestion: "Check that the store is reachable with that URL, and that RELAY_STORE_KEY is set (the same on every instance)."
  })

export const DEFAULT_LEASE_TIME = Duration.seconds(15)

/**
 * RELAY_STORE_LEASE (such as 5s or 2500ms), when set and valid. Read here, not with domain/units.ts:
 * importing that from this chunk would split it into a chunk of its own that every command loads.
 */
const leaseTimeFromEnvironment = (): Duration.Duration | undefined => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$/.exec(process.env["RELAY_STORE_LEASE"] ?? "")
  if (match === null) return undefined
  return Duration.millis(Number(match[1]) * (match[2] === "s" ? 1000 : 1))
}

/** The NOTIFY channel: payload "<version> <state> <instance> <task id>" (instance names carry no space). */
const CHANNEL = "relay_task_changed"

// ---------------------------------------------------------------------------
// Migrations

const TABLES = [
  `CREATE TABLE relay_tasks (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    context_id text,
    state text NOT NULL,
    status_time text NOT NULL,
    version integer NOT NULL,
    task text NOT NULL,
    queued text,
    lease_owner text,
    lease_until timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`,
  "CREATE INDEX relay_tasks_by_time ON relay_tasks (status_time DESC, seq DESC)",
  "CREATE INDEX relay_tasks_by_context ON relay_tasks (context_id, status_time DESC, seq DESC)",
  "CREATE INDEX relay_tasks_by_state ON relay_tasks (state, status_time DESC, seq DESC)",
  "CREATE INDEX relay_tasks_in_context ON relay_tasks (context_id, seq)",
  "CREATE INDEX relay_tasks_leased ON relay_tasks (lease_until) WHERE lease_until IS NOT NULL",
  `CREATE TABLE relay_task_events (
    task_id text NOT NULL REFERENCES relay_tasks (id) ON DELETE CASCADE,
    version integer NOT NULL,
    event text,
    task text NOT NULL,
    PRIMARY KEY (task_id, version)
  )`,
  `CREATE TABLE relay_push_configs (
    task_id text NOT NULL REFERENCES relay_tasks (id) ON DELETE CASCADE,
    id text NOT NULL,
    seq bigint GENERATED ALWAYS AS IDENTITY,
    generation text NOT NULL,
    sealed text NOT NULL,
    PRIMARY KEY (task_id, id)
  )`
]

const PUSH_DELIVERIES = [
  `CREATE TABLE relay_push_deliveries (
    task_id text NOT NULL REFERENCES relay_tasks (id) ON DELETE CASCADE,
    config_id text NOT NULL,
    version integer NOT NULL,
    event text,
    task text,
    attempts integer NOT NULL,
    due bigint NOT NULL,
    owner text,
    lease_until timestamptz,
    settled boolean NOT NULL DEFAULT false,
    PRIMARY KEY (task_id, config_id, version)
  )`,
  "CREATE INDEX relay_push_deliveries_claimable ON relay_push_deliveries (lease_until) WHERE NOT settled",
  "CREATE INDEX relay_push_deliveries_by_owner ON relay_push_deliveries (owner) WHERE NOT settled"
]

const createTables = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.forEach(TABLES, (statement) => sql.unsafe(statement), { discard: true })
)

/** State lists as SQL literals (constants, so that the planner matches relay_tasks_settled's predicate). */
const sqlStates = (states: ReadonlyArray<V1.TaskState>) => states.map((state) => `'${state}'`).join(", ")
const SETTLED = sqlStates([...V1.TERMINAL_STATES, ...V1.INTERRUPTED_STATES])

/** Retention's index: settled tasks by their last change, so that a sweep reads only the rows it deletes. */
const createRetentionIndex = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql.unsafe(`CREATE INDEX relay_tasks_settled ON relay_tasks (updated_at) WHERE state IN (${SETTLED})`)
)

const MIGRATIONS_TABLE = "relay_migrations"
const migrations = Migrator.fromRecord({
  "0001_tasks_events_push_configs": createTables,
  "0002_push_deliveries": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => Effect.forEach(PUSH_DELIVERIES, (statement) => sql.unsafe(statement), { discard: true })
  ),
  "0003_retention_index": createRetentionIndex
})
export const LATEST_MIGRATION = 3

/**
 * A connection of the pool's own for the scope. Not interruptible while it is being handed out:
 * @effect/sql-pg 0.53's `reserve` forgets a connection the pool hands out after its fiber was
 * interrupted, which then stays checked out and the pool never ends (a store closed while its start-up
 * sweep waited for one hung the contract tests 30 s, one run in two).
 */
const reservedConnection = Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.uninterruptible(sql.reserve))

/** Runs the migrations not run yet; instances starting together wait for each other (an advisory lock). */
export const migrate = Effect.scoped(Effect.gen(function*() {
  const connection = yield* reservedConnection
  yield* connection.execute("SELECT pg_advisory_lock(hashtext('relay_migrations'))", [], undefined)
  return yield* Migrator.make({})({ loader: migrations, table: MIGRATIONS_TABLE }).pipe(
    Effect.ensuring(Effect.ignore(connection.execute("SELECT pg_advisory_unlock(hashtext('relay_migrations'))", [], undefined)))
  )
}))

/** The latest migration run on the database, 0 when none. */
export const migratedTo = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.flatMap(
    sql<{ readonly present: boolean }>`SELECT to_regclass(${MIGRATIONS_TABLE}) IS NOT NULL AS present`,
    (found) =>
      found[0]?.present !== true ? Effect.succeed(0) : Effect.map(
        sql.unsafe<{ readonly latest: number | null }>(`SELECT max(migration_id) AS latest FROM ${MIGRATIONS_TABLE}`),
        (rows) => Number(rows[0]?.latest ?? 0)
      )
  ))

// ---------------------------------------------------------------------------
// Retention: the memory store's bound and the file store's age, for a database all instances share

/** The file store's default too (FileTaskStorage's DEFAULT_MAX_TASK_AGE; not imported: it would split a chunk). */
export const DEFAULT_MAX_TASK_AGE = Duration.days(30)
const DEFAULT_SWEEP_EVERY = Duration.minutes(1)
/** Tasks one DELETE takes at most (with their events and push configs): no sweep holds rows or the WAL for long. */
const RETENTION_BATCH = 500

export interface RetentionPolicy {
  readonly maxTasks: number
  readonly maxAge: Duration.Duration
  /** Tasks per DELETE. */
  readonly batch: number
}

export const retentionPolicy = (options: PostgresStorageOptions = {}): RetentionPolicy => ({
  maxTasks: options.maxTasks ?? DEFAULT_MAX_TASKS,
  maxAge: Duration.decode(options.maxAge ?? DEFAULT_MAX_TASK_AGE),
  batch: RETENTION_BATCH
})

/**
 * One batch: deletes up to `limit` settled tasks (and, by cascade, their events and push configs)
 * matching `which`, least recently changed first, none leased to a live instance nor locked by a
 * write going on; the number deleted.
 */
const deleteSettled = (
  connection: SqlConnection,
  states: ReadonlyArray<V1.TaskState>,
  which: string,
  params: ReadonlyArray<unknown>,
  limit: number
) =>
  Effect.map(
    connection.execute(
      `WITH doomed AS (
        SELECT id FROM relay_tasks
        WHERE state IN (${sqlStates(states)}) AND ${which} AND (lease_until IS NULL OR lease_until < now())
        ORDER BY updated_at LIMIT ${Math.max(0, Math.floor(limit))}
        FOR UPDATE SKIP LOCKED
      )
      DELETE FROM relay_tasks USING doomed WHERE relay_tasks.id = doomed.id RETURNING relay_tasks.id`,
      params,
      undefined
    ),
    (rows) => rows.length
  )

/** Deletes in batches until a batch comes back short or `total` are gone; how many went. */
const deleteInBatches = (batch: number, total: number, deleteUpTo: (limit: number) => Effect.Effect<number, SqlError>) =>
  Effect.iterate({ deleted: 0, done: total <= 0 }, {
    while: (state) => !state.done,
    body: (state) => {
      const limit = Math.min(batch, total - state.deleted)
      return Effect.map(deleteUpTo(limit), (deleted) => ({
        deleted: state.deleted + deleted,
        done: deleted < limit || state.deleted + deleted >= total
      }))
    }
  }).pipe(Effect.map((state) => state.deleted))

const RETENTION_LOCK = "hashtext('relay_retention')"

/**
 * One sweep of the retention policy, by one instance at a time (a session advisory lock; the
 * others skip theirs): settled tasks whose last change is older than maxAge go, then, past maxTasks,
 * the least recently changed finished ones and then waiting ones, down to 90 % of it (as the memory
 * store). A working task never goes, whatever its age or their number. The number deleted, or
 * undefined when another instance was sweeping.
 */
export const sweepRetention = (policy: RetentionPolicy) =>
  Effect.scoped(Effect.gen(function*() {
    const connection = yield* reservedConnection
    const locked = yield* connection.execute(`SELECT pg_try_advisory_lock(${RETENTION_LOCK}) AS locked`, [], undefined)
    if (locked[0]?.locked !== true) return undefined
    return yield* Effect.gen(function*() {
      const old = yield* deleteInBatches(
        policy.batch,
        Number.POSITIVE_INFINITY,
        (limit) =>
          deleteSettled(
            connection,
            [...V1.TERMINAL_STATES, ...V1.INTERRUPTED_STATES],
            "updated_at < now() - $1 * interval '1 millisecond'",
            [Duration.toMillis(policy.maxAge)],
            limit
          )
      )
      const counted = yield* connection.execute("SELECT count(*) AS total FROM relay_tasks", [], undefined)
      const total = Number(counted[0]?.total ?? 0)
      if (total <= policy.maxTasks) return old
      let excess = total - Math.floor(policy.maxTasks * 0.9)
      let over = 0
      for (const states of [V1.TERMINAL_STATES, V1.INTERRUPTED_STATES]) {
        const deleted = yield* deleteInBatches(policy.batch, excess, (limit) => deleteSettled(connection, states, "true", [], limit))
        over += deleted
        excess -= deleted
      }
      return old + over
    }).pipe(
      Effect.ensuring(Effect.ignore(connection.execute(`SELECT pg_advisory_unlock(${RETENTION_LOCK})`, [], undefined)))
    )
  }))

/**
 * Sweeps at start, every `sweepEvery`, and after each tenth of maxTasks this instance created (in the
 * background: a create never waits for it). Requests made while a sweep runs become one more sweep
 * after it; failures are logged, and the next sweep retries.
 */
const keepRetention = (options: PostgresStorageOptions) =>
  Effect.gen(function*() {
    const policy = retentionPolicy(options)
    const client = yield* SqlClient.SqlClient
    const requests = yield* Queue.sliding<void>(1)
    const sweep = sweepRetention(policy).pipe(
      Effect.provideService(SqlClient.SqlClient, client),
      Effect.catchAllCause((cause) => Effect.logWarning("The PostgreSQL task store's retention sweep failed; the next one retries", cause))
    )
    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Queue.take(requests), sweep)))
    yield* Effect.forkScoped(
      Effect.repeat(Queue.offer(requests, undefined), Schedule.spaced(Duration.decode(options.sweepEvery ?? DEFAULT_SWEEP_EVERY)))
    )
    const sweepEveryCreates = Math.max(1, Math.floor(policy.maxTasks / 10))
    let created = 0
    /** Called after each task this instance created. */
    return Effect.suspend(() => ++created % sweepEveryCreates === 0 ? Queue.offer(requests, undefined) : Effect.void)
  })

// ---------------------------------------------------------------------------
// Rows

interface TaskRow {
  readonly task: string
  readonly version: number
  readonly queued: string | null
}

const NOTHING_QUEUED: ReadonlyArray<V1.Message> = []

const storedOf = (row: TaskRow): StoredTask => ({
  task: JSON.parse(row.task) as V1.Task,
  version: row.version,
  queued: row.queued === null ? NOTHING_QUEUED : JSON.parse(row.queued) as ReadonlyArray<V1.Message>
})

const statusTime = (task: V1.Task) => task.status.timestamp ?? ""

/**
 * The change a notification tells, when another instance wrote it: this instance handed out its own
 * writes as it made them, and reading them back from the log would cost a round trip each.
 */
const changedElsewhere = (payload: string, instance: string): TaskChanged | undefined => {
  const [version, state, origin, ...id] = payload.split(" ")
  const taskId = id.join(" ")
  return version === undefined || state === undefined || origin === instance || taskId === ""
    ? undefined
    : { _tag: "TaskChanged", taskId, version: Number(version), state: state as V1.TaskState }
}

const RESUMED: ChangesResumed = { _tag: "ChangesResumed" }

/** How long listening waits before it starts again, after the connection was lost: growing, at most a few seconds. */
const LISTEN_AGAIN = Schedule.exponential(Duration.millis(250)).pipe(Schedule.union(Schedule.spaced(Duration.seconds(5))))

/**
 * Other instances' changes, over a connection of their own that is probed three times per lease time
 * (as often as leases are renewed) and listened on again when lost, each loss told once.
 */
const changesHeard = (
  sql: PgClient.PgClient,
  instance: string,
  leaseTime: Duration.Duration
): Stream.Stream<TaskChanged | ChangesResumed> => {
  const url = sql.config.url === undefined ? "" : Redacted.value(sql.config.url)
  return notifications({
    url,
    channel: CHANNEL,
    applicationName: `relay notifications ${instance}`,
    probeEvery: Duration.divide(leaseTime, 3).pipe(Option.getOrElse(() => leaseTime)),
    describe: (error) => maskedReason(url, error)
  }).pipe(
    Stream.filterMap((notice): Option.Option<TaskChanged | ChangesResumed> =>
      notice._tag === "Listening" ? Option.some(RESUMED) : Option.fromNullable(changedElsewhere(notice.payload, instance))
    ),
    Stream.tapError((lost) => Effect.logWarning(`Lost the PostgreSQL notifications (${lost.reason}); listening again`)),
    Stream.retry(LISTEN_AGAIN),
    Stream.orDie
  )
}

/** Why the key text cannot seal push secrets, or undefined when it can. */
const storeKeyProblem = (key: string | undefined = process.env[STORE_KEY_VARIABLE]): string | undefined =>
  key !== undefined && key.length >= MIN_STORE_KEY_CHARS ?
    undefined :
    `${STORE_KEY_VARIABLE} must be set to a secret of at least ${MIN_STORE_KEY_CHARS} characters, the same on every instance: ` +
    "push tokens and webhook credentials are stored sealed with it (for example: export RELAY_STORE_KEY=$(openssl rand -base64 32))"

/** The key push secrets are sealed with: the option, else RELAY_STORE_KEY; none is an error (instances must share it). */
const storeKey = (given: string | undefined) => {
  const key = given ?? process.env[STORE_KEY_VARIABLE]
  const problem = storeKeyProblem(key)
  return problem === undefined ? Effect.succeed(key!) : Effect.fail(problem)
}

// ---------------------------------------------------------------------------
// Lists

interface Statement {
  readonly text: string
  readonly params: ReadonlyArray<unknown>
}

/** Whether PostgreSQL's text can hold `text` (no NUL): an id that it cannot names no stored row. */
const holdable = (text: string) => !text.includes("\u0000")

/**
 * A list's two statements: the count of the tasks its filters match, and its page, after the
 * cursor in list order (status time, then creation order, newest first). Each filter has an index
 * that keeps that order (relay_tasks_by_context, _by_state, _by_time; test/services/PostgresScale.test.ts holds
 * the plans to them), so a page reads its rows; the count reads the matching entries of that
 * index, which retention bounds.
 */
export const listStatements = (query: TaskQuery, after: PageCursor | undefined) => {
  const filters: Array<string> = []
  const params: Array<unknown> = []
  const filter = (clause: string, ...values: ReadonlyArray<unknown>) => {
    params.push(...values)
    filters.push(clause.replace(/\?/g, () => `$${params.length - values.length + 1}`))
  }
  if (query.contextId !== undefined) filter("context_id = ?", query.contextId)
  if (query.status !== undefined) filter("state = ?", query.status)
  if (query.statusTimestampAfter !== undefined) filter("status_time >= ?", query.statusTimestampAfter)
  const where = () => filters.length === 0 ? "" : `WHERE ${filters.join(" AND ")}`
  const count: Statement = { text: `SELECT count(*) AS total FROM relay_tasks ${where()}`, params: [...params] }
  if (after !== undefined) {
    params.push(after.timestamp, after.seq)
    filters.push(`(status_time, seq) < ($${params.length - 1}, $${params.length})`)
  }
  params.push(query.pageSize + 1)
  const page: Statement = {
    text: `SELECT task, status_time, seq FROM relay_tasks ${where()} ORDER BY status_time DESC, seq DESC LIMIT $${params.length}`,
    params
  }
  return { count, page }
}

// ---------------------------------------------------------------------------
// The storage

const orDie = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)

export const make = (options: PostgresStorageOptions = {}, sealer: Sealer, instance: string) =>
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const leaseTime = Duration.decode(options.leaseTime ?? leaseTimeFromEnvironment() ?? DEFAULT_LEASE_TIME)
    const leaseMillis = Duration.toMillis(leaseTime)
    const maxPageBytes = options.maxPageBytes ?? MAX_TASK_PAGE_BYTES
    const afterCreate = yield* keepRetention(options)

    const versionOf = (id: string) =>
      Effect.map(sql<{ readonly version: number }>`SELECT version FROM relay_tasks WHERE id = ${id}`, (rows) => rows[0]?.version)

    const create = (task: V1.Task) =>
      Effect.gen(function*() {
        const inserted = yield* sql<{ readonly version: number }>`
          INSERT INTO relay_tasks (id, context_id, state, status_time, version, task)
          VALUES (${task.id}, ${task.contextId ?? null}, ${task.status.state}, ${statusTime(task)}, 1, ${JSON.stringify(task)})
          ON CONFLICT (id) DO NOTHING RETURNING version`
        if (inserted.length > 0) {
          yield* Effect.asVoid(afterCreate)
          return { task, version: 1, queued: NOTHING_QUEUED } satisfies StoredTask
        }
        const found = (yield* versionOf(task.id)) ?? 0
        return yield* Effect.fail(new TaskVersionConflict({ taskId: task.id, expected: 0, found }))
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /**
     * The tasks this instance leased and has not given back. A terminal write gives this instance's
     * lease back in the same statement, so that the release after it needs no round trip (a lease a
     * renewal took again in between is given back by that release; one left on a finished task only
     * runs out: nothing takes a finished task).
     */
    const heldHere = new Set<string>()

    /**
     * One statement: the compare-and-set update, its log row and its notification (sent when the
     * statement commits), and the version found when the update did not apply.
     */
    const update = (id: string, write: TaskWrite, expectedVersion: number) =>
      Effect.gen(function*() {
        const task = write.task
        const ends = V1.isTerminalState(task.status.state)
        const taskJson = JSON.stringify(task)
        const setsQueued = write.queued !== undefined
        const queuedJson = write.queued === undefined || write.queued.length === 0 ? null : JSON.stringify(write.queued)
        const rows = yield* sql<{ readonly written: number | null; readonly queued: string | null; readonly found: number | null }>`
          WITH updated AS (
            UPDATE relay_tasks SET
              task = ${taskJson}, state = ${task.status.state}, status_time = ${statusTime(task)},
              queued = CASE WHEN ${setsQueued} THEN ${queuedJson}::text ELSE queued END,
              version = version + 1, updated_at = now(),
              lease_until = CASE WHEN ${ends} AND lease_owner = ${instance} THEN NULL ELSE lease_until END,
              lease_owner = CASE WHEN ${ends} AND lease_owner = ${instance} THEN NULL ELSE lease_owner END
            WHERE id = ${id} AND version = ${expectedVersion}
            RETURNING version, queued
          ), logged AS (
            INSERT INTO relay_task_events (task_id, version, event, task)
            SELECT ${id}, version, ${write.event === undefined ? null : JSON.stringify(write.event)}::text, ${taskJson} FROM updated
            RETURNING version
          ), notified AS (
            SELECT pg_notify(${CHANNEL}, version || ' ' || ${task.status.state} || ' ' || ${instance} || ' ' || ${id}) FROM logged
          )
          SELECT (SELECT version FROM updated) AS written, (SELECT queued FROM updated) AS queued,
            (SELECT version FROM relay_tasks WHERE id = ${id}) AS found, (SELECT count(*) FROM notified) AS notified`
        const row = rows[0]
        if (row?.written !== null && row?.written !== undefined) {
          if (ends) heldHere.delete(id)
          return Option.some<StoredTask>({
            task,
            version: row.written,
            queued: row.queued === null ? NOTHING_QUEUED : JSON.parse(row.queued) as ReadonlyArray<V1.Message>
          })
        }
        if (row?.found === null || row?.found === undefined) return Option.none()
        return yield* Effect.fail(new TaskVersionConflict({ taskId: id, expected: expectedVersion, found: row.found }))
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    /** Keyset pages: rows after the cursor in the list order, from the index of the filter. */
    const list = (query: TaskQuery) =>
      Effect.gen(function*() {
        const token = query.pageToken
        const after = token === undefined ? undefined : decodeCursor(token)
        if (token !== undefined && after === undefined) return yield* Effect.fail(new InvalidPageToken({ token }))
        if (query.contextId !== undefined && !holdable(query.contextId)) return { tasks: [], totalSize: 0 } satisfies TaskPage
        const statements = listStatements(query, after)
        const counted = yield* sql.unsafe<{ readonly total: string }>(statements.count.text, statements.count.params)
        const rows = yield* sql.unsafe<{ readonly task: string; readonly status_time: string; readonly seq: string }>(
          statements.page.text,
          statements.page.params
        )
        const page: Array<(typeof rows)[number]> = []
        let bytes = 0
        for (const row of rows.slice(0, query.pageSize)) {
          const size = Buffer.byteLength(row.task)
          if (page.length > 0 && bytes + bytesInPage(size, page.length) > maxPageBytes) break
          bytes += bytesInPage(size, page.length)
          page.push(row)
        }
        const last = page[page.length - 1]
        const more = rows.length > page.length
        return {
          tasks: page.map((row) => JSON.parse(row.task) as V1.Task),
          totalSize: Number(counted[0]?.total ?? 0),
          ...(more && last !== undefined ? { nextPageToken: encodeCursor({ timestamp: last.status_time, seq: Number(last.seq) }) } : {})
        } satisfies TaskPage
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const openConfig = (taskId: string, row: { readonly id: string; readonly generation: string; readonly sealed: string }) => {
      const opened = sealer.open(row.sealed, pushConfigRow(taskId, row.id))
      if (opened === undefined) {
        return Effect.as(
          Effect.logError(
            `Push config ${row.id} of task ${taskId} does not open with ${STORE_KEY_VARIABLE}: it was sealed under another key, left out`
          ),
          undefined
        )
      }
      return Effect.succeed<StoredPushConfig>({ config: JSON.parse(opened), generation: row.generation as ProtocolVersion })
    }

    const get = (id: string) =>
      !holdable(id) ? Effect.succeedNone : Effect.map(
        sql<TaskRow>`SELECT task, version, queued FROM relay_tasks WHERE id = ${id}`,
        (rows) => rows.length === 0 ? Option.none() : Option.some(storedOf(rows[0]!))
      ).pipe(orDie)

    const pushConfigs = (taskId: string) =>
      Effect.gen(function*() {
        if (!holdable(taskId)) return Option.none()
        const rows = yield* sql<{ readonly id: string | null; readonly generation: string | null; readonly sealed: string | null }>`
          SELECT c.id, c.generation, c.sealed FROM relay_tasks t LEFT JOIN relay_push_configs c ON c.task_id = t.id
          WHERE t.id = ${taskId} ORDER BY c.seq`
        if (rows.length === 0) return Option.none()
        const configs: Array<StoredPushConfig> = []
        for (const row of rows) {
          if (row.id === null || row.generation === null || row.sealed === null) continue
          const opened = yield* openConfig(taskId, { id: row.id, generation: row.generation, sealed: row.sealed })
          if (opened !== undefined) configs.push(opened)
        }
        return Option.some<ReadonlyArray<StoredPushConfig>>(configs)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const putPushConfig = (taskId: string, stored: StoredPushConfig) =>
      !holdable(taskId) ? Effect.succeedNone : Effect.map(
        sql`
          INSERT INTO relay_push_configs (task_id, id, generation, sealed)
          SELECT ${taskId}, ${stored.config.id ?? ""}, ${stored.generation},
            ${sealer.seal(JSON.stringify(stored.config), pushConfigRow(taskId, stored.config.id ?? ""))}
          WHERE EXISTS (SELECT 1 FROM relay_tasks WHERE id = ${taskId})
          ON CONFLICT (task_id, id) DO UPDATE SET generation = excluded.generation, sealed = excluded.sealed
          RETURNING id`,
        (rows) => rows.length === 0 ? Option.none() : Option.some(stored)
      ).pipe(orDie)

    const removePushConfig = (taskId: string, configId: string): Effect.Effect<Option.Option<boolean>> => {
      if (!holdable(taskId)) return Effect.succeedNone
      // A config id PostgreSQL cannot hold names no config: only whether the task is there is left to say.
      if (!holdable(configId)) return Effect.map(get(taskId), Option.as(false))
      return Effect.map(
        sql<{ readonly task: boolean; readonly removed: string }>`
          WITH removed AS (DELETE FROM relay_push_configs WHERE task_id = ${taskId} AND id = ${configId} RETURNING 1)
          SELECT EXISTS (SELECT 1 FROM relay_tasks WHERE id = ${taskId}) AS task, (SELECT count(*) FROM removed) AS removed`,
        (rows) => rows[0]?.task === true ? Option.some(Number(rows[0].removed) > 0) : Option.none()
      ).pipe(orDie)
    }

    const changes = changesHeard(sql, instance, leaseTime)

    const changesAfter = (taskId: string, version: number) =>
      Effect.map(
        sql<{ readonly version: number; readonly event: string | null; readonly task: string }>`
          SELECT version, event, task FROM relay_task_events WHERE task_id = ${taskId} AND version > ${version} ORDER BY version`,
        (rows) =>
          rows.map((row): LoggedChange => ({
            version: row.version,
            task: JSON.parse(row.task) as V1.Task,
            ...(row.event === null ? {} : { event: JSON.parse(row.event) as V1.StreamResponse })
          }))
      ).pipe(orDie)

    const hold = (taskIds: ReadonlyArray<string>) =>
      taskIds.length === 0 ? Effect.void : sql`
        UPDATE relay_tasks SET lease_owner = ${instance}, lease_until = now() + ${leaseMillis} * interval '1 millisecond'
        WHERE id IN ${sql.in(taskIds)}`.pipe(
        Effect.zipRight(Effect.sync(() => taskIds.forEach((id) => heldHere.add(id)))),
        orDie
      )

    const release = (taskId: string) =>
      Effect.suspend(() =>
        heldHere.delete(taskId)
          ? sql`UPDATE relay_tasks SET lease_owner = NULL, lease_until = NULL WHERE id = ${taskId} AND lease_owner = ${instance}`
          : Effect.void
      ).pipe(Effect.asVoid, orDie)

    const takeExpired = Effect.map(
      sql<{ readonly id: string }>`
        UPDATE relay_tasks SET lease_owner = ${instance}, lease_until = now() + ${leaseMillis} * interval '1 millisecond'
        WHERE id IN (
          SELECT id FROM relay_tasks
          WHERE lease_until < now() AND state NOT IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')
          FOR UPDATE SKIP LOCKED
        )
        RETURNING id`,
      (rows) =>
        rows.map((row) => {
          heldHere.add(row.id)
          return row.id
        })
    ).pipe(orDie)

    const deliveries = yield* pendingDeliveries(sql, instance, leaseTime)

    return TaskStorage.of({
      create,
      get,
      update,
      list,
      contextTasks: (contextId) =>
        !holdable(contextId) ? Effect.succeed([]) : Effect.map(
          sql<{ readonly task: string }>`SELECT task FROM relay_tasks WHERE context_id = ${contextId} ORDER BY seq`,
          (rows) => rows.map((row) => JSON.parse(row.task) as V1.Task)
        ).pipe(orDie),
      putPushConfig,
      pushConfigs,
      removePushConfig,
      deliveries,
      shared: { changes, changesAfter, leaseTime, hold, release, takeExpired }
    })
  })

// ---------------------------------------------------------------------------
// Pending push deliveries

interface DeliveryRow {
  readonly task_id: string
  readonly config_id: string
  readonly version: number
  readonly event: string
  readonly task: string
  readonly attempts: number
  readonly due: string
}

const deliveryOf = (row: DeliveryRow): PendingDelivery => ({
  taskId: row.task_id,
  configId: row.config_id,
  version: row.version,
  event: JSON.parse(row.event) as V1.StreamResponse,
  task: JSON.parse(row.task) as V1.Task,
  attempts: row.attempts,
  due: Number(row.due)
})

/**
 * The deliveries in relay_push_deliveries: each claimed by the instance that records it, which renews
 * its claims three times per lease time while it lives; a claim that ran out (its instance died) is
 * taken by one other instance (SKIP LOCKED: two never take the same row).
 */
const pendingDeliveries = (sql: PgClient.PgClient, instance: string, leaseTime: Duration.Duration) =>
  Effect.gen(function*() {
    const leaseMillis = Duration.toMillis(leaseTime)
    const leased = sql`now() + ${leaseMillis} * interval '1 millisecond'`
    const key = (delivery: PendingDelivery) =>
      sql`task_id = ${delivery.taskId} AND config_id = ${delivery.configId} AND version = ${delivery.version}`

    const record = (delivery: PendingDelivery) =>
      Effect.map(
        sql`
          INSERT INTO relay_push_deliveries (task_id, config_id, version, event, task, attempts, due, owner, lease_until)
          SELECT ${delivery.taskId}, ${delivery.configId}, ${delivery.version}, ${JSON.stringify(delivery.event)},
            ${JSON.stringify(delivery.task)}, ${delivery.attempts}, ${delivery.due}, ${instance}, ${leased}
          WHERE EXISTS (SELECT 1 FROM relay_tasks WHERE id = ${delivery.taskId})
          ON CONFLICT (task_id, config_id, version) DO NOTHING
          RETURNING 1`,
        (rows) => rows.length > 0
      ).pipe(Effect.orDie)

    const reschedule = (delivery: PendingDelivery) =>
      sql`UPDATE relay_push_deliveries SET attempts = ${delivery.attempts}, due = ${delivery.due}, lease_until = ${leased},
          event = ${JSON.stringify(delivery.event)}
        WHERE ${key(delivery)} AND owner = ${instance}`.pipe(Effect.asVoid, Effect.orDie)

    const settle = (delivery: PendingDelivery) =>
      sql`UPDATE relay_push_deliveries SET settled = true, event = NULL, task = NULL, owner = NULL, lease_until = NULL
        WHERE ${key(delivery)}`.pipe(Effect.asVoid, Effect.orDie)

    const claim = Effect.map(
      sql<DeliveryRow>`
        UPDATE relay_push_deliveries SET owner = ${instance}, lease_until = ${leased}
        WHERE (task_id, config_id, version) IN (
          SELECT task_id, config_id, version FROM relay_push_deliveries
          WHERE NOT settled AND lease_until < now()
          FOR UPDATE SKIP LOCKED
        )
        RETURNING task_id, config_id, version, event, task, attempts, due`,
      (rows) => rows.map(deliveryOf).sort(byWriteOrder)
    ).pipe(Effect.orDie)

    const renew = sql`UPDATE relay_push_deliveries SET lease_until = ${leased} WHERE owner = ${instance} AND NOT settled`.pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Renewing the claims of pending push deliveries failed", cause))
    )
    const renewing = yield* Effect.forkScoped(
      Effect.repeat(renew, Schedule.spaced(Duration.divide(leaseTime, 3).pipe(Option.getOrElse(() => leaseTime))))
    )
    // An instance that stops hands its claims over at once (its sender has stopped before its store, and
    // the renewal stops first here): the next one takes them all in one claim, in order, without waiting out the lease.
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        Fiber.interrupt(renewing),
        Effect.ignore(sql`UPDATE relay_push_deliveries SET lease_until = now() WHERE owner = ${instance} AND NOT settled`)
      )
    )

    return { record, reschedule, settle, claim } satisfies PendingDeliveries
  })

// ---------------------------------------------------------------------------
// Layers

/** The client for a connection URL, its failures told without the password. */
export const clientLayer = (url: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, TaskStoreUnavailable> =>
  PgClient.layer({ url: Redacted.make(url), applicationName: "relay", connectTimeout: Duration.seconds(5) }).pipe(
    Layer.mapError((error) => unavailable(url, maskedReason(url, error)))
  )

/** The cause's message, with the URL's password cut out should the driver repeat it. */
const maskedReason = (url: string, error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error)
  let password = ""
  try {
    password = decodeURIComponent(new URL(url).password)
  } catch {
    // no password to hide
  }
  return password === "" ? cause : cause.split(password).join("***")
}

/** Runs the migrations over the URL's database and ends (`--migrate-only`): the migrations run now. */
export const migrateOnly = (url: string) =>
  Effect.map(
    migrate.pipe(
      Effect.mapError((error) => unavailable(url, maskedReason(url, error))),
      Effect.provide(clientLayer(url))
    ),
    (ran) => ran.map(([id, name]) => `${id}_${name}`)
  )

/**
 * The PostgreSQL TaskStorage for a connection URL, its tables migrated first; what `--store
 * postgres://…` plugs in under `TaskStore.layerOver()`. `instance` names this process in leases.
 */
export const postgresStorage = (
  url: string,
  options: PostgresStorageOptions = {},
  instance: string = `${process.pid}-${crypto.randomUUID()}`
): Layer.Layer<TaskStorage, TaskStoreUnavailable> =>
  Layer.scoped(
    TaskStorage,
    Effect.gen(function*() {
      const key = yield* Effect.mapError(storeKey(options.storeKey), (reason) => unavailable(url, reason))
      yield* migrate.pipe(Effect.mapError((error) => unavailable(url, maskedReason(url, error))))
      return yield* make(options, sealerOf(key), instance)
    })
  ).pipe(Layer.provide(clientLayer(url)))

/** What `relay doctor` finds of a PostgreSQL store: reachable, migrated, writable, and the key set. */
export interface StoreCheck {
  readonly ok: boolean
  readonly detail: string
  readonly fix: string | null
}

export const checkStore = (url: string): Effect.Effect<StoreCheck> => {
  const shown = redactUrl(url)
  const problem = (detail: string, fix: string): StoreCheck => ({ ok: false, detail: `${shown}: ${detail}`, fix })
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const migrated = yield* migratedTo
    if (migrated < LATEST_MIGRATION) {
      return problem(
        migrated === 0 ? "reachable, its tables not created yet" : `reachable, migrated to ${migrated} of ${LATEST_MIGRATION}`,
        `relay server agent --store '${shown}' --migrate-only (with the real password), or start the server: it migrates at start`
      )
    }
    // has_table_privilege with a list of privileges holds when any one is held: each is asked apart, of every table.
    const rows = yield* sql<{ readonly writable: boolean }>`
      SELECT NOT pg_is_in_recovery() AND bool_and(
        has_table_privilege(name, 'INSERT') AND has_table_privilege(name, 'UPDATE') AND has_table_privilege(name, 'DELETE')
      ) AS writable
      FROM unnest(ARRAY['relay_tasks', 'relay_task_events', 'relay_push_configs', 'relay_push_deliveries']) AS name`
    if (rows[0]?.writable !== true) {
      return problem(
        "reachable and migrated, but not writable (a replica, or no write privilege)",
        "Point --store at the primary with a user that may write relay's tables"
      )
    }
    if (storeKeyProblem() !== undefined) {
      return problem("reachable, migrated and writable, but RELAY_STORE_KEY is not set", storeKeyProblem()!)
    }
    return { ok: true, detail: `${shown} (reachable, migrated, writable; push secrets sealed with RELAY_STORE_KEY)`, fix: null }
  }).pipe(
    Effect.provide(clientLayer(url)),
    Effect.catchAll((error) =>
      Effect.succeed(
        problem(
          `unreachable: ${error._tag === "TaskStoreUnavailable" ? error.reason : maskedReason(url, error)}`,
          "Start PostgreSQL, or fix the URL in RELAY_STORE / --store"
        )
      )
    )
  )
}
