// mime-types ships no types; relay uses only this much of it (a CommonJS module: its exports are the default).
declare module "mime-types" {
  const mimeTypes: {
    /** The usual extension of a media type (`png` for `image/png`), false when it knows none. */
    extension(type: string): string | false
    /** The media type of a file name or extension, false when it knows none. */
    lookup(path: string): string | false
  }
  export default mimeTypes
}
