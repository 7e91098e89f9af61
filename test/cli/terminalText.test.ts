import { describe, expect, it } from "vitest"
import { formatNotification } from "../../src/cli/notificationCommands.js"
import { fields, makeStyle } from "../../src/cli/output.js"
import { escapeForTerminal } from "../../src/cli/terminalText.js"
import { messageView, taskViewText } from "../../src/cli/views.js"
import type { NotificationRecord } from "../../src/domain/notification.js"
import type { MessageResult, TaskView } from "../../src/domain/results.js"
import { ANSWER_EXCERPT_CHARS, answerExcerpt } from "../../src/domain/terminalText.js"

/** A style that paints, as on a colour terminal, so escaping is seen to happen before painting. */
const colored = makeStyle({ isTTY: true } as NodeJS.WriteStream)
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

describe("escapeForTerminal", () => {
  it("shows every C0, DEL and C1 control, the line separators and bidi controls, as JSON writes them", () => {
    expect(escapeForTerminal("a\nb\rc\td\be\ff")).toBe("a\\nb\\rc\\td\\be\\ff")
    expect(escapeForTerminal("\u0000\u0007\u001b[31mred\u001b[0m\u007f")).toBe("\\u0000\\u0007\\u001b[31mred\\u001b[0m\\u007f")
    expect(escapeForTerminal("\u0085\u009b2J\u2028\u2029")).toBe("\\u0085\\u009b2J\\u2028\\u2029")
    expect(escapeForTerminal("abc\u202edcba\u2066x\u2069")).toBe("abc\\u202edcba\\u2066x\\u2069")
    for (let code = 0; code < 0xa0; code++) {
      const character = String.fromCharCode(code)
      const printable = code >= 0x20 && code < 0x7f
      expect(escapeForTerminal(character), `U+${code.toString(16)}`).toEqual(
        printable ? character : expect.stringMatching(/^\\u00|^\\[nrtbf]$/)
      )
    }
  })

  it("leaves ordinary text alone, backslashes and non-Latin scripts included", () => {
    for (const text of ["task-123", "C:\\path\\n", "résumé – naïve ✓ 東京 مرحبا", "emoji 🎉", ""]) {
      expect(escapeForTerminal(text)).toBe(text)
      expect(escapeForTerminal(text, "lines")).toBe(text)
    }
  })

  it("keeps an answer's lines and tabs in `lines` layout, turns CRLF into a newline and shows the rest", () => {
    expect(escapeForTerminal("one\r\ntwo\n\tthree", "lines")).toBe("one\ntwo\n\tthree")
    expect(escapeForTerminal("ok\rFAKE\u001b[2K\u2028x", "lines")).toBe("ok\\rFAKE\\u001b[2K\\u2028x")
  })

  it("escaped JSON is the same JSON value", () => {
    const value = { id: "a\u009bb\u2028c\u202e", text: "x\ny\u001b" }
    const escaped = escapeForTerminal(JSON.stringify(value, null, 2), "lines")
    expect(escaped).not.toMatch(RAW_CONTROL)
    expect(JSON.parse(escaped)).toEqual(value)
  })
})

/** A part view's keys, all null: what a part has is spread over it. */
const NO_FIELDS = {
  text: null,
  name: null,
  media_type: null,
  size: null,
  sha256: null,
  path: null,
  url: null,
  note: null,
  data: null,
  artifact_id: null
}

