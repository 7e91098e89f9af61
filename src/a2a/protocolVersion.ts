/**
 * The A2A protocol generations relay speaks, by Major.Minor: one name for the client's dialects, the
 * agent server's doors, push configs and webhook bodies.
 */
import { Schema } from "effect"

export const ProtocolVersion = Schema.Literal("1.0", "0.3")
export type ProtocolVersion = typeof ProtocolVersion.Type

export const SUPPORTED_VERSIONS: ReadonlyArray<ProtocolVersion> = ProtocolVersion.literals
