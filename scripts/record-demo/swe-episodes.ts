/**
 * The scripted SWE repair sessions the recorder plays (scripts/record-demo/swe.ts): a small Python
 * project with a real bug and a unittest test that catches it, an issue text, and the agent's
 * steps. The thoughts are written here (no model is called); every command runs for real and its
 * output is what the recording keeps.
 */

export interface ScriptedStep {
  /** What the agent says before acting (scripted). */
  thought: string;
  /** The bash command it runs in the repository (run for real). */
  command: string;
  /** The exit code the thoughts around it take for granted; the recorder stops on any other. */
  exitCode: number;
}

export interface Episode {
  /** Short name; the files of each layout are named `<tool>__<name>`. */
  name: string;
  /** The issue the agent is asked to fix. */
  issue: string;
  /** The project at its first commit, path → content. */
  files: Record<string, string>;
  commitMessage: string;
  steps: ScriptedStep[];
  /** The agent's last words, said when it submits. */
  submitThought: string;
}

const GITIGNORE = "__pycache__/\n";

/** A median that returns the upper middle value for lists of even length; one edit by a Python one-liner. */
const STATS_MEDIAN: Episode = {
  name: "stats-median",
  issue: [
    "median() is wrong for lists of even length",
    "",
    "`median([4, 1, 3, 2])` returns 3, but the median of 1, 2, 3, 4 is 2.5 (the mean of the two middle values).",
    "Odd-length lists are fine: `median([3, 1, 2])` returns 2.",
  ].join("\n"),
  files: {
    ".gitignore": GITIGNORE,
    "README.md": "# stats\n\nSmall descriptive statistics helpers. Run the tests with `python3 -m unittest -v`.\n",
    "stats.py": [
      '"""Small descriptive statistics helpers."""',
      "",
      "",
      "def mean(values):",
      '    """Arithmetic mean of a non-empty sequence."""',
      "    return sum(values) / len(values)",
      "",
      "",
      "def median(values):",
      '    """Middle value of a non-empty sequence; for an even length, the mean of the two middle values."""',
      "    ordered = sorted(values)",
      "    middle = len(ordered) // 2",
      "    return ordered[middle]",
      "",
    ].join("\n"),
    "test_stats.py": [
      "import unittest",
      "",
      "from stats import mean, median",
      "",
      "",
      "class MeanTest(unittest.TestCase):",
      "    def test_mean(self):",
      "        self.assertEqual(mean([1, 2, 3, 4]), 2.5)",
      "",
      "",
      "class MedianTest(unittest.TestCase):",
      "    def test_odd_length(self):",
      "        self.assertEqual(median([3, 1, 2]), 2)",
      "",
      "    def test_even_length(self):",
      "        self.assertEqual(median([4, 1, 3, 2]), 2.5)",
      "",
      "",
      'if __name__ == "__main__":',
      "    unittest.main()",
      "",
    ].join("\n"),
  },
  commitMessage: "Add mean and median",
  steps: [
    { thought: "Let me run the test suite first to see the failure the issue describes.", command: "python3 -m unittest -v", exitCode: 1 },
    {
      thought: "test_even_length fails: median returns 3 instead of 2.5. Let me find where median is defined.",
      command: 'grep -rn "def median" --include="*.py" .',
      exitCode: 0,
    },
    { thought: "It is in stats.py. Let me read the whole module.", command: "cat -n stats.py", exitCode: 0 },
    {
      thought:
        "For an even length the function returns the upper of the two middle values. It should return their mean. I'll replace the return line, checking that it occurs exactly once.",
      command: [
        "python3 - <<'EOF'",
        "from pathlib import Path",
        "",
        'path = Path("stats.py")',
        "source = path.read_text()",
        'old = "    return ordered[middle]\\n"',
        'new = "    if len(ordered) % 2 == 0:\\n        return (ordered[middle - 1] + ordered[middle]) / 2\\n    return ordered[middle]\\n"',
        "assert source.count(old) == 1",
        "path.write_text(source.replace(old, new))",
        "EOF",
      ].join("\n"),
      exitCode: 0,
    },
    { thought: "Let me check the change.", command: "git diff", exitCode: 0 },
    { thought: "Now the tests should pass.", command: "python3 -m unittest -v", exitCode: 0 },
  ],
  submitThought: "All three tests pass; the even-length case now averages the two middle values. Submitting the fix.",
};

/** A slug helper that keeps punctuation; a wrong path first (a command error), then one `sed -i` edit. */
const SLUG_PUNCTUATION: Episode = {
  name: "slug-punctuation",
  issue: [
    "slugify() keeps punctuation",
    "",
    '`slugify("Hello, World!")` gives `hello,-world!`; it should give `hello-world`. Runs of spaces and dashes',
    'should become one hyphen too: `slugify("  Tips -- and   tricks ")` should be `tips-and-tricks`.',
  ].join("\n"),
  files: {
    ".gitignore": GITIGNORE,
    "slug.py": [
      '"""URL slugs for page titles."""',
      "",
      "import re",
      "",
      "",
      "def slugify(title):",
      '    """Lower-case words of a title joined by single hyphens: "Hello, World!" -> "hello-world"."""',
      '    words = re.split(r"\\s+", title.strip().lower())',
      '    return "-".join(words)',
      "",
    ].join("\n"),
    "test_slug.py": [
      "import unittest",
      "",
      "from slug import slugify",
      "",
      "",
      "class SlugifyTest(unittest.TestCase):",
      "    def test_spaces(self):",
      '        self.assertEqual(slugify("Release notes"), "release-notes")',
      "",
      "    def test_punctuation(self):",
      '        self.assertEqual(slugify("Hello, World!"), "hello-world")',
      "",
      "    def test_repeated_separators(self):",
      '        self.assertEqual(slugify("  Tips -- and   tricks "), "tips-and-tricks")',
      "",
    ].join("\n"),
  },
  commitMessage: "Add slugify",
  steps: [
    { thought: "Let me reproduce the problem with the tests.", command: "python3 -m unittest -v", exitCode: 1 },
    { thought: "Two tests fail. The helper is probably under src/; let me read it.", command: "cat -n src/slug.py", exitCode: 1 },
    { thought: "There is no src/ folder; the module sits at the top level.", command: "cat -n slug.py", exitCode: 0 },
    {
      thought:
        "Splitting on whitespace keeps punctuation and turns a run of dashes into a word. Taking the runs of letters and digits instead fixes both cases.",
      command: `sed -i 's/re.split(r"\\\\s+", title.strip().lower())/re.findall(r"[a-z0-9]+", title.lower())/' slug.py`,
      exitCode: 0,
    },
    { thought: "Let me run the tests again.", command: "python3 -m unittest -v", exitCode: 0 },
  ],
  submitThought: "The three tests pass. Submitting.",
};

export const EPISODES: readonly Episode[] = [STATS_MEDIAN, SLUG_PUNCTUATION];
