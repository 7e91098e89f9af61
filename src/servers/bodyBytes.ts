/**
 * A request body's bytes as they arrive, for the local servers' doors (HTTP bodies in exchange.ts,
 * gRPC messages in agent/grpcServer.ts): the first chunk as it came, then all of them copied into
 * one buffer, doubled as it fills. A Buffer kept per chunk costs many times the bytes it holds, and a
 * client may send a chunk (an HTTP chunk, an HTTP/2 DATA frame) per byte.
 */
export class BodyBytes {
  private buffer: Buffer = Buffer.alloc(0)
  /** The buffer is the first chunk itself, not one of ours to write into. */
  private borrowed = true
  /** The size the body says it has, once known and within the limit: the buffer grows to no more. */
  private expected: number | undefined
  length = 0

  /** The size announced (a Content-Length, a gRPC prefix), once it was checked against the limit. */
  expect(size: number): void {
    this.expected = size
  }

  add(chunk: Buffer): void {
    if (this.length === 0) {
      this.buffer = chunk
      this.length = chunk.length
      return
    }
    const needed = this.length + chunk.length
    if (this.borrowed || needed > this.buffer.length) this.grow(needed)
    chunk.copy(this.buffer, this.length)
    this.length = needed
  }

  /** What has arrived, as one buffer. */
  get bytes(): Buffer {
    return this.buffer.subarray(0, this.length)
  }

  /** Forgets what arrived (a body refused or given up). */
  clear(): void {
    this.buffer = Buffer.alloc(0)
    this.borrowed = true
    this.length = 0
  }

  /**
   * Doubles the buffer, or makes it the expected size when that is less and enough: no slack once
   * the body fits, and a client that announces a large body and sends a byte of it is not given the
   * whole at once.
   */
  private grow(needed: number): void {
    const doubled = 2 * this.length
    const expected = this.expected
    const size = Math.max(needed, expected !== undefined && expected >= needed ? Math.min(expected, doubled) : doubled)
    const larger = Buffer.allocUnsafe(size)
    this.buffer.copy(larger, 0, 0, this.length)
    this.buffer = larger
    this.borrowed = false
  }
}
