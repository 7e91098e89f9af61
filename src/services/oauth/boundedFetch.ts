/**
 * The fetch openid-client sends every request with (discovery, token, device authorization,
 * revocation): an answer is read only up to a limit, so an authorization server cannot make relay
 * hold more than that. Reading stops, and the request is aborted, at the first chunk past the
 * limit, or at once when Content-Length announces more; openid-client then gets the bytes read.
 */
import type { CustomFetch } from "openid-client"

/** Thrown inside openid-client's call; openIdClient.ts finds it in the error's causes. */
export class AnswerTooLarge extends Error {
  constructor(readonly url: string, readonly limit: number, readonly declared?: number | undefined) {
    super(`the answer from ${url} is over the ${limit}-byte limit`)
  }
}

/** Statuses whose Response may not have a body (the Fetch standard's null body statuses). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

const readAtMost = async (url: string, body: ReadableStream<Uint8Array>, limit: number): Promise<Buffer> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) return Buffer.concat(chunks, size)
    size += value.length
    if (size > limit) {
      await reader.cancel()
      throw new AnswerTooLarge(url, limit)
    }
    chunks.push(value)
  }
}

export const boundedFetch = (limit: number): CustomFetch => async (url, { body, ...options }) => {
  const response = await fetch(url, { ...options, ...(body === undefined ? {} : { body }) })
  const declared = Number(response.headers.get("content-length") ?? undefined)
  if (declared > limit) {
    await response.body?.cancel()
    throw new AnswerTooLarge(url, limit, declared)
  }
  const read = response.body === null ? null : await readAtMost(url, response.body, limit)
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : read, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}

/** The AnswerTooLarge behind an error openid-client threw (it wraps what fetch throws), if any. */
export const answerTooLargeIn = (error: unknown): AnswerTooLarge | undefined => {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    if (cause instanceof AnswerTooLarge) return cause
    cause = (cause as { readonly cause?: unknown }).cause
  }
  return undefined
}
