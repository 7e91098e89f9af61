/** v1.0 structural rules, taken from the REQUIRED markers of a2a.proto, and the v0.3 leftovers a v1.0 card may carry. */
import { at, type Context, isObject, isPresent, type JsonObject, quote } from "./context.js"
import {
  checkStringItems,
  listOf,
  objectItems,
  optionalBoolean,
  optionalList,
  optionalObject,
  optionalString,
  reportType,
  requiredList,
  requiredObject,
  requiredString
} from "./fields.js"
import { checkSecuritySchemesStructure } from "./securitySchemes.js"
import { checkBinding, checkInterfaceUrl, checkInterfaceVersion, checkOptionalUrl } from "./values.js"

const checkSupportedInterfaces = (ctx: Context, card: JsonObject): void => {
  const list = requiredList(
    ctx,
    card,
    "supportedInterfaces",
    "",
    "Declare at least one interface, e.g. {\"url\": \"https://agent.example.com/a2a\", \"protocolBinding\": \"JSONRPC\", \"protocolVersion\": \"1.0\"}."
  )
  const seen = new Set<string>()
  for (const [entry, path] of objectItems(ctx, list, "/supportedInterfaces", "supportedInterfaces")) {
    const url = requiredString(ctx, entry, "url", path, "Give the interface the absolute URL it is served at.")
    const bindingHint = isPresent(entry["transport"])
      ? "1.0 renamed the v0.3 `transport` to `protocolBinding`."
      : "Name the binding: JSONRPC, HTTP+JSON or GRPC."
    const binding = requiredString(ctx, entry, "protocolBinding", path, bindingHint)
    const version = requiredString(ctx, entry, "protocolVersion", path, "Declare the protocol version this interface speaks, e.g. \"1.0\".")
    optionalString(ctx, entry, "tenant", path)
    if (url !== undefined) checkInterfaceUrl(ctx, url, binding, at(path, "url"))
    if (binding !== undefined) checkBinding(ctx, binding, at(path, "protocolBinding"), "protocolBinding")
    if (version !== undefined) checkInterfaceVersion(ctx, version, at(path, "protocolVersion"))
    if (isPresent(entry["transport"])) {
      ctx.report(
        "migration.v03_field",
        at(path, "transport"),
        "`transport` is the v0.3 name of this field",
        "Rename it to `protocolBinding`."
      )
    }
    const key = JSON.stringify([url, binding, version])
    if (url !== undefined && binding !== undefined && version !== undefined) {
      if (seen.has(key)) {
        ctx.report("interface.duplicate", path, "this interface repeats an earlier one", "Remove the duplicate entry.")
      }
      seen.add(key)
    }
  }
}

const checkProvider = (ctx: Context, card: JsonObject): void => {
  const provider = optionalObject(ctx, card, "provider", "")
  if (provider === undefined) return
  requiredString(ctx, provider, "organization", "/provider", "Name the organization that provides the agent, or drop `provider`.")
  const url = requiredString(ctx, provider, "url", "/provider", "Give the provider's website URL, or drop `provider`.")
  checkOptionalUrl(ctx, url, "/provider/url", "url")
}

const checkCapabilities = (ctx: Context, card: JsonObject): void => {
  const capabilities = requiredObject(
    ctx,
    card,
    "capabilities",
    "",
    "Declare capabilities, even if empty: {\"streaming\": false, \"pushNotifications\": false}."
  )
  if (capabilities === undefined) return
  for (const flag of ["streaming", "pushNotifications", "extendedAgentCard", "skillQuery"]) {
    optionalBoolean(ctx, capabilities, flag, "/capabilities")
  }
  const extensions = optionalList(ctx, capabilities, "extensions", "/capabilities")
  for (const [extension, path] of objectItems(ctx, extensions, "/capabilities/extensions", "extensions")) {
    const uri = optionalString(ctx, extension, "uri", path)
    if (uri === undefined && !isPresent(extension["uri"])) {
      ctx.report("extension.uri_missing", at(path, "uri"), "the extension has no `uri`", "Identify the extension by its URI.")
    }
    optionalString(ctx, extension, "description", path)
    optionalBoolean(ctx, extension, "required", path)
    optionalObject(ctx, extension, "params", path)
  }
}

const checkModes = (ctx: Context, owner: JsonObject, key: string, base: string, required: boolean): void => {
  const list = required
    ? requiredList(ctx, owner, key, base, "List the media types the agent accepts or produces, e.g. [\"text/plain\"].")
    : optionalList(ctx, owner, key, base)
  checkStringItems(ctx, list, at(base, key), key)
}

const checkSkillStructure = (ctx: Context, skill: JsonObject, path: string): void => {
  requiredString(ctx, skill, "id", path, "Give the skill a unique id.")
  requiredString(ctx, skill, "name", path, "Give the skill a human-readable name.")
  requiredString(ctx, skill, "description", path, "Describe what the skill does.")
  const tags = requiredList(ctx, skill, "tags", path, "Add at least one keyword tag.")
  checkStringItems(ctx, tags, at(path, "tags"), "tags")
  checkStringItems(ctx, optionalList(ctx, skill, "examples", path), at(path, "examples"), "examples")
  checkModes(ctx, skill, "inputModes", path, false)
  checkModes(ctx, skill, "outputModes", path, false)
  checkSecurityRequirementsStructure(ctx, skill, path)
}

