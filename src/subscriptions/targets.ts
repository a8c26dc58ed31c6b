/**
 * Where a webhook may go. In production: `https` to a public host on an https port only. The host is
 * checked as written (after the WHATWG URL parser has normalised it, which turns `0x7f.1`, `2130706433`
 * and `0177.0.0.1` into `127.0.0.1` and `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`), never resolved:
 *   - IPv4 literals in any range of IANA's IPv4 Special-Purpose Address Registry or the multicast
 *     space are refused (IPV4_SPECIAL);
 *   - IPv6 literals are accepted only in global unicast (2000::/3), minus every range of IANA's IPv6
 *     Special-Purpose Address Registry (IPV6_SPECIAL: Teredo, ORCHID `2001:10::/28`, documentation,
 *     6to4...);
 *   - `localhost`, IANA's special-use domain names (`.test`, `.example`, `.invalid`, `.local`,
 *     `.arpa`...) and names private networks use (`.internal`, `.localdomain`, `.svc`, `.lan`...),
 *     single-label names, public names known to resolve to loopback (`localhost.direct`,
 *     `localtest.me`), and wildcard-DNS names that spell a refused IPv4 address (`10.0.0.1.nip.io`,
 *     `127-0-0-1.sslip.io`) are refused;
 *   - ports other than the https ones (HTTPS_PORTS) are refused.
 * A name that resolves to a private address is not caught here (DNS is not consulted); Workers' own
 * `fetch` does not reach private networks, and redirects are never followed (src/subscriptions/sender.ts).
 *
 * `WEBHOOK_ALLOWED_TARGETS` (comma-separated `scheme://host:port` patterns, `*` for any port) lets
 * more through, for local development: `http://127.0.0.1:*` lets the smoke run's receiver in.
 */

export interface TargetSettings {
  WEBHOOK_ALLOWED_TARGETS?: string;
}

export type TargetCheck = { ok: true; url: string } | { ok: false; reason: string };

const MAX_URL_LENGTH = 2048;

