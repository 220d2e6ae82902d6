import { readFileSync } from 'node:fs';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics.ts';

/*
 * The Grafana board (docs/grafana-lagoon.json) and the metrics table (docs/operations.md, Metrics) stay true to what
 * /metrics serves: the board is a Grafana dashboard model whose every query names a family the app registers, and
 * every family of Lagoon's own is documented.
 */

interface Board {
  title: string;
  uid: string;
  schemaVersion: number;
  panels: { id: number; type: string; title: string; gridPos: object; targets: { expr: string; refId: string }[] }[];
}

const families = async () => {
  const ours = new Set((await new Metrics().registry.getMetricsAsJSON()).map((metric) => metric.name));
  const node = new Registry();
  collectDefaultMetrics({ register: node, prefix: 'lagoon_' });
  for (const metric of await node.getMetricsAsJSON()) ours.delete(metric.name);
  return ours;
};

describe('the metrics documentation', () => {
  it('the Grafana board is a dashboard model over families the app serves', async () => {
    const board = JSON.parse(readFileSync('docs/grafana-lagoon.json', 'utf8')) as Board;
    expect(board).toMatchObject({ title: 'Lagoon', uid: expect.any(String), schemaVersion: expect.any(Number) });
    const known = await families();
    const used = new Set<string>();
    for (const panel of board.panels) {
      expect(panel.targets.length, panel.title).toBeGreaterThan(0);
      for (const { expr } of panel.targets)
        for (const [name] of expr.matchAll(/lagoon_[a-z_]+/g)) used.add(name.replace(/_(bucket|count|sum)$/, ''));
    }
    for (const name of used) expect(known, name).toContain(name);
    expect(new Set(board.panels.map((panel) => panel.id)).size).toBe(board.panels.length);
  });

  it('docs/operations.md lists every family of Lagoon’s own', async () => {
    const doc = readFileSync('docs/operations.md', 'utf8');
    for (const name of await families()) expect(doc, name).toContain(`\`${name}\``);
  });
});
