import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";

/**
 * Preloaded with `node --import` (test/stage-modules.test.ts): appends the URL of every module
 * this thread loads, by `import` or `require`, to the file named by LWM_MODULE_LOG.
 */
const log = process.env.LWM_MODULE_LOG;
if (log)
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(log, `${url}\n`);
      return nextLoad(url, context);
    },
  });
