/**
 * Disks that fill up, for the notification log's ENOSPC tests: a real tmpfs of a few KiB when
 * this runs as root and may mount one, or a disk simulated at the log's write (its `write` option)
 * that behaves as the kernel does: a write takes what fits (a short write), and one with no room
 * at all fails with ENOSPC.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/** A `size` tmpfs mounted on a fresh directory, or undefined when not root or the mount is refused. */
export const mountTmpfs = (size: string): { readonly dir: string; readonly unmount: () => void } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-small-disk-"))
  if (spawnSync("mount", ["-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir]).status !== 0) {
    Fs.rmdirSync(dir)
    return undefined
  }
  return {
    dir,
    unmount: () => {
      spawnSync("umount", [dir])
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** A disk with `room` bytes left (unlimited while undefined), for NotificationLog's `write` option. */
export const simulatedDisk = (room?: number) => {
  const disk = {
    room,
    write: (fd: number, bytes: Buffer): number => {
      if (disk.room === undefined) return Fs.writeSync(fd, bytes)
      if (disk.room === 0) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
      const taken = Fs.writeSync(fd, bytes, 0, Math.min(disk.room, bytes.length))
      disk.room -= taken
      return taken
    }
  }
  return disk
}
