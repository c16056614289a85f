// The scaling sweep as a picture: one self-contained HTML page (inline SVG, no script, no
// external assets) with two panels, ready time and peak memory per node host against the
// number of node hosts, which lab/bench/main.ts screenshots with headless Chromium into a PNG
// beside bench.json. Pure: data in, markup out.

export interface ScalePoint {
  nodes: number;
  /** Lab ready, pairing from scratch (s). */
  freshReady: number;
  /** Lab ready, paired state restored from a snapshot (s), when measured. */
  snapshotReady?: number;
  /** Peak memory per node host (MiB): median and largest over the lab's node hosts. */
  memMedianMiB: number;
  memMaxMiB: number;
}

export interface ScalePlot {
  title: string;
  points: ScalePoint[];
  /** The bare gateway's own ready time (s), same run: the baseline. */
  bareGatewayReady: number;
  /** Target: ready within this many times the baseline (drawn as a dashed line). */
  targetRatio: number;
  /** Peak memory of one bare node host (MiB), same run, when measured. */
  bareNodeMiB?: number;
  /** One more line under the title (e.g. the run id). */
  caption?: string;
}

const W = 560;
const H = 400;
const M = { l: 64, r: 30, t: 40, b: 52 };
const COLORS = { fresh: "#c0392b", snapshot: "#2471a3", base: "#555", target: "#7d3c98", mem: "#1e8449", memMax: "#b9770e" };

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A "nice" upper bound and tick step for values up to max. */
export function niceScale(max: number, ticks = 5): { top: number; step: number } {
  if (!(max > 0)) return { top: 1, step: 0.2 };
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((k) => k * mag).find((s) => s >= raw)!;
  return { top: Math.ceil(max / step) * step, step };
}

interface Series {
  label: string;
  color: string;
  pts: [number, number][];
  dash?: string;
  /** A horizontal line across the panel instead of points. */
  flat?: number;
  /** Value labels under the points (two series close together keep their labels apart). */
  below?: boolean;
  /** Decimals of the value labels (default 1). */
  digits?: number;
}

