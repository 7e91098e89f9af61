/**
 * How far V8 lets the agent server's heap grow. After each full GC, V8 sets the next one at up to
 * 4× what survived it (on machines with a large heap limit, which is most), so after a burst of
 * requests the server held several times its live objects, and keeps it: a server that idles
 * after the burst never reaches the next full GC. Growing by at most 2× holds less after the same
 * load, for twice as many full GCs and a little more CPU per request; the young generation, where
 * request garbage dies, is left as it is: shrinking it cost far more CPU (figures: bench/README.md).
 * (A V8 flag set at run time also makes V8 refuse the code caches of chunks loaded afterwards,
 * src/codeCacheLoader.ts's and Node's: the few the server loads later compile as without a cache.)
 */
import { setFlagsFromString } from "node:v8"

/** The old generation may grow to at most (1 + this/100)× what survived the last full GC. */
export const HEAP_GROWING_PERCENT = 100

const GROWING_FLAG = /--heap[-_]growing[-_]percent/

/** The V8 flags to set, none when the person running relay set the growth themselves (NODE_OPTIONS, node flags). */
export const heapFlags = (nodeOptions: string | undefined, execArgv: ReadonlyArray<string>): ReadonlyArray<string> =>
  GROWING_FLAG.test(nodeOptions ?? "") || execArgv.some((arg) => GROWING_FLAG.test(arg))
    ? []
    : [`--heap-growing-percent=${HEAP_GROWING_PERCENT}`]

/** Sets them for this process: V8 reads this one at every full GC, so setting it once started works. */
export const limitHeapGrowth = () => {
  for (const flag of heapFlags(process.env.NODE_OPTIONS, process.execArgv)) setFlagsFromString(flag)
}
