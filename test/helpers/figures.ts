// What the stress suites share: a bounded pool of concurrent calls, and the one summary line
// each suite prints with the figures it measured (README: Reliability).

/** Runs `work(0..count-1)` with at most `concurrency` calls in flight; resolves with their results in order. */
export const runPool = async <A>(count: number, concurrency: number, work: (index: number) => Promise<A>): Promise<Array<A>> => {
  const results: Array<A> = new Array(count)
  let next = 0
  const worker = async () => {
    while (next < count) {
      const index = next++
      results[index] = await work(index)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker))
  return results
}

/** Prints `[reliability] <suite>: key=value, …` (one line, collected by the README's figures). */
export const reportFigures = (suite: string, figures: Readonly<Record<string, string | number>>): void => {
  const text = Object.entries(figures).map(([key, value]) => `${key}=${value}`).join(", ")
  console.log(`[reliability] ${suite}: ${text}`)
}

/** Heap in use after a full collection (the stress config runs node with --expose-gc), in MiB. */
export const settledHeapMiB = async (): Promise<number> => {
  const collect = (globalThis as { gc?: () => void }).gc
  if (collect === undefined) throw new Error("run with --expose-gc (vitest.stress.config.ts)")
  for (let round = 0; round < 3; round++) {
    collect()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return process.memoryUsage().heapUsed / 1024 / 1024
}

/** Open TCP sockets of this process (clients and servers alike). */
export const openSockets = (): number => process.getActiveResourcesInfo().filter((kind) => kind === "TCPSocketWrap").length
