/**
 * Fetching a file an agent's answer gives by URL (`--download`), under the rules of every other
 * request to the agent: the target's time and size limits (--timeout, --max-response-bytes), the
 * caller's credentials only to the origin the user addressed (target.ts), and a URL on another
 * origin held to the agent's class of address, as a card's interfaces are (interfaceHosts.ts): a
 * public agent cannot make relay fetch from loopback, private, link-local or metadata addresses.
 * The agent's class is that of an address relay connected to it at; with none, such a URL is refused.
 * Redirects are not followed.
 */
import { HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { hostOfUrl } from "../../a2a/hosts.js"
import { InterfaceHostRefused, InvalidResponse } from "../../domain/clientErrors.js"
import { failureOf, isHttpSuccess } from "./answers.js"
import { execute, readBytes, readText } from "./exchange.js"
import { agentHostReach, isHostAllowed, stateFor } from "./interfaceHosts.js"
import type { ClientState } from "./state.js"
import { credentialHeaders, credentialsFor, originOf, type Target } from "./target.js"

/** The client state a download from `url` goes through: held to the agent's class of address when on another origin. */
const downloadState = (state: ClientState, target: Target, url: string) =>
  Effect.gen(function*() {
    if (originOf(url) === originOf(target.agentUrl) || isHostAllowed(url, target.allowInterfaceHosts)) return state
    const reach = yield* agentHostReach(state, target.agentUrl)
    // Refused, not judged by a lookup or by a connection made now to decide: either goes wherever
    // the agent's DNS points for that one question, 127.0.0.1 included. Only a connection relay
    // already made to the agent says where its answers came from; the user can vouch for the host.
    if (reach === undefined) return yield* new InterfaceHostRefused({ url, reason: unconnected(target) })
    return yield* stateFor(state, { url, binding: "HTTP+JSON", version: "1.0", reach }, "download")
  })

const unconnected = (target: Target) =>
  `relay has not connected to the agent's host ${hostOfUrl(target.agentUrl) ?? target.agentUrl} in this process, ` +
  "so it cannot tell that host's class of address, which a file on another origin must reach"

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
