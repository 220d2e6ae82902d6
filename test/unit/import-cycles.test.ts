import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * Modules that import each other (even for types only) cannot be read, tested or moved one at a time; a shared
 * type belongs in its own module that both import. This walks the relative imports of the application's code
 * (static, type-only, re-exports and dynamic) and reports every cycle.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const DIRECTORIES = ['src', 'rest', 'schema'];

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

/** File → the files of the walked directories it imports. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name))
      .filter((target) => known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself): Tarjan's algorithm. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

describe('imports', () => {
  it('should form no cycle in src/, rest/ and schema/', () => {
    const files = DIRECTORIES.flatMap((directory) => sourceFiles(join(ROOT, directory)));
    expect(files.length).toBeGreaterThan(100);
    const found = cycles(importGraph(files)).map((component) => component.map((file) => relative(ROOT, file)));
    expect(found).toEqual([]);
  });

  it('should find a cycle of three files, and none in a chain', () => {
    const [a, b, c] = ['/x/a.ts', '/x/b.ts', '/x/c.ts'];
    const graph = new Map([
      [a, [b]],
      [b, [c]],
      [c, [a]],
    ]);
    expect(cycles(graph)).toEqual([[a, b, c]]);
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, []],
        ]),
      ),
    ).toEqual([]);
  });
});
