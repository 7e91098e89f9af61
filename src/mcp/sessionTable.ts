/**
 * The open MCP sessions of an HTTP transport, least recently used first. Past `max`, opening a
 * session closes the least recently used one: clients that never end their sessions (no DELETE,
 * no disconnect) cannot grow the server without bound, and the client of a closed session gets
 * 404 and initializes again, as the MCP spec's session management says.
 */

export interface OpenSession<T> {
  readonly transport: T
  /** Ends the session (its server and transport). */
  readonly close: () => Promise<void>
}

export const makeSessionTable = <T>(max: number, onEvicted: (id: string) => void) => {
  const open = new Map<string, OpenSession<T>>()
  return {
    /** The session's transport, now the most recently used; undefined when it is not open. */
    use: (id: string): T | undefined => {
      const session = open.get(id)
      if (session === undefined) return undefined
      open.delete(id)
      open.set(id, session)
      return session.transport
    },
    add: (id: string, session: OpenSession<T>) => void open.set(id, session),
    remove: (id: string) => void open.delete(id),
    /** Closes the least recently used sessions until one more fits. */
    makeRoom: async () => {
      for (const [id, session] of open) {
        if (open.size < max) return
        open.delete(id)
        onEvicted(id)
        await session.close().catch(() => undefined)
      }
    },
    closeAll: () => Promise.allSettled([...open.values()].map((session) => session.close()))
  }
}

export type SessionTable<T> = ReturnType<typeof makeSessionTable<T>>
