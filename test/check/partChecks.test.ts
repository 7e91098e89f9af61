// relay check's file and data checks (issue 29 item 11): a file part and a data part are accepted
// when the card's input modes allow them; answers' file parts are well formed. Each proved against
// the broken stub's switchable faults, and run against relay's own agent on every interface.
import { afterEach, describe, expect, it } from "vitest"
import { checkById } from "../../src/domain/conformance.js"
import { startAgent } from "../servers/agentHarness.js"
import { checksFor, type Fault, PART_FAULTS, startBrokenAgent } from "./brokenAgent.js"
import { resultsOf, runCheck } from "./checkHarness.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((close) => close()))
})
const started = <T extends { close(): Promise<void> }>(handle: T): T => {
  cleanups.push(() => handle.close())
  return handle
}

const PART_CHECKS = ["messaging.file-part", "messaging.data-part", "messaging.answer-file-parts"]

const statusOf = (report: Awaited<ReturnType<typeof runCheck>>, id: string) => resultsOf(report, id).map((r) => r.status)
const detailOf = (report: Awaited<ReturnType<typeof runCheck>>, id: string) => resultsOf(report, id)[0]?.detail ?? ""

const brokenWith = async (faults: ReadonlyArray<Fault>, inputModes?: ReadonlyArray<string>) =>
  started(await startBrokenAgent({ faults, ...(inputModes === undefined ? {} : { inputModes }) }))

describe("the file and data checks against the broken agent", () => {
  it("report each planted part fault with the check meant for it, and nothing else fails", async () => {
    const agent = await brokenWith(PART_FAULTS)
    const report = await runCheck(agent.baseUrl)
    const failing = [...new Set(report.results.filter((r) => r.status === "failed").map((r) => r.id))].sort()
    expect(failing).toEqual(checksFor(PART_FAULTS))
    expect(detailOf(report, "messaging.data-part")).toMatch(
      /^a message with a data part, which the card's input modes allow, was refused: HTTP 200.*-32602/
    )
    expect(detailOf(report, "messaging.answer-file-parts")).toBe(
      "file part \"relay-check.txt\": both bytes (raw) and a URL (url), where exactly one belongs"
    )
    // SHOULD-level, citing the v1.0 sections.
    expect(resultsOf(report, "messaging.answer-file-parts")[0]).toMatchObject({ severity: "should", spec: "A2A v1.0 §4.1.6" })
    expect(resultsOf(report, "messaging.data-part")[0]).toMatchObject({ severity: "should", spec: "A2A v1.0 §3.3.2, §4.1.6, §4.4.1" })
    expect(statusOf(report, "messaging.file-part")).toEqual(["passed"])
  }, 30_000)

  it("a refused file part fails messaging.file-part, and leaves no answer for the shape check", async () => {
    const agent = await brokenWith(["a file part is refused with ContentTypeNotSupported"])
    const report = await runCheck(agent.baseUrl, { only: PART_CHECKS })
    expect(report.results.map((r) => [r.id, r.status])).toEqual([
      ["messaging.file-part", "failed"],
      ["messaging.data-part", "passed"],
      ["messaging.answer-file-parts", "skipped"]
    ])
    expect(detailOf(report, "messaging.file-part")).toMatch(
      /^a message with a file part \(text\/plain, 19 bytes\), which the card's input modes allow, was refused: .*-32005/
    )
    expect(detailOf(report, "messaging.answer-file-parts")).toMatch(/^no answer to look at: /)
  })

  it("a file part without a media type in the answer is a warning", async () => {
    const agent = await brokenWith(["answered file parts have no media type"])
    const report = await runCheck(agent.baseUrl, { only: PART_CHECKS })
    expect(resultsOf(report, "messaging.answer-file-parts")[0]).toMatchObject({
      status: "warning",
      detail: "file part \"relay-check.txt\" has no media type"
    })
    expect(report.summary).toMatchObject({ failed: 0, warnings: 1 })
  })

  it("without faults all three pass; each message is sent once, however many checks read its answer", async () => {
    const agent = await brokenWith([])
    const report = await runCheck(agent.baseUrl, { only: PART_CHECKS })
    expect(report.results.map((r) => [r.id, r.status, r.detail])).toEqual([
      ["messaging.file-part", "passed", "a message with a file part (text/plain, 19 bytes): a Task, completed"],
      ["messaging.data-part", "passed", "a message with a data part: a Task, completed"],
      ["messaging.answer-file-parts", "passed", "1 file part, each with bytes and a media type"]
    ])
    expect(report.tasks_created.length).toBe(2)
  })

  it("sends a file of the first input mode it has one for, and skips what the card does not allow, saying why", async () => {
    const png = await runCheck((await brokenWith([], ["text", "image/*"])).baseUrl, { only: PART_CHECKS })
    expect(detailOf(png, "messaging.file-part")).toBe("a message with a file part (image/png, 70 bytes): a Task, completed")
    expect(detailOf(png, "messaging.answer-file-parts")).toBe("1 file part, each with bytes and a media type")
    const csv = await runCheck((await brokenWith([], ["Text/CSV; charset=utf-8"])).baseUrl, { only: ["messaging.file-part"] })
    expect(detailOf(csv, "messaging.file-part")).toBe("a message with a file part (text/csv, 19 bytes): a Task, completed")

    const pdfOnly = await runCheck((await brokenWith([], ["application/pdf"])).baseUrl, { only: PART_CHECKS })
    expect(pdfOnly.results.map((r) => [r.id, r.status, r.detail])).toEqual([
      [
        "messaging.file-part",
        "skipped",
        "the card's input modes (application/pdf) name no media type relay check has a file for (text/*, image/png, application/octet-stream, */*)"
      ],
      ["messaging.data-part", "skipped", "the card's input modes (application/pdf) do not allow application/json"],
      // It looks at the answer to a text message instead: this agent answers text with text.
      ["messaging.answer-file-parts", "skipped", "the answer to a text message has no file part to look at"]
    ])
  })
})

describe("the file and data checks against relay's own agent", () => {
  it("run on both generations and both bindings, citing each generation's sections", async () => {
    const agent = started(await startAgent({ model: "echo" }))
    const report = await runCheck(agent.baseUrl, { only: PART_CHECKS })
    for (const id of PART_CHECKS) {
      expect(resultsOf(report, id).map((r) => `${r.interface?.protocol}/${r.interface?.binding} ${r.status}`), id).toEqual(
        ["1.0/jsonrpc", "1.0/rest", "0.3/jsonrpc", "0.3/rest"].map((iface) => `${iface} passed`)
      )
    }
    const cited = (id: string) => resultsOf(report, id).map((r) => r.spec)
    expect(cited("messaging.file-part")).toEqual([
      ...Array(2).fill("A2A v1.0 §3.3.2, §4.1.6, §4.4.1"),
      ...Array(2).fill("A2A v0.3 §5.5, §6.5.2, §8.2")
    ])
    expect(cited("messaging.data-part")).toEqual([
      ...Array(2).fill("A2A v1.0 §3.3.2, §4.1.6, §4.4.1"),
      ...Array(2).fill("A2A v0.3 §5.5, §6.5.3, §8.2")
    ])
    expect(cited("messaging.answer-file-parts")).toEqual([...Array(2).fill("A2A v1.0 §4.1.6"), ...Array(2).fill("A2A v0.3 §6.5.2, §6.6")])
    for (const id of PART_CHECKS) expect(checkById(id)?.severity).toBe("should")
  }, 30_000)
})
