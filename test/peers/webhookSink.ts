// A loopback push-notification receiver for tests: records every POST and lets a test
// wait (with a timeout) for the deliveries it expects instead of sleeping.
import http from "node:http"
import { closeServer, listenOnLoopback, readBodyText, tryParseJson } from "./httpUtil.js"

export interface WebhookDelivery {
  /** Path without the query string. */
  readonly path: string
  readonly url: string
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** Parsed JSON body, or undefined when the body is not JSON (see `rawBody`). */
  readonly body: unknown
  readonly rawBody: string
  readonly receivedAt: number
}

export type DeliveryPredicate = (delivery: WebhookDelivery) => boolean

export interface WebhookSinkOptions {
  /** HTTP status answered to every POST. Default 200. */
  readonly status?: number
}

export interface WebhookSink {
  /** `http://127.0.0.1:<port>`; POST to any path under it. */
  readonly url: string
  readonly deliveries: WebhookDelivery[]
  /** Resolve with the first delivery (already received or future) matching; reject after timeoutMs. */
  waitFor(predicate: DeliveryPredicate, timeoutMs?: number): Promise<WebhookDelivery>
  /** Resolve once `count` deliveries match (returns them in arrival order); reject after timeoutMs. */
  waitForCount(predicate: DeliveryPredicate, count: number, timeoutMs?: number): Promise<WebhookDelivery[]>
  close(): Promise<void>
}

export const DEFAULT_WAIT_MS = 3000

interface Waiter {
  /** Returns true when satisfied (and settled). */
  readonly check: () => boolean
  readonly fail: (error: Error) => void
}

const pathOf = (url: string): string => url.split("?")[0] ?? url

/** Start a webhook receiver on 127.0.0.1:0. */
export const startWebhookSink = async (options: WebhookSinkOptions = {}): Promise<WebhookSink> => {
  const deliveries: WebhookDelivery[] = []
  const waiters = new Set<Waiter>()

  const notifyWaiters = (): void => {
    for (const waiter of waiters) if (waiter.check()) waiters.delete(waiter)
  }

  const server = http.createServer((req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { Allow: "POST" }).end()
      return
    }
    readBodyText(req)
      .then((rawBody) => {
        const url = req.url ?? "/"
        deliveries.push({
          path: pathOf(url),
          url,
          headers: { ...req.headers },
          body: tryParseJson(rawBody),
          rawBody,
          receivedAt: Date.now()
        })
        res.writeHead(options.status ?? 200).end()
        notifyWaiters()
      })
      .catch(() => res.writeHead(400).end())
  })
  const url = await listenOnLoopback(server)

  const waitForCount = (predicate: DeliveryPredicate, count: number, timeoutMs = DEFAULT_WAIT_MS): Promise<WebhookDelivery[]> =>
    new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined
      const waiter: Waiter = {
        check: () => {
          const matching = deliveries.filter(predicate)
          if (matching.length < count) return false
          clearTimeout(timer)
          resolve(matching.slice(0, count))
          return true
        },
        fail: (error) => {
          clearTimeout(timer)
          reject(error)
        }
      }
      if (waiter.check()) return
      timer = setTimeout(() => {
        waiters.delete(waiter)
        const seen = deliveries.filter(predicate).length
        waiter.fail(new Error(`webhook sink: ${seen}/${count} matching deliveries after ${timeoutMs} ms (${deliveries.length} received)`))
      }, timeoutMs)
      waiters.add(waiter)
    })

  return {
    url,
    deliveries,
    waitFor: async (predicate, timeoutMs) => {
      const [first] = await waitForCount(predicate, 1, timeoutMs)
      if (first === undefined) throw new Error("webhook sink: no delivery")
      return first
    },
    waitForCount,
    close: async () => {
      for (const waiter of waiters) waiter.fail(new Error("webhook sink closed"))
      waiters.clear()
      await closeServer(server)
    }
  }
}
