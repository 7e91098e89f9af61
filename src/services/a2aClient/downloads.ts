/**
 * Fetching a file an agent's answer gives by URL (`--download`), under the rules of every other
 * request to the agent: the target's time and size limits (--timeout, --max-response-bytes), the
 * caller's credentials only to the origin the user addressed (target.ts), and a URL on another
 * origin held to the agent's class of address, as a card's interfaces are (interfaceHosts.ts): a
 * public agent cannot make relay fetch from loopback, private, link-local or metadata addresses.
 * Redirects are not followed.
 */
import { HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { InvalidResponse } from "../../domain/clientErrors.js"
import { failureOf, isHttpSuccess } from "./answers.js"
import { execute, readBytes, readText } from "./exchange.js"
import { cardHostReach, isHostAllowed, stateFor } from "./interfaceHosts.js"
import type { ClientState } from "./state.js"
import { credentialHeaders, credentialsFor, originOf, type Target } from "./target.js"

/** The client state a download from `url` goes through: held to the agent's class of address when on another origin. */
const downloadState = (state: ClientState, target: Target, url: string) =>
  Effect.gen(function*() {
    if (originOf(url) === originOf(target.agentUrl) || isHostAllowed(url, target.allowInterfaceHosts)) return state
    const reach = yield* cardHostReach(state, target.agentUrl)
    return yield* stateFor(state, { url, binding: "HTTP+JSON", version: "1.0", reach })
  })

export const download = (state: ClientState, target: Target, url: string) =>
  Effect.gen(function*() {
    const protocol = URL.canParse(url) ? new URL(url).protocol : ""
    if (protocol !== "http:" && protocol !== "https:") {
      return yield* new InvalidResponse({ url: target.agentUrl, reason: `the file's URL is not http or https: ${url.slice(0, 200)}` })
    }
    const through = yield* downloadState(state, target, url)
    const request = HttpClientRequest.get(url, { headers: credentialHeaders(credentialsFor(target, url)) })
    const response = yield* execute(through, target, request)
    if (!isHttpSuccess(response.status)) {
      return yield* Effect.flatMap(readText(target, url, response), (text) => Effect.fail(failureOf(target, url, response, text)))
    }
    return yield* readBytes(target, url, response)
  })
