/**
 * Amounts written the short way people type them: durations (`20ms`, `2s`, `1.5m`) and byte
 * sizes (`512B`, `64KB`, `1MB`), for `--latency` and the test agent's scenarios.
 */
import { Duration } from "effect"

const AMOUNT = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i

/** The amount times its unit's factor; undefined for an unknown unit or a malformed number. */
const parseAmount = (text: string, units: Readonly<Record<string, number>>): number | undefined => {
  const match = AMOUNT.exec(text.trim())
  if (match === null) return undefined
  const factor = units[(match[2] ?? "").toLowerCase()]
  return factor === undefined ? undefined : Number(match[1]) * factor
}

const MILLIS_PER: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 }

/** `250ms`, `2s`, `1.5s`, `1m`; a bare `0` is no time at all. */
export const parseDuration = (text: string): Duration.Duration | undefined => {
  if (text.trim() === "0") return Duration.zero
  const millis = parseAmount(text, MILLIS_PER)
  return millis === undefined ? undefined : Duration.millis(Math.round(millis))
}

const BYTES_PER: Readonly<Record<string, number>> = {
  b: 1,
  "": 1,
  kb: 1024,
  kib: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2
}

/** `512`, `512B`, `64KB`, `1MB` (KB and MB are 1024-based, like KiB and MiB) as whole bytes. */
export const parseByteSize = (text: string): number | undefined => {
  const bytes = parseAmount(text, BYTES_PER)
  return bytes === undefined ? undefined : Math.round(bytes)
}