function panel(x0: number, title: string, yLabel: string, xs: number[], series: Series[], unit: string, xLabel = "node hosts (NODES)"): string {
  const all = series.flatMap((s) => (s.flat !== undefined ? [s.flat] : s.pts.map((p) => p[1])));
  // Headroom for the legend (top left): the data stay below it.
  const { top, step } = niceScale(Math.max(...all, 0) * 1.35);
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const px = (x: number) => x0 + M.l + (xMax === xMin ? (W - M.l - M.r) / 2 : ((x - xMin) / (xMax - xMin)) * (W - M.l - M.r));
  const py = (y: number) => M.t + (1 - y / top) * (H - M.t - M.b);
  const out: string[] = [];
  out.push(`<text x="${x0 + W / 2}" y="22" text-anchor="middle" font-size="16" font-weight="bold">${esc(title)}</text>`);
  for (let y = 0; y <= top + 1e-9; y += step) {
    out.push(`<line x1="${x0 + M.l}" x2="${x0 + W - M.r}" y1="${py(y)}" y2="${py(y)}" stroke="#ddd"/>`);
    out.push(`<text x="${x0 + M.l - 6}" y="${py(y) + 4}" text-anchor="end" font-size="12">${+y.toFixed(2)}</text>`);
  }
  for (const x of xs) out.push(`<text x="${px(x)}" y="${H - M.b + 18}" text-anchor="middle" font-size="12">${x}</text>`);
  out.push(`<line x1="${x0 + M.l}" x2="${x0 + W - M.r}" y1="${py(0)}" y2="${py(0)}" stroke="#333"/>`);
  out.push(`<line x1="${x0 + M.l}" x2="${x0 + M.l}" y1="${M.t}" y2="${py(0)}" stroke="#333"/>`);
  out.push(`<text x="${x0 + W / 2}" y="${H - 12}" text-anchor="middle" font-size="13">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(${x0 + 16},${(M.t + H - M.b) / 2}) rotate(-90)" text-anchor="middle" font-size="13">${esc(yLabel)}</text>`);
  for (const s of series) {
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
    if (s.flat !== undefined) {
      out.push(`<line x1="${x0 + M.l}" x2="${x0 + W - M.r}" y1="${py(s.flat)}" y2="${py(s.flat)}" stroke="${s.color}" stroke-width="1.5"${dash}/>`);
      continue;
    }
    if (!s.pts.length) continue;
    out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2"${dash} points="${s.pts.map(([x, y]) => `${px(x)},${py(y)}`).join(" ")}"/>`);
    for (const [x, y] of s.pts) {
      out.push(`<circle cx="${px(x)}" cy="${py(y)}" r="4" fill="${s.color}"/>`);
      const last = x === xMax && xMax !== xMin;
      out.push(`<text x="${px(x) + (last ? -6 : 6)}" y="${py(y) + (s.below ? 16 : -7)}" text-anchor="${last ? "end" : "start"}" font-size="11" fill="${s.color}">${+y.toFixed(s.digits ?? 1)}${unit}</text>`);
    }
  }
  // Legend, top left inside the plot area.
  series.forEach((s, i) => {
    const y = M.t + 14 + i * 17;
    const dash = s.dash ? ` stroke-dasharray="${s.dash}"` : "";
    out.push(`<line x1="${x0 + M.l + 10}" x2="${x0 + M.l + 34}" y1="${y - 4}" y2="${y - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    out.push(`<text x="${x0 + M.l + 40}" y="${y}" font-size="12">${esc(s.label)}</text>`);
  });
  return out.join("\n");
}

/** The page: both panels and a caption with the numbers' source. */
export function scalePlotHtml(p: ScalePlot): string {
  const xs = p.points.map((q) => q.nodes);
  const ready = panel(
    0,
    "Ready time vs node hosts",
    "seconds (network created -> all paired)",
    xs,
    [
      { label: "lab, pairing from scratch", color: COLORS.fresh, pts: p.points.map((q) => [q.nodes, q.freshReady]) },
      { label: "lab, restored from snapshot", color: COLORS.snapshot, pts: p.points.filter((q) => q.snapshotReady !== undefined).map((q) => [q.nodes, q.snapshotReady!]) },
      { label: `bare gateway alone (baseline) ${p.bareGatewayReady.toFixed(1)} s`, color: COLORS.base, pts: [], flat: p.bareGatewayReady },
      { label: `target ${p.targetRatio}x baseline`, color: COLORS.target, pts: [], flat: p.bareGatewayReady * p.targetRatio, dash: "6 4" },
    ],
    " s",
  );
  const mem = panel(
    W,
    "Peak memory per node host",
    "MiB (sum of peak RSS of its processes)",
    xs,
    [
      { label: "median over the lab's node hosts", color: COLORS.mem, pts: p.points.map((q) => [q.nodes, q.memMedianMiB]), below: true, digits: 0 },
      { label: "largest", color: COLORS.memMax, pts: p.points.map((q) => [q.nodes, q.memMaxMiB]), dash: "3 3", digits: 0 },
      ...(p.bareNodeMiB !== undefined ? [{ label: `bare node host ${p.bareNodeMiB.toFixed(0)} MiB`, color: COLORS.base, pts: [] as [number, number][], flat: p.bareNodeMiB }] : []),
    ],
    "",
  );
  const f = (x: number | undefined, d = 1) => (x === undefined || !Number.isFinite(x) ? "-" : x.toFixed(d));
  const rows = p.points
    .map((q) => `<tr><td>${q.nodes}</td><td>${f(q.freshReady)}</td><td>${f(q.freshReady / p.bareGatewayReady, 2)}x</td><td>${f(q.snapshotReady)}</td><td>${q.snapshotReady === undefined ? "-" : `${f(q.snapshotReady / p.bareGatewayReady, 2)}x`}</td><td>${f(q.memMedianMiB, 0)}</td><td>${f(q.memMaxMiB, 0)}</td></tr>`)
    .join("");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${esc(p.title)}</title>
<style>body{margin:0;background:#fff;font-family:sans-serif}h1{font-size:18px;margin:10px 16px 0}p{margin:4px 16px;font-size:13px;color:#444}table{margin:4px 16px;border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 10px;text-align:right}</style></head>
<body><h1>${esc(p.title)}</h1>
<p>Each point: one lab brought up with NODES node hosts (ready: network created -&gt; every node paired and connected). Baseline: the same OpenClaw gateway alone as a bare process on loopback, same run: ${f(p.bareGatewayReady)} s.${p.caption ? ` ${esc(p.caption)}` : ""}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${H}" viewBox="0 0 ${2 * W} ${H}" font-family="sans-serif">
${ready}
${mem}
</svg>
<table><tr><th>NODES</th><th>ready, pairing (s)</th><th>vs baseline</th><th>ready, snapshot (s)</th><th>vs baseline</th><th>node host MiB, median</th><th>largest</th></tr>${rows}</table>
</body></html>
`;
}

/** One point of the fleet sweep (lab/bench/fleet.ts) as the plot draws it. */
export interface FleetPlotPoint {
  version: string;
  n: number;
  memMiB: number;
  fanoutP95: number;
  nodeListP95: number;
  cpuFanoutCores: number;
}

const VERSION_COLORS = ["#c0392b", "#2471a3", "#1e8449", "#b9770e"];

/**
 * The gateway's curve under a fleet: four panels against N scripted nodes (memory, fan-out
 * p95, node.list p95, CPU over the fan-out), one line per OpenClaw version, each version's
 * N = 0 (same lab) as the first point. Pure: data in, markup out.
 */
export function fleetPlotHtml(p: { title: string; caption?: string; points: FleetPlotPoint[] }): string {
  const versions = [...new Set(p.points.map((q) => q.version))];
  const xs = [...new Set(p.points.map((q) => q.n))].sort((a, b) => a - b);
  const series = (pick: (q: FleetPlotPoint) => number, digits: number, skipZero = false): Series[] =>
    versions.map((v, i) => ({ label: `openclaw@${v}`, color: VERSION_COLORS[i % VERSION_COLORS.length]!, pts: p.points.filter((q) => q.version === v && !(skipZero && q.n === 0)).map((q) => [q.n, pick(q)] as [number, number]), digits, below: i % 2 === 1 }));
  const xl = "scripted nodes connected (N)";
  const panels = [
    panel(0, "Gateway memory", "MiB (container, without inactive file pages)", xs, series((q) => q.memMiB, 0), "", xl),
    panel(W, "node.invoke fanned out to all N", "ms, p95 of N invokes at once", xs, series((q) => q.fanoutP95, 0, true), "", xl),
    `<g transform="translate(0,${H})">${panel(0, "node.list with N connected", "ms, p95 of 15 reads", xs, series((q) => q.nodeListP95, 0), "", xl)}</g>`,
    `<g transform="translate(0,${H})">${panel(W, "Gateway CPU during the fan-out", "cores", xs, series((q) => q.cpuFanoutCores, 2, true), "", xl)}</g>`,
  ];
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>${esc(p.title)}</title>
<style>body{margin:0;background:#fff;font-family:sans-serif}h1{font-size:18px;margin:10px 16px 0}p{margin:4px 16px;font-size:13px;color:#444}</style></head>
<body><h1>${esc(p.title)}</h1>
<p>Each point: the same lab with N of its scripted nodes connected to the gateway (nodes only added, N ascending; N = 0: the gateway just restarted, none connected, the same lab's baseline).${p.caption ? ` ${esc(p.caption)}` : ""}</p>
<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${2 * H}" viewBox="0 0 ${2 * W} ${2 * H}" font-family="sans-serif">
${panels.join("\n")}
</svg>
</body></html>
`;
}
