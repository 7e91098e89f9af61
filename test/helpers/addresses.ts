// Address spellings the SSRF guard must see through, shared by its unit and server tests.

/** 169.254.169.254 (cloud metadata) in every spelling a URL host or an address can take. */
export const METADATA_SPELLINGS = [
  "169.254.169.254",
  "0xa9.0xfe.0xa9.0xfe",
  "0251.0376.0251.0376",
  "2852039166",
  "0xa9fea9fe",
  "169.254.43518",
  "169.16689662",
  "[::ffff:169.254.169.254]",
  "[::ffff:a9fe:a9fe]",
  "[::ffff:0:a9fe:a9fe]",
  "[::ffff:0:169.254.169.254]",
  "[64:ff9b::a9fe:a9fe]",
  "[64:ff9b::169.254.169.254]",
  "[::169.254.169.254]",
  "[::a9fe:a9fe]",
  "[2002:a9fe:a9fe::]",
  "[2002:a9fe:a9fe:1234::1]"
] as const

/** Other non-public hosts: private, unique local, link-local, shared, unspecified, mapped and NAT64 forms. */
export const OTHER_PRIVATE_HOSTS = [
  "10.0.0.1",
  "192.168.1.1",
  "[fd00::1]",
  "[fe80::1]",
  "100.64.0.1",
  "0.0.0.0",
  "[::]",
  "[::ffff:192.168.1.1]",
  "[64:ff9b::a00:1]"
] as const

/** Loopback in spellings other than 127.0.0.1 and localhost. */
export const LOOPBACK_SPELLINGS = ["127.1", "2130706433", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:0:7f00:1]", "[64:ff9b::7f00:1]"] as const
