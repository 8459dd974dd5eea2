export interface SeriesPoint {
  start: string;
  triggered: number;
  succeeded: number;
  failed: number;
}

import { useEffect, useRef, useState } from 'react';
import { DataTable, type Column } from './data-table.js';

const HEIGHT = 200;
const PAD = { top: 10, right: 8, bottom: 24, left: 40 };

const bucketLabel = (start: string, bucket: 'hour' | 'day') =>
  new Date(start).toLocaleString(undefined, bucket === 'hour' ? { hour: '2-digit', minute: '2-digit' } : { month: 'short', day: 'numeric' });

const figureColumns = (bucket: 'hour' | 'day'): Column<SeriesPoint>[] => [
  { header: `${bucket === 'hour' ? 'Hour' : 'Day'} starting`, cell: (point) => new Date(point.start).toLocaleString() },
  { header: 'Runs', cell: (point) => point.triggered },
  { header: 'Succeeded', cell: (point) => point.succeeded },
  { header: 'Failed', cell: (point) => point.failed },
];

/**
 * Runs over time, one stacked bar per bucket: succeeded, failed, and the rest (in progress,
 * timed out, cancelled). Hand-made SVG, no chart library. The same figures are in a table
 * below it for screen readers and for anyone who wants numbers.
 */
export function RunsChart({ series, bucket }: { series: SeriesPoint[]; bucket: 'hour' | 'day' }) {
  // Drawn at the width it is shown at, so its text is never stretched or squeezed.
  const frame = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(720);
  useEffect(() => {
    const element = frame.current;
    if (!element) return;
    const observer = new ResizeObserver(([entry]) => entry && setWidth(Math.max(240, Math.round(entry.contentRect.width))));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const max = Math.max(1, ...series.map((point) => point.triggered));
  const plotWidth = width - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / Math.max(1, series.length);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (value: number) => (value / max) * plotHeight;
  const labelEvery = Math.ceil(series.length / Math.max(2, Math.floor(plotWidth / 90)));
  const total = series.reduce((sum, point) => sum + point.triggered, 0);
  const failed = series.reduce((sum, point) => sum + point.failed, 0);

  return (
    <figure className="chart">
      <div ref={frame}>
      <svg viewBox={`0 0 ${width} ${HEIGHT}`} width={width} height={HEIGHT} role="img" aria-labelledby="chart-title">
        <title id="chart-title">{`Runs per ${bucket}: ${total} in ${series.length} ${bucket}s, ${failed} failed. The table below has each ${bucket}.`}</title>
        {[0, 0.5, 1].map((share) => (
          <g key={share}>
            <line x1={PAD.left} x2={width - PAD.right} y1={PAD.top + plotHeight - share * plotHeight} y2={PAD.top + plotHeight - share * plotHeight} className="chart-grid" />
            <text x={PAD.left - 6} y={PAD.top + plotHeight - share * plotHeight + 4} className="chart-axis" textAnchor="end">
              {Math.round(share * max)}
            </text>
          </g>
        ))}
        {series.map((point, index) => {
          const x = PAD.left + index * slot + (slot - barWidth) / 2;
          const other = Math.max(0, point.triggered - point.succeeded - point.failed);
          let base = PAD.top + plotHeight;
          const parts: Array<[string, number]> = [
            ['chart-succeeded', point.succeeded],
            ['chart-failed', point.failed],
            ['chart-other', other],
          ];
          return (
            <g key={point.start}>
              <title>{`${bucketLabel(point.start, bucket)}: ${point.triggered} runs, ${point.succeeded} succeeded, ${point.failed} failed`}</title>
              {parts.map(([className, value]) => {
                const height = y(value);
                base -= height;
                return value > 0 ? <rect key={className} x={x} y={base} width={barWidth} height={height} className={className} /> : null;
              })}
              {index % labelEvery === 0 && (
                <text x={x + barWidth / 2} y={HEIGHT - 6} className="chart-axis" textAnchor="middle">
                  {bucketLabel(point.start, bucket)}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      </div>
      <figcaption className="legend">
        <span>
          <span className="swatch chart-succeeded" aria-hidden="true" /> succeeded
        </span>
        <span>
          <span className="swatch chart-failed" aria-hidden="true" /> failed
        </span>
        <span>
          <span className="swatch chart-other" aria-hidden="true" /> other (in progress, timed out, cancelled)
        </span>
      </figcaption>
      <details className="chart-table">
        <summary>The figures as a table</summary>
        <DataTable rows={series} columns={figureColumns(bucket)} rowKey={(point) => point.start} />
      </details>
    </figure>
  );
}