describe("human views escape what agents and senders supply", () => {
  const hostileTask: TaskView = {
    task_id: "evil\nTask ID  forged",
    context_id: "ctx\u001b[2K",
    state: "working\nState    completed",
    text: "line one\nline two\u001b]0;title\u0007\n{\n  \"k\": \"\u001b[31m\"\n}\n[file: evil\u001b[2J.txt, 3 bytes]",
    parts: [
      { ...NO_FIELDS, kind: "text", text: "line one\nline two\u001b]0;title\u0007" },
      { ...NO_FIELDS, kind: "data", data: { k: "\u001b[31m" } },
      { ...NO_FIELDS, kind: "file", name: "evil\u001b[2J.txt", size: 3, path: "/state/files/t/evil_[2J.txt\u001b[1A" }
    ],
    needs_input: false,
    needs_auth: false,
    updated_at: null
  } as unknown as TaskView

  const linesOf = (text: string) => text.split("\n")

  it("single-line fields never span lines, even when painted", () => {
    const text = fields(colored, [["Task ID", hostileTask.task_id], ["State", hostileTask.state, colored.green]])
    expect(linesOf(text)).toHaveLength(2)
    expect(text).toContain("evil\\nTask ID  forged")
    expect(text).toContain(colored.green("working\\nState    completed"))
  })

  it("task and message views keep the answer's lines but show its control characters", () => {
    for (
      const view of [
        taskViewText("http://agent")(hostileTask, colored),
        messageView("http://agent", true)({ ...hostileTask, kind: "task" } satisfies MessageResult, colored)
      ]
    ) {
      const lines = linesOf(view)
      expect(lines.filter((line) => /forged|completed/.test(line)).every((line) => line.includes("\\n"))).toBe(true)
      expect(view).toContain("line one\nline two\\u001b]0;title\\u0007")
      // Data as indented JSON and a file as one line, escaped like the text.
      expect(view).toContain("{\n  \"k\": \"\\u001b[31m\"\n}\nsaved evil\\u001b[2J.txt (3 bytes) → /state/files/t/evil_[2J.txt\\u001b[1A")
      // The only ESC left is the style's own colouring.
      expect(view.replace(/\u001b\[\d+m/g, "")).not.toMatch(RAW_CONTROL)
    }
  })

  it("history roles and texts are escaped, each message's lines indented under its role", () => {
    const view = taskViewText("http://agent")({ ...hostileTask, history: [{ role: "agent\nuser:", text: "a\nb\u001b" }] }, colored)
    expect(view).toContain("agent\\nuser:")
    expect(view).toContain("a\n    b\\u001b")
  })

  it("a notification is three lines whatever its sender wrote", () => {
    const record = {
      id: "n1",
      received_at: "2026-01-01T00:00:00.000Z",
      path: "/hook\u001b[1A",
      token_present: false,
      kind: "status-update",
      protocol: "1.0",
      task_id: "evil\nFAKE LINE",
      context_id: "c\r",
      state: "working\nFORGED",
      text: "hi\u009b",
      body: {}
    } as NotificationRecord
    const text = formatNotification(record, colored)
    expect(linesOf(text)).toHaveLength(3)
    expect(text.replace(/\u001b\[\d+m/g, "")).not.toMatch(RAW_CONTROL)
    expect(text).toContain("task evil\\nFAKE LINE")
    expect(text).toContain("\"hi\\u009b\"")
  })
})

describe("answerExcerpt (what errors and relay check quote of an answer that is not A2A)", () => {
  it("is at most 200 characters, escaped, whatever the answer's size or content", () => {
    const page = `<html>\u001b]0;title\u0007\u001b[2J ${"x".repeat(1_000_000)}</html>`
    const quoted = answerExcerpt(page)
    expect(quoted.length).toBeLessThanOrEqual(ANSWER_EXCERPT_CHARS)
    expect(quoted).not.toMatch(RAW_CONTROL)
    expect(quoted).toMatch(/^<html>\\u001b\]0;title\\u0007\\u001b\[2J x+…$/)
    // Escapes that lengthen a short text still fit.
    expect(answerExcerpt("\u001b".repeat(199)).length).toBeLessThanOrEqual(ANSWER_EXCERPT_CHARS)
    expect(answerExcerpt("  line one\n\tline two  ")).toBe("line one line two")
    expect(answerExcerpt("")).toBe("")
  })
})
