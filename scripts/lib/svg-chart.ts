// A small, dependency-free SVG chart writer for dev scripts (backoff schedules, retry-storm
// simulations, load over time). Not part of the published package.
//
// Output is deterministic: the same spec always yields the same string, and every coordinate is
// rounded to 2 decimals, so committed charts stay small and diff cleanly.

/** A line: points are drawn in the order given (sort by x first if that is what you want). */
export interface Series {
  name: string;
  points: ReadonlyArray<readonly [number, number]>;
  color?: string;
  dashed?: boolean;
}

/** A filled range, e.g. min..max of a jittered delay per retry number. */
export interface Band {
  name: string;
  points: ReadonlyArray<readonly [x: number, low: number, high: number]>;
  color?: string;
}

/** Everything a chart shows. Only `title`, `xLabel`, `yLabel` and some data are required. */
export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series?: Series[];
  bands?: Band[];
  /** Horizontal dashed reference lines, e.g. a backoff cap. */
  hLines?: { y: number; label: string }[];
  /** Shaded x intervals, e.g. an outage. */
  shadeX?: { from: number; to: number; label: string }[];
  /** Logarithmic y axis; every y value (and yMin) must then be > 0. */
  yLog?: boolean;
  /** Pixels; default 720 x 400. */
  width?: number;
  height?: number;
  /** Fix an axis end instead of rounding the data range out to the next nice tick. */
  xMin?: number;
  xMax?: number;
  yMin?: number;
  yMax?: number;
  /** Tick label formatters; default {@link formatCompact} (with enough digits to tell ticks apart). */
  formatX?: (value: number) => string;
  formatY?: (value: number) => string;
}

/**
 * Okabe–Ito colours, which stay distinguishable under the common colour-vision deficiencies.
 * Their yellow is left out: it is nearly invisible on white.
 */
export const PALETTE: readonly string[] = [
  '#0072B2', // blue
  '#D55E00', // vermillion
  '#009E73', // bluish green
  '#CC79A7', // reddish purple
  '#E69F00', // orange
  '#56B4E9', // sky blue
  '#000000', // black
];

const FONT_SIZE = 12;
// Rough average glyph width of a sans-serif font at FONT_SIZE; only used to lay out the legend
// and the left margin, where an estimate a few pixels off does no harm.
const CHAR_WIDTH = 7;
const AXIS_COLOR = '#333';
const GRID_COLOR = '#e6e6e6';

/** Escapes text for use in XML content and in double- or single-quoted attributes. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c]};`);
}

/**
 * Formats a number with at most `digits` significant digits and a k/M/G suffix:
 * 1500 → "1.5k", 2_000_000 → "2M", 0.25 → "0.25".
 */
export function formatCompact(value: number, digits = 3): string {
  // Round first, so 999.7 becomes 1000 and then "1k" rather than "1e+3" or "1000".
  const rounded = Number(value.toPrecision(digits));
  const abs = Math.abs(rounded);
  for (const [scale, suffix] of [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ] as const) {
    // The second toPrecision removes float noise from the division (e.g. 1.2000000000000002).
    if (abs >= scale) return `${Number((rounded / scale).toPrecision(digits))}${suffix}`;
  }
  return String(rounded);
}

/** Axis ticks: the (possibly widened) axis domain and the tick values inside it. */
export interface Ticks {
  min: number;
  max: number;
  ticks: number[];
  /** Distance between ticks (linear ticks only; 0 for log ticks). */
  step: number;
}

/**
 * Linear ticks at multiples of a 1/2/5 × 10^k step, about `count` of them. Unless `fixed` is
 * set, the domain is widened to the enclosing ticks, so the ticks always cover [min, max].
 */
