// The public entries name every type a caller needs to call what they export: each parameter type of an exported
// function or class that is declared in this package is exported by the same entry.
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const ENTRIES = [
  'index.ts',
  'client-entry.ts',
  'journal.ts',
  'sqlite.ts',
  'postgres.ts',
  'advanced.ts',
  'testing.ts',
  'testing-contract.ts',
].map((f) => join(ROOT, 'src', f));

const program = ts.createProgram(ENTRIES, {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
});
const checker = program.getTypeChecker();
const SRC = join(ROOT, 'src') + '/';

/** The named types of this package a type is made of (union and intersection members, one level deep). */
function ownNamedTypes(type: ts.Type): string[] {
  const parts = type.isUnionOrIntersection() ? type.types : [type];
  return parts.flatMap((part) => {
    const symbol = part.aliasSymbol ?? part.getSymbol();
    const declaration = symbol?.declarations?.[0];
    if (symbol === undefined || declaration === undefined) return [];
    if (symbol.name.startsWith('__')) return []; // an anonymous object or function type
    return declaration.getSourceFile().fileName.startsWith(SRC) ? [symbol.name] : [];
  });
}

/** `entry: export → parameter type` for every parameter type of ours the entry does not export. */
function missingOptionTypes(entry: string, hidden: readonly string[] = []): string[] {
  const file = program.getSourceFile(entry);
  const module = file === undefined ? undefined : checker.getSymbolAtLocation(file);
  if (module === undefined) throw new Error(`cannot read ${entry}`);
  const exported = checker.getExportsOfModule(module);
  const names = new Set(exported.map((e) => e.name).filter((name) => !hidden.includes(name)));
  const missing: string[] = [];
  for (const symbol of exported) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (!(target.flags & (ts.SymbolFlags.Function | ts.SymbolFlags.Variable | ts.SymbolFlags.Class)))
      continue;
    const type = checker.getTypeOfSymbol(target);
    const signatures = [...type.getCallSignatures(), ...type.getConstructSignatures()];
    for (const signature of signatures)
      for (const parameter of signature.getParameters()) {
        const parameterType = checker.getTypeOfSymbol(parameter);
        for (const name of ownNamedTypes(parameterType))
          if (!names.has(name)) missing.push(`${symbol.name}(${parameter.name}: ${name})`);
      }
  }
  return [...new Set(missing)].sort();
}

describe('the public entries', () => {
  for (const entry of ENTRIES) {
    const short = entry.slice(ROOT.length + 1);
    it(`${short} exports the types of its factories' parameters`, () => {
      expect(missingOptionTypes(entry)).toEqual([]);
    });
  }

  it('the check sees a parameter type left unexported, in unions too', () => {
    const index = ENTRIES[0] as string;
    expect(missingOptionTypes(index, ['DurableMcpOptions', 'HandlerFactory'])).toEqual([
      'createDurableMcp(options: DurableMcpOptions)',
      'listenHttp(handlerOrFactory: HandlerFactory)',
    ]);
  });
});
