// A self-signed certificate for `localhost` and 127.0.0.1, made for the test run by the openssl
// command line (TLS servers on loopback; the client trusts it through NODE_EXTRA_CA_CERTS or a roots file).
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export interface SelfSignedCert {
  readonly cert: string
  readonly key: string
  /** The certificate's PEM file, to trust it. */
  readonly certFile: string
}

export const makeSelfSignedCert = (): SelfSignedCert => {
  const dir = mkdtempSync(join(tmpdir(), "relay-cert-"))
  const certFile = join(dir, "cert.pem")
  const keyFile = join(dir, "key.pem")
  execFileSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-days",
    "1",
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=DNS:localhost,IP:127.0.0.1",
    "-keyout",
    keyFile,
    "-out",
    certFile
  ], { stdio: "pipe", timeout: 20_000 })
  return { cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8"), certFile }
}