export function niceTicks(min: number, max: number, count = 5, fixed = { min: false, max: false }): Ticks {
  if (min === max) {
    // A flat line still needs an axis; give it some room around the value.
    const pad = Math.abs(min) * 0.1 || 1;
    if (!fixed.min) min -= pad;
    if (!fixed.max) max += pad;
  }
  const raw = (max - min) / Math.max(1, count);
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const f = raw / magnitude;
  const step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
  // Tick values are computed as i * step and cut to the step's decimals, so 0.1 + 0.2 noise
  // never reaches a label.
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const at = (i: number): number => Number((i * step).toFixed(decimals));
  const eps = 1e-9;
  const first = fixed.min ? Math.ceil(min / step - eps) : Math.floor(min / step + eps);
  const last = fixed.max ? Math.floor(max / step + eps) : Math.ceil(max / step - eps);
  const ticks: number[] = [];
  for (let i = first; i <= last; i++) ticks.push(at(i));
  return { min: fixed.min ? min : at(first), max: fixed.max ? max : at(last), ticks, step };
}

/**
 * Log ticks at powers of ten (plus 2× and 5× when there are few decades). Unless fixed, the
 * domain is widened to whole decades. Both ends must be > 0.
 */
export function logTicks(min: number, max: number, fixed = { min: false, max: false }): Ticks {
  const lo = Math.floor(Math.log10(min) + 1e-9);
  let hi = Math.ceil(Math.log10(max) - 1e-9);
  if (lo === hi) hi += 1;
  const domainMin = fixed.min ? min : pow10(lo);
  const domainMax = fixed.max ? max : pow10(hi);
  const multiples = hi - lo <= 2 ? [1, 2, 5] : [1];
  const ticks: number[] = [];
  for (let k = lo; k <= hi; k++) {
    for (const m of multiples) {
      const v = Number(`${m}e${k}`); // exact decimal, unlike m * 10 ** k for negative k
      if (v >= domainMin * (1 - 1e-9) && v <= domainMax * (1 + 1e-9)) ticks.push(v);
    }
  }
  return { min: domainMin, max: domainMax, ticks, step: 0 };
}

const pow10 = (k: number): number => Number(`1e${k}`);

/** Rounds to 2 decimals for output; String() never yields "-0" or exponents at pixel scale. */
function n(v: number): string {
  return String(Math.round(v * 100) / 100);
}

/** Throws unless `v` is a finite number (and > 0 when `positive`), naming where it came from. */
function check(v: number, what: string, positive = false): void {
  if (!Number.isFinite(v)) throw new Error(`${what} is not a finite number (${v})`);
  if (positive && v <= 0) throw new Error(`${what} must be > 0 on a log scale (got ${v})`);
}

/** Collects every x and y the chart must show, validating as it goes. */
function collect(spec: ChartSpec): { xs: number[]; ys: number[] } {
  const xs: number[] = [];
  const ys: number[] = [];
  const log = spec.yLog === true;
  const series = spec.series ?? [];
  const bands = spec.bands ?? [];
  if (series.length + bands.length === 0) throw new Error(`chart "${spec.title}" has no series or bands`);
  for (const s of series) {
    if (s.points.length === 0) throw new Error(`series "${s.name}" has no points`);
    s.points.forEach(([x, y], i) => {
      check(x, `series "${s.name}" point at index ${i}: x`);
      check(y, `series "${s.name}" point at index ${i}: y`, log);
      xs.push(x);
      ys.push(y);
    });
  }
  for (const b of bands) {
    if (b.points.length === 0) throw new Error(`band "${b.name}" has no points`);
    b.points.forEach(([x, low, high], i) => {
      check(x, `band "${b.name}" point at index ${i}: x`);
      check(low, `band "${b.name}" point at index ${i}: low`, log);
      check(high, `band "${b.name}" point at index ${i}: high`, log);
      xs.push(x);
      ys.push(low, high);
    });
  }
  // Reference lines and shaded intervals widen the axes too: a cap or an outage the reader
  // cannot see would be worse than a little empty space.
  (spec.hLines ?? []).forEach((h, i) => {
    check(h.y, `hLine "${h.label}" (index ${i}): y`, log);
    ys.push(h.y);
  });
  (spec.shadeX ?? []).forEach((s, i) => {
    check(s.from, `shadeX "${s.label}" (index ${i}): from`);
    check(s.to, `shadeX "${s.label}" (index ${i}): to`);
    xs.push(s.from, s.to);
  });
  return { xs, ys };
}

