/**
 * Edits of an MCP client's configuration text: read the servers, add or replace one entry, remove
 * one. Pure text in, text out, through format-preserving libraries (jsonc-parser, toml-patch), so
 * everything else in the file, comments and layout included, stays as it was.
 */
import * as TOML from "@decimalturn/toml-patch"
import { Either } from "effect"
import * as Jsonc from "jsonc-parser"
import { parseJsonText } from "./jsonProblems.js"
import type { McpClient } from "./mcpClients.js"

type Servers = Readonly<Record<string, unknown>>
/** Why the text cannot be used; the caller names the file. */
type Unparsable = string

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const parseJson = (text: string, client: McpClient): Either.Either<Record<string, unknown>, Unparsable> => {
  if (text.trim() === "") return Either.right({})
  const parsed = parseJsonText(text, { comments: client.format === "jsonc", trailingCommas: client.trailingCommas === true })
  if ("problem" in parsed) return Either.left(parsed.problem)
  return isRecord(parsed.value) ? Either.right(parsed.value) : Either.left("the top level is not an object")
}

/** toml-patch says "Error parsing TOML (2, 13):", the line in question, a caret and the reason, on four lines. */
const tomlProblem = (message: string) => {
  const position = /\((\d+), (\d+)\)/.exec(message)
  const reason = message.trim().split("\n").at(-1)!
  return position === null ? reason : `${reason} at line ${position[1]}, column ${position[2]}`
}

const parseToml = (text: string): Either.Either<Record<string, unknown>, Unparsable> =>
  Either.try({
    try: () => TOML.parse(text) as Record<string, unknown>,
    catch: (error) => tomlProblem(error instanceof Error ? error.message : String(error))
  })

const parseDocument = (text: string, client: McpClient) => client.format === "toml" ? parseToml(text) : parseJson(text, client)

/** The servers the file configures, by name; a servers key that is not a table is unparsable for us. */
export const serversIn = (text: string, client: McpClient): Either.Either<Servers, Unparsable> =>
  Either.flatMap(parseDocument(text, client), (document) => {
    const servers = document[client.serversKey]
    if (servers === undefined) return Either.right({})
    return isRecord(servers) ? Either.right(servers) : Either.left(`"${client.serversKey}" is not an object`)
  })

/** One level of the indentation the file already uses, so an added entry looks like its neighbours. */
const indentUnitOf = (text: string): string => {
  const indented = /^([ \t]+)\S/m.exec(text)?.[1]
  return indented?.startsWith("\t") ? "\t" : " ".repeat(indented?.length ?? 2)
}

/** A value printed at a nesting depth, with the file's indentation. */
const pretty = (value: unknown, unit: string, depth: number) =>
  JSON.stringify(value, null, unit).split("\n").join(`\n${unit.repeat(depth)}`)

/**
 * Inserts a property as the last of an object. jsonc-parser's own formatting would re-indent the
 * lines around the insertion point (a neighbour written on one line, say), so the parser only
 * locates and the new text is laid out here.
 */
const insertProperty = (text: string, object: Jsonc.Node, depth: number, key: string, value: unknown, unit: string) => {
  const property = `${JSON.stringify(key)}: ${pretty(value, unit, depth)}`
  const last = object.children?.at(-1)
  if (last === undefined) {
    return Jsonc.applyEdits(text, [
      { offset: object.offset + 1, length: 0, content: `\n${unit.repeat(depth)}${property}\n${unit.repeat(depth - 1)}` }
    ])
  }
  const end = last.offset + last.length
  // A comment after the last member on its line stays with that member: the new one goes on the next line.
  const lineEnd = text.indexOf("\n", end)
  const commented = lineEnd >= 0 && /^\s*(\/\/.*|\/\*.*\*\/\s*)$/.test(text.slice(end, lineEnd))
  return Jsonc.applyEdits(text, [
    { offset: end, length: 0, content: "," },
    { offset: commented ? lineEnd : end, length: 0, content: `\n${unit.repeat(depth)}${property}` }
  ])
}

