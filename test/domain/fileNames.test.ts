/**
 * domain/fileNames: a name an agent gave a file becomes one plain, visible, bounded name inside
 * the folder it is saved in, whatever the agent wrote.
 */
import { describe, expect, it } from "vitest"
import { MAX_NAME_BYTES, numberedName, safeFileName } from "../../src/domain/fileNames.js"

const safe = (name: string | null) => safeFileName(name, "file-1.bin")

describe("safeFileName", () => {
  it("keeps only the last segment of a path, in either spelling", () => {
    expect(safe("../../x")).toBe("x")
    expect(safe("/etc/passwd")).toBe("passwd")
    expect(safe("..\\..\\Windows\\win.ini")).toBe("win.ini")
    expect(safe("a/b/")).toBe("file-1.bin")
  })

  it("hides nothing: leading dots go, and names of dots alone are the fallback", () => {
    expect(safe(".bashrc")).toBe("bashrc")
    expect(safe("...ssh")).toBe("ssh")
    expect(safe("..")).toBe("file-1.bin")
    expect(safe(".")).toBe("file-1.bin")
    expect(safe("report. . ")).toBe("report")
  })

  it("replaces NUL, control, bidi and Windows-refused characters", () => {
    expect(safe("a\u0000b.txt")).toBe("a_b.txt")
    expect(safe("red\u001b[31m.txt")).toBe("red_[31m.txt")
    expect(safe("evil\u202etxt.exe")).toBe("evil_txt.exe")
    expect(safe("a<b>c:d\"e|f?g*.txt")).toBe("a_b_c_d_e_f_g_.txt")
    expect(safe("line\nbreak")).toBe("line_break")
    expect(safe("\u0000\u0000")).toBe("file-1.bin")
  })

  it("avoids Windows' reserved device names, with or without an extension, in any case", () => {
    expect(safe("CON")).toBe("_CON")
    expect(safe("nul.txt")).toBe("_nul.txt")
    expect(safe("com1")).toBe("_com1")
    expect(safe("LPT9.log")).toBe("_LPT9.log")
    expect(safe("CONSOLE.txt")).toBe("CONSOLE.txt")
    // The console's input and output, which Windows opens as devices too.
    expect(safe("CONIN$")).toBe("_CONIN$")
    expect(safe("conout$.txt")).toBe("_conout$.txt")
    expect(safe("CONIN$x")).toBe("CONIN$x")
  })

  it("uses the fallback for no name at all", () => {
    expect(safe(null)).toBe("file-1.bin")
    expect(safe("")).toBe("file-1.bin")
    expect(safe("   ")).toBe("file-1.bin")
  })

  it("bounds a long name in bytes of UTF-8, keeping its extension and whole characters", () => {
    const long = safe(`${"a".repeat(300)}.pdf`)
    expect(long).toBe(`${"a".repeat(MAX_NAME_BYTES - 4)}.pdf`)
    const wide = safe(`${"€".repeat(150)}.png`)
    expect(Buffer.byteLength(wide)).toBeLessThanOrEqual(MAX_NAME_BYTES)
    expect(wide.endsWith("€.png")).toBe(true)
    expect(wide).not.toContain("\uFFFD")
    const emoji = safe("😀".repeat(100))
    expect(Buffer.byteLength(emoji)).toBe(MAX_NAME_BYTES)
    expect([...emoji].every((character) => character === "😀")).toBe(true)
  })

  it("keeps unicode names as they are (composed)", () => {
    expect(safe("résumé.txt")).toBe("résumé.txt")
    expect(safe("re\u0301sume\u0301.txt")).toBe("résumé.txt")
    expect(safe("日本語のファイル.csv")).toBe("日本語のファイル.csv")
  })
})

describe("numberedName", () => {
  it("puts the number before the extension", () => {
    expect(numberedName("hello.txt", 1)).toBe("hello (1).txt")
    expect(numberedName("README", 2)).toBe("README (2)")
    expect(numberedName("a.tar.gz", 3)).toBe("a.tar (3).gz")
  })
})
