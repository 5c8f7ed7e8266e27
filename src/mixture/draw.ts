import { createHash } from "node:crypto";

/** A uniform number in [0, 1) from sha256(seed, id, copy): the same for a record wherever it is processed. */
export function drawUniform(seed: number, id: string, copy: number): number {
  const digest = createHash("sha256").update(`lwm-mixture\u0000${seed}\u0000${id}\u0000${copy}`).digest();
  // 52 bits: exact in a double.
  return (digest.readUInt32BE(0) * 2 ** 20 + (digest.readUInt32BE(4) >>> 12)) / 2 ** 52;
}

/**
 * Which copies of a record the output holds under sampling factor `factor`: copy c is kept when
 * its draw falls below min(1, factor - c). So factor 2.5 keeps copies 0 and 1 and, for half of
 * the records, copy 2; factor 0.5 keeps copy 0 of half of them; factor 1 keeps exactly copy 0.
 * The expected number of copies is `factor`, each decided independently of all other records.
 */
export function keptCopies(seed: number, id: string, factor: number): number[] {
  const copies: number[] = [];
  for (let copy = 0; copy < factor; copy++) {
    const chance = Math.min(1, factor - copy);
    if (chance >= 1 || drawUniform(seed, id, copy) < chance) copies.push(copy);
  }
  return copies;
}

/** The id a copy is written under: copy 0 keeps the record's id, later copies are `<id>#copy<N>`. */
export function copyId(id: string, copy: number): string {
  return copy === 0 ? id : `${id}#copy${copy}`;
}
