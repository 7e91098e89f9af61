// oidc-provider ships no types; the tests use only this much of it.
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http"
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>)
    proxy: boolean
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>
    on(event: string, listener: (...args: Array<unknown>) => void): this
    interactionDetails(
      req: IncomingMessage,
      res: ServerResponse
    ): Promise<{ readonly uid: string; readonly prompt: { readonly name: string } }>
  }
}
