import { UserError } from "../core/errors.ts";

/** A flag's value as a positive integer, or a clear error naming the flag. */
export function positiveInt(value: string, flag: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new UserError(`${flag} must be a positive integer, got "${value}"`);
  return Number(value);
}
