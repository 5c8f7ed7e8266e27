/**
 * Quoting for the launch templates. Paths come from users (spaces, quotes, `$`, `%` all occur),
 * and a generated script must pass them through unchanged.
 */

function refuseNul(value: string, what: string): void {
  // Neither bash nor Slurm nor an argv can carry a NUL byte; a newline is fine in bash quotes.
  if (value.includes("\0")) throw new Error(`${what} contains a NUL byte: ${JSON.stringify(value)}`);
}

/** One bash word that expands to exactly `value`: bare when only safe characters, else single-quoted. */
export function shellQuote(value: string): string {
  refuseNul(value, "shell argument");
  // No `=`: a first word like A=B would be an assignment, not a command.
  if (/^[A-Za-z0-9_@%+:,./-]+$/.test(value)) return value;
  // Inside '...' nothing is special except ' itself, which becomes '\'' (close, escaped ', reopen).
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** A command line of bash words. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellQuote).join(" ");
}

/**
 * The value of an `#SBATCH --opt=VALUE` line. sbatch parses these lines itself, not bash:
 * `"` and `'` group, a backslash escapes the next character (inside quotes too, unlike bash),
 * an unquoted `#` starts a comment, and nothing is expanded. So: double quotes, with `\` and `"`
 * escaped (checked against sbatch 22.05 with spaces, ', ", \, # and $ in paths).
 */
export function sbatchQuote(value: string): string {
  refuseNul(value, "#SBATCH value");
  // One directive per line: a newline would end it and start a shell command.
  if (/[\r\n]/.test(value)) throw new Error(`#SBATCH value contains a line break: ${JSON.stringify(value)}`);
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `"${value.replace(/[\\"]/g, "\\$&")}"`;
}

/**
 * A literal path inside a Slurm file-name pattern (`--output`): `%` is a replacement symbol there
 * and becomes `%%`. A backslash would turn off every replacement (`%A`, `%a`, …), so it is refused.
 */
export function slurmPatternLiteral(path: string): string {
  if (path.includes("\\")) throw new Error(`Slurm reads a backslash in a file-name pattern as "no replacements": ${JSON.stringify(path)}`);
  return path.replaceAll("%", "%%");
}
