// Verifies an edgestep webhook: X-Edgestep-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">.
// Runs anywhere WebCrypto does (Workers, Node 20+, Deno, browsers). Pass the raw body, not re-serialized JSON.
export async function verifyEdgestepSignature(
  secret: string,
  signatureHeader: string,
  rawBody: string,
  toleranceSeconds = 300,
  nowMs = Date.now(),
): Promise<boolean> {
  const parts = Object.fromEntries(signatureHeader.split(",").map((p) => p.trim().split("=", 2)));
  const t = Number(parts.t);
  // v1 is exactly 64 hex digits: any other spelling of a signature is refused.
  if (!Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? "")) return false;
  if (Math.abs(nowMs / 1000 - t) > toleranceSeconds) return false; // too old: a replay
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey(
    "raw",
    enc.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const mac = new Uint8Array(parts.v1.match(/../g).map((h: string) => parseInt(h, 16)));
  // crypto.subtle.verify compares in constant time.
  return crypto.subtle.verify("HMAC", key, mac, enc.encode(`${t}.${rawBody}`));
}
