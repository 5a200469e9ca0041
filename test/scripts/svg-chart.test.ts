import { describe, expect, it } from 'vitest';
import { type ChartSpec, formatCompact, logTicks, niceTicks, renderChart } from '../../scripts/lib/svg-chart.js';

/**
 * Not a full XML parser: checks that tags nest and close properly and that every `&` starts a
 * known entity, which is what a string-built SVG most often gets wrong.
 */
function checkWellFormed(svg: string): void {
  expect(svg.startsWith('<svg')).toBe(true);
  const stack: string[] = [];
  for (const [tag] of svg.matchAll(/<[^>]*>/g)) {
    const name = /^<\/?([A-Za-z][\w:-]*)/.exec(tag)?.[1];
    if (name === undefined) throw new Error(`not a tag: ${tag}`);
    if (tag.startsWith('</')) {
      const open = stack.pop();
      if (open !== name) throw new Error(`</${name}> closes <${open}>`);
    } else if (!tag.endsWith('/>')) {
      stack.push(name);
    }
  }
  expect(stack).toEqual([]);
  expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
  // A stray `<` would have been caught above as a broken tag; a stray `&` would not.
  expect(svg).not.toMatch(/&(?!(amp|lt|gt|quot|apos);)/);
}

/** Raw y tick values and their y positions, read back from the y-axis labels. */
function yTickLabels(svg: string): { label: string; y: number }[] {
  const axis = /<g class="y-axis"[^>]*>([\s\S]*?)<\/g>/.exec(svg)?.[1] ?? '';
  return [...axis.matchAll(/<text x="[^"]*" y="([^"]*)" text-anchor="end">([^<]*)<\/text>/g)].map((m) => ({
    label: m[2] ?? '',
    y: Number(m[1]),
  }));
}

const backoff: ChartSpec = {
  title: 'Full jitter, base 100 ms, cap 2 s',
  xLabel: 'retry number',
  yLabel: 'delay (ms)',
  bands: [{ name: 'min..max', points: [1, 2, 3, 4, 5].map((k) => [k, 0, Math.min(2000, 100 * 2 ** k)] as const) }],
  series: [{ name: 'median', points: [1, 2, 3, 4, 5].map((k) => [k, Math.min(2000, 100 * 2 ** k) / 2] as const) }],
  hLines: [{ y: 2000, label: 'cap 2 s' }],
};

describe('renderChart', () => {
  it('is deterministic', () => {
    expect(renderChart(structuredClone(backoff))).toBe(renderChart(structuredClone(backoff)));
  });

  it('produces well-formed SVG with a background, title, legend and axis labels', () => {
    const svg = renderChart({
      ...backoff,
      shadeX: [{ from: 0, to: 1.5, label: 'outage 0–1.5' }],
      series: [
        ...(backoff.series ?? []),
        {
          name: 'p90',
          points: [
            [1, 150],
            [5, 1800],
          ],
          dashed: true,
        },
      ],
    });
    checkWellFormed(svg);
    expect(svg).toContain('fill="#fff"');
    for (const text of [
      'Full jitter, base 100 ms, cap 2 s',
      'retry number',
      'delay (ms)',
      'min..max',
      'median',
      'p90',
      'cap 2 s',
      'outage 0–1.5',
    ]) {
      expect(svg).toContain(`>${text}</text>`);
    }
  });

  it('escapes markup in all text', () => {
    const evil = `a<b & "c"> 'd'`;
    const svg = renderChart({
      title: evil,
      xLabel: evil,
      yLabel: evil,
      series: [
        {
          name: evil,
          points: [
            [0, 1],
            [1, 2],
          ],
          color: '"><script>',
        },
      ],
      hLines: [{ y: 1, label: evil }],
    });
    checkWellFormed(svg);
    expect(svg).not.toContain('<b');
    expect(svg).not.toContain('<script');
    expect(svg.split('a&lt;b &amp; &quot;c&quot;&gt; &apos;d&apos;').length - 1).toBe(5);
  });

  it('emits a long series as a single path', () => {
    const points = Array.from({ length: 5000 }, (_, i) => [i / 10, 100 + 50 * Math.sin(i / 50)] as const);
    const svg = renderChart({ title: 'load', xLabel: 't (s)', yLabel: 'rps', series: [{ name: 'load', points }] });
    const group = /<g class="series"[^>]*>([\s\S]*?)<\/g>/.exec(svg)?.[1] ?? '';
    expect(group.match(/<path/g)).toHaveLength(1);
    // 2-decimal rounding keeps numbers short.
    expect(svg).not.toMatch(/\d\.\d{3}/);
  });

  it('puts y ticks at multiples of a nice step that cover the data', () => {
    const svg = renderChart({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      series: [
        {
          name: 's',
          points: [
            [0, -13],
            [1, 437],
            [2, 88],
          ],
        },
      ],
      formatY: String,
    });
    const values = yTickLabels(svg).map((t) => Number(t.label));
    expect(values.length).toBeGreaterThanOrEqual(3);
    const step = (values[1] ?? 0) - (values[0] ?? 0);
    expect(isNice(step)).toBe(true);
    for (const [i, v] of values.entries()) expect(v).toBeCloseTo((values[0] ?? 0) + i * step, 9);
    expect(Number.isInteger((values[0] ?? 0) / step)).toBe(true);
    expect(values[0]).toBeLessThanOrEqual(-13);
    expect(values.at(-1)).toBeGreaterThanOrEqual(437);
  });

  it('places 1, 10 and 100 equally spaced on a log axis', () => {
    const svg = renderChart({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      yLog: true,
      series: [
        {
          name: 's',
          points: [
            [0, 1],
            [1, 30],
            [2, 100],
          ],
        },
      ],
      formatY: String,
    });
    const y = new Map(yTickLabels(svg).map((t) => [t.label, t.y]));
    const [y1, y10, y100] = [y.get('1'), y.get('10'), y.get('100')];
    if (y1 === undefined || y10 === undefined || y100 === undefined) throw new Error(`missing ticks: ${[...y.keys()]}`);
    expect(y1).toBeGreaterThan(y10); // larger values are higher up
    expect(Math.abs(y1 - y10 - (y10 - y100))).toBeLessThanOrEqual(0.02);
  });

  it('rejects non-finite values, naming the series and index', () => {
    const spec = (y: number): ChartSpec => ({
      title: 't',
      xLabel: 'x',
      yLabel: 'y',
      series: [
        { name: 'ok', points: [[0, 1]] },
        {
          name: 'retry storm',
          points: [
            [0, 1],
            [1, 2],
            [2, y],
          ],
        },
      ],
    });
    expect(() => renderChart(spec(Number.NaN))).toThrow(/series "retry storm" point at index 2: y is not a finite/);
    expect(() => renderChart(spec(Infinity))).toThrow(/"retry storm".*index 2/);
    expect(() => renderChart({ title: 't', xLabel: 'x', yLabel: 'y', bands: [{ name: 'b', points: [[0, 1, Number.NaN]] }] })).toThrow(
      /band "b" point at index 0: high/,
    );
  });

  it('rejects empty data and non-positive values on a log axis', () => {
    const base = { title: 't', xLabel: 'x', yLabel: 'y' };
    expect(() => renderChart(base)).toThrow(/no series or bands/);
    expect(() => renderChart({ ...base, series: [{ name: 'empty', points: [] }] })).toThrow(/series "empty" has no points/);
    expect(() =>
      renderChart({
        ...base,
        yLog: true,
        series: [
          {
            name: 'z',
            points: [
              [0, 1],
              [1, 0],
            ],
          },
        ],
      }),
    ).toThrow(/series "z" point at index 1: y must be > 0/);
  });

  it('handles a flat single-point series', () => {
    checkWellFormed(renderChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ name: 's', points: [[3, 5]] }] }));
  });
});

