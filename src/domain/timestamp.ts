/**
 * Timestamps as ProtoJSON writes a google.protobuf.Timestamp: RFC 3339 with an upper-case `T`,
 * `Z` or a ±hh:mm offset, up to nine fraction digits, years 0001 to 9999 (A2A §5.6.1). Date.parse
 * is far more lenient ("1", "-1" and "12/31/2020" all parse) and no library at hand checks
 * exactly this grammar, hence the pattern and the range checks below.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/

const NANOS_PER_MILLI = 1_000_000

/**
 * The first whole millisecond (since the epoch) at or after an RFC 3339 timestamp, or undefined
 * when the text is not one (a malformed one, or a day, hour or offset out of range).
 */
export const timestampCeilMillis = (text: string): number | undefined => {
  const match = RFC3339.exec(text)
  if (match === null) return undefined
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const offsetMinutes = match[8] === undefined ? 0 : (match[8] === "-" ? -1 : 1) * (Number(match[9]) * 60 + Number(match[10]))
  if (year < 1 || hour > 23 || minute > 59 || second > 59 || Number(match[9] ?? 0) > 23 || Number(match[10] ?? 0) > 59) {
    return undefined
  }
  const date = new Date(0)
  // setUTCFullYear, unlike Date.UTC, takes years below 100 as they are.
  date.setUTCFullYear(year, month - 1, day)
  // A day or month out of range rolls over into the next; such a date is not the one written.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  date.setUTCHours(hour, minute, second, 0)
  const nanos = Number((match[7] ?? "").padEnd(9, "0"))
  return date.getTime() - offsetMinutes * 60_000 + Math.ceil(nanos / NANOS_PER_MILLI)
}
