/**
 * What a binding does: carry one encoded operation to an endpoint and bring back its answer,
 * whole or as a stream of events. One file per binding implements it; operations.ts picks the
 * one the dialect's wire request names.
 */
import type { Effect, Stream } from "effect"
import type { WireRequest } from "../../a2a/dialects.js"
import type * as V1 from "../../a2a/v1.js"
import type { A2aClientError } from "../../domain/clientErrors.js"
import type { ClientState } from "./state.js"
import type { Endpoint, Target } from "./target.js"

export type WireTag = WireRequest<unknown>["_tag"]

/** The wire requests of one binding. */
export type WireOf<Tag extends WireTag, A> = Extract<WireRequest<A>, { readonly _tag: Tag }>

export interface Transport<Tag extends WireTag> {
  readonly unary: <A>(state: ClientState, target: Target, endpoint: Endpoint, wire: WireOf<Tag, A>) => Effect.Effect<A, A2aClientError>
  readonly stream: (
    state: ClientState,
    target: Target,
    endpoint: Endpoint,
    wire: WireOf<Tag, V1.StreamResponse>
  ) => Effect.Effect<Stream.Stream<V1.StreamResponse, A2aClientError>, A2aClientError>
}

/** A transport for every kind of wire request the dialects produce. */
export type Transports = { readonly [Tag in WireTag]: Transport<Tag> }
