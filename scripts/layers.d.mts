// Types of scripts/layers.mjs (plain JavaScript so that .dependency-cruiser.mjs can load it without a compiler).
import type { IForbiddenRuleType } from 'dependency-cruiser';

export const layers: Readonly<Record<string, readonly string[]>>;
export const packages: Readonly<Record<string, string>>;
export function folderOf(layer: string): string;
export function mayImport(layer: string): string;
export function forbidden(): IForbiddenRuleType[];