/** Checks a subscription's URL; on success, the URL as the parser normalised it (what is stored and called). */
export function checkTarget(raw: string, settings: TargetSettings): TargetCheck {
  if (raw.length > MAX_URL_LENGTH) return { ok: false, reason: `is longer than ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.username || url.password)
    return { ok: false, reason: "carries credentials (user:password@); put them nowhere: deliveries are signed" };
  if (url.hash) return { ok: false, reason: "has a fragment (#...), which is never sent" };
  if (allowedByList(url, settings.WEBHOOK_ALLOWED_TARGETS)) return { ok: true, url: url.href };
  if (url.protocol !== "https:") return { ok: false, reason: `must use https, not ${url.protocol.replace(/:$/, "")}` };
  const refused = refusedHost(url.hostname) ?? refusedPort(url);
  if (refused) return { ok: false, reason: refused };
  return { ok: true, url: url.href };
}

function defaultPort(protocol: string): string {
  return protocol === "https:" ? "443" : protocol === "http:" ? "80" : "";
}

/** Whether the URL matches one of the configured patterns (scheme, host and port; `*` any port). */
export function allowedByList(url: URL, list: string | undefined): boolean {
  for (const entry of (list ?? "")
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = /^(https?):\/\/(\[[0-9a-fA-F:.]+\]|[^/:]+)(?::(\*|\d{1,5}))?\/?$/.exec(entry);
    if (!match) continue;
    const [, scheme, host, port] = match;
    if (url.protocol !== `${scheme}:`) continue;
    if (url.hostname.toLowerCase() !== host!.toLowerCase()) continue;
    const actual = url.port || defaultPort(url.protocol);
    if (port === "*" || (port ?? defaultPort(url.protocol)) === actual) return true;
  }
  return false;
}

/**
 * The ports a receiver may listen on: https's own (443) and the other ports Cloudflare's network
 * serves HTTPS on (2053, 2083, 2087, 2096, 8443; developers.cloudflare.com, "Network ports"), so a
 * receiver behind Cloudflare works on any of them. No other port is a webhook receiver's: the rule
 * keeps subscriptions from probing a public host's other services (SSH, SMTP, databases).
 */
export const HTTPS_PORTS: readonly string[] = ["443", "2053", "2083", "2087", "2096", "8443"];

/**
 * Names that can never be a public receiver. IANA's Special-Use Domain Names registry
 * (iana.org/assignments/special-use-domain-names; RFC 6761 and later): `localhost`, `.local`, `.test`,
 * `.invalid`, `.example`, `.onion`, `.alt` and the `.arpa` infrastructure names (`home.arpa`,
 * `ipv4only.arpa`, `resolver.arpa`, `service.arpa`, the reverse zones of private ranges), all of which
 * `.arpa` covers. `example.com`, `.net` and `.org` are in the registry too, but they are ordinary public
 * names that RFC 6761 (6.5) asks applications not to treat as special, so they are not refused. Besides
 * the registry: `.internal` (reserved by ICANN for private use, 2024), `.localdomain`
 * (`localhost.localdomain` in /etc/hosts), Kubernetes' `.svc` (`.cluster.local` is under `.local`), and
 * names common on private networks that the DNS root never delegated (`.lan`, `.home`, `.corp`...).
 */
const REFUSED_SUFFIXES = [
  ".localhost",
  ".local",
  ".test",
  ".invalid",
  ".example",
  ".onion",
  ".alt",
  ".arpa",
  ".internal",
  ".localdomain",
  ".svc",
  ".lan",
  ".home",
  ".intranet",
  ".corp",
  ".private",
];
/**
 * Public names (and every name under them) that resolve to a loopback address: known services for
 * testing local servers under a real name. Not exhaustive (anyone can publish one), hence also the
 * fetch that does not reach private networks in a deployment (see the file's comment).
 */
const LOOPBACK_NAMES = [
  "localtest.me",
  "lvh.me",
  "vcap.me",
  "lacolhost.com",
  "localhost.direct",
  "localho.st",
  "fuf.me",
  "local.gd",
  "lcl.host",
  "traefik.me",
];
const WILDCARD_DNS = ["nip.io", "sslip.io", "xip.io", "traefik.me", "nip.direct"];

/** Why a URL's port is refused (the scheme's default is no port in a parsed URL), or null. */
export function refusedPort(url: URL): string | null {
  const port = url.port || defaultPort(url.protocol);
  if (HTTPS_PORTS.includes(port)) return null;
  return `uses port ${port}; webhooks go to an https port (${HTTPS_PORTS.join(", ")}) unless WEBHOOK_ALLOWED_TARGETS allows it`;
}

/** Why a host is refused, or null when it may be called. */
export function refusedHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[")) return refusedIpv6(host.slice(1, -1));
  const v4 = parseIpv4(host);
  if (v4) return refusedIpv4(v4) ? `names the ${refusedIpv4(v4)} address ${host}` : null;
  if (host === "localhost" || REFUSED_SUFFIXES.some((suffix) => host.endsWith(suffix)))
    return `names a local or special-use host (${host}), which is never a public receiver`;
  if (!host.includes(".")) return `names a single-label host (${host}), which is not a public name`;
  if (LOOPBACK_NAMES.some((name) => host === name || host.endsWith(`.${name}`)))
    return `names ${host}, which always resolves to a loopback address`;
  const wildcard = WILDCARD_DNS.find((name) => host.endsWith(`.${name}`));
  if (wildcard) {
    const embedded = host.slice(0, -(wildcard.length + 1)).match(/(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})$/);
    const address = embedded ? parseIpv4(embedded.slice(1).join(".")) : null;
    if (!address) return `names ${host}, a wildcard DNS name that does not spell a public address`;
    const kind = refusedIpv4(address);
    if (kind) return `names ${host}, which resolves to the ${kind} address ${address.join(".")}`;
  }
  return null;
}

function parseIpv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const bytes = parts.map(Number);
  return bytes.every((b) => b <= 255) ? bytes : null;
}

/**
 * IANA's IPv4 Special-Purpose Address Registry (iana.org/assignments/iana-ipv4-special-registry),
 * every entry, globally reachable ones included (anycast services such as AS112 and AMT relays are no
 * webhook receivers), and the multicast space (iana.org/assignments/multicast-addresses). More specific
 * entries first, so the reason names the narrowest. [first octets, prefix length, kind].
 */
const IPV4_SPECIAL: readonly [number[], number, string][] = [
  [[0], 8, "unspecified ('this network')"],
  [[10], 8, "private"],
  [[100, 64], 10, "shared (carrier-grade NAT)"],
  [[127], 8, "loopback"],
  [[169, 254], 16, "link-local"],
  [[172, 16], 12, "private"],
  [[192, 0, 0], 24, "IETF protocol assignment"],
  [[192, 0, 2], 24, "documentation"],
  [[192, 31, 196], 24, "AS112 (special-purpose)"],
  [[192, 52, 193], 24, "AMT (special-purpose)"],
  [[192, 88, 99], 24, "deprecated 6to4 relay anycast (special-purpose)"],
  [[192, 168], 16, "private"],
  [[192, 175, 48], 24, "AS112 direct delegation (special-purpose)"],
  [[198, 18], 15, "benchmarking"],
  [[198, 51, 100], 24, "documentation"],
  [[203, 0, 113], 24, "documentation"],
  [[224], 4, "multicast"],
  [[240], 4, "reserved"],
];

/** Whether `value` (bytes or 16-bit groups, `width` bits each) starts with the first `bits` bits of `prefix`. */
function inPrefix(value: readonly number[], prefix: readonly number[], bits: number, width: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= width) {
    const keep = Math.min(bits, width);
    const mask = ((1 << keep) - 1) << (width - keep);
    if (((value[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

/** The kind of special-purpose range an IPv4 address is in, or null for a public one. */
export function refusedIpv4(address: number[]): string | null {
  return IPV4_SPECIAL.find(([prefix, bits]) => inPrefix(address, prefix, bits, 8))?.[2] ?? null;
}

/**
 * IANA's IPv6 Special-Purpose Address Registry (iana.org/assignments/iana-ipv6-special-registry)
 * inside global unicast (2000::/3), every entry: everything outside 2000::/3 is refused anyway (IANA's
 * IPv6 Address Space registry allocates only 2000::/3 to global unicast; that covers ::1, ::,
 * ::ffff:0:0/96, 64:ff9b::/96, 100::/64, 5f00::/16, fc00::/7, fe80::/10 and multicast ff00::/8, which are
 * named below for a clearer reason). More specific entries first. [16-bit groups, prefix length, kind].
 */
const IPV6_SPECIAL: readonly [number[], number, string][] = [
  [[0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"],
  [[0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"],
  [[0, 0, 0, 0, 0, 0xffff], 96, "IPv4-mapped"],
  [[0x64, 0xff9b], 32, "IPv4/IPv6 translation"],
  [[0x100], 16, "discard-only"],
  [[0x2001, 0], 32, "Teredo"],
  [[0x2001, 2, 0], 48, "benchmarking"],
  [[0x2001, 0x10], 28, "deprecated ORCHID"],
  [[0x2001, 0x20], 28, "ORCHIDv2"],
  [[0x2001, 0x30], 28, "drone remote ID (DET)"],
  [[0x2001, 0], 23, "IETF protocol assignment"],
  [[0x2001, 0x0db8], 32, "documentation"],
  [[0x2002], 16, "6to4"],
  [[0x2620, 0x4f, 0x8000], 48, "AS112 direct delegation"],
  [[0x3fff, 0], 20, "documentation"],
  [[0x5f00], 16, "segment routing (SRv6)"],
  [[0xfc00], 7, "unique local (private)"],
  [[0xfe80], 10, "link-local"],
  [[0xff00], 8, "multicast"],
];

/**
 * Eight 16-bit groups of an IPv6 literal as the URL parser prints it (hex groups, `::` at most once;
 * it never prints a dotted IPv4 tail), or null.
 */
function parseIpv6(text: string): number[] | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const group = (s: string) => (s === "" ? [] : s.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : Number.NaN)));
  const head = group(halves[0]!);
  const tail = halves.length === 2 ? group(halves[1]!) : [];
  const known = head.length + tail.length;
  if (known > 8 || (halves.length === 1 && known !== 8)) return null;
  const groups = [...head, ...Array<number>(8 - known).fill(0), ...tail];
  return groups.some(Number.isNaN) ? null : groups;
}

function refusedIpv6(text: string): string | null {
  const groups = parseIpv6(text);
  if (!groups) return `names an IPv6 address that could not be read ([${text}])`;
  const kind = IPV6_SPECIAL.find(([prefix, bits]) => inPrefix(groups, prefix, bits, 16))?.[2];
  if (kind === "6to4") {
    const v4 = [groups[1]! >> 8, groups[1]! & 0xff, groups[2]! >> 8, groups[2]! & 0xff];
    const embedded = refusedIpv4(v4);
    const also = embedded ? `; it embeds the ${embedded} address ${v4.join(".")}` : "";
    return `names a 6to4 IPv6 address [${text}] (2002::/16, special-purpose${also})`;
  }
  if (kind) return `names the ${kind} IPv6 address [${text}]`;
  const inGlobalUnicast = groups[0]! >= 0x2000 && groups[0]! <= 0x3fff;
  return inGlobalUnicast ? null : `names the non-global IPv6 address [${text}] (outside 2000::/3)`;
}
