// Types of bin/source-bundle.js (plain JavaScript: the launcher loads it before any TypeScript).
export declare const BUNDLE_DIR: string;
export declare const BUILD_INFO: string;
export declare function sourceStamps(root: string): string[];
export declare function stampsId(stamps: string[]): string;
export declare function freshBundleEntry(root: string): string | null;
export declare function changedSinceBundle(root: string): string[];
