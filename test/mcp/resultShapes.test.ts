/**
 * The tools' output schemas are held to the programs' result types at compile time (src/mcp/resultShapes.ts):
 * `npm test` type-checks this file, so each drift below must stay a type error, and each alike pair must compile.
 */
import { describe, expect, expectTypeOf, it } from "vitest"
import * as z from "zod"
import type { AnswerPart } from "../../src/domain/answerParts.js"
import type { CheckReport } from "../../src/domain/conformance.js"
import type { TaskView } from "../../src/domain/results.js"
import { type Alike, answerPart, checkReportShape, shapeOf, taskViewShape } from "../../src/mcp/resultShapes.js"
import type { ClearResult } from "../../src/programs/sessions.js"

type Output<S extends z.ZodRawShape> = z.output<z.ZodObject<S>>

describe("Alike: a zod shape and a result type", () => {
  it("holds the shared shapes to the domain types", () => {
    expectTypeOf<Alike<Output<typeof taskViewShape>, TaskView>>().toEqualTypeOf<true>()
    expectTypeOf<Alike<z.output<typeof answerPart>, AnswerPart>>().toEqualTypeOf<true>()
    expectTypeOf<Alike<Output<typeof checkReportShape>, CheckReport>>().toEqualTypeOf<true>()
  })

  it("notices a field the schema lacks, or one the result lacks, even when optional", () => {
    const { updated_at: _, ...withoutUpdatedAt } = taskViewShape
    expectTypeOf<Alike<Output<typeof withoutUpdatedAt>, TaskView>>().toEqualTypeOf<false>()
    expectTypeOf<Alike<Output<typeof taskViewShape>, TaskView & { readonly artifacts_omitted?: number }>>().toEqualTypeOf<false>()
    expectTypeOf<Alike<Output<typeof taskViewShape>, Omit<TaskView, "truncated">>>().toEqualTypeOf<false>()
  })

  it("notices a field made optional, nullable or narrower, at any depth", () => {
    expectTypeOf<Alike<{ a: { b?: number } }, { a: { b: number } }>>().toEqualTypeOf<false>()
    expectTypeOf<Alike<{ a: string | null }, { a: string }>>().toEqualTypeOf<false>()
    expectTypeOf<Alike<{ parts: Array<{ kind: "text" | "file" }> }, { parts: ReadonlyArray<{ kind: "text" | "file" | "data" }> }>>()
      .toEqualTypeOf<false>()
    expectTypeOf<Alike<Output<typeof checkReportShape>, Omit<CheckReport, "summary"> & { summary: { passed: number } }>>()
      .toEqualTypeOf<false>()
    // The card's JSON object, not any value.
    expectTypeOf<Alike<{ card: Record<string, unknown> }, { card: unknown }>>().toEqualTypeOf<false>()
  })

  it("reads a union of objects as one object, and a plain string as any string type", () => {
    const clearShape = { all: z.boolean(), agent_url: z.string().optional(), cleared: z.number(), credentials_kept: z.boolean() }
    expectTypeOf<Alike<Output<typeof clearShape>, ClearResult>>().toEqualTypeOf<true>()
    expectTypeOf<Alike<{ state: string }, { state: "working" | `unknown (${string})` }>>().toEqualTypeOf<true>()
    expectTypeOf<Alike<{ state: "working" }, { state: string }>>().toEqualTypeOf<false>()
  })
})

describe("shapeOf", () => {
  it("returns the shape it was given when it is alike the result type", () => {
    const shape = shapeOf<{ readonly id: string; readonly size: number | null }>()({ id: z.string(), size: z.number().nullable() })
    expect(Object.keys(shape)).toEqual(["id", "size"])
  })

  it("does not compile for a shape that drifted", () => {
    // @ts-expect-error size is nullable in the result type
    const drifted = shapeOf<{ readonly id: string; readonly size: number | null }>()({ id: z.string(), size: z.number() })
    expect(Object.keys(drifted)).toEqual(["id", "size"])
  })
})
