/** The tool registry used by the tests: the seed examples' tools on the loopback upstream. */
export function testRegistry(upstreamUrl: string) {
  return {
    facilities_list: { url: `${upstreamUrl}/facilities` },
    shipments_list: { url: `${upstreamUrl}/shipments` },
    contaminants_list: { url: `${upstreamUrl}/contaminants` },
    inspections_list: { url: `${upstreamUrl}/inspections` },
    analytics: { url: `${upstreamUrl}/echo`, method: "POST" },
    unknown_endpoint: { url: `${upstreamUrl}/no-such-endpoint` },
    // Limited by its name in DESTINATIONS (test/test-destinations.ts), whatever its host.
    limited_work: { url: `${upstreamUrl}/work` },
    // Nested JSON (`depth`, `kind` params): registry results are redacted, a walk over the whole value.
    deep_data: { url: `${upstreamUrl}/deep` },
    // Sends a secret header; the endpoint does not echo headers back.
    secure_call: {
      url: `${upstreamUrl}/script/secure-call`,
      method: "POST",
      headers: { Authorization: "Bearer ${secrets.UPSTREAM_TOKEN}" },
    },
    // Secret headers sent to endpoints that echo them back: the run must store "[redacted]".
    secure_echo: {
      url: `${upstreamUrl}/echo`,
      method: "POST",
      headers: {
        Authorization: "Bearer ${secrets.UPSTREAM_TOKEN}",
        "X-Api-Key": "${secrets.UPSTREAM_TOKEN}",
      },
    },
    secure_unauthorized: {
      url: `${upstreamUrl}/unauthorized`,
      headers: { Authorization: "Bearer ${secrets.UPSTREAM_TOKEN}" },
    },
  };
}
