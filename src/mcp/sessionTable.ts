/**
 * The open MCP sessions of an HTTP transport, least recently used first. Past `max`, opening a
 * session closes the least recently used one: clients that never end their sessions (no DELETE,
 * no disconnect) cannot grow the server without bound, and the client of a closed session gets
 * 404 and initializes again, as the MCP spec's session management says.
 *
 * A session being opened holds a place from the moment room is made for it until it is added or
 * given up: opens at the same time would otherwise each see room and all be made. A session being
 * closed (evicted, or ended by its client) holds its place until its close ends, so that a new
 * server is made only once the old one is gone.
 */

export interface OpenSession<T> {
  readonly transport: T
  /** Ends the session (its server and transport). */
  readonly close: () => Promise<void>
}

/** A place held for one session being opened. */
export interface Place<T> {
  /** Puts the opened session in the place. */
  readonly fill: (id: string, session: OpenSession<T>) => void
  /** Whether `fill` was called. */
  readonly filled: () => boolean
}

export interface SessionTableOptions {
  /** How long an opener waits for an evicted session's close before taking its place anyway. Default 5 s. */
  readonly closeWaitMs?: number | undefined
}

const DEFAULT_CLOSE_WAIT_MS = 5_000

/** Resolves when `closing` does, or after `ms`, whichever comes first. */
const awaitAtMost = (closing: Promise<unknown>, ms: number) =>
  new Promise<void>((resolve) => {
    // Not kept for its own sake: a close that hangs must not hold the process open at its end.
    const timer = setTimeout(resolve, ms).unref()
    void closing.catch(() => undefined).finally(() => {
      clearTimeout(timer)
      resolve()
    })
  })

export const makeSessionTable = <T>(max: number, onEvicted: (id: string) => void, options: SessionTableOptions = {}) => {
  const closeWaitMs = options.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS
  const open = new Map<string, OpenSession<T>>()
  /** Places held by sessions being opened or closed. */
  let held = 0

  /** Closes the session; its place stays held until then (a close that hangs gives it up after a while, or it would be held for good). */
  const closing = (session: OpenSession<T>) => {
    held += 1
    return awaitAtMost(session.close(), closeWaitMs)
  }

  /** Closes the least recently used session, its place taken over by the caller once it is closed. */
  const evictOne = async () => {
    const [oldest] = open
    if (oldest === undefined) return false
    const [id, session] = oldest
    open.delete(id)
    onEvicted(id)
    await closing(session)
    return true
  }

  /** A place, evicting one session if none is free; false when every place is held by an open or a close in progress. */
  const takePlace = async () => {
    if (open.size + held < max) {
      held += 1
      return true
    }
    return evictOne()
  }

  return {
    max,
    /** The session's transport, now the most recently used; undefined when it is not open. */
    use: (id: string): T | undefined => {
      const session = open.get(id)
      if (session === undefined) return undefined
      open.delete(id)
      open.set(id, session)
      return session.transport
    },
    /** The session ended (its client ended it, or went away): closed, its place held until then. Nothing when it is not open. */
    release: (id: string): void => {
      const session = open.get(id)
      if (session === undefined) return
      open.delete(id)
      void closing(session).then(() => {
        held -= 1
      })
    },
    /**
     * Runs `run` with a place for one session, making room for it, and gives the place back if
     * `run` ends (or fails) without filling it. False, without running it, when every place is
     * held by an open or a close in progress: evicting one of those would only hand its place on.
     */
    withPlace: async (run: (place: Place<T>) => Promise<void>): Promise<boolean> => {
      if (!(await takePlace())) return false
      let state: "held" | "filled" | "given back" = "held"
      const place: Place<T> = {
        fill: (id, session) => {
          if (state !== "held") throw new Error(`MCP session ${id}: its place was ${state}`)
          state = "filled"
          held -= 1
          open.set(id, session)
        },
        filled: () => state === "filled"
      }
      try {
        await run(place)
      } finally {
        if (state === "held") {
          state = "given back"
          held -= 1
        }
      }
      return true
    },
    closeAll: () => Promise.allSettled([...open.values()].map((session) => session.close()))
  }
}

export type SessionTable<T> = ReturnType<typeof makeSessionTable<T>>
