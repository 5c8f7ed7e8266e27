/**
 * Android episodes: `uiautomator dump` XML screens on one line (as in data/demo/android) and
 * DroidBot-style JSON events as actions. The status bar and action bar repeat on every screen;
 * BACK returns to the previous screen exactly.
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { capitalize, sentence, techWord, word, words } from "../text.ts";

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

function node(
  pkg: string,
  cls: string,
  attrs: { text?: string; id?: string; desc?: string; clickable?: boolean; bounds: string },
  index: number,
  inner = "",
): string {
  const open = `<node index="${index}" text="${esc(attrs.text ?? "")}" resource-id="${attrs.id ? `${pkg}:id/${attrs.id}` : ""}" class="android.widget.${cls}" package="${pkg}" content-desc="${esc(attrs.desc ?? "")}" checkable="false" checked="false" clickable="${attrs.clickable ? "true" : "false"}" enabled="true" focusable="${attrs.clickable ? "true" : "false"}" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="${attrs.bounds}"`;
  return inner ? `${open}>${inner}</node>` : `${open} />`;
}

function screen(rng: Rng, pkg: string, title: string, chars: number): { xml: string; targets: [number, number][] } {
  const targets: [number, number][] = [];
  const items: string[] = [];
  let length = 1400;
  for (let i = 0; length < chars; i++) {
    const top = 300 + ((i * 140) % 1400);
    const row = node(
      pkg,
      "LinearLayout",
      { clickable: true, id: `${techWord(rng)}_item`, bounds: `[0,${top}][1080,${top + 140}]` },
      i,
      node(pkg, "TextView", { text: capitalize(words(rng, rng.int(1, 5))), id: "title", bounds: `[48,${top + 20}][900,${top + 70}]` }, 0) +
        node(pkg, "TextView", { text: sentence(rng, 3, 10), id: "subtitle", bounds: `[48,${top + 75}][900,${top + 120}]` }, 1),
    );
    targets.push([540, top + 70]);
    items.push(row);
    length += row.length;
  }
  const bar = node(
    pkg,
    "FrameLayout",
    { id: "action_bar", bounds: "[0,63][1080,210]" },
    0,
    node(pkg, "TextView", { text: title, bounds: "[42,100][700,170]" }, 0) +
      node(pkg, "ImageButton", { desc: "More options", clickable: true, bounds: "[954,84][1080,210]" }, 1),
  );
  const list = node(pkg, "ListView", { id: "list", bounds: "[0,210][1080,1794]" }, 1, items.join(""));
  const content = node(pkg, "FrameLayout", { id: "content", bounds: "[0,63][1080,1794]" }, 0, bar + list);
  return {
    xml: `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0">${node(pkg, "FrameLayout", { bounds: "[0,0][1080,1794]" }, 0, content)}</hierarchy>`,
    targets,
  };
}

export function androidTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const pkg = `com.${word(rng)}.${techWord(rng)}`;
  const history = [screen(rng, pkg, capitalize(word(rng)), rng.quantiles(p.observation))];
  const turns: CanonicalRecord["turns"] = [];
  for (let i = rng.quantiles(p.turns); i > 0; i--) {
    const current = history[history.length - 1] as ReturnType<typeof screen>;
    const move = rng.weighted([
      ["touch", 6],
      ["back", history.length > 1 ? 2 : 0],
      ["swipe", 1],
      ["input", 1],
    ] as const);
    if (move === "back") {
      history.pop();
      turns.push({
        action: JSON.stringify({ event_type: "key", name: "BACK" }),
        observation: (history[history.length - 1] as ReturnType<typeof screen>).xml,
      });
      continue;
    }
    const [x, y] = rng.pick(current.targets);
    const action =
      move === "touch"
        ? JSON.stringify({ event_type: "touch", x, y })
        : move === "swipe"
          ? JSON.stringify({ event_type: "swipe", target_view: `${techWord(rng)}_carousel`, direction: rng.pick(["LEFT", "RIGHT", "UP"]) })
          : JSON.stringify({ event_type: "set_text", x, y, text: words(rng, rng.int(1, 3)) });
    const next = screen(rng, pkg, capitalize(words(rng, rng.int(1, 2))), rng.quantiles(p.observation));
    history.push(next);
    turns.push({ action, observation: next.xml });
  }
  const taskChars = rng.quantiles(p.task);
  return {
    id,
    domain: "android",
    ...(taskChars >= 20 ? { task: sentence(rng, Math.max(3, Math.round(taskChars / 7)), Math.max(4, Math.round(taskChars / 5))) } : {}),
    initialObservation: (history[0] as ReturnType<typeof screen>).xml,
    turns,
    meta: { generator: "lwm-data bench/synthetic", device: "emulator-5554", package: pkg },
  };
}
