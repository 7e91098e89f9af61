/**
 * The HTTP client every outgoing request uses: @effect/platform-node's undici client, loaded and
 * built on the first request rather than at start-up. undici is a megabyte of code that `relay mcp`
 * parsed before it could answer `tools/list`, though it needs it only once an agent is contacted.
 * The undici agent lives as long as the layer's scope (closed when the command ends).
 */
import { HttpClient } from "@effect/platform"
import { Context, Effect, Layer } from "effect"

export const make = Effect.gen(function*() {
  const scope = yield* Effect.scope
  const undici = yield* Effect.cached(
    Effect.promise(() => import("@effect/platform-node/NodeHttpClient")).pipe(
      Effect.flatMap((module) => Layer.buildWithScope(module.layerUndici, scope)),
      Effect.map((context) => Context.get(context, HttpClient.HttpClient))
    )
  )
  // No tracer is installed, so a request's span (its URL and every header copied into attributes)
  // was work on every request that nobody read.
  return HttpClient.make((request) => Effect.flatMap(undici, (client) => client.execute(request))).pipe(
    HttpClient.withTracerDisabledWhen(() => true)
  )
})

export const layer = Layer.scoped(HttpClient.HttpClient, make)