describe('ticks', () => {
  it.each([
    [0, 1],
    [0, 37],
    [-13, 437],
    [0.001, 0.0137],
    [1000, 1003],
    [5, 5],
  ])('niceTicks(%d, %d) steps nicely and covers the range', (min, max) => {
    const t = niceTicks(min, max);
    expect(isNice(t.step)).toBe(true);
    expect(t.min).toBeLessThanOrEqual(min);
    expect(t.max).toBeGreaterThanOrEqual(max);
    expect(t.ticks[0]).toBe(t.min);
    expect(t.ticks.at(-1)).toBe(t.max);
    expect(t.ticks.length).toBeGreaterThanOrEqual(2);
    expect(t.ticks.length).toBeLessThanOrEqual(12);
  });

  it('keeps a fixed end and avoids float noise', () => {
    expect(niceTicks(0, 0.3).ticks).toEqual([0, 0.1, 0.2, 0.3]);
    const t = niceTicks(0, 95, 5, { min: false, max: true });
    expect(t.max).toBe(95);
    expect(t.ticks).toEqual([0, 20, 40, 60, 80]);
  });

  it('log ticks span whole decades', () => {
    expect(logTicks(3, 4000).ticks).toEqual([1, 10, 100, 1000, 10000]);
    expect(logTicks(0.02, 0.7).ticks).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]);
  });

  it('formats compactly', () => {
    expect([0, 0.25, 12.345, 999.7, 1500, 2_000_000, -2500, 3e9].map((v) => formatCompact(v))).toEqual([
      '0',
      '0.25',
      '12.3',
      '1k',
      '1.5k',
      '2M',
      '-2.5k',
      '3G',
    ]);
  });
});

/** 1, 2 or 5 times a power of ten. */
function isNice(step: number): boolean {
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  return [1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-9);
}
