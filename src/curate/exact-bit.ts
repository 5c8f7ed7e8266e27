/**
 * Set on a key whose pair carries the record's exact hash (not a MinHash band key). Its own
 * module: the clusters stage reads pairs by it without loading the signatures stage's code.
 */
export const EXACT_BIT = 1n << 63n;
