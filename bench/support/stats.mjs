// The few statistics the benchmarks report.

/** The value below which `fraction` of the samples fall (nearest rank on the sorted samples). */
export const percentile = (samples, fraction) => {
  if (samples.length === 0) throw new Error("no samples")
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))
  return sorted[rank]
}

/** The middle value (mean of the two middle ones for an even count). */
export const median = (samples) => {
  if (samples.length === 0) throw new Error("no samples")
  const sorted = [...samples].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/** Milliseconds since `start` (a process.hrtime.bigint() reading). */
export const elapsedMs = (start) => Number(process.hrtime.bigint() - start) / 1e6
