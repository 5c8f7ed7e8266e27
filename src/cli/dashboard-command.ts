import { UserError } from "../core/errors.ts";
import { Dashboard } from "../dashboard/build-dashboard.ts";
import { startDashboardServer } from "../dashboard/dashboard-server.ts";
import { dashboardHtml } from "../dashboard/page-html.ts";
import { writeTextFile } from "../io/json-file.ts";
import { localOutputFolder } from "../output/remote-output.ts";
import { formatBytes } from "./format-bytes.ts";

export interface DashboardOptions {
  compare?: string;
  out?: string;
  port: string;
  host: string;
  examples: string;
}

function intOption(flag: string, value: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new UserError(`${flag} must be an integer in 0…${max}, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * `lwm-data dashboard <output-dir> [--compare <other>] [--out FILE | --port P]`: aggregates the
 * run's stats table with DuckDB and either writes one self-contained HTML file or serves the page
 * with a live example API until interrupted.
 */
export async function dashboardCommand(outputDir: string, options: DashboardOptions): Promise<void> {
  const port = intOption("--port", options.port, 65_535);
  const examplesPerGroup = intOption("--examples", options.examples, 1000);
  // An `s3://` output is read from a local copy (its staging folder).
  const dirs = await Promise.all((options.compare ? [outputDir, options.compare] : [outputDir]).map((dir) => localOutputFolder(dir)));
  const dashboard = await Dashboard.open(dirs);
  const live = options.out === undefined;
  let data: Awaited<ReturnType<Dashboard["data"]>>;
  try {
    data = await dashboard.data({ live, examplesPerGroup });
  } catch (err) {
    dashboard.close();
    throw err;
  }
  const turns = data.runs.map((r) => r.summary.turns.toLocaleString("en-US")).join(" vs ");
  const page = dashboardHtml(data);

  if (options.out !== undefined) {
    dashboard.close();
    await writeTextFile(options.out, page);
    console.log(
      `lwm-data dashboard: ${turns} turns aggregated in ${data.buildSeconds.toFixed(2)} s → ${options.out} (${formatBytes(Buffer.byteLength(page))}, self-contained; open it in any browser)`,
    );
    return;
  }
  const { server, url } = await startDashboardServer(dashboard, page, JSON.stringify(data), { host: options.host, port });
  // The handlers go in before the line that invites Ctrl-C: a signal sent on reading it must stop the server, not kill the process.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => {
      server.close(() => resolve());
      server.closeAllConnections();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  console.log(`lwm-data dashboard: ${turns} turns aggregated in ${data.buildSeconds.toFixed(2)} s; serving ${url} (Ctrl-C to stop)`);
  await stopped;
  dashboard.close();
}
