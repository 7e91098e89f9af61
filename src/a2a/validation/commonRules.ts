/** Rules for every card generation: media types, skill ids, scheme references, interfaces, signatures, fields. */
import type { CardGeneration } from "../cardGeneration.js"
import { a2aV03AgentCardSchema } from "../schemas/a2aV03Schema.js"
import { at, type Context, isObject, isPresent, type JsonObject, quote } from "./context.js"
import { listOf, objectItems } from "./fields.js"
import { V03_LEFTOVERS } from "./v1Rules.js"
import { checkBinding, checkInterfaceUrl, checkMediaTypes } from "./values.js"

export const checkAllMediaTypes = (ctx: Context, card: JsonObject): void => {
  checkMediaTypes(ctx, listOf(card, "defaultInputModes"), "/defaultInputModes")
  checkMediaTypes(ctx, listOf(card, "defaultOutputModes"), "/defaultOutputModes")
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) {
    checkMediaTypes(ctx, listOf(skill, "inputModes"), at(path, "inputModes"))
    checkMediaTypes(ctx, listOf(skill, "outputModes"), at(path, "outputModes"))
  }
}

export const checkUniqueSkillIds = (ctx: Context, card: JsonObject): void => {
  const firstIndex = new Map<string, number>()
  listOf(card, "skills")?.forEach((skill, index) => {
    const id = isObject(skill) ? skill["id"] : undefined
    if (typeof id !== "string" || id === "") return
    const first = firstIndex.get(id)
    if (first === undefined) {
      firstIndex.set(id, index)
      return
    }
    ctx.report(
      "skill.duplicate_id",
      at("/skills", index, "id"),
      `skill id ${JSON.stringify(id)} is already used by /skills/${first}`,
      "Give every skill a unique id."
    )
  })
}

/** Scheme names referenced by one requirement, with their pointers, in either card generation's shape. */
const referencedSchemes = (requirement: JsonObject, path: string): ReadonlyArray<readonly [string, string]> => {
  const schemes = requirement["schemes"]
  if (isObject(schemes)) return Object.keys(schemes).map((name) => [name, at(path, "schemes", name)] as const)
  if (isPresent(schemes)) return []
  return Object.keys(requirement).map((name) => [name, at(path, name)] as const)
}

export const checkSchemeReferences = (ctx: Context, card: JsonObject): void => {
  const defined = isObject(card["securitySchemes"]) ? new Set(Object.keys(card["securitySchemes"])) : new Set<string>()
  const checkOwner = (owner: JsonObject, base: string): void => {
    for (const key of ["securityRequirements", "security"]) {
      for (const [requirement, path] of objectItems(undefined, listOf(owner, key), at(base, key), key)) {
        for (const [name, namePath] of referencedSchemes(requirement, path)) {
          if (defined.has(name)) continue
          ctx.report(
            "security_requirement.undefined_scheme",
            namePath,
            `scheme ${JSON.stringify(name)} is not defined in securitySchemes`,
            defined.size === 0
              ? `Declare ${JSON.stringify(name)} in \`securitySchemes\`.`
              : `Declare it in \`securitySchemes\` or use one of: ${[...defined].join(", ")}.`
          )
        }
      }
    }
  }
  checkOwner(card, "")
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) checkOwner(skill, path)
}

/** v0.3 endpoints: `url` + `preferredTransport` and `additionalInterfaces[]` (types are the schema's job). */
export const checkLegacyInterfaces = (ctx: Context, card: JsonObject): void => {
  const url = card["url"]
  const transport = typeof card["preferredTransport"] === "string" ? card["preferredTransport"] : undefined
  if (typeof url === "string" && url !== "") checkInterfaceUrl(ctx, url, transport ?? "JSONRPC", "/url")
  if (transport !== undefined) checkBinding(ctx, transport, "/preferredTransport", "preferredTransport")
  const additional = objectItems(undefined, listOf(card, "additionalInterfaces"), "/additionalInterfaces", "")
  for (const [entry, path] of additional) {
    const entryTransport = typeof entry["transport"] === "string" ? entry["transport"] : undefined
    if (typeof entry["url"] === "string" && entry["url"] !== "") checkInterfaceUrl(ctx, entry["url"], entryTransport, at(path, "url"))
    if (entryTransport !== undefined) checkBinding(ctx, entryTransport, at(path, "transport"), "transport")
  }
}

export const checkHybridConsistency = (ctx: Context, card: JsonObject): void => {
  const url = card["url"]
  if (typeof url !== "string" || url === "") return
  const transport = typeof card["preferredTransport"] === "string" ? card["preferredTransport"] : "JSONRPC"
  const listed = objectItems(undefined, listOf(card, "supportedInterfaces"), "", "").some(
    ([entry]) => entry["url"] === url && entry["protocolBinding"] === transport
  )
  if (!listed) {
    ctx.report(
      "hybrid.url_not_in_interfaces",
      "/url",
      `${JSON.stringify(url)} over ${transport} is not in supportedInterfaces`,
      "List it in `supportedInterfaces` too (with protocolVersion \"0.3\"), so v0.3 and v1.0 clients see the same endpoints."
    )
  }
}

export const checkSignaturesPresent = (ctx: Context, card: JsonObject): void => {
  const signatures = listOf(card, "signatures")
  if (signatures !== undefined && signatures.length > 0) {
    ctx.report(
      "signature.not_verified",
      "/signatures",
      `the card carries ${signatures.length} JWS signature(s) that were not verified`,
      "Verify them against the signer's published keys before trusting the card's contents."
    )
  }
}

export const checkKindFields = (ctx: Context, card: JsonObject): void => {
  const owners: Array<readonly [JsonObject, string]> = [
    [card, ""],
    ...objectItems(undefined, listOf(card, "supportedInterfaces"), "/supportedInterfaces", ""),
    ...objectItems(undefined, listOf(card, "skills"), "/skills", "")
  ]
  for (const [owner, path] of owners) {
    if (isPresent(owner["kind"])) {
      ctx.report(
        "migration.kind_field",
        at(path, "kind"),
        "`kind` discriminators were removed in 1.0",
        "Drop the field; v1.0 tells types apart by member name."
      )
    }
  }
}

const V1_FIELDS = [
  "name",
  "description",
  "supportedInterfaces",
  "provider",
  "version",
  "documentationUrl",
  "capabilities",
  "securitySchemes",
  "securityRequirements",
  "defaultInputModes",
  "defaultOutputModes",
  "skills",
  "signatures",
  "iconUrl"
]

const V03_FIELDS = Object.keys(a2aV03AgentCardSchema.definitions.AgentCard.properties)

const knownFields = (generation: CardGeneration): ReadonlySet<string> => {
  switch (generation) {
    case "0.3":
      return new Set(V03_FIELDS)
    case "hybrid":
      return new Set([...V1_FIELDS, ...V03_FIELDS])
    default:
      // v0.3 leftovers on a v1.0 card get their own migration issues.
      return new Set([...V1_FIELDS, ...Object.keys(V03_LEFTOVERS)])
  }
}

export const checkUnknownFields = (ctx: Context, card: JsonObject): void => {
  const known = knownFields(ctx.generation)
  for (const key of Object.keys(card)) {
    if (known.has(key) || key === "kind") continue
    ctx.report(
      "card.unknown_field",
      at("", key),
      `${quote(key)} is not an AgentCard field`,
      "Clients ignore unknown fields; check the spelling if you meant a standard field."
    )
  }
}
