// A stand-in for a service inside a network (an admin API, a metadata endpoint): it counts every
// request that reaches it and answers each with a secret, in a body that is not A2A.
import http from "node:http"
import { closeServer, listenOnLoopback } from "./httpUtil.js"

/** What the stand-in hands out: found in any output, it means relay sent a request and echoed the reply. */
export const INTERNAL_SECRET = "internal-secret-5c1f0e9a7d3b"

export interface InternalService {
  readonly baseUrl: string
  /** Requests that reached it so far. */
  readonly requestCount: () => number
  readonly close: () => Promise<void>
}

export const startInternalService = async (): Promise<InternalService> => {
  let count = 0
  const server = http.createServer((req, res) => {
    count++
    req.resume()
    res.writeHead(200, { "content-type": "text/html" })
    // The secret first, then raw escape sequences and a long tail: an echo of the reply shows all three.
    res.end(`<html>credentials=${INTERNAL_SECRET} \u001b]0;owned\u0007\u001b[2J ${"x".repeat(4000)}</html>`)
  })
  const baseUrl = await listenOnLoopback(server)
  return { baseUrl, requestCount: () => count, close: () => closeServer(server) }
}