/** Default tick label: 3 significant digits, or more when the ticks would otherwise collide. */
function defaultFormat(t: Ticks): (v: number) => string {
  if (t.step === 0) return (v) => formatCompact(v);
  const largest = Math.max(Math.abs(t.min), Math.abs(t.max));
  // E.g. ticks 10010, 10020 need 4 digits, not "10k" twice.
  const digits = Math.max(3, Math.ceil(Math.log10(largest / t.step)) + 1);
  return (v) => formatCompact(v, digits);
}

/** Turns points into compact path data, dropping points that round to the previous one. */
function pathData(points: ReadonlyArray<readonly [number, number]>): string {
  const out: string[] = [];
  for (const [x, y] of points) {
    const p = `${n(x)},${n(y)}`;
    if (out[out.length - 1] !== p) out.push(p);
  }
  // A lone point has zero length; repeating it lets the round line cap draw a dot.
  if (out.length === 1 && out[0] !== undefined) out.push(out[0]);
  return `M${out[0] ?? ''}L${out.slice(1).join(' ')}`;
}

interface LegendItem {
  name: string;
  color: string;
  kind: 'line' | 'dashed' | 'band';
}

/**
 * Renders a chart as a standalone SVG document string.
 *
 * - Linear y axes start at 0 when all data is on one side of it (so heights compare honestly),
 *   unless `yMin`/`yMax` is given. Otherwise axes are widened to the nearest nice tick.
 * - Bands and series are coloured from {@link PALETTE} independently, in their own order, so
 *   band i and series i get the same colour: list a band and its median line in the same order.
 * - Throws an Error naming the series (or band, hLine, shadeX) and index for empty data,
 *   non-finite values, or non-positive values on a log axis.
 */
