/**
 * Desktop trajectories like data/demo/os: pyautogui actions; observations either AT-SPI XML as
 * OSWorld serializes it or OSWorld's linearized accessibility table. The shell (top bar, app
 * frame) repeats on every screen; typing changes one text node.
 */
import type { CanonicalRecord, DomainParams } from "../params.ts";
import type { Rng } from "../random.ts";
import { capitalize, sentence, word, words } from "../text.ts";

// Widget labels are drawn uniformly (not Zipf): every app screen has its own menu words.
const NAME_WORDS =
  "file edit view insert format tools window help open save export print undo redo cut copy paste find replace select zoom bold italic underline align left right center table chart image link comment review share sync settings account profile preferences toolbar sidebar panel tab new close recent templates styles fonts colors layout page margins header footer columns rows sort filter data sheet cell formula sum average merge split freeze protect import refresh download upload folder home desktop documents pictures music videos trash network bookmarks history extensions inbox drafts sent archive junk compose reply forward attach".split(
    " ",
  );

const NS =
  'xmlns:st="https://accessibility.ubuntu.example.org/ns/state" xmlns:attr="https://accessibility.ubuntu.example.org/ns/attributes" xmlns:cp="https://accessibility.ubuntu.example.org/ns/component"';
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
const STATES = 'st:enabled="true" st:focusable="true" st:showing="true" st:visible="true"';

interface Widget {
  role: string;
  name: string;
  x: number;
  y: number;
}

function widgets(rng: Rng, chars: number, perWidget: number): Widget[] {
  return Array.from({ length: Math.max(1, Math.round(chars / perWidget)) }, (_, i) => ({
    role: rng.pick(["push-button", "menu-item", "label", "check-box", "list-item", "toggle-button"]),
    name: capitalize(Array.from({ length: rng.int(1, 3) }, () => rng.pick(NAME_WORDS)).join(" ")),
    x: 80 + ((i * 97) % 1700),
    y: 80 + ((i * 43) % 950),
  }));
}

function atspi(app: string, title: string, items: Widget[], text: string): string {
  const rows = items.map(
    (w) =>
      `        <${w.role} name="${esc(w.name)}" ${STATES} cp:screencoord="(${w.x}, ${w.y})" cp:size="(${60 + w.name.length * 7}, 30)"/>`,
  );
  return [
    `<desktop-frame ${NS} name="main" cp:screencoord="(0, 0)" cp:size="(1920, 1080)">`,
    '  <application name="gnome-shell">',
    '    <panel name="Top Bar" st:showing="true" st:visible="true" cp:screencoord="(0, 0)" cp:size="(1920, 32)">',
    `      <push-button name="Activities" ${STATES} cp:screencoord="(0, 0)" cp:size="(96, 32)"/>`,
    "    </panel>",
    "  </application>",
    `  <application name="${app}">`,
    `    <frame name="${esc(title)} - ${app}" st:active="true" ${STATES} cp:screencoord="(70, 32)" cp:size="(1850, 1048)">`,
    '      <panel st:showing="true" st:visible="true">',
    ...rows,
    "      </panel>",
    `      <text attr:id="view" st:editable="true" ${STATES} cp:screencoord="(70, 78)" cp:size="(1835, 970)">${esc(text)}</text>`,
    "    </frame>",
    "  </application>",
    "</desktop-frame>",
    "",
  ].join("\n");
}

function table(title: string, items: Widget[], text: string): string {
  const rows = items.map(
    (w) => `${w.role}\t${w.name}\t${w.role === "label" ? w.name : ""}\t\t\t(${w.x}, ${w.y})\t(${60 + w.name.length * 7}, 30)`,
  );
  return [
    "tag\tname\ttext\tclass\tdescription\tposition (top-left x&y)\tsize (w&h)",
    `frame\t${title}\t\t\t\t(70, 32)\t(1850, 1048)`,
    ...rows,
    `entry\tDocument\t${text.includes("\t") || text.includes("\n") || text.includes('"') ? `"${text.replace(/"/g, '""')}"` : text}\t\t\t(70, 78)\t(1835, 970)`,
  ].join("\n");
}

export function osTrajectory(rng: Rng, id: string, p: DomainParams): CanonicalRecord {
  const asTable = rng.chance(0.4);
  const app = rng.pick(["gedit", "libreoffice-calc", "nautilus", "google-chrome", "thunderbird"]);
  let title = capitalize(words(rng, rng.int(1, 3)));
  let text = "";
  // AT-SPI widgets take ~170 characters each, table rows ~50.
  let items = widgets(rng, rng.quantiles(p.observation), asTable ? 50 : 170);
  const render = () => (asTable ? table(title, items, text) : atspi(app, title, items, text));
  const initialObservation = render();
  const turns: CanonicalRecord["turns"] = [];
  for (let i = rng.quantiles(p.turns); i > 0; i--) {
    const move = rng.weighted([
      ["click", 4],
      ["type", 2],
      ["hotkey", 1],
    ] as const);
    const target = rng.pick(items);
    let action: string;
    if (move === "type") {
      const typed = sentence(rng, 2, 8);
      text += typed;
      action = `pyautogui.typewrite(${JSON.stringify(typed)}, interval=0.05)`;
    } else if (move === "hotkey") {
      action = rng.pick([
        "pyautogui.hotkey('ctrl', 's')",
        "pyautogui.hotkey('ctrl', 'l')",
        "pyautogui.press('enter')",
        "pyautogui.hotkey('alt', 'tab')",
      ]);
      // Switching windows or submitting shows a new screen; saving does not.
      if (!action.includes("'s'")) {
        title = capitalize(word(rng));
        items = widgets(rng, rng.quantiles(p.observation), asTable ? 50 : 170);
      }
    } else {
      action = `pyautogui.click(${target.x + 10}, ${target.y + 10})`;
      if (rng.chance(0.8)) {
        title = capitalize(word(rng));
        items = widgets(rng, rng.quantiles(p.observation), asTable ? 50 : 170);
      }
    }
    turns.push({ action, observation: render() });
  }
  return {
    id,
    domain: "os",
    task: `${capitalize(words(rng, rng.int(4, 9)))} in ${app}.`,
    initialObservation,
    turns,
    meta: { generator: "lwm-data bench/synthetic", platform: "ubuntu" },
  };
}
