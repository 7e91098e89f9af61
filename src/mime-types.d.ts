// mime-types ships no types; relay uses only this much of it.
declare module "mime-types" {
  /** The usual extension of a media type (`png` for `image/png`), false when it knows none. */
  export function extension(type: string): string | false
  /** The media type of a file name or extension, false when it knows none. */
  export function lookup(path: string): string | false
}
