/**
 * The JSON text of a finished task, made once. The task storage serialises a task as it finishes
 * (to keep it packed, and for the file store's journal line); the answer that carries the same
 * task object, a blocking SendMessage's or a GetTask's, embeds that text instead of serialising
 * the task again (bench/README.md, "The task's JSON made once"). Tasks are immutable values, so the
 * text of an object stays true; it is held weakly, and goes with the object.
 */
import type * as V1 from "./v1.js"

const texts = new WeakMap<object, string>()

/** Remembers the task's JSON text (JSON.stringify's, as the caller made it). */
export const rememberTaskJson = (task: V1.Task, json: string): void => {
  texts.set(task, json)
}

/**
 * JSON.stringify(value) when it is already known: the value is a task whose text is remembered
 * (GetTask's answer), or `{ task }` holding one (SendMessage's, as the 1.0 wire has it).
 */
export const knownJson = (value: unknown): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const own = texts.get(value)
  if (own !== undefined || !("task" in value) || typeof value.task !== "object" || value.task === null) return own
  for (const key in value) if (key !== "task") return undefined
  const inner = texts.get(value.task)
  return inner === undefined ? undefined : `{"task":${inner}}`
}