const editJson = (text: string, client: McpClient, name: string, entry: unknown): string => {
  const base = text.trim() === "" ? "{}\n" : text
  // Without formatting options the parser's edits touch the entry's own text and nothing around it.
  if (entry === undefined) return Jsonc.applyEdits(base, Jsonc.modify(base, [client.serversKey, name], undefined, {}))
  const unit = indentUnitOf(base)
  const root = Jsonc.parseTree(base)!
  const current = Jsonc.findNodeAtLocation(root, [client.serversKey, name])
  if (current !== undefined) {
    return Jsonc.applyEdits(base, [{ offset: current.offset, length: current.length, content: pretty(entry, unit, 2) }])
  }
  const servers = Jsonc.findNodeAtLocation(root, [client.serversKey])
  return servers === undefined
    ? insertProperty(base, root, 1, client.serversKey, { [name]: entry }, unit)
    : insertProperty(base, servers, 2, name, entry, unit)
}

/** The TOML of `[<serversKey>.<name>]` and its keys alone, without the implied `[<serversKey>]` header. */
export const tomlSection = (client: McpClient, name: string, entry: unknown): string => {
  const text = TOML.stringify({ [client.serversKey]: { [name]: entry } }, { inlineTableStart: 3 })
  return text.slice(text.indexOf("\n[") + 1).trimEnd() + "\n"
}

/** Replaces the value of `name` (undefined removes it) keeping every other line of the file as it was. */
const patchToml = (text: string, client: McpClient, name: string, entry: unknown): string => {
  const document = TOML.parse(text) as Record<string, unknown>
  const servers = { ...(document[client.serversKey] as Record<string, unknown> | undefined) }
  const removing = entry === undefined && name in servers
  if (entry === undefined) delete servers[name]
  else servers[name] = entry
  const updated = { ...document, [client.serversKey]: servers }
  // No `[mcp_servers]` header left behind with nothing under it.
  if (Object.keys(servers).length === 0 && (removing || document[client.serversKey] === undefined)) {
    delete updated[client.serversKey]
  }
  return TOML.patch(text, updated, { inlineTableStart: 3 })
}

const withFinalNewline = (text: string) => text.trim() === "" ? "" : text.endsWith("\n") ? text : `${text}\n`

/**
 * Codex entries are written as their own `[mcp_servers.<name>]` table, as the README shows: an inline
 * table (`a2a-relay = { … }`) cannot take a later `[mcp_servers.a2a-relay.env]`. An entry already in
 * table form is patched where it stands; any other is taken out and the table appended.
 */
const editToml = (text: string, client: McpClient, name: string, entry: unknown): string => {
  const header = tomlSection(client, name, {}).trim()
  const inTableForm = text.split("\n").some((line) => line.replace(/\s+/g, "") === header)
  if (entry === undefined || inTableForm) return withFinalNewline(patchToml(text, client, name, entry))
  const rest = withFinalNewline(patchToml(text, client, name, undefined).trimEnd())
  return `${rest}${rest === "" ? "" : "\n"}${tomlSection(client, name, entry)}`
}

const edit = (text: string, client: McpClient, name: string, entry: unknown) =>
  Either.map(
    serversIn(text, client),
    () => client.format === "toml" ? editToml(text, client, name, entry) : editJson(text, client, name, entry)
  )

/** The text with `name` set to `entry` under the client's servers key. */
export const withServer = (text: string, client: McpClient, name: string, entry: unknown) => edit(text, client, name, entry)

/** The text without the server `name` (unchanged when it is not there). */
export const withoutServer = (text: string, client: McpClient, name: string) => edit(text, client, name, undefined)

/** Deep equality of two parsed JSON/TOML values, to tell an entry already in place. */
export const sameValue = (left: unknown, right: unknown): boolean => {
  if (Array.isArray(left) && Array.isArray(right)) {
    return left.length === right.length && left.every((item, index) => sameValue(item, right[index]))
  }
  if (isRecord(left) && isRecord(right)) {
    const keys = Object.keys(left)
    return keys.length === Object.keys(right).length && keys.every((key) => sameValue(left[key], right[key]))
  }
  return left === right
}