export function renderChart(spec: ChartSpec): string {
  const width = spec.width ?? 720;
  const height = spec.height ?? 400;
  check(width, 'width', true);
  check(height, 'height', true);
  const { xs, ys } = collect(spec);
  const log = spec.yLog === true;
  const series = spec.series ?? [];
  const bands = spec.bands ?? [];

  // --- Legend, laid out in rows under the title, wrapping at the chart width.
  const legend: LegendItem[] = [
    ...bands.map((b, i): LegendItem => ({ name: b.name, color: b.color ?? paletteColor(i), kind: 'band' })),
    ...series.map(
      (s, i): LegendItem => ({
        name: s.name,
        color: s.color ?? paletteColor(i),
        kind: s.dashed === true ? 'dashed' : 'line',
      }),
    ),
  ];
  const legendTop = 44;
  const rowHeight = 18;
  const legendLeft = 16;
  const placed: { item: LegendItem; x: number; y: number }[] = [];
  let lx = legendLeft;
  let ly = legendTop;
  for (const item of legend) {
    const w = 26 + item.name.length * CHAR_WIDTH + 18;
    if (lx + w > width - 16 && lx > legendLeft) {
      lx = legendLeft;
      ly += rowHeight;
    }
    placed.push({ item, x: lx, y: ly });
    lx += w;
  }
  // Shaded-interval labels go just above the plot, where they can't collide with the data.
  const hasShadeLabels = (spec.shadeX ?? []).some((sh) => sh.label !== '');
  const top = ly + (hasShadeLabels ? 32 : 18);

  // --- Scales. Tick counts follow the plot size so labels don't crowd at small sizes.
  const bottom = height - 48;
  const yFixed = { min: spec.yMin !== undefined, max: spec.yMax !== undefined };
  const xFixed = { min: spec.xMin !== undefined, max: spec.xMax !== undefined };
  let yLo = spec.yMin ?? minOf(ys);
  let yHi = spec.yMax ?? maxOf(ys);
  if (!log && spec.yMin === undefined && yLo > 0) yLo = 0;
  if (!log && spec.yMax === undefined && yHi < 0) yHi = 0;
  if (log) {
    check(yLo, 'yMin', true);
    check(yHi, 'yMax', true);
  }
  const xLo = spec.xMin ?? minOf(xs);
  const xHi = spec.xMax ?? maxOf(xs);
  // Equal ends are fine when one of them may still move (niceTicks pads a flat range).
  if (xLo > xHi || (xFixed.min && xFixed.max && xLo === xHi)) throw new Error(`x axis range is empty: ${xLo}..${xHi}`);
  if (yLo > yHi || (yFixed.min && yFixed.max && yLo === yHi)) throw new Error(`y axis range is empty: ${yLo}..${yHi}`);
  const yTicks = log ? logTicks(yLo, yHi, yFixed) : niceTicks(yLo, yHi, Math.max(2, Math.round((bottom - top) / 60)), yFixed);
  const formatY = spec.formatY ?? defaultFormat(yTicks);
  const yLabels = yTicks.ticks.map(formatY);

  // The left margin fits the widest y tick label plus the rotated axis label.
  const left = 30 + Math.max(...yLabels.map((l) => l.length)) * CHAR_WIDTH + 8;
  const xTicks = niceTicks(xLo, xHi, Math.max(2, Math.round((width - 24 - left) / 90)), xFixed);
  const formatX = spec.formatX ?? defaultFormat(xTicks);
  // The last x tick label is centred on the plot's right edge; leave room for its right half.
  const lastX = xTicks.ticks.at(-1);
  const right = width - Math.max(24, (lastX === undefined ? 0 : formatX(lastX).length * CHAR_WIDTH) / 2 + 8);

  const sx = (x: number): number => left + ((x - xTicks.min) / (xTicks.max - xTicks.min)) * (right - left);
  const sy = log
    ? (y: number): number =>
        bottom - ((Math.log10(y) - Math.log10(yTicks.min)) / (Math.log10(yTicks.max) - Math.log10(yTicks.min))) * (bottom - top)
    : (y: number): number => bottom - ((y - yTicks.min) / (yTicks.max - yTicks.min)) * (bottom - top);
  const inY = (y: number): boolean => y >= yTicks.min && y <= yTicks.max;

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${n(width)}" height="${n(height)}" viewBox="0 0 ${n(width)} ${n(height)}" font-family="Helvetica, Arial, sans-serif" font-size="${FONT_SIZE}">`,
    `<rect width="${n(width)}" height="${n(height)}" fill="#fff"/>`,
    // Lines are clipped to the plot so fixed xMin/xMax/yMin/yMax can zoom in on the data.
    `<defs><clipPath id="plot-area"><rect x="${n(left)}" y="${n(top)}" width="${n(right - left)}" height="${n(bottom - top)}"/></clipPath></defs>`,
    `<text x="${n(width / 2)}" y="24" text-anchor="middle" font-size="16" font-weight="bold">${escapeXml(spec.title)}</text>`,
  );

  out.push('<g class="legend">');
  for (const { item, x, y } of placed) {
    const color = escapeXml(item.color);
    if (item.kind === 'band') {
      out.push(`<rect x="${n(x)}" y="${n(y - 6)}" width="20" height="10" fill="${color}" fill-opacity="0.25"/>`);
    } else {
      const dash = item.kind === 'dashed' ? ' stroke-dasharray="5 3"' : '';
      out.push(`<path d="M${n(x)},${n(y - 1)}h20" stroke="${color}" stroke-width="2"${dash}/>`);
    }
    out.push(`<text x="${n(x + 26)}" y="${n(y + 3)}">${escapeXml(item.name)}</text>`);
  }
  out.push('</g>');

  out.push('<g class="shade">');
  for (const s of spec.shadeX ?? []) {
    const a = Math.max(left, Math.min(sx(s.from), sx(s.to)));
    const b = Math.min(right, Math.max(sx(s.from), sx(s.to)));
    if (b <= a) continue; // entirely outside a fixed x range
    out.push(
      `<rect x="${n(a)}" y="${n(top)}" width="${n(b - a)}" height="${n(bottom - top)}" fill="#888" fill-opacity="0.15"/>`,
      `<text x="${n(a)}" y="${n(top - 5)}" font-size="11" fill="#444">${escapeXml(s.label)}</text>`,
    );
  }
  out.push('</g>');

  // Grid lines first, so data draws over them.
  out.push(`<g class="grid" stroke="${GRID_COLOR}" stroke-width="1">`);
  for (const t of yTicks.ticks) out.push(`<path d="M${n(left)},${n(sy(t))}H${n(right)}"/>`);
  for (const t of xTicks.ticks) out.push(`<path d="M${n(sx(t))},${n(top)}V${n(bottom)}"/>`);
  out.push('</g>');

  out.push('<g class="bands" clip-path="url(#plot-area)">');
  bands.forEach((b, i) => {
    // Upper edge left to right, then the lower edge back: one closed path per band.
    const upper = b.points.map(([x, , high]) => [sx(x), sy(high)] as const);
    const lower = b.points.map(([x, low]) => [sx(x), sy(low)] as const).reverse();
    const color = escapeXml(b.color ?? paletteColor(i));
    out.push(`<path d="${pathData([...upper, ...lower])}Z" fill="${color}" fill-opacity="0.25" stroke="none"/>`);
  });
  out.push('</g>');

  out.push('<g class="series" clip-path="url(#plot-area)" fill="none" stroke-width="1.75" stroke-linejoin="round" stroke-linecap="round">');
  series.forEach((s, i) => {
    const color = escapeXml(s.color ?? paletteColor(i));
    const dash = s.dashed === true ? ' stroke-dasharray="6 4"' : '';
    out.push(`<path d="${pathData(s.points.map(([x, y]) => [sx(x), sy(y)] as const))}" stroke="${color}"${dash}/>`);
  });
  out.push('</g>');

  out.push('<g class="hlines">');
  for (const h of spec.hLines ?? []) {
    if (!inY(h.y)) continue; // outside a fixed y range
    out.push(
      `<path d="M${n(left)},${n(sy(h.y))}H${n(right)}" stroke="#555" stroke-width="1.25" stroke-dasharray="6 4"/>`,
      `<text x="${n(right - 4)}" y="${n(sy(h.y) - 5)}" text-anchor="end" font-size="11" fill="#333">${escapeXml(h.label)}</text>`,
    );
  }
  out.push('</g>');

  out.push(`<g class="x-axis" fill="${AXIS_COLOR}">`);
  out.push(`<path d="M${n(left)},${n(bottom)}H${n(right)}" stroke="${AXIS_COLOR}"/>`);
  for (const t of xTicks.ticks) {
    out.push(
      `<path d="M${n(sx(t))},${n(bottom)}v4" stroke="${AXIS_COLOR}"/>`,
      `<text x="${n(sx(t))}" y="${n(bottom + 17)}" text-anchor="middle">${escapeXml(formatX(t))}</text>`,
    );
  }
  out.push(`<text x="${n((left + right) / 2)}" y="${n(height - 10)}" text-anchor="middle">${escapeXml(spec.xLabel)}</text>`);
  out.push('</g>');

  out.push(`<g class="y-axis" fill="${AXIS_COLOR}">`);
  out.push(`<path d="M${n(left)},${n(top)}V${n(bottom)}" stroke="${AXIS_COLOR}"/>`);
  yTicks.ticks.forEach((t, i) => {
    out.push(
      `<path d="M${n(left)},${n(sy(t))}h-4" stroke="${AXIS_COLOR}"/>`,
      `<text x="${n(left - 7)}" y="${n(sy(t) + 4)}" text-anchor="end">${escapeXml(yLabels[i] ?? '')}</text>`,
    );
  });
  const midY = (top + bottom) / 2;
  out.push(`<text x="16" y="${n(midY)}" text-anchor="middle" transform="rotate(-90 16 ${n(midY)})">${escapeXml(spec.yLabel)}</text>`);
  out.push('</g>');

  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

// Loops rather than Math.min(...values): spreading a very long series overflows the call stack.
function minOf(values: readonly number[]): number {
  let m = Infinity;
  for (const v of values) if (v < m) m = v;
  return m;
}

function maxOf(values: readonly number[]): number {
  let m = -Infinity;
  for (const v of values) if (v > m) m = v;
  return m;
}

function paletteColor(i: number): string {
  return PALETTE[i % PALETTE.length] ?? '#000';
}
