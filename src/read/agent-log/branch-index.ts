/**
 * The branch an agent was on last, in a session file whose entries are linked into a tree by
 * `id` / `parentId` (pi, Factory Droid: a rewind or `/tree` appends the new branch to the same
 * file). A reader's first pass gives every entry's links here; `branch()` then names the lines on
 * the chain from the file's last linked entry back to the root, which its second pass reads. Memory
 * grows with the number of entries, never with their content.
 */
export class BranchIndex {
  private readonly nodes = new Map<string, { parent: string | null; line: number }>();
  private readonly lines: number[] = [];
  private readonly withId = new Set<number>();
  private lastId: string | undefined;
  private linked = false;

  /** One entry of the tree (an entry without an id is on every branch, in file order). */
  add(line: number, id: unknown, parentId: unknown, hasParentField: boolean): void {
    this.lines.push(line);
    if (typeof id !== "string" || id === "") return;
    if (hasParentField) this.linked = true;
    this.withId.add(line);
    this.nodes.set(id, { parent: typeof parentId === "string" && parentId !== "" ? parentId : null, line });
    this.lastId = id;
  }

  /**
   * The lines of the branch ending at the last entry with an id; every line when no entry names
   * a parent (a linear file). Entries without an id stay on the branch. `offBranch` counts the rest.
   */
  branch(): { lines: Set<number>; offBranch: number } {
    if (!this.linked || this.lastId === undefined) return { lines: new Set(this.lines), offBranch: 0 };
    const onChain = new Set<number>();
    const seen = new Set<string>();
    let at: string | null = this.lastId;
    while (at !== null && !seen.has(at)) {
      seen.add(at);
      const node = this.nodes.get(at);
      if (!node) break;
      onChain.add(node.line);
      at = node.parent;
    }
    const lines = new Set(this.lines.filter((line) => onChain.has(line) || !this.withId.has(line)));
    return { lines, offBranch: this.lines.length - lines.size };
  }
}
