/**
 * Who the client talks to and how: the caller's target, the interface chosen for it, and the rule
 * for which requests carry the caller's credentials.
 */
import type { Duration, Effect } from "effect"
import type { Binding } from "../../a2a/dialects.js"
import { originOfUrl } from "../../a2a/hosts.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import type { AgentUrl } from "../../domain/agentUrl.js"
import type { AddressClass } from "../../domain/ipAddresses.js"
import { maskSecretsIn, scrubSecrets } from "../../domain/secrets.js"
import type { Credentials } from "../../domain/session.js"

/** Who to talk to and how; credentials are already resolved by the program. */
export interface Target {
  /** The agent's base URL as the user addressed it (canonical, decoded at the door). */
  readonly agentUrl: AgentUrl
  /** An explicit card URL, skipping well-known discovery. */
  readonly cardUrl?: string | undefined
  readonly credentials?: Credentials | undefined
  /** The credentials were given for this call (not the saved ones). */
  readonly credentialsGiven?: boolean | undefined
  readonly protocol?: ProtocolVersion | undefined
  readonly binding?: Binding | undefined
  /** Send credentials even to interface URLs on another origin than the one addressed. */
  readonly allowCrossOriginCredentials?: boolean | undefined
  /** Interface hosts the user vouches for: used wherever they point, exempt from the rule of interfaceHosts.ts. */
  readonly allowInterfaceHosts?: ReadonlyArray<string> | undefined
  /** Hosts (canonical, as --allow-interface-host) the user lets relay speak plaintext gRPC (h2c) to; loopback needs no naming. */
  readonly insecureHosts?: ReadonlyArray<string> | undefined
  /** Wait at most this long for an answer: a whole unary response, or a stream's headers (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** End a stream that is silent this long (default: never). */
  readonly streamIdleTimeout?: Duration.DurationInput | undefined
  /** Largest answer (card, JSON body, one stream event) read (default MAX_RESPONSE_BYTES); reading stops past it. */
  readonly maxResponseBytes?: number | undefined
  /**
   * The classes of address the card may be fetched from, every connection judged as it is made:
   * a card an AI catalog names, held to the classes the catalog itself was fetched from
   * (programs/agentCards.ts). Undefined: any (the user addressed the card's host).
   */
  readonly cardReach?: ReadonlyArray<AddressClass> | undefined
  /** A card the user gave (`--card-file`): used as it is, with no discovery; `source` names it in errors. */
  readonly card?: { readonly json: unknown; readonly source: string } | undefined
  /**
   * The credentials the user saved for another origin (`relay auth set --url ORIGIN`), looked up
   * when the card routes a call there: saving them there addressed that origin.
   */
  readonly savedCredentialsOf?: ((origin: string) => Effect.Effect<Credentials | undefined>) | undefined
  /** The credentials saved for the origin of the interface in use, when it is not the one addressed (endpoints.ts). */
  readonly interfaceCredentials?: { readonly origin: string; readonly credentials: Credentials } | undefined
  /** Where this target's calls note the interface they went to, so results can name it. */
  readonly used?: InterfaceNote | undefined
}

/** The interface the last call of a target went to (set by endpoints.ts withEndpoint, the one place that picks it). */
export interface InterfaceNote {
  endpoint: Endpoint | undefined
}

/** One interface of the card we can speak. */
export interface Endpoint {
  readonly url: string
  readonly binding: Binding
  readonly version: ProtocolVersion
  readonly tenant?: string | undefined
  /**
   * The classes of address the interface's host may reach, when the interface rule holds it to
   * its card's (another origin than the card's, a host the user did not allow); absent otherwise.
   */
  readonly reach?: ReadonlyArray<AddressClass> | undefined
}

export const originOf = originOfUrl

export const isCrossOrigin = (target: Target, url: string) =>
  originOf(url) !== originOf(target.agentUrl) && target.allowCrossOriginCredentials !== true

/** The credentials the user saved for `url`'s own origin, when the card routes this call there. */
const interfaceCredentialsFor = (target: Target, url: string) =>
  target.interfaceCredentials !== undefined && originOf(url) === target.interfaceCredentials.origin
    ? target.interfaceCredentials.credentials
    : undefined

/**
 * Credentials for a URL: only on the origin the user addressed, unless they allowed otherwise;
 * on another origin, those the user saved for that origin. Every request relay makes to an agent
 * takes its credentials from here.
 */
export const credentialsFor = (target: Target, url: string) =>
  isCrossOrigin(target, url) ? interfaceCredentialsFor(target, url) : target.credentials

export const credentialHeaders = (credentials: Credentials | undefined): Record<string, string> =>
  credentials === undefined
    ? {}
    : credentials.kind === "bearer"
    ? { authorization: `Bearer ${credentials.token}` }
    : { [credentials.header.toLowerCase()]: credentials.key }

/** What became of the caller's credentials on a request to `url` (AuthRequired says it). */
export const credentialsSent = (target: Target, url: string) =>
  isCrossOrigin(target, url) && interfaceCredentialsFor(target, url) !== undefined ?
    "saved" as const
    : target.credentials === undefined ?
    "none" as const
    : isCrossOrigin(target, url) ?
    "withheld" as const
    : target.credentialsGiven === true ?
    "given" as const
    : "saved" as const

/** The secrets a target's requests may carry: its credentials, and those saved for the interface's origin. */
const secretsOf = (target: Target): ReadonlyArray<string> =>
  [target.credentials, target.interfaceCredentials?.credentials].flatMap((credentials) =>
    credentials === undefined ? [] : [credentials.kind === "bearer" ? credentials.token : credentials.key]
  )

/** `text` (an agent's words) with the target's secrets masked: an agent may echo the headers it was sent. */
export const withoutSecrets = (target: Target, text: string): string => maskSecretsIn(text, secretsOf(target))

/**
 * An agent's answer with the target's secrets masked wherever it echoed them (its text, data, file
 * names, status), so that no door shows them; a file's bytes stay as sent (a chance match would corrupt them).
 */
export const answerWithoutSecrets = (target: Target) => <A>(answer: A): A =>
  scrubSecrets(answer, secretsOf(target), { keep: (_, key) => key === "raw" }) as A
