import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * A small job with personal data in every place a record carries text: MCP rows, a web tree
 * (the same address in an observation, the next action and the next observation), terminal
 * output (a public and a private IP; phones off for terminal by a domain override), an id, a text
 * document, and a record the reader quarantines with an address in its excerpt.
 */
const TRAJECTORIES = [
  {
    id: "cust-1",
    domain: "mcp",
    turns: [
      {
        action: 'db.query("select * from customers where id = 4821")',
        observation: JSON.stringify({
          rows: [
            {
              id: 4821,
              email: "dana.whitfield@gmail.com",
              phone: "+1 312 555 0178",
              card: "4111 1111 1111 1111",
              created_at: "2024-01-15T12:30:45Z",
              uuid: "550e8400-e29b-41d4-a716-446655440000",
            },
          ],
        }),
      },
      {
        action: 'send_email(to="dana.whitfield@gmail.com", subject="Your order")',
        observation: JSON.stringify({ status: "sent", to: "Dana.Whitfield@gmail.com" }),
      },
    ],
  },
  {
    id: "contacts-2",
    domain: "web",
    turns: [
      {
        action: "click [12]",
        observation:
          '[RootWebArea] "Contacts"\n  [listitem] "Alice"\n    [StaticText] "alice@example.com"\n    [StaticText] "Work: +44 20 7946 0958"\n  [listitem] "Bob"\n    [StaticText] "bob@corp-mail.co.uk"',
      },
      {
        action: 'click "alice@example.com"',
        observation: '[RootWebArea] "Mail"\n  [heading] "alice@example.com"\n  [StaticText] "v2.14.0 · synced 2024-03-18 09:41:07"',
      },
    ],
  },
  {
    id: "ssh-3",
    domain: "terminal",
    turns: [
      {
        action: "tail -n 2 /var/log/auth.log",
        observation:
          "Jun  2 14:05:33 web-01 sshd[23817]: Accepted publickey for deploy from 185.199.108.153 port 52144 ssh2\nJun  2 14:06:12 web-01 sshd[23930]: Connection from 10.0.3.17 port 60112\n",
      },
      { action: "cat contact.txt", observation: "On call: +1 202-555-0143\n" },
    ],
  },
  { id: "user:eve@example.org:run3", domain: "mcp", turns: [{ action: "ping", observation: "pong" }] },
];

const BAD_RECORD = '{"id":"bad-4","domain":"mcp","turns":"contact frank.ocean@gmail.com"}';

const DOCUMENT = {
  id: "doc-1",
  text: "Support: write to help@acme-support.com or call +1 415 555 0132. Refunds go to IBAN GB82 WEST 1234 5698 7654 32 within 5 days (policy v3.2.1).",
};

/** Values that must appear in no output file, and those the policy keeps. */
export const PII_JOB_REDACTED = [
  "dana.whitfield",
  "Dana.Whitfield",
  "312 555 0178",
  "4111 1111 1111 1111",
  "alice@example.com",
  "7946 0958",
  "bob@corp-mail.co.uk",
  "185.199.108.153",
  "eve@example.org",
  "frank.ocean",
  "help@acme-support.com",
  "415 555 0132",
  "GB82 WEST",
];
export const PII_JOB_KEPT = [
  "10.0.3.17",
  "+1 202-555-0143",
  "2024-01-15T12:30:45Z",
  "550e8400-e29b-41d4-a716-446655440000",
  "v2.14.0",
  "v3.2.1",
];

/** What the manifest's pii block counts for the job. */
export const PII_JOB_COUNTS = {
  records: { mcp: 2, terminal: 1, text: 1, web: 1 },
  replaced: {
    mcp: { credit_card: 1, email: 4, phone: 1 },
    terminal: { ip: 1 },
    text: { email: 1, iban: 1, phone: 1 },
    web: { email: 4, phone: 1 },
  },
  values: {
    mcp: { credit_card: 1, email: 2, phone: 1 },
    terminal: { ip: 1 },
    text: { email: 1, iban: 1, phone: 1 },
    web: { email: 2, phone: 1 },
  },
  kept: { terminal: { ip_private: 1 } },
};

/** Writes the inputs and `job.yaml` (output `out/`, messages included) into `dir`; returns the config's path. */
export function writePiiJob(dir: string, pii = "{ enabled: true, domains: { terminal: { kinds: { phone: false } } } }"): string {
  writeFileSync(join(dir, "trajectories.jsonl"), `${[...TRAJECTORIES.map((t) => JSON.stringify(t)), BAD_RECORD].join("\n")}\n`);
  writeFileSync(join(dir, "docs.jsonl"), `${JSON.stringify(DOCUMENT)}\n`);
  const config = join(dir, "job.yaml");
  writeFileSync(
    config,
    [
      "inputs:",
      "  - path: trajectories.jsonl",
      "  - path: docs.jsonl",
      "    format: text-jsonl",
      "output: { dir: out, num_buckets: 1, include_messages: true }",
      `normalize: { pii: ${pii} }`,
      "",
    ].join("\n"),
  );
  return config;
}
