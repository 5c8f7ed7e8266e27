import { z } from "zod";
import { DOMAINS } from "./trajectory.ts";

/** Runtime schema of the canonical record, used to validate what readers and users supply. */
export const turnSchema = z.object({
  action: z.string(),
  observation: z.string(),
  thinking: z.string().optional(),
  meta: z.record(z.string(), z.unknown()).optional(),
});

export const trajectoryInputSchema = z.object({
  id: z.union([z.string().min(1), z.number().int()]).transform(String),
  domain: z.enum(DOMAINS),
  system: z.string().optional(),
  task: z.string().optional(),
  initialObservation: z.string().optional(),
  turns: z.array(turnSchema).min(1, "a trajectory needs at least one turn"),
  meta: z.record(z.string(), z.unknown()).optional(),
});

/** The first problem in a zod error as a dotted field path and a sentence. */
export function describeZodError(error: z.ZodError): { field: string | undefined; reason: string } {
  const issue = error.issues[0];
  if (!issue) return { field: undefined, reason: "invalid value" };
  const field = issue.path.length > 0 ? issue.path.map(String).join(".") : undefined;
  return { field, reason: field ? `${field}: ${issue.message}` : issue.message };
}
