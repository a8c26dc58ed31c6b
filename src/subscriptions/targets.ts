/**
 * Where a webhook may go. In production: `https` to a public host only. The host is checked as
 * written (after the WHATWG URL parser has normalised it, which turns `0x7f.1`, `2130706433` and
 * `0177.0.0.1` into `127.0.0.1` and `[::ffff:127.0.0.1]` into `[::ffff:7f00:1]`), never resolved:
 *   - IPv4 literals in private, loopback, link-local, shared (CGNAT), benchmark, multicast and other
 *     special-purpose ranges are refused;
 *   - IPv6 literals are accepted only in global unicast (2000::/3), minus documentation, Teredo, and
 *     6to4 addresses that embed a refused IPv4 address;
 *   - `localhost` and names under `.localhost`, `.local`, `.internal`, `.home.arpa`, `.lan`,
 *     single-label names, and wildcard-DNS names that spell a refused IPv4 address (`10.0.0.1.nip.io`,
 *     `127-0-0-1.sslip.io`) or always answer loopback (`localtest.me`, `lvh.me`) are refused.
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
  const refused = refusedHost(url.hostname);
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

const REFUSED_SUFFIXES = [".localhost", ".local", ".internal", ".home.arpa", ".lan", ".intranet", ".corp", ".private"];
const LOOPBACK_NAMES = ["localtest.me", "lvh.me", "vcap.me", "lacolhost.com"];
const WILDCARD_DNS = ["nip.io", "sslip.io", "xip.io", "traefik.me", "nip.direct"];

/** Why a host is refused, or null when it may be called. */
export function refusedHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.+$/, "");
  if (host.startsWith("[")) return refusedIpv6(host.slice(1, -1));
  const v4 = parseIpv4(host);
  if (v4) return refusedIpv4(v4) ? `names the ${refusedIpv4(v4)} address ${host}` : null;
  if (host === "localhost" || REFUSED_SUFFIXES.some((suffix) => host.endsWith(suffix))) return `names a local host (${host})`;
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

/** The kind of special-purpose range an IPv4 address is in, or null for a public one. */
export function refusedIpv4([a, b, c]: number[]): string | null {
  if (a === 0) return "unspecified";
  if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 127) return "loopback";
  if (a === 169 && b === 254) return "link-local";
  if (a === 100 && b! >= 64 && b! <= 127) return "shared (carrier-grade NAT)";
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return "special-purpose";
  if (a === 198 && (b === 18 || b === 19)) return "benchmarking";
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "documentation";
  if (a === 192 && b === 88 && c === 99) return "special-purpose";
  if (a! >= 224) return a! < 240 ? "multicast" : "reserved";
  return null;
}

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
  const [g0, g1] = groups as [number, number];
  const inGlobalUnicast = g0 >= 0x2000 && g0 <= 0x3fff;
  if (!inGlobalUnicast) {
    const isMapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
    const kind = groups.every((g) => g === 0)
      ? "unspecified"
      : groups.slice(0, 7).every((g) => g === 0) && groups[7] === 1
        ? "loopback"
        : (g0 & 0xffc0) === 0xfe80
          ? "link-local"
          : (g0 & 0xfe00) === 0xfc00
            ? "unique local (private)"
            : (g0 & 0xff00) === 0xff00
              ? "multicast"
              : isMapped
                ? "IPv4-mapped"
                : "non-global";
    return `names the ${kind} IPv6 address [${text}]`;
  }
  if (g0 === 0x2001 && g1 === 0x0db8) return `names the documentation IPv6 address [${text}]`;
  if (g0 === 0x2001 && g1 === 0) return `names a Teredo IPv6 address [${text}]`;
  if (g0 === 0x2002) {
    const v4 = [g1 >> 8, g1 & 0xff, groups[2]! >> 8, groups[2]! & 0xff];
    const kind = refusedIpv4(v4);
    if (kind) return `names a 6to4 IPv6 address [${text}] that embeds the ${kind} address ${v4.join(".")}`;
  }
  return null;
}
