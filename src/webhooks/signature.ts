/**
 * Webhook signatures (SPEC 5.7): `X-Edgestep-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
 * of "<t>.<raw body>">`, with WebCrypto. The receiver's side is in examples/verify-webhook.ts.
 */
const encoder = new TextEncoder();

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(message)));
  return Array.from(mac, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function signatureHeader(
  secret: string,
  rawBody: string,
  unixSeconds: number,
): Promise<string> {
  return `t=${unixSeconds},v1=${await hmacHex(secret, `${unixSeconds}.${rawBody}`)}`;
}