const checkSignaturesStructure = (ctx: Context, card: JsonObject): void => {
  const list = optionalList(ctx, card, "signatures", "")
  for (const [signature, path] of objectItems(ctx, list, "/signatures", "signatures")) {
    requiredString(ctx, signature, "protected", path, "Put the base64url-encoded protected JWS header here.")
    requiredString(ctx, signature, "signature", path, "Put the base64url-encoded JWS signature here.")
    optionalObject(ctx, signature, "header", path)
  }
}

const checkSecurityRequirementsStructure = (ctx: Context, owner: JsonObject, base: string): void => {
  const list = optionalList(ctx, owner, "securityRequirements", base)
  for (const [requirement, path] of objectItems(ctx, list, at(base, "securityRequirements"), "securityRequirements")) {
    if (!isPresent(requirement["schemes"])) {
      if (Object.values(requirement).some(Array.isArray)) {
        ctx.report(
          "security_requirement.noncanonical_shape",
          path,
          "the requirement uses the v0.3 `{name: [scopes]}` form",
          "Write it as {\"schemes\": {\"<name>\": {\"list\": [\"<scope>\"]}}}."
        )
      }
      continue
    }
    const schemes = optionalObject(ctx, requirement, "schemes", path)
    for (const [name, scopes] of Object.entries(schemes ?? {})) {
      const scopesPath = at(path, "schemes", name)
      if (!isObject(scopes)) {
        reportType(ctx, scopesPath, name, "an object like {\"list\": []}", scopes)
        continue
      }
      checkStringItems(ctx, optionalList(ctx, scopes, "list", scopesPath), at(scopesPath, "list"), "list")
    }
  }
}

export const checkV1Structure = (ctx: Context, card: JsonObject): void => {
  requiredString(ctx, card, "name", "", "Give the agent a human-readable name.")
  requiredString(ctx, card, "description", "", "Describe what the agent does.")
  requiredString(ctx, card, "version", "", "Give the agent's own version, e.g. \"1.0.0\".")
  // An unknown-generation card already has an error saying supportedInterfaces is missing.
  if (ctx.generation !== "unknown") checkSupportedInterfaces(ctx, card)
  checkProvider(ctx, card)
  checkOptionalUrl(ctx, optionalString(ctx, card, "documentationUrl", ""), "/documentationUrl", "documentationUrl")
  checkOptionalUrl(ctx, optionalString(ctx, card, "iconUrl", ""), "/iconUrl", "iconUrl")
  checkCapabilities(ctx, card)
  checkSecuritySchemesStructure(ctx, card)
  checkSecurityRequirementsStructure(ctx, card, "")
  checkModes(ctx, card, "defaultInputModes", "", true)
  checkModes(ctx, card, "defaultOutputModes", "", true)
  const skills = requiredList(ctx, card, "skills", "", "Describe at least one skill with id, name, description and tags.")
  for (const [skill, path] of objectItems(ctx, skills, "/skills", "skills")) checkSkillStructure(ctx, skill, path)
  checkSignaturesStructure(ctx, card)
}

const SECURITY_RENAME_HINT =
  "1.0 renamed `security` to `securityRequirements`, written as [{\"schemes\": {\"<name>\": {\"list\": [\"<scope>\"]}}}]."

/** Fields that 1.0 renamed or moved; `url`, `preferredTransport` and `protocolVersion` make a card hybrid instead. */
export const V03_LEFTOVERS: Readonly<Record<string, string>> = {
  additionalInterfaces: "1.0 moved `additionalInterfaces` into `supportedInterfaces[]` ({url, protocolBinding, protocolVersion}; " +
    "`transport` became `protocolBinding`).",
  supportsAuthenticatedExtendedCard: "1.0 moved it to `capabilities.extendedAgentCard`.",
  security: SECURITY_RENAME_HINT
}

export const checkV1Leftovers = (ctx: Context, card: JsonObject): void => {
  for (const [key, hint] of Object.entries(V03_LEFTOVERS)) {
    if (isPresent(card[key])) ctx.report("migration.v03_field", at("", key), `${quote(key)} is a v0.3 field`, hint)
  }
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) {
    if (isPresent(skill["security"])) {
      ctx.report(
        "migration.v03_field",
        at(path, "security"),
        "`security` is the v0.3 name of this field",
        SECURITY_RENAME_HINT
      )
    }
  }
}

export const checkRemovedFields = (ctx: Context, card: JsonObject): void => {
  const capabilities = card["capabilities"]
  if (isObject(capabilities) && isPresent(capabilities["stateTransitionHistory"])) {
    ctx.report(
      "migration.removed_field",
      "/capabilities/stateTransitionHistory",
      "`stateTransitionHistory` was removed in 1.0",
      "Drop it; v1.0 clients ignore it."
    )
  }
}
