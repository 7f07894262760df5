/** The fake domain API of the seed examples: facilities, shipments, contaminants, inspections. */
export const facilities = [
  { id: "F1", name: "Berlin Plant", location: { city: "Berlin" } },
  { id: "F2", name: "Munich Center", location: { city: "Munich" } },
  { id: "F3", name: "Berlin Annex", location: { city: "Berlin" } },
];

/** A shipment to the facility `facilityId`, which it also embeds as `{ id, name }`. */
function shipment(id: string, status: string, facilityId: string) {
  const { name } = facilities.find((f) => f.id === facilityId)!;
  return { id, status, facility_id: facilityId, facility: { id: facilityId, name } };
}

export const shipments = [
  shipment("S1", "delivered", "F1"),
  shipment("S2", "rejected", "F2"),
  shipment("S3", "in_transit", "F1"),
  shipment("S4", "delivered", "F3"),
];

export const contaminants = [
  { id: "C1", shipment_id: "S1", substance: "lead" },
  { id: "C2", shipment_id: "S3", substance: "mercury" },
  { id: "C3", shipment_id: "S2", substance: "arsenic" },
];

export const inspections = [
  { id: "I1", facility_id: "F1", result: "pass" },
  { id: "I2", facility_id: "F2", result: "fail" },
];

/** A comma-list filter: null when absent (no filter); given but empty, it matches nothing (seed 002's "Conditional Execution"). */
function list(q: URLSearchParams, key: string): string[] | null {
  const v = q.get(key);
  if (v === null) return null;
  return v === "" ? [] : v.split(",");
}

function limited<T>(items: T[], q: URLSearchParams): T[] {
  const limit = Number(q.get("limit") ?? Infinity);
  return items.slice(0, limit);
}

/** Answers a domain query, or undefined for an unknown path. */
export function domainResponse(path: string, q: URLSearchParams): unknown[] | undefined {
  switch (path) {
    case "/facilities": {
      const city = q.get("location");
      return limited(
        facilities.filter((f) => !city || f.location.city === city),
        q,
      );
    }
    case "/shipments": {
      const ids = list(q, "facility_id");
      return limited(
        shipments.filter((s) => !ids || ids.includes(s.facility_id)),
        q,
      );
    }
    case "/contaminants": {
      const ids = list(q, "shipment_ids");
      const facility = list(q, "facility_id");
      return limited(
        contaminants.filter((c) => {
          if (ids && !ids.includes(c.shipment_id)) return false;
          if (facility) {
            const s = shipments.find((x) => x.id === c.shipment_id);
            return !!s && facility.includes(s.facility_id);
          }
          return true;
        }),
        q,
      );
    }
    case "/inspections":
      return limited(inspections, q);
    default:
      return undefined;
  }
}
