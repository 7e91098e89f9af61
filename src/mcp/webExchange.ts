/**
 * The bridge between express and the SDK's web-standard streamable HTTP transport (a web Request
 * in, a web Response out). The answer's body is read as fast as the transport writes it, so what
 * a client leaves unread waits in the session's outbox, where it is counted (backpressure.ts),
 * rather than in a web stream's queue that nothing measures (the SDK enqueues without waiting).
 */
import type { Request, Response } from "express"
import type { Backpressure } from "./backpressure.js"

/** The request as the transport reads it: method, URL and headers (express has parsed the body already). */
export const webRequestOf = (req: Request): globalThis.Request => {
  const headers = new Headers()
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    for (const value of values ?? []) headers.append(name, value)
  }
  return new globalThis.Request(new URL(req.originalUrl, `http://${req.headers.host ?? "localhost"}`), { method: req.method, headers })
}

/** Writes `response` to `res` through the session's pace; resolves when the body is read or the client goes away. */
export const sendWebResponse = async (response: globalThis.Response, res: Response, pace: Backpressure): Promise<void> => {
  res.writeHead(response.status, Object.fromEntries(response.headers))
  if (response.body === null) return void res.end()
  // An event stream may stay quiet for long: the client gets its headers now.
  res.flushHeaders()
  const outbox = pace.outbox(res)
  const reader = response.body.getReader()
  // A client gone (or cut off) cancels the stream, which tells the transport to forget it.
  const cancel = () => void reader.cancel().catch(() => undefined)
  res.once("close", cancel)
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) outbox.send(chunk.value)
    outbox.end()
  } catch {
    res.destroy()
  } finally {
    res.off("close", cancel)
  }
}
