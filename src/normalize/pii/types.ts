/** Kinds of personal data the PII stage finds (config `normalize.pii.kinds`). */
export const PII_KINDS = ["email", "phone", "ip", "credit_card", "iban", "national_id", "postal_address", "person_name"] as const;
export type PiiKind = (typeof PII_KINDS)[number];

/** One finding: where it is in the text, and the value placeholders are keyed by (a canonical form). */
export interface PiiSpan {
  kind: PiiKind;
  start: number;
  end: number;
  /** Canonical value: the same person's address in two spellings gets one placeholder. */
  key: string;
}

/** What an IP address in a private/loopback/link-local or documentation range gets. */
export type IpRangePolicy = "keep" | "redact";

export interface IpPolicy {
  /** RFC 1918, loopback, link-local, CGNAT, ULA: not someone's address on the internet. */
  private: IpRangePolicy;
  /** RFC 5737 / RFC 3849 documentation ranges (192.0.2.0/24, 2001:db8::/32): placeholders already. */
  documentation: IpRangePolicy;
}
