// What a file is by its first bytes (domain/mediaTypes.ts): each image and audio format relay
// shows inline is told by its leading bytes, and nothing else passes for one.
import { describe, expect, it } from "vitest"
import { audioTypeOf, imageFormatName, imageTypeOf, isTextLike } from "../../src/domain/mediaTypes.js"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"

const bytes = (...pieces: ReadonlyArray<string | ReadonlyArray<number>>) =>
  Buffer.concat(pieces.map((piece) => (typeof piece === "string" ? Buffer.from(piece, "latin1") : Buffer.from(piece))))

const ANYTHING = [bytes(""), bytes("hello"), bytes("%PDF-1.7"), bytes([0x00, 0x01, 0x02]), bytes("RIFF\0\0\0\0AVI ")]

describe("imageTypeOf", () => {
  it.each([
    ["image/png", Buffer.from(IMAGE_PNG_BASE64, "base64")],
    ["image/jpeg", bytes([0xff, 0xd8, 0xff, 0xe0], "\0\x10JFIF")],
    ["image/gif", bytes("GIF89a\x01\0\x01\0")],
    ["image/webp", bytes("RIFF\x24\0\0\0WEBPVP8 ")]
  ])("knows %s by its first bytes", (type, file) => expect(imageTypeOf(file)).toBe(type))

  it("takes nothing else for an image (text, PDF, too short, another RIFF, a GIF of no known version)", () => {
    for (const file of [...ANYTHING, bytes([0x89, 0x50, 0x4e]), bytes("RIFF\0\0\0\0WAVEfmt "), bytes("GIF8xa")]) {
      expect(imageTypeOf(file)).toBeUndefined()
    }
  })

  it("names the formats it knows, and no other media type", () => {
    expect(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"].map(imageFormatName)).toEqual([
      "PNG",
      "JPEG",
      "GIF",
      "WebP",
      undefined
    ])
  })
})

describe("audioTypeOf", () => {
  it.each([
    ["audio/wav", bytes("RIFF\x24\0\0\0WAVEfmt ")],
    ["audio/mpeg", bytes("ID3\x04\0\0")],
    ["audio/mpeg", bytes([0xff, 0xfb, 0x90, 0x64])],
    ["audio/aac", bytes([0xff, 0xf1, 0x50, 0x80])],
    ["audio/ogg", bytes("OggS\0\x02")],
    ["audio/flac", bytes("fLaC\0\0\0\x22")],
    ["audio/mp4", bytes("\0\0\0\x20ftypM4A ")],
    ["audio/webm", bytes([0x1a, 0x45, 0xdf, 0xa3, 0x9f])]
  ])("knows %s by its first bytes", (type, file) => expect(audioTypeOf(file)).toBe(type))

  it("takes nothing else for audio (text, PDF, a PNG, a WebP)", () => {
    const others = [...ANYTHING, Buffer.from(IMAGE_PNG_BASE64, "base64"), bytes("RIFF\x24\0\0\0WEBPVP8 ")]
    for (const file of others) expect(audioTypeOf(file)).toBeUndefined()
  })
})

describe("isTextLike", () => {
  it("is text/*, JSON and the other text formats; not binaries", () => {
    for (const type of ["text/plain", "text/csv", "application/json", "application/ld+json", "application/yaml"]) {
      expect(isTextLike(type)).toBe(true)
    }
    for (const type of ["application/pdf", "application/octet-stream", "image/svg", ""]) expect(isTextLike(type)).toBe(false)
  })
})
